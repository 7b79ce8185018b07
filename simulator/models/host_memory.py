"""The host memory a host-device copy uses (issue 11): one rule for the `sim` API, which checks
`hostMemory` at the send, and for `transfer.py` / `pcie_link.js`, which price it. NumPy-free,
so that the sandboxed child imports it without NumPy (see `energy.py`'s note)."""

from __future__ import annotations

from typing import Literal

HostMemory = Literal["pageable", "pinned"]
PAGEABLE: HostMemory = "pageable"
PINNED: HostMemory = "pinned"
HOST_MEMORY_KINDS: tuple[HostMemory, ...] = (PAGEABLE, PINNED)
HOST_MEMORY_ERROR = "hostMemory must be 'pageable' or 'pinned', got {value!r}"


def host_memory_kind(value: object) -> HostMemory:
    """Return the transfer's host memory kind: 'pageable' when `value` is None, else `value`
    if it is 'pageable' or 'pinned'; ValueError with HOST_MEMORY_ERROR otherwise.

    The one check of the `hostMemory` parameter: the `sim` API applies it at the send, the
    built-in `pcie_link.js` repeats it with the same message.
    """
    if value is None or value == PAGEABLE:
        return PAGEABLE
    if value == PINNED:
        return PINNED
    raise ValueError(HOST_MEMORY_ERROR.format(value=value))
