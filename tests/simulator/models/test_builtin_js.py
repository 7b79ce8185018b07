"""The built-in JavaScript models agree with their Python references on random inputs."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from simulator.errors import ModelEvaluationError
from simulator.models import builtin_models
from simulator.models.architectures import (
    known_compute_capabilities as profiled_compute_capabilities,
)
from simulator.models.architectures import profile_for_compute_capability
from simulator.models.cpu import computation_time as cpu_time
from simulator.models.energy import power_for_state
from simulator.models.gpu_current import CURRENT_ERRORS, TRANSITION_EXPONENT
from simulator.models.gpu_current import computation_estimate as current_estimate
from simulator.models.gpu_current import computation_time as current_time
from simulator.models.js_compiler import CompiledTwin
from simulator.models.occupancy import (
    architecture_limits,
    known_compute_capabilities,
    limits_from_attributes,
    occupancy_for_limits,
)
from simulator.models.reliability import failure_rate_from_attributes
from simulator.models.transfer import PCIE_ATTRIBUTES, PcieLink
from simulator.models.volkov import computation_estimate as volkov_estimate
from simulator.models.volkov import computation_time as volkov_time
from simulator.shallow import ShallowFunctions
from tests.simulator.models.v8_outcomes import outcome

MODELS = {model.name: model for model in builtin_models()}
REL = 1e-12
SETTINGS = settings(max_examples=50, deadline=None)
CCS = [cc for cc in known_compute_capabilities()]


def _js(name: str, attributes: dict[str, float]) -> ShallowFunctions:
    # twin=False: these tests are about the JavaScript, not its Python twin (test_js_twins.py)
    return ShallowFunctions(
        model_key=name, source=MODELS[name].source, attributes=attributes, twin=False
    )


def _compiled(name: str, attributes: dict[str, float]) -> ShallowFunctions:
    """The model as runs use it: compiled to Python, V8 only where a call declines."""
    functions = ShallowFunctions(model_key=name, source=MODELS[name].source, attributes=attributes)
    assert isinstance(functions._twin, CompiledTwin), (name, functions.fallback)
    return functions


def _gpu_attributes(cc: str, draw_numbers: dict[str, float]) -> dict[str, float]:
    limits = architecture_limits(cc)
    return {
        "computeCapability": float(cc),
        "maxWarpsPerSM": limits.max_warps_per_sm,
        "maxBlocksPerSM": limits.max_blocks_per_sm,
        "registersPerSM": limits.registers_per_sm,
        "sharedMemPerSM": limits.shared_memory_per_sm,
        **draw_numbers,
    }


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_builtin_model_compiles_with_no_refusal(name):
    """Every shipped model runs as compiled Python (none is left to V8 whole, and no run
    carries a `javascript` warning for one)."""
    functions = ShallowFunctions(model_key=name, source=MODELS[name].source, attributes={})
    assert functions.twinned and functions.fallback is None, functions.fallback
    assert isinstance(functions._twin, CompiledTwin)


def test_every_builtin_model_has_a_name_source_and_reference():
    assert {
        "Volkov GPU",
        "GPU kernel (current architectures)",
        "Occupancy calculator",
        "PCIe link",
        "Latency-bandwidth link",
        "CPU",
        "Power states",
        "Reliability",
    } <= set(MODELS)
    for model in MODELS.values():
        assert model.source.strip() and model.description and model.reference


gpu = st.fixed_dictionaries(
    {
        "SMs": st.integers(1, 160),
        "SMCoreClock": st.floats(300, 2500),
        "CUDACores": st.sampled_from([32, 64, 128, 192]),
        "schedulers": st.sampled_from([2, 4]),
        "memoryClock": st.floats(500, 10000),
        "busWidth": st.sampled_from([64, 128, 256, 384, 512, 4096, 5120]),
        "dataRate": st.sampled_from([1, 2, 4, 8]),
    }
)


@SETTINGS
@given(
    cc=st.sampled_from(CCS),
    numbers=gpu,
    use_gmem_throughput=st.booleans(),
    intensity=st.integers(0, 4096),
    block_size=st.sampled_from([32, 64, 96, 128, 256, 512, 1024]),
    n=st.integers(1, 10**9),
    registers=st.integers(1, 63),
    occupancy=st.one_of(st.none(), st.floats(1, 64)),
    lam=st.floats(0.1, 2.0),
    extra=st.lists(st.floats(0, 1000), max_size=3),
)
def test_volkov_gpu_js_matches_python(
    cc, numbers, use_gmem_throughput, intensity, block_size, n, registers, occupancy, lam, extra
):
    attributes = _gpu_attributes(cc, numbers)
    if use_gmem_throughput:
        attributes["GMEMThroughput"] = 13.78
    params: dict[str, object] = {
        "N": n,
        "blockSize": block_size,
        "CUDACoreInstructions": 23 + 4 * intensity,
        "issuedInstructions": 23 + 4 * intensity,
        "GMEMBytesTransferred": 384,
        "latencyBound": 942 + 24 * intensity,
        "kernelExecutionLambda": lam,
        "extraCyclesPerWarp": extra,
    }
    if occupancy is None:
        params["registersPerThread"] = registers
        params["sharedMemPerBlock"] = 0
    else:
        params["occupancy"] = occupancy
    shallow = _js("Volkov GPU", attributes)
    try:
        expected = volkov_time(attributes, params)
    except ValueError:  # a block the architecture cannot launch: both sides must refuse it
        with pytest.raises(ModelEvaluationError):
            shallow.call("computationTime", params=params)
        return
    assert shallow.call("computationTime", params=params) == pytest.approx(expected, rel=REL)
    # what bounds the kernel, as the run's timeline shows it
    estimate = volkov_estimate(attributes, params)
    detail = shallow.call_detail("computationDetail", params=params)
    assert (detail["bound"], detail["occupancy"]) == (estimate.bound, estimate.occupancy)


CURRENT = "GPU kernel (current architectures)"


@SETTINGS
@given(
    cc=st.sampled_from(CCS),
    numbers=gpu,
    use_gmem_throughput=st.booleans(),
    launch_overhead=st.one_of(st.none(), st.floats(0, 1e-4)),
    memory_efficiency=st.one_of(st.none(), st.floats(0.05, 1)),
    l2=st.one_of(
        st.none(),
        st.fixed_dictionaries(
            {"L2Cache": st.floats(1e5, 1e8), "L2Bandwidth": st.floats(1e11, 3e13)}
        ),
    ),
    l2_resident=st.booleans(),
    footprint_in_l2s=st.one_of(st.none(), st.just(1.0), st.floats(0, 1.5)),
    intensity=st.integers(0, 4096),
    block_size=st.sampled_from([32, 64, 96, 128, 256, 512, 1024]),
    whole_waves=st.integers(0, 50),
    tail_blocks=st.one_of(st.just(0), st.integers(1, 10**4)),
    by_n=st.booleans(),
    registers=st.integers(1, 63),
    occupancy=st.one_of(st.none(), st.floats(1, 64)),
    exponent=st.one_of(st.none(), st.floats(0.25, 64), st.just(math.inf)),
    extra=st.lists(st.floats(0, 1000), max_size=3),
    wake=st.one_of(
        st.none(),
        st.fixed_dictionaries(
            {"clockWakePenalty": st.floats(0, 1e-4), "clockWakeTimeConstant": st.floats(1e-4, 1)}
        ),
    ),
    idle=st.one_of(st.none(), st.floats(0, 1)),
    tensor=st.one_of(
        st.none(),
        st.fixed_dictionaries(
            {
                "tensorInstructions": st.integers(0, 10**5),
                "tensorPrecision": st.sampled_from(
                    ["fp16", "BF16", "tf32", "fp8", "fp4", "fp64", "int8", "fp3"]
                ),
            },
            optional={"tensorFLOPsPerInstruction": st.sampled_from([0, 512, 4096, 8192.5])},
        ),
    ),
    tensor_rates=st.dictionaries(
        st.sampled_from(
            [
                "tensorFLOPsPerCycleFP16",
                "tensorFLOPsPerCycleTF32",
                "tensorFLOPsPerCycleFP8",
                "tensorFLOPsPerCycleFP64",
                "tensorOpsPerCycleINT8",
            ]
        ),
        st.floats(64, 16384),
    ),
    int_lanes=st.one_of(st.none(), st.tuples(st.sampled_from([16, 64, 128]), st.integers(0, 5000))),
    shared=st.one_of(
        st.none(), st.tuples(st.integers(0, 5000), st.sampled_from([0.5, 1, 2, 7.5, 32]))
    ),
    # (C.8)-(C.10): atomics and their addresses, barriers, sectors per request, and the
    # hardware's atomic rates (a negative or zero one is refused on both sides)
    sync=st.fixed_dictionaries(
        {},
        optional={
            "atomicsPerThread": st.sampled_from([-1, 0, 1 / 256, 0.5, 1, 4]),
            "atomicAddresses": st.sampled_from([0, 1, 32, 256, 65536]),
            "atomicsPerSector": st.sampled_from([0, 1, 1.5, 8]),
            "barrierInstructions": st.sampled_from([-1, 0, 1, 2, 17]),
            "sectorsPerRequest": st.sampled_from([0, 1, 4, 8.5, 32]),
            "accessBytes": st.sampled_from([-4, 1, 4, 8, 16]),
        },
    ),
    sync_hardware=st.fixed_dictionaries(
        {},
        optional={
            "L2AtomicThroughput": st.sampled_from([0, 1e9, 1e11, 5e11]),
            "atomicSameAddressRate": st.sampled_from([0, 0.5, 1, 2]),
            "barrierLatency": st.sampled_from([0, 20, 100.5]),
        },
    ),
)
def test_gpu_current_js_matches_python(
    cc,
    numbers,
    use_gmem_throughput,
    launch_overhead,
    memory_efficiency,
    l2,
    l2_resident,
    footprint_in_l2s,
    intensity,
    block_size,
    whole_waves,
    tail_blocks,
    by_n,
    registers,
    occupancy,
    exponent,
    extra,
    wake,
    idle,
    tensor,
    tensor_rates,
    int_lanes,
    shared,
    sync,
    sync_hardware,
):
    # without kernelLaunchOverhead / memoryEfficiency both read the architecture's (or refuse)
    optional = {"kernelLaunchOverhead": launch_overhead, "memoryEfficiency": memory_efficiency}
    attributes = _gpu_attributes(
        cc,
        {
            **numbers,
            **(l2 or {}),
            **(wake or {}),
            **{k: v for k, v in optional.items() if v is not None},
        },
    )
    if use_gmem_throughput:
        attributes["GMEMThroughput"] = 13.78
    attributes |= tensor_rates  # (C.6): a precision without a rate is refused on both sides
    if int_lanes is not None:
        attributes["INTUnits"] = int_lanes[0]
    params: dict[str, object] = {
        "gridSize": 1,
        "blockSize": block_size,
        "CUDACoreInstructions": 23 + 4 * intensity,
        "issuedInstructions": 23 + 4 * intensity,
        "GMEMBytesTransferred": 384,
        "latencyBound": 942 + 24 * intensity,
        "extraCyclesPerWarp": extra,
        "l2Resident": l2_resident,
    }
    if occupancy is None:
        params["registersPerThread"] = registers
        params["sharedMemPerBlock"] = 0
    else:
        params["occupancy"] = occupancy
    if footprint_in_l2s is not None:  # the data's size in L2 sizes (of 50 MB without one)
        params["footprintBytes"] = footprint_in_l2s * (l2 or {"L2Cache": 50e6})["L2Cache"]
    if exponent is not None:
        params["transitionExponent"] = exponent
    if idle is not None:
        params["idleBeforeS"] = idle
    params |= tensor or {}
    if int_lanes is not None:
        params["INTInstructions"] = int_lanes[1]
    if shared is not None:  # (C.7): shared-memory accesses and their bank-conflict degree
        attributes["LDSTUnits"] = 32
        params["sharedMemoryInstructions"] = shared[0]
        params["sharedMemoryConflictWays"] = shared[1]
    params |= sync
    attributes |= sync_hardware
    shallow = _js(CURRENT, attributes)
    compiled = _compiled(CURRENT, attributes)
    try:
        # whole waves of the launch's blocks per SM, then a tail wave of tail_blocks
        blocks_per_wave = current_estimate(attributes, params).blocks_per_sm * numbers["SMs"]
        grid = max(1, whole_waves * blocks_per_wave + tail_blocks % blocks_per_wave)
        if by_n:
            del params["gridSize"]
            params["N"] = grid * block_size - (grid > 1) * (block_size - 1)
        else:
            params["gridSize"] = grid
        expected = current_time(attributes, params)
    except ValueError:  # no profile for the architecture, or a block that does not fit
        with pytest.raises(ModelEvaluationError):
            shallow.call("computationTime", params=params)
        assert outcome(compiled, "computationTime", params=params) == outcome(
            shallow, "computationTime", params=params
        )
        return
    assert shallow.call("computationTime", params=params) == pytest.approx(expected, rel=REL)
    # the model compiled to Python gives V8's very double, bit for bit
    assert outcome(compiled, "computationTime", params=params) == outcome(
        shallow, "computationTime", params=params
    )
    # what bounds the kernel, as the run's timeline shows it
    estimate = current_estimate(attributes, params)
    detail = shallow.call_detail("computationDetail", params=params)
    assert (detail["bound"], detail["blocksPerSM"], detail["waves"], detail["tailBlocks"]) == (
        estimate.bound,
        estimate.blocks_per_sm,
        estimate.waves,
        estimate.tail_blocks,
    )
    assert detail["occupancy"] == estimate.occupancy
    assert detail["timeS"] == pytest.approx(estimate.time_s, rel=REL)


# An H100 SXM5 as its seed record gives it, for kernels in which atomics, barriers and
# gathers decide the time (the random GPUs above mostly refuse, or never reach these terms)
H100_RECORD = {
    "SMs": 132,
    "SMCoreClock": 1980,
    "CUDACores": 128,
    "schedulers": 4,
    "memoryClock": 2619,
    "busWidth": 5120,
    "dataRate": 2,
    "computeCapability": 9.0,
    "kernelLaunchOverhead": 5.7e-6,
    "memoryEfficiency": 0.82,
    "INTUnits": 64,
}


@SETTINGS
@given(
    l2_bandwidth=st.one_of(st.none(), st.floats(1e12, 2e13)),
    gmem_throughput=st.one_of(st.none(), st.floats(1, 40)),
    hardware=st.fixed_dictionaries(
        {},
        optional={
            "L2AtomicThroughput": st.floats(1e9, 1e12),
            "atomicSameAddressRate": st.floats(0.25, 4),
            "barrierLatency": st.floats(0, 200),
        },
    ),
    block_size=st.sampled_from([32, 128, 256, 512, 1024]),
    grid=st.integers(1, 10**5),
    issued=st.integers(10, 5000),
    gmem_bytes=st.sampled_from([0, 128, 384, 1024]),
    latency=st.integers(100, 20000),
    atomics=st.one_of(st.none(), st.floats(0, 4)),
    addresses=st.one_of(st.none(), st.sampled_from([1, 2, 32, 256, 65536])),
    per_sector=st.one_of(st.none(), st.sampled_from([1, 1.56, 8])),
    barriers=st.one_of(st.none(), st.integers(0, 40)),
    sectors=st.one_of(st.none(), st.floats(1, 32)),
    access_bytes=st.one_of(st.none(), st.sampled_from([1, 2, 4, 8, 16])),
)
# spread atomics on a record without L2Bandwidth: one sector per operation at the DRAM's rate
@example(
    l2_bandwidth=None,
    gmem_throughput=None,
    hardware={},
    block_size=256,
    grid=10**5,
    issued=20,
    gmem_bytes=128,
    latency=500,
    atomics=2.0,
    addresses=None,
    per_sector=None,
    barriers=None,
    sectors=None,
    access_bytes=None,
)
def test_gpu_current_js_matches_python_for_atomics_barriers_and_gathers(
    l2_bandwidth,
    gmem_throughput,
    hardware,
    block_size,
    grid,
    issued,
    gmem_bytes,
    latency,
    atomics,
    addresses,
    per_sector,
    barriers,
    sectors,
    access_bytes,
):
    attributes: dict[str, float] = {**H100_RECORD, **hardware}
    if l2_bandwidth is not None:
        attributes["L2Bandwidth"] = l2_bandwidth
    if gmem_throughput is not None:
        attributes["GMEMThroughput"] = gmem_throughput
    params: dict[str, object] = {
        "gridSize": grid,
        "blockSize": block_size,
        "occupancy": 64,
        "CUDACoreInstructions": issued,
        "issuedInstructions": issued,
        "GMEMBytesTransferred": gmem_bytes,
        "latencyBound": latency,
    }
    optional = {
        "atomicsPerThread": atomics,
        "atomicAddresses": addresses,
        "atomicsPerSector": per_sector,
        "barrierInstructions": barriers,
        "sectorsPerRequest": sectors,
        "accessBytes": access_bytes,
    }
    params |= {k: v for k, v in optional.items() if v is not None}
    shallow = _js(CURRENT, attributes)
    compiled = _compiled(CURRENT, attributes)
    estimate = current_estimate(attributes, params)
    assert shallow.call("computationTime", params=params) == pytest.approx(estimate.time_s, rel=REL)
    assert outcome(compiled, "computationTime", params=params) == outcome(
        shallow, "computationTime", params=params
    )
    detail = shallow.call_detail("computationDetail", params=params)
    assert detail["bound"] == estimate.bound


def test_gpu_current_js_reads_the_defaults_the_python_reads():
    probe = MODELS[CURRENT].source + (
        "\nfunction computationTime(params) {"
        " var cc = GPU_CURRENT_DEFAULTS.architectures[params.cc];"
        " return params.name === 'p' ? GPU_CURRENT_DEFAULTS.transitionExponent : cc[params.name]; }"
    )
    shallow = ShallowFunctions(model_key="gpu-current-probe", source=probe, attributes={})
    assert shallow.call("computationTime", params={"cc": "9.0", "name": "p"}) == (
        TRANSITION_EXPONENT
    )
    for cc in profiled_compute_capabilities():
        profile = profile_for_compute_capability(cc)
        for name, value in (
            ("kernelLaunchOverhead", profile.launch_overhead_s),
            ("memoryEfficiency", profile.memory_efficiency),
        ):
            assert shallow.call("computationTime", params={"cc": cc, "name": name}) == value


H100 = {
    "SMs": 132,
    "SMCoreClock": 1980,
    "CUDACores": 128,
    "schedulers": 4,
    "memoryClock": 2619,
    "busWidth": 5120,
    "dataRate": 2,
    "kernelLaunchOverhead": 5e-6,
    "memoryEfficiency": 0.8,
}
KERNEL = {
    "gridSize": 10**4,
    "blockSize": 256,
    "occupancy": 64,
    "CUDACoreInstructions": 10,
    "issuedInstructions": 10,
    "GMEMBytesTransferred": 384,
    "latencyBound": 900,
}


@pytest.mark.parametrize(
    "missing",
    ["SMs", "SMCoreClock", "CUDACores", "schedulers", "memoryClock", "kernelLaunchOverhead"],
)
def test_gpu_current_js_names_a_missing_attribute_as_python_does(missing):
    attributes = {key: value for key, value in H100.items() if key != missing}
    with pytest.raises(ValueError, match=f"'{missing}'"):
        current_time(attributes, KERNEL)
    with pytest.raises(ModelEvaluationError, match=f"'{missing}'"):
        _js(CURRENT, attributes).call("computationTime", params=KERNEL)


@pytest.mark.parametrize(
    ("drop", "gmem_throughput", "named"),
    [
        (("CUDACores",), 40.0, "hardware attribute 'CUDACores' is required"),
        (
            ("SMs", "CUDACores", "schedulers"),
            40.0,
            "hardware attributes 'SMs', 'CUDACores', 'schedulers' are required",
        ),
        # without GMEMThroughput, (4.5)'s attributes are named with the others
        (
            ("SMCoreClock", "busWidth", "dataRate"),
            None,
            "hardware attributes 'SMCoreClock', 'busWidth', 'dataRate' are required",
        ),
    ],
)
def test_volkov_gpu_names_every_missing_attribute_at_once_in_python_and_js(
    drop, gmem_throughput, named
):
    attributes = {key: value for key, value in H100.items() if key not in drop}
    if gmem_throughput is not None:
        attributes["GMEMThroughput"] = gmem_throughput
    message = f"{named} by the Volkov GPU model"
    with pytest.raises(ValueError, match=re.escape(message) + "$"):
        volkov_time(attributes, KERNEL)
    with pytest.raises(ModelEvaluationError, match=re.escape(message)):
        _js("Volkov GPU", attributes).call("computationTime", params=KERNEL)


def test_gpu_current_names_every_missing_attribute_at_once_in_python_and_js():
    drop = ("SMs", "schedulers", "kernelLaunchOverhead", "memoryEfficiency")
    attributes = {key: value for key, value in H100.items() if key not in drop}
    message = CURRENT_ERRORS["missing_attributes"].format(
        names="'SMs', 'schedulers', 'kernelLaunchOverhead', 'memoryEfficiency'"
    )
    with pytest.raises(ValueError, match=re.escape(message) + "$"):
        current_time(attributes, KERNEL)
    with pytest.raises(ModelEvaluationError, match=re.escape(message)):
        _js(CURRENT, attributes).call("computationTime", params=KERNEL)
    # a compute capability with a profile stands for the last two
    with pytest.raises(ValueError, match=re.escape("attributes 'SMs', 'schedulers' are")):
        current_time({**attributes, "computeCapability": 9.0}, KERNEL)
    with pytest.raises(ModelEvaluationError, match=re.escape("attributes 'SMs', 'schedulers' are")):
        _js(CURRENT, {**attributes, "computeCapability": 9.0}).call(
            "computationTime", params=KERNEL
        )


def test_gpu_current_js_points_to_the_compute_capability_for_architecture_values():
    attributes = {k: v for k, v in H100.items() if k != "memoryEfficiency"}
    message = CURRENT_ERRORS["missing_attribute"].format(name="memoryEfficiency")
    with pytest.raises(ValueError, match=re.escape(message)):
        current_time(attributes, KERNEL)
    with pytest.raises(ModelEvaluationError, match=r"or a computeCapability whose architecture"):
        _js(CURRENT, attributes).call("computationTime", params=KERNEL)


def test_gpu_current_js_refuses_a_block_that_does_not_fit_as_python_does():
    params = {**KERNEL, "occupancy": 4}
    with pytest.raises(ValueError, match="no block of 256 threads fits on an SM"):
        current_time(H100, params)
    with pytest.raises(ModelEvaluationError, match="no block of 256 threads fits on an SM"):
        _js(CURRENT, H100).call("computationTime", params=params)


@SETTINGS
@given(
    cc=st.sampled_from(CCS),
    block_size=st.integers(1, 1024),
    registers=st.integers(0, 63),
    shared=st.integers(0, 48 * 1024),
)
def test_occupancy_js_matches_python(cc, block_size, registers, shared):
    attributes = _gpu_attributes(cc, {})
    limits = limits_from_attributes(attributes)
    try:
        expected: float | None = occupancy_for_limits(
            limits,
            block_size=block_size,
            registers_per_thread=registers,
            shared_mem_per_block=shared,
        ).active_warps_per_sm
    except ValueError:
        expected = None
    source = MODELS["Occupancy calculator"].source + (
        "\nfunction computationTime(params) {"
        " return activeWarpsPerSM(params.blockSize, params.registers, params.shared); }"
    )
    shallow = ShallowFunctions(model_key="occupancy-probe", source=source, attributes=attributes)
    params = {"blockSize": block_size, "registers": registers, "shared": shared}
    if expected is None:
        with pytest.raises(ModelEvaluationError):
            shallow.call("computationTime", params=params)
    else:
        assert shallow.call("computationTime", params=params) == expected


def test_occupancy_names_every_missing_attribute_at_once_in_python_and_js():
    attributes = _gpu_attributes("8.9", {})
    del attributes["maxWarpsPerSM"], attributes["maxBlocksPerSM"]
    message = "hardware attributes 'maxWarpsPerSM', 'maxBlocksPerSM' are required by the occupancy calculator"
    with pytest.raises(ValueError, match=re.escape(message) + "$"):
        limits_from_attributes(attributes)
    source = MODELS["Occupancy calculator"].source + (
        "\nfunction computationTime(params) { return activeWarpsPerSM(256, 32, 0); }"
    )
    shallow = ShallowFunctions(model_key="occupancy-probe", source=source, attributes=attributes)
    with pytest.raises(ModelEvaluationError, match=re.escape(message)):
        shallow.call("computationTime", params={})


link = st.fixed_dictionaries(
    {
        "startupHTD": st.floats(0, 1e-3),
        "startupDth": st.floats(0, 1e-3),
        "lambdaHTD": st.floats(0.05, 1),
        "lambdaDth": st.floats(0.05, 1),
        "bandwidth": st.floats(1e8, 1e12),
    }
)


@SETTINGS
@given(
    attributes=link,
    size=st.integers(0, 2**34),
    direction=st.sampled_from(["HostToDevice", "DeviceToHost"]),
)
def test_pcie_link_js_matches_python(attributes, size, direction):
    expected = PcieLink.from_attributes("probe", attributes).p2p_time(size, direction)
    actual = _js("PCIe link", attributes).call("p2pTime", size, params={"direction": direction})
    assert actual == pytest.approx(expected, rel=REL)


pageable_pair = st.fixed_dictionaries(
    {"startup": st.floats(0, 1e-3), "bandwidth": st.floats(1e8, 1e12)},
    optional={"drop": st.sampled_from(["startup", "bandwidth"])},
)


@SETTINGS
@given(
    attributes=link,
    pageable=st.dictionaries(st.sampled_from(["HTD", "Dth"]), pageable_pair),
    size=st.integers(0, 2**34),
    direction=st.sampled_from(["HostToDevice", "DeviceToHost", None]),
    host_memory=st.sampled_from(["pageable", "pinned", None, "Pinned", 1]),
)
def test_pcie_link_js_matches_python_for_both_host_memory_kinds(
    attributes, pageable, size, direction, host_memory
):
    attributes = dict(attributes)
    for suffix, pair in pageable.items():
        for name in ("startup", "bandwidth"):
            if pair.get("drop") != name:
                attributes[f"pageable{name.title()}{suffix}"] = pair[name]
    params = {
        key: value
        for key, value in {"direction": direction, "hostMemory": host_memory}.items()
        if value is not None
    }
    shallow = _js("PCIe link", attributes)
    try:
        expected = PcieLink.from_attributes("probe", attributes).p2p_time(
            size, direction, host_memory
        )
    except ValueError as error:  # both sides refuse it, with the same message
        with pytest.raises(ModelEvaluationError) as caught:
            shallow.call("p2pTime", size, params=params)
        assert str(error).replace("params.direction", "a direction") in caught.value.detail.replace(
            "params.direction", "a direction"
        )
        return
    assert shallow.call("p2pTime", size, params=params) == pytest.approx(expected, rel=REL)


def test_an_empty_pcie_message_without_direction_costs_nothing_in_js():
    shallow = _js(
        "PCIe link",
        {"startupHTD": 1e-6, "startupDth": 1e-6, "lambdaHTD": 1, "lambdaDth": 1, "bandwidth": 1e9},
    )
    assert shallow.call("p2pTime", 0, params={}) == 0
    with pytest.raises(ModelEvaluationError, match=r"needs params\.direction"):
        shallow.call("p2pTime", 8, params={})


@SETTINGS
@given(latency=st.floats(0, 1e-3), bandwidth=st.floats(1e6, 1e12), size=st.integers(0, 2**40))
def test_latency_bandwidth_link_js_matches_python(latency, bandwidth, size):
    from simulator.models.transfer import latency_bandwidth_time

    expected = latency_bandwidth_time(size, latency_s=latency, bandwidth=bandwidth)
    actual = _js("Latency-bandwidth link", {"latency": latency, "bandwidth": bandwidth}).call(
        "p2pTime", size, params={}
    )
    assert actual == pytest.approx(expected, rel=REL)


@SETTINGS
@given(
    cores=st.integers(1, 256),
    clock=st.floats(500, 5000),
    per_cycle=st.sampled_from([2, 4, 8, 16, 32]),
    flops=st.floats(0, 1e15),
    threads=st.one_of(st.none(), st.integers(1, 512)),
    efficiency=st.floats(0.01, 1),
)
def test_cpu_js_matches_python(cores, clock, per_cycle, flops, threads, efficiency):
    attributes = {"cores": cores, "coreClock": clock, "flopsPerCycle": per_cycle}
    params: dict[str, float] = {"flops": flops, "efficiency": efficiency}
    if threads is not None:
        params["threads"] = threads
    expected = cpu_time(attributes, params)
    assert _js("CPU", attributes).call("computationTime", params=params) == pytest.approx(
        expected, rel=REL, abs=0
    )


@SETTINGS
@given(
    idle=st.floats(0, 500),
    load_w=st.floats(0, 1000),
    load=st.floats(0, 1),
    state=st.sampled_from(["idle", "active"]),
)
def test_power_js_matches_python(idle, load_w, load, state):
    attributes = {"powerIdle": idle, "powerConsumptionLoad": max(idle, load_w)}
    expected = power_for_state(attributes, state, load)
    actual = _js("Power states", attributes).call("power", state, params={"load": load})
    assert actual == pytest.approx(expected, rel=REL, abs=1e-300)


@SETTINGS
@given(rate=st.one_of(st.none(), st.floats(0, 1)), mtbf=st.one_of(st.none(), st.floats(1, 1e9)))
def test_reliability_js_matches_python(rate, mtbf):
    attributes = {
        k: v for k, v in {"failuresPerSecond": rate, "mtbf": mtbf}.items() if v is not None
    }
    expected = failure_rate_from_attributes(attributes)
    actual = _js("Reliability", attributes).call("failureRate", params={})
    assert math.isclose(actual, expected, rel_tol=REL, abs_tol=0)


@pytest.mark.parametrize(
    "drop",
    [
        ("bandwidth",),
        ("startupDth",),
        ("lambdaHTD", "startupDth"),
        ("bandwidth", "startupHTD", "lambdaHTD", "startupDth", "lambdaDth"),
    ],
)
@pytest.mark.parametrize("direction", ["HostToDevice", "DeviceToHost"])
def test_pcie_link_names_every_missing_attribute_in_python_and_js(drop, direction):
    full = {"startupHTD": 1e-6, "startupDth": 2e-6, "lambdaHTD": 0.8, "lambdaDth": 0.7}
    attributes = {
        key: value for key, value in {**full, "bandwidth": 1e10}.items() if key not in drop
    }
    with pytest.raises(ValueError) as expected:
        PcieLink.from_attributes("probe", attributes).p2p_time(64, direction)
    names = "', '".join(key for key in PCIE_ATTRIBUTES if key in drop)
    word = "attributes" if len(drop) > 1 else "attribute"
    assert (
        str(expected.value) == f"link {word} '{names}' {'are' if len(drop) > 1 else 'is'} required"
    )
    for twin in (False, True):  # V8, and the Python twin that must leave it to V8
        shallow = ShallowFunctions(
            model_key="PCIe link",
            source=MODELS["PCIe link"].source,
            attributes=attributes,
            twin=twin,
        )
        with pytest.raises(ModelEvaluationError) as caught:
            shallow.call("p2pTime", 64, params={"direction": direction})
        assert str(expected.value) in caught.value.detail
