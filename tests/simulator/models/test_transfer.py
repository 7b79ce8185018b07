"""Transfer times by eq 4.6 against 000's testbeds (docs/models.md 3)."""

from __future__ import annotations

import numpy as np
import pytest

from simulator.models.host_memory import PAGEABLE, PINNED, host_memory_kind
from simulator.models.transfer import (
    DEVICE_TO_HOST,
    GTX970_PCIE_ATTRIBUTES,
    HOST_TO_DEVICE,
    TABLE_6_2_TESTBEDS,
    TRANSFER_ERRORS,
    HostStaging,
    PcieLink,
    latency_bandwidth_time,
    staged_transfer_time,
    transfer_time,
)

# An H100 SXM5 testbed's PCIe 5.0 x16 link (issue 11): pinned copies at 54.5 GB/s, t_s ~9 us;
# pageable ones staged at ~7 GB/s host to device and ~11.6 GB/s device to host.
H100_LINK_ATTRIBUTES: dict[str, float] = {
    "bandwidth": 63e9,
    "startupHTD": 9e-6,
    "startupDth": 9e-6,
    "lambdaHTD": 54.5 / 63,
    "lambdaDth": 54.5 / 63,
    "pageableStartupHTD": 12e-6,
    "pageableBandwidthHTD": 7e9,
    "pageableStartupDth": 14e-6,
    "pageableBandwidthDth": 11.6e9,
}


@pytest.mark.parametrize("n", [0, 1, 4 * 10**7, 2 * 10**9])
def test_it_reproduces_the_gtx_970_transfer_equations_of_section_5_3(n):
    link = PcieLink.from_attributes("PCIe 3.0 16x - gajger", GTX970_PCIE_ATTRIBUTES)
    assert link.time(n, HOST_TO_DEVICE) == pytest.approx(
        3.9687e-6 + n / (15.8e9 * 0.689), rel=1e-15
    )
    assert link.time(n, DEVICE_TO_HOST) == pytest.approx(
        5.1569e-6 + n / (15.8e9 * 0.653), rel=1e-15
    )


def test_the_three_testbeds_of_table_6_2_are_built_in():
    titan = TABLE_6_2_TESTBEDS["GTX TITAN X"]
    assert titan.bandwidth == 2e9
    assert titan.host_to_device.startup_s == pytest.approx(7.33e-6)
    assert titan.device_to_host.lambda_c == 0.842
    gtx1070 = TABLE_6_2_TESTBEDS["GTX 1070"]
    assert gtx1070.time(10**9, DEVICE_TO_HOST) == pytest.approx(28.3e-6 + 1e9 / (15.8e9 * 0.447))
    assert TABLE_6_2_TESTBEDS["GTX 970"].host_to_device.startup_s == pytest.approx(3.97e-6)


def test_transfer_time_is_vectorised_over_sizes():
    sizes = np.array([0.0, 1e6, 1e9])
    times = transfer_time(sizes, startup_s=1e-6, bandwidth=1e9, lambda_c=0.5)
    assert isinstance(times, np.ndarray)
    np.testing.assert_allclose(times, [1e-6, 1e-6 + 2e-3, 1e-6 + 2.0])


def test_a_generic_link_is_latency_plus_size_over_bandwidth():
    assert latency_bandwidth_time(1e6, latency_s=1e-6, bandwidth=1e10) == pytest.approx(1.01e-4)


def test_an_empty_message_without_direction_is_a_free_synchronisation():
    link = TABLE_6_2_TESTBEDS["GTX 970"]
    assert link.p2p_time(0, None) == 0.0
    with pytest.raises(ValueError, match="needs a direction"):
        link.p2p_time(8, None)


def test_it_rejects_an_unknown_direction_and_negative_sizes():
    with pytest.raises(ValueError, match="direction must be"):
        TABLE_6_2_TESTBEDS["GTX 970"].time(1, "Sideways")
    with pytest.raises(ValueError, match=TRANSFER_ERRORS["negative_size"]):
        transfer_time(-1, startup_s=0, bandwidth=1)


@pytest.mark.parametrize("n", [0, 4096, 10**9])
def test_a_pinned_copy_costs_eq_4_6_and_a_pageable_one_the_host_staging_rate(n):
    link = PcieLink.from_attributes("PCIe 5.0 x16", H100_LINK_ATTRIBUTES)
    assert link.time(n, HOST_TO_DEVICE, PINNED) == pytest.approx(9e-6 + n / 54.5e9, rel=1e-15)
    assert link.time(n, DEVICE_TO_HOST, PINNED) == pytest.approx(9e-6 + n / 54.5e9, rel=1e-15)
    assert link.time(n, HOST_TO_DEVICE, PAGEABLE) == pytest.approx(12e-6 + n / 7e9, rel=1e-15)
    assert link.time(n, DEVICE_TO_HOST, PAGEABLE) == pytest.approx(14e-6 + n / 11.6e9, rel=1e-15)
    assert link.time(n, HOST_TO_DEVICE) == link.time(n, HOST_TO_DEVICE, PAGEABLE)


def test_a_pageable_copy_never_runs_faster_than_the_link():
    fast_host = dict(H100_LINK_ATTRIBUTES, pageableBandwidthHTD=1e12)
    link = PcieLink.from_attributes("fast host", fast_host)
    assert link.time(10**9, HOST_TO_DEVICE, PAGEABLE) == pytest.approx(12e-6 + 1e9 / 54.5e9)
    sizes = np.array([0.0, 1e9])
    np.testing.assert_allclose(
        staged_transfer_time(sizes, startup_s=1e-6, link_rate=2e9, staging_bandwidth=1e9),
        [1e-6, 1e-6 + 1.0],
    )


@pytest.mark.parametrize("host_memory", [PAGEABLE, PINNED])
def test_a_link_without_pageable_attributes_charges_eq_4_6_for_both_kinds(host_memory):
    # 000's testbeds were measured with pageable memory: t_s and lambda_c already carry it.
    link = PcieLink.from_attributes("PCIe 3.0 16x - gajger", GTX970_PCIE_ATTRIBUTES)
    assert link.host_to_device.pageable is None
    n = 4 * 10**7
    assert link.time(n, HOST_TO_DEVICE, host_memory) == pytest.approx(
        3.9687e-6 + n / (15.8e9 * 0.689), rel=1e-15
    )
    assert link.p2p_time(n, DEVICE_TO_HOST, host_memory) == pytest.approx(
        5.1569e-6 + n / (15.8e9 * 0.653), rel=1e-15
    )


def test_pageable_attributes_of_one_direction_leave_the_other_on_eq_4_6():
    attributes = dict(H100_LINK_ATTRIBUTES)
    del attributes["pageableStartupHTD"], attributes["pageableBandwidthHTD"]
    link = PcieLink.from_attributes("DtH only", attributes)
    assert link.device_to_host.pageable == HostStaging(14e-6, 11.6e9)
    assert link.time(10**9, HOST_TO_DEVICE) == pytest.approx(9e-6 + 1e9 / 54.5e9)
    assert link.time(10**9, DEVICE_TO_HOST) == pytest.approx(14e-6 + 1e9 / 11.6e9)


def test_it_refuses_half_a_pageable_pair():
    attributes = dict(H100_LINK_ATTRIBUTES)
    del attributes["pageableBandwidthHTD"]
    message = TRANSFER_ERRORS["pageable_pair"].format(
        present="pageableStartupHTD", missing="pageableBandwidthHTD"
    )
    with pytest.raises(ValueError) as caught:
        PcieLink.from_attributes("half", attributes)
    assert str(caught.value) == message


@pytest.mark.parametrize("value", ["Pinned", "page-locked", 1, ""])
def test_a_bad_host_memory_kind_names_the_parameter_and_the_allowed_values(value):
    link = PcieLink.from_attributes("PCIe 5.0 x16", H100_LINK_ATTRIBUTES)
    expected = f"hostMemory must be 'pageable' or 'pinned', got {value!r}"
    assert TRANSFER_ERRORS["host_memory"].format(value=value) == expected
    for call in (
        lambda: host_memory_kind(value),
        lambda: link.time(1, HOST_TO_DEVICE, value),
        lambda: link.p2p_time(0, None, value),
    ):
        with pytest.raises(ValueError) as caught:
            call()
        assert str(caught.value) == expected


def test_a_missing_host_memory_kind_is_pageable():
    assert host_memory_kind(None) == PAGEABLE
    link = PcieLink.from_attributes("PCIe 5.0 x16", H100_LINK_ATTRIBUTES)
    assert link.p2p_time(10**6, HOST_TO_DEVICE) == link.p2p_time(10**6, HOST_TO_DEVICE, PAGEABLE)
    assert link.p2p_time(0, None, PINNED) == 0.0


def test_it_names_every_missing_link_attribute_at_once():
    attributes = {
        k: v for k, v in GTX970_PCIE_ATTRIBUTES.items() if k not in {"lambdaHTD", "startupDth"}
    }
    with pytest.raises(ValueError) as caught:
        PcieLink.from_attributes("bare", attributes)
    assert str(caught.value) == TRANSFER_ERRORS["missing_attributes"].format(
        names="'lambdaHTD', 'startupDth'"
    )
    del attributes["bandwidth"]
    with pytest.raises(ValueError, match="'bandwidth', 'lambdaHTD', 'startupDth' are required"):
        PcieLink.from_attributes("barer", attributes)
