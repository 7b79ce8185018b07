"""Transfer times by eq 4.6 against 000's testbeds (MODELS.md 3)."""

from __future__ import annotations

import numpy as np
import pytest

from simulator.models.transfer import (
    DEVICE_TO_HOST,
    GTX970_PCIE_ATTRIBUTES,
    HOST_TO_DEVICE,
    TABLE_6_2_TESTBEDS,
    TRANSFER_ERRORS,
    PcieLink,
    latency_bandwidth_time,
    transfer_time,
)


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
