"""Checks on the hardware seed data (hwdb/seed/hardware.json), read as plain JSON.

Every value carries a unit and a source; the papers' reference values (000 Fig. 5.2,
Tables 6.1 and 6.2, 003 Table I) are reproduced to the printed digit.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SEED_PATH = REPO_ROOT / "hwdb" / "seed" / "hardware.json"
KNOWN_TYPES = {"GPU", "CPU", "NETWORK", "MEMORY", "STORAGE", "CACHE", "FABRIC"}
GPU_REQUIRED_KEYS = {
    "SMs",
    "SMCoreClock",
    "CUDACores",
    "schedulers",
    "warpSize",
    "memoryClock",
    "busWidth",
    "dataRate",
    "computeCapability",
    "maxWarpsPerSM",
    "maxBlocksPerSM",
    "registersPerSM",
    "sharedMemPerSM",
    "powerConsumptionLoad",
}


def load_components() -> list[dict[str, Any]]:
    """Return the component records of the seed file."""
    with SEED_PATH.open(encoding="utf-8") as handle:
        data = json.load(handle)
    return list(data["components"])


COMPONENTS = load_components()


def component(name: str) -> dict[str, Any]:
    """Return the one component called ``name``."""
    matches = [c for c in COMPONENTS if c["name"] == name]
    assert len(matches) == 1, f"expected exactly one component named {name!r}"
    return matches[0]


def attributes(name: str) -> dict[str, float]:
    """Return the attributes of component ``name`` as a key -> value mapping."""
    return {attr["key"]: attr["value"] for attr in component(name)["attributes"]}


def gpus() -> list[dict[str, Any]]:
    """Return the GPU records."""
    return [c for c in COMPONENTS if c["type"] == "GPU"]


def test_component_names_are_unique() -> None:
    names = [c["name"] for c in COMPONENTS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("record", COMPONENTS, ids=lambda c: c["name"])
def test_every_component_has_a_known_type_and_a_source(record: dict[str, Any]) -> None:
    assert record["type"] in KNOWN_TYPES
    assert isinstance(record["name"], str) and 0 < len(record["name"]) <= 200
    assert isinstance(record["vendor"], str)
    assert record["comment"].strip()
    assert record["source_url"].startswith(("http://", "https://"))


@pytest.mark.parametrize("record", COMPONENTS, ids=lambda c: c["name"])
def test_every_attribute_has_a_finite_value_a_unit_and_a_source(record: dict[str, Any]) -> None:
    keys = [attr["key"] for attr in record["attributes"]]
    assert keys, "a component without attributes"
    assert len(keys) == len(set(keys)), "duplicate attribute keys"
    for attr in record["attributes"]:
        assert set(attr) == {"key", "value", "unit", "source"}
        assert attr["key"].isidentifier()
        value = attr["value"]
        assert isinstance(value, int | float) and not isinstance(value, bool)
        assert math.isfinite(value)
        assert isinstance(attr["unit"], str)
        assert attr["source"].strip()
        # ComponentAttribute.source is a CharField(max_length=500); the seed loader refuses more.
        assert len(attr["source"]) <= 500, attr["key"]


@pytest.mark.parametrize("record", gpus(), ids=lambda c: c["name"])
def test_every_gpu_carries_what_the_kernel_models_need(record: dict[str, Any]) -> None:
    keys = {attr["key"] for attr in record["attributes"]}
    assert keys >= GPU_REQUIRED_KEYS
    values = {attr["key"]: attr["value"] for attr in record["attributes"]}
    assert values["warpSize"] == 32
    assert values["maxWarpsPerSM"] * values["warpSize"] <= 2048


def test_the_gtx_970_record_carries_fig_5_2_to_the_digit() -> None:
    values = attributes("GeForce GTX 970")
    fig_5_2 = {
        "powerConsumptionLoad": 168.0,
        "warpSize": 32,
        "GMEMThroughput": 13.78,
        "SMs": 13,
        "SMCoreClock": 1253,
        "CUDACores": 128,
        "schedulers": 4,
    }
    for key, expected in fig_5_2.items():
        assert values[key] == expected, key
    assert "SMS" not in values


def test_the_pcie_record_carries_exactly_fig_5_2() -> None:
    # besides the power states of issue 45 (0 W of its own, counted in its endpoints)
    values = attributes("PCIe 3.0 16x")
    assert (values.pop("powerIdle"), values.pop("powerConsumptionLoad")) == (0.0, 0.0)
    assert values == {
        "startupDth": 5.1569e-6,
        "lambdaHTD": 0.689,
        "lambdaDth": 0.653,
        "bandwidth": 1.58e10,
        "startupHTD": 3.9687e-6,
    }
    assert component("PCIe 3.0 16x")["type"] == "NETWORK"


@pytest.mark.parametrize(
    ("name", "t_htd_ms", "t_dth_ms", "lambda_htd", "lambda_dth", "bw_gb_s"),
    [
        ("PCIe v3.1 x16 (Linux, GTX 970 testbed)", 0.00397, 0.00516, 0.689, 0.653, 15.8),
        ("PCIe v2.0 x4 (Linux, TITAN X testbed)", 0.00733, 0.01168, 0.844, 0.842, 2),
        ("PCIe v3.1 x16 (Windows, GTX 1070 testbed)", 0.0244, 0.0283, 0.452, 0.447, 15.8),
    ],
)
def test_the_table_6_2_testbeds_carry_the_measured_values(
    name: str,
    t_htd_ms: float,
    t_dth_ms: float,
    lambda_htd: float,
    lambda_dth: float,
    bw_gb_s: float,
) -> None:
    values = attributes(name)
    assert values["startupHTD"] == pytest.approx(t_htd_ms * 1e-3, rel=1e-12)
    assert values["startupDth"] == pytest.approx(t_dth_ms * 1e-3, rel=1e-12)
    assert values["lambdaHTD"] == lambda_htd
    assert values["lambdaDth"] == lambda_dth
    assert values["bandwidth"] == pytest.approx(bw_gb_s * 1e9, rel=1e-12)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("GeForce GTX 970", 13.78),
        ("GeForce GTX TITAN X (Maxwell)", 13.03),
        ("GeForce GTX 1070", 8.88),
    ],
)
def test_eq_4_5_reproduces_table_6_1_memory_throughput(name: str, expected: float) -> None:
    v = attributes(name)
    gmem_bw = v["memoryClock"] * (v["busWidth"] / 8) * v["dataRate"] / (v["SMs"] * v["SMCoreClock"])
    assert round(gmem_bw, 2) == expected
    assert v["GMEMThroughput"] == expected


def test_only_the_three_paper_gpus_carry_a_printed_memory_throughput() -> None:
    carriers = {
        c["name"] for c in gpus() if any(a["key"] == "GMEMThroughput" for a in c["attributes"])
    }
    assert carriers == {"GeForce GTX 970", "GeForce GTX TITAN X (Maxwell)", "GeForce GTX 1070"}


@pytest.mark.parametrize(
    ("name", "sms", "cc", "idle_w", "load_w"),
    [("Tesla M2075", 14, 2.0, 29.4, 225), ("Tesla K20Xm", 14, 3.5, 19.18, 235)],
)
def test_the_003_gpus_carry_table_i_and_their_idle_power(
    name: str, sms: int, cc: float, idle_w: float, load_w: float
) -> None:
    values = attributes(name)
    assert values["SMs"] == sms
    assert values["computeCapability"] == cc
    assert values["powerIdle"] == idle_w
    assert values["powerConsumptionLoad"] == load_w
    assert values["busWidth"] == 384


def test_the_m2075_carries_its_off_power() -> None:
    assert attributes("Tesla M2075")["powerOff"] == 10


def test_the_seed_has_at_least_12_gpus_over_5_architectures() -> None:
    majors = {int(attributes(c["name"])["computeCapability"]) for c in gpus()}
    assert len(gpus()) >= 12
    assert len(majors) >= 5


@pytest.mark.parametrize(
    "name",
    [
        "GeForce GTX 970",
        "GeForce GTX TITAN X (Maxwell)",
        "GeForce GTX 1070",
        "Tesla M2075",
        "Tesla K20Xm",
        "GeForce GTX 960M",
        "Tesla V100 SXM2 16GB",
        "A100 SXM4 40GB",
        "H100 SXM5 80GB",
        "H200 SXM 141GB",
        "GeForce RTX 4090",
        "A100 SXM4 80GB",
        "H100 PCIe 80GB",
        "GH200 Grace Hopper (H100 96GB HBM3)",
        "B200 SXM 180GB",
        "GeForce RTX 5090",
    ],
)
def test_every_required_gpu_is_present(name: str) -> None:
    assert component(name)["type"] == "GPU"


@pytest.mark.parametrize(
    ("name", "published_gb_s"),
    [
        ("Tesla M2075", 150),
        ("Tesla K20Xm", 250),
        ("GeForce GTX 960M", 80),
        ("Tesla V100 SXM2 16GB", 900),
        ("A100 SXM4 40GB", 1555),
        ("H100 SXM5 80GB", 3350),
        ("H200 SXM 141GB", 4800),
        ("GeForce RTX 4090", 1008),
        ("GeForce RTX 3090", 936),
        ("GeForce GTX 1080 Ti", 484),
        ("GeForce RTX 2080 Ti", 616),
        ("L40S", 864),
        ("A100 SXM4 80GB", 2039),
        ("H100 PCIe 80GB", 2000),
        ("GH200 Grace Hopper (H100 96GB HBM3)", 4000),
        ("B200 SXM 180GB", 8000),
        ("GeForce RTX 5090", 1792),
    ],
)
def test_memory_clock_bus_and_data_rate_give_the_published_bandwidth(
    name: str, published_gb_s: float
) -> None:
    v = attributes(name)
    bytes_per_s = v["memoryClock"] * 1e6 * (v["busWidth"] / 8) * v["dataRate"]
    assert bytes_per_s == pytest.approx(published_gb_s * 1e9, rel=0.03)


MEASURED_RUN = re.compile(r"\((?P<run>h[0-9]00[-a-z0-9]*-\d{8}-\d{6})\)")


@pytest.mark.parametrize(
    "record",
    [c for c in gpus() if "memoryEfficiency" in attributes(c["name"])],
    ids=lambda c: c["name"],
)
def test_a_measured_memory_efficiency_applies_to_the_peak_it_was_measured_against(
    record: dict[str, Any],
) -> None:
    # memoryEfficiency is measured bandwidth / Eq. 4.5 peak of the run's device.json; the
    # model multiplies it by the record's Eq. 4.5 peak, so the two peaks must be one (the
    # H200's record once had 6144 bits against the runtime's 6016: +2.1 %)
    source = next(a["source"] for a in record["attributes"] if a["key"] == "memoryEfficiency")
    found = MEASURED_RUN.search(source)
    if found is None:
        pytest.skip("memoryEfficiency not measured with the validation kit")
    device = json.loads(
        (REPO_ROOT / "validation" / "data" / found["run"] / "device.json").read_text("utf-8")
    )
    v = attributes(record["name"])
    assert v["busWidth"] == device["busWidth"]
    assert v["memoryClock"] == device["memoryClockMHz"]


# NVIDIA's dense peaks [TFLOPS; INT8 TOPS] by GPU and tensor-core precision (with-sparsity
# figures halved), and the FP64 of the tensor cores where the part has them.
PUBLISHED_TENSOR_PEAKS = {
    "Tesla V100 SXM2 16GB": {"tensorFLOPsPerCycleFP16": 125},
    "A100 SXM4 40GB": {
        "tensorFLOPsPerCycleFP16": 312,
        "tensorFLOPsPerCycleTF32": 156,
        "tensorFLOPsPerCycleFP64": 19.5,
        "tensorOpsPerCycleINT8": 624,
    },
    "H100 SXM5 80GB": {
        "tensorFLOPsPerCycleFP16": 989.4,
        "tensorFLOPsPerCycleTF32": 494.7,
        "tensorFLOPsPerCycleFP8": 1978.9,
        "tensorFLOPsPerCycleFP64": 66.9,
        "tensorOpsPerCycleINT8": 1978.9,
    },
    "H200 SXM 141GB": {
        "tensorFLOPsPerCycleFP16": 989.5,
        "tensorFLOPsPerCycleTF32": 494.5,
        "tensorFLOPsPerCycleFP8": 1979,
        "tensorFLOPsPerCycleFP64": 67,
    },
    "GH200 Grace Hopper (H100 96GB HBM3)": {
        "tensorFLOPsPerCycleFP16": 990,
        "tensorFLOPsPerCycleFP8": 1979,
        "tensorFLOPsPerCycleFP64": 67,
    },
    "B200 SXM 180GB": {
        "tensorFLOPsPerCycleFP16": 2250,
        "tensorFLOPsPerCycleTF32": 1100,
        "tensorFLOPsPerCycleFP8": 4500,
        "tensorFLOPsPerCycleFP4": 9000,
        "tensorFLOPsPerCycleFP64": 40,
    },
    "GeForce RTX 5090": {
        "tensorFLOPsPerCycleFP16": 419.2,
        "tensorFLOPsPerCycleTF32": 104.8,
        "tensorFLOPsPerCycleFP8": 838.4,
        "tensorFLOPsPerCycleFP4": 1676,
    },
}


@pytest.mark.parametrize(
    ("name", "key", "tflops"),
    [(n, k, t) for n, peaks in PUBLISHED_TENSOR_PEAKS.items() for k, t in peaks.items()],
)
def test_tensor_rates_per_sm_and_cycle_give_the_published_dense_peak(
    name: str, key: str, tflops: float
) -> None:
    v = attributes(name)
    units = {a["key"]: a["unit"] for a in component(name)["attributes"]}
    assert units[key] in ("FLOP/cycle/SM", "op/cycle/SM")
    assert v[key] * v["SMs"] * v["SMCoreClock"] * 1e6 == pytest.approx(tflops * 1e12, rel=0.01)


@pytest.mark.parametrize("name", list(PUBLISHED_TENSOR_PEAKS))
def test_the_current_gpus_of_issue_42_record_their_int32_lanes_or_say_none_are_published(
    name: str,
) -> None:
    v = attributes(name)
    if name == "B200 SXM 180GB":  # NVIDIA publishes no per-SM unit counts for B200
        assert "INTUnits" not in v
    else:
        assert v["INTUnits"] in (64, 128)


def test_the_interconnects_of_issue_2_are_present() -> None:
    networks = [c["name"] for c in COMPONENTS if c["type"] == "NETWORK"]
    for needle in (
        "PCIe 4.0 x16",
        "PCIe 5.0 x16",
        "NVLink",
        "InfiniBand HDR",
        "InfiniBand NDR",
        "10 Gigabit Ethernet",
        "100 Gigabit Ethernet",
    ):
        assert any(needle in n for n in networks), needle


# Links whose vendor publishes no latency and for which no measurement was found; their
# comment says so, and the transfer models must not read a latency from them.
LINKS_WITHOUT_PUBLISHED_LATENCY = {"NVLink-C2C (Grace Hopper)"}


def test_generic_links_carry_latency_and_bandwidth() -> None:
    for record in COMPONENTS:
        if record["type"] == "NETWORK" and not record["name"].startswith("PCIe"):
            keys = {a["key"] for a in record["attributes"]}
            assert "bandwidth" in keys, record["name"]
            if record["name"] in LINKS_WITHOUT_PUBLISHED_LATENCY:
                assert "latency" not in keys, record["name"]
                assert "latency is left out" in record["comment"], record["name"]
            else:
                assert "latency" in keys, record["name"]


NVLINK_CLASS = re.compile(r"^(NVLink \d|NVSwitch )")
"""GPU-to-GPU NVLink records, direct or through an NVSwitch: what NCCL's tuning model counts
as NVLink hardware (NVLink-C2C, a CPU-GPU link without a latency on record, is not one)."""


def test_no_nvlink_hop_outlasts_nccl_s_whole_ll_step_over_nvlink() -> None:
    # NCCL's per-step latency on NVLink is a whole step (tuning.cc hwLatencies, restated in
    # simulator.nccl_model): an LL step stores data and flags across the link and the
    # receiver polls them, so the link's own latency cannot exceed the least of them
    from simulator import nccl_model

    bound_s = min(nccl_model.HW_LATENCY_US["nvlink"][f]["LL"] for f in ("tree", "ring")) * 1e-6
    records = [c for c in COMPONENTS if NVLINK_CLASS.match(c["name"])]
    assert len(records) == 5
    for record in records:
        (latency,) = [a for a in record["attributes"] if a["key"] == "latency"]
        assert latency["value"] <= bound_s, record["name"]
        assert "src/graph/tuning.cc" in latency["source"], record["name"]


def test_the_current_interconnects_of_issue_11_are_present() -> None:
    for name in (
        "NVLink 3 (A100 SXM4, 12 links)",
        "NVLink 4 (H100 SXM, 18 links)",
        "NVLink 5 (B200, 18 links)",
        "NVSwitch (HGX H100, NVLink 4)",
        "NVLink-C2C (Grace Hopper)",
    ):
        assert component(name)["type"] == "NETWORK"


@pytest.mark.parametrize(
    "record",
    [c for c in gpus() if attributes(c["name"])["computeCapability"] >= 7.0],
    ids=lambda c: c["name"],
)
def test_current_gpu_measurements_are_plausible(record: dict[str, Any]) -> None:
    # memoryEfficiency is a fraction of the Eq. 4.5 bandwidth; the L2 serves faster than
    # DRAM; an empty launch costs microseconds, not nanoseconds or milliseconds.
    units = {a["key"]: a["unit"] for a in record["attributes"]}
    v = attributes(record["name"])
    dram = v["memoryClock"] * 1e6 * (v["busWidth"] / 8) * v["dataRate"]
    if "memoryEfficiency" in v:
        assert units["memoryEfficiency"] == "fraction"
        assert 0.5 < v["memoryEfficiency"] <= 1.0
    if "L2Bandwidth" in v:
        assert units["L2Bandwidth"] == "B/s"
        assert v["L2Bandwidth"] > dram
    if "kernelLaunchOverhead" in v:
        assert units["kernelLaunchOverhead"] == "s"
        assert 1e-6 <= v["kernelLaunchOverhead"] <= 1e-5


def test_cpus_carry_clock_cores_and_peak_flops_inputs() -> None:
    cpus = [c for c in COMPONENTS if c["type"] == "CPU"]
    assert len(cpus) >= 3
    for record in cpus:
        keys = {a["key"] for a in record["attributes"]}
        assert {
            "cores",
            "clock",
            "flopsPerCycle",
            "memoryBandwidth",
            "powerConsumptionLoad",
        } <= keys
        assert "SMCoreClock" not in keys


def test_the_h100_testbed_bus_carries_the_validation_kits_fit() -> None:
    # docs/validation/h100-2026-11-22.md, run 1: HtD t_s = 10.66 us, lambda_c = 0.1327;
    # DtH t_s = 14.06 us, lambda_c = 0.1536; PCIe gen 5 x16.
    values = attributes("PCIe 5.0 x16 (pageable, H100 VM testbed)")
    assert values["startupHTD"] == pytest.approx(10.66e-6, rel=1e-12)
    assert values["startupDth"] == pytest.approx(14.06e-6, rel=1e-12)
    assert (values["lambdaHTD"], values["lambdaDth"]) == (0.1327, 0.1536)
    assert values["bandwidth"] == pytest.approx(63.02e9, rel=1e-12)
    report = (REPO_ROOT / "docs" / "validation" / "h100-2026-11-22.md").read_text()
    assert "HtD t_s = 10.66 us and lambda_c = 0.1327" in report
    assert "14.06 us and lambda_c = 0.1536" in report


# Issue 45: every GPU, CPU and link record has the power states the whole-run accounting
# charges (idle, active idle for a GPU, load), each from its record with a source, or
# estimated at run time by a rule the run names (simulator.models.energy.power_states).
POWER_KEYS = ("powerIdle", "powerActiveIdle", "powerConsumptionLoad", "powerOff")
# what a power state's source must show: a URL, a paper, the kit, or an accounting rule
POWER_SOURCE = re.compile(r"https?://|^00[03] |validation kit|^0 W of its own: included in")
POWERED_TYPES = ("GPU", "CPU", "NETWORK")


@pytest.mark.parametrize(
    "record",
    [c for c in COMPONENTS if c["type"] in POWERED_TYPES],
    ids=lambda c: c["name"],
)
def test_every_power_state_has_a_source_or_is_estimated_by_a_named_rule(
    record: dict[str, Any],
) -> None:
    from simulator.models.energy import power_states

    values = {a["key"]: a["value"] for a in record["attributes"]}
    for attr in record["attributes"]:
        if attr["key"] in POWER_KEYS:
            assert attr["unit"] == "W", attr["key"]
            assert POWER_SOURCE.search(attr["source"]), (attr["key"], attr["source"])
    states = power_states(values, record["type"], runs_processes=True)
    estimated = dict(states.estimated)
    needed = ["powerIdle", "powerConsumptionLoad"]
    if record["type"] == "GPU":
        needed.append("powerActiveIdle")
    for key in needed:
        assert key in values or key in estimated, key
        if key in estimated:
            assert estimated[key].startswith("estimated:"), key
    if record["type"] in ("GPU", "CPU"):
        # a GPU's and a CPU's load power is a datasheet's (TDP, max board power) or a paper's
        assert "powerConsumptionLoad" in values
        assert states.load_w > states.base_w >= states.idle_w > 0


def test_the_kit_measured_the_h100_and_h200_states_and_nothing_is_estimated_there() -> None:
    from simulator.models.energy import power_states

    for name in ("H100 SXM5 80GB", "H200 SXM 141GB"):
        states = power_states(attributes(name), "GPU", runs_processes=True)
        assert states.estimated == ()
        sources = {a["key"]: a["source"] for a in component(name)["attributes"]}
        assert "validation kit" in sources["powerIdle"]
        assert "validation kit" in sources["powerActiveIdle"]


def test_links_inside_their_endpoints_draw_nothing_of_their_own() -> None:
    for record in COMPONENTS:
        name = record["name"]
        if record["type"] == "NETWORK" and name.startswith(("PCIe", "NVLink")):
            values = attributes(name)
            assert (values["powerIdle"], values["powerConsumptionLoad"]) == (0.0, 0.0), name
