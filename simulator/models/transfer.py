"""Point-to-point transfer time, e.g. host-device copies over PCIe (000, section 4.3; docs/models.md 3).

    T_c = t_s + n / (bw * lambda_c)                                               (4.6)

t_s (startup time) and lambda_c (bus utilisation) are given per direction; a generic
latency-bandwidth link is (4.6) with one direction and lambda_c = 1. The three testbeds of
000's Table 6.2 and the GTX 970 bus record of Fig. 5.2 are built-in data.

Host memory kind (issue 11). A copy from or to pageable host memory (what 000's Listing 6
does) is staged by the CUDA driver through a pinned buffer with a CPU memcpy, so it runs at
the host staging rate B_p when that is below the link's. A link may carry, per direction,
the pageable startup t_p [s] and staging rate B_p [B/s] (pageableStartupHTD,
pageableBandwidthHTD, pageableStartupDth, pageableBandwidthDth); then a pageable copy costs

    T_c = t_p + n / min(bw * lambda_c, B_p)                                       (4.6p)

and a pinned one (4.6). A direction without these attributes charges (4.6) for both kinds:
000's testbeds were measured with pageable memory, so their t_s and lambda_c already carry
the staging, which on current machines caps a pageable copy well below a pinned one
(docs/validation/h100-2026-11-22.md, "Transfers and the application"). The transfer's kind is the
`hostMemory` parameter of `p2pTime` ('pageable', the default, or 'pinned').
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from simulator.models.host_memory import (
    HOST_MEMORY_ERROR,
    PAGEABLE,
    host_memory_kind,
)

FloatArray = npt.NDArray[np.float64]
Numeric = float | FloatArray
ArrayLike = float | int | npt.ArrayLike

Direction = Literal["HostToDevice", "DeviceToHost"]
HOST_TO_DEVICE: Direction = "HostToDevice"
DEVICE_TO_HOST: Direction = "DeviceToHost"
MS = 1e-3
GB = 1e9

# The attributes a PCIe link needs (Fig. 5.2), in the order its messages name them.
PCIE_ATTRIBUTES = ("bandwidth", "startupHTD", "lambdaHTD", "startupDth", "lambdaDth")

TRANSFER_ERRORS: dict[str, str] = {
    "direction": "direction must be 'HostToDevice' or 'DeviceToHost', got {direction!r}",
    "host_memory": HOST_MEMORY_ERROR,
    "pageable_pair": (
        "link attributes {present!r} and {missing!r} go together: give both or neither"
    ),
    "missing_attribute": "link attribute {name!r} is required",
    "missing_attributes": "link attributes {names} are required",
    "negative_size": "message size must be non-negative",
    "no_direction": (
        "a non-empty message over a PCIe link needs a direction ('HostToDevice' or 'DeviceToHost')"
    ),
}


def transfer_time(
    n_bytes: ArrayLike, *, startup_s: ArrayLike, bandwidth: ArrayLike, lambda_c: ArrayLike = 1.0
) -> Numeric:
    """Return T_c (4.6) in seconds for n bytes: t_s + n / (bw * lambda_c), bw in bytes/s."""
    n = np.asarray(n_bytes, dtype=np.float64)
    if np.any(n < 0):
        raise ValueError(TRANSFER_ERRORS["negative_size"])
    rate = np.asarray(bandwidth, dtype=np.float64) * np.asarray(lambda_c, dtype=np.float64)
    value = np.asarray(startup_s, dtype=np.float64) + n / rate
    return float(value) if np.ndim(value) == 0 else value


def staged_transfer_time(
    n_bytes: ArrayLike, *, startup_s: ArrayLike, link_rate: ArrayLike, staging_bandwidth: ArrayLike
) -> Numeric:
    """Return T_c (4.6p) in seconds for a pageable copy: t_p + n / min(link_rate, B_p), where
    link_rate = bw * lambda_c and B_p is the host staging rate, both in bytes/s."""
    n = np.asarray(n_bytes, dtype=np.float64)
    if np.any(n < 0):
        raise ValueError(TRANSFER_ERRORS["negative_size"])
    rate = np.minimum(
        np.asarray(link_rate, dtype=np.float64), np.asarray(staging_bandwidth, dtype=np.float64)
    )
    value = np.asarray(startup_s, dtype=np.float64) + n / rate
    return float(value) if np.ndim(value) == 0 else value


@dataclass(frozen=True)
class HostStaging:
    """Pageable copies of one direction: startup time [s] and host staging rate [B/s]."""

    startup_s: float
    bandwidth: float


@dataclass(frozen=True)
class LinkDirection:
    """Startup time [s] and bandwidth utilisation lambda_c of one direction of a link, and
    optionally how pageable copies are staged (None: they cost (4.6) like pinned ones)."""

    startup_s: float
    lambda_c: float
    pageable: HostStaging | None = None


@dataclass(frozen=True)
class PcieLink:
    """A host-device bus with (4.6) parameters per direction; bandwidth in bytes/s."""

    name: str
    bandwidth: float
    host_to_device: LinkDirection
    device_to_host: LinkDirection

    def direction(self, direction: str) -> LinkDirection:
        """Return the parameters of "HostToDevice" or "DeviceToHost"."""
        if direction == HOST_TO_DEVICE:
            return self.host_to_device
        if direction == DEVICE_TO_HOST:
            return self.device_to_host
        raise ValueError(TRANSFER_ERRORS["direction"].format(direction=direction))

    def time(self, n_bytes: ArrayLike, direction: str, host_memory: str = PAGEABLE) -> Numeric:
        """Return the time in seconds to move n bytes in one direction from or to host memory
        of the given kind: (4.6p) for a pageable copy when the direction has pageable
        attributes, (4.6) otherwise."""
        side = self.direction(direction)
        staging = side.pageable
        if host_memory_kind(host_memory) == PAGEABLE and staging is not None:
            return staged_transfer_time(
                n_bytes,
                startup_s=staging.startup_s,
                link_rate=self.bandwidth * side.lambda_c,
                staging_bandwidth=staging.bandwidth,
            )
        return transfer_time(
            n_bytes, startup_s=side.startup_s, bandwidth=self.bandwidth, lambda_c=side.lambda_c
        )

    def p2p_time(self, size: float, direction: str | None, host_memory: str | None = None) -> float:
        """Return the built-in `pcie_link.js` p2pTime: an empty message with no direction is a
        pure synchronisation and costs 0; any other message needs a direction. `host_memory`
        is `params.hostMemory` (None: pageable)."""
        kind = host_memory_kind(host_memory)
        if direction is None:
            if size == 0:
                return 0.0
            raise ValueError(TRANSFER_ERRORS["no_direction"])
        return float(self.time(size, direction, kind))

    @classmethod
    def from_attributes(cls, name: str, attributes: Mapping[str, float]) -> PcieLink:
        """Return the link from MERPSYS attributes (Fig. 5.2): startupHTD, startupDth [s],
        lambdaHTD, lambdaDth and bandwidth [B/s]; optionally, per direction, the pageable pair
        pageableStartupHTD [s] with pageableBandwidthHTD [B/s] (and the same for Dth)."""

        def get(key: str) -> float:
            if key not in attributes:
                raise ValueError(TRANSFER_ERRORS["missing_attribute"].format(name=key))
            return float(attributes[key])

        # Name every missing one at once, so that one failed run says all that is lacking.
        missing = [key for key in PCIE_ATTRIBUTES if key not in attributes]
        if len(missing) > 1:
            names = ", ".join(repr(key) for key in missing)
            raise ValueError(TRANSFER_ERRORS["missing_attributes"].format(names=names))

        def staging(suffix: str) -> HostStaging | None:
            startup, bandwidth = f"pageableStartup{suffix}", f"pageableBandwidth{suffix}"
            if startup not in attributes and bandwidth not in attributes:
                return None
            for present, missing in ((startup, bandwidth), (bandwidth, startup)):
                if missing not in attributes:
                    raise ValueError(
                        TRANSFER_ERRORS["pageable_pair"].format(present=present, missing=missing)
                    )
            return HostStaging(get(startup), get(bandwidth))

        return cls(
            name=name,
            bandwidth=get("bandwidth"),
            host_to_device=LinkDirection(get("startupHTD"), get("lambdaHTD"), staging("HTD")),
            device_to_host=LinkDirection(get("startupDth"), get("lambdaDth"), staging("Dth")),
        )


def latency_bandwidth_time(
    n_bytes: ArrayLike, *, latency_s: ArrayLike, bandwidth: ArrayLike
) -> Numeric:
    """Return latency + n / bandwidth in seconds: a generic link, (4.6) with lambda_c = 1."""
    return transfer_time(n_bytes, startup_s=latency_s, bandwidth=bandwidth)


# 000, Table 6.2 (t_s printed in ms).
TABLE_6_2_TESTBEDS: dict[str, PcieLink] = {
    "GTX 970": PcieLink(
        name="PCIe v3.1 x16, Ubuntu 14 (GTX 970)",
        bandwidth=15.8 * GB,
        host_to_device=LinkDirection(0.00397 * MS, 0.689),
        device_to_host=LinkDirection(0.00516 * MS, 0.653),
    ),
    "GTX TITAN X": PcieLink(
        name="PCIe v2.0 x4, Ubuntu 16 (GTX TITAN X)",
        bandwidth=2 * GB,
        host_to_device=LinkDirection(0.00733 * MS, 0.844),
        device_to_host=LinkDirection(0.01168 * MS, 0.842),
    ),
    "GTX 1070": PcieLink(
        name="PCIe v3.1 x16, Windows 10 (GTX 1070)",
        bandwidth=15.8 * GB,
        host_to_device=LinkDirection(0.0244 * MS, 0.452),
        device_to_host=LinkDirection(0.0283 * MS, 0.447),
    ),
}

# 000, Fig. 5.2: the GTX 970's bus as stored in MERPSYS (more digits than Table 6.2).
GTX970_PCIE_ATTRIBUTES: dict[str, float] = {
    "startupHTD": 3.9687e-6,
    "startupDth": 5.1569e-6,
    "lambdaHTD": 0.689,
    "lambdaDth": 0.653,
    "bandwidth": 1.58e10,
}
