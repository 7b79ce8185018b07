"""Latency tables (000 Table 4.1 and later families), strides, nesting and ptxas parsing."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.analyzer import analyze_sass
from simulator.analyzer.compile import parse_ptxas
from simulator.analyzer.errors import AnalyzerError
from simulator.analyzer.latency import known_architectures, latency_table, normalise_arch
from simulator.analyzer.polynomial import Polynomial

LISTING3 = (Path(__file__).parents[3] / "examples" / "kernels" / "listing3.sass").read_text()
a = Polynomial.symbol("a")
b = Polynomial.symbol("b")


def test_maxwell_table_is_000_table_4_1() -> None:
    table = latency_table("sm_52")
    assert table.classes["fp32"] == 6 and table.classes["int"] == 6  # add, sub, mad, shl, shr
    assert table.classes["move"] == 6  # mov, setp
    assert (table.branch_taken, table.branch_not_taken) == (12, 10)
    assert (table.issue_latency, table.dual_issue_latency) == (3, 0)
    assert table.block_replacement == 150
    assert table.memory["global"] == 350
    assert table.dual_issue and table.compute_capability == "5.2"
    assert "Table 4.1" in table.sources["memory.global"]


def test_every_table_entry_names_its_source() -> None:
    for arch in known_architectures():
        table = latency_table(arch)
        assert all(source.strip() for source in table.sources.values()), arch
    assert not latency_table("sm_80").dual_issue
    # Hopper's global latency is this project's pointer chase on an H100 (validation/data)
    hopper = latency_table("sm_90")
    assert 600 < hopper.memory["global"] < 800
    assert "validation/data/" in hopper.sources["memory.global"]


def test_it_normalises_architecture_spellings_and_rejects_unknown_ones() -> None:
    assert normalise_arch("5.2") == normalise_arch("52") == normalise_arch("compute_52") == "sm_52"
    assert normalise_arch("sm_90a") == "sm_90a"
    with pytest.raises(AnalyzerError, match="unsupported architecture 'sm_100'"):
        latency_table("sm_100")
    with pytest.raises(AnalyzerError, match="not of the form"):
        latency_table("volta")


@pytest.mark.parametrize(
    ("stride", "extra_bytes", "reissues"), [(1, 0, 0), (2, 128, 1), (4, 384, 3)]
)
def test_strided_loads_move_more_bytes_and_reissue(
    stride: int, extra_bytes: int, reissues: int
) -> None:
    # line 19 holds the first LDG.E of Listing 3 (000 section 4.2: stride 2 -> 256 B, 1 re-issue)
    analysis = analyze_sass(LISTING3, "sm_52", strides={19: stride})
    assert analysis.gmem_bytes == 384 + extra_bytes
    assert analysis.counts.reissues == reissues
    assert analysis.ins_issued == 24 + 3 * a + reissues


def test_a_stride_on_a_line_without_memory_access_is_rejected() -> None:
    with pytest.raises(AnalyzerError, match="line 1 holds no memory access"):
        analyze_sass(LISTING3, "sm_52", strides={1: 2})


NESTED = """
MOV R0, RZ;
MOV R1, RZ;
IADD32I R1, R1, 0x1;
FFMA R2, R2, R2, R2;
MUFU.RCP R3, R2;
ISETP.LT.AND P1, PT, R1, 0x8, PT;
@P1 BRA 0x18;
IADD32I R0, R0, 0x1;
ISETP.LT.AND P0, PT, R0, 0x4, PT;
@P0 BRA 0x10;
DADD R4, R4, R6;
EXIT;
"""


def test_nested_loops_multiply_their_trip_counts() -> None:
    analysis = analyze_sass(NESTED, "sm_52", trips={"a": 4, "b": 8})
    assert analysis.trip_symbols == ["a", "b"]
    assert analysis.counts.by_class["sfu"] == a * b
    assert analysis.counts.by_class["fp64"] == 1
    # CUDA cores: MOV and EXIT outside (DADD is FP64), 4 in the outer loop only (MOV, IADD32I,
    # ISETP, BRA), 4 in the inner loop (IADD32I, FFMA, ISETP, BRA; MUFU is SFU)
    assert analysis.ins_cuda == 2 + 4 * a + 4 * a * b
    assert analysis.values()["INS_sfu"] == 32
    inner = analysis.graph.loops[1]
    assert inner.symbol == "b" and inner.multiplier == a * b
    assert analysis.lat_bound.single is not None
    assert analysis.lat_bound.single.coefficient("a", "b") == inner.per_iteration.single


def test_ptxas_listing_1_gives_8_registers_and_no_shared_memory() -> None:
    usage = parse_ptxas(
        "ptxas info: Function properties for saxpy2\n    Used 8 registers , 344 bytes cmem[0]\n"
    )
    assert usage["saxpy2"].registers == 8
    assert usage["saxpy2"].shared_bytes == 0 and usage["saxpy2"].constant_bytes == 344


def test_ptxas_reports_shared_memory_and_spills() -> None:
    text = (
        "ptxas info    : Compiling entry function 'k' for 'sm_80'\n"
        "ptxas info    : Function properties for k\n"
        "    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
        "ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem, 376 bytes cmem[0]\n"
    )
    usage = parse_ptxas(text)["k"]
    assert (usage.registers, usage.shared_bytes, usage.barriers) == (40, 2048, 1)
    assert (usage.stack_frame_bytes, usage.spill_store_bytes, usage.spill_load_bytes) == (16, 8, 4)


MMA_LOOP = """
MOV R0, RZ;
LDS.128 R8, [R2];
HMMA.16816.F32.BF16 R4, R8, R10, R4;
HMMA.16816.F32.BF16 R12, R8, R11, R12;
IADD3 R0, R0, 0x1, RZ;
ISETP.LT.AND P0, PT, R0, 0x40, PT;
@P0 BRA 0x10;
ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU PT, R7, [R2.64], R4;
RED.E.ADD.F32.FTZ.RN.STRONG.GPU [R2.64], R12;
BAR.SYNC.DEFER_BLOCKING 0x0;
ATOMS.ADD RZ, [R2], R4;
BAR.ARV 0x1, 0x40;
EXIT;
"""


def test_tensor_int_and_atomic_counts_reach_the_current_models_parameters() -> None:
    analysis = analyze_sass(MMA_LOOP, "sm_80", trips={"a": 64})
    values = analysis.values()
    assert values["INS_tensor"] == 2 * 64
    assert values["INS_atomic"] == 3  # ATOMG, RED and ATOMS
    assert values["INS_atomic_global"] == 2  # ATOMG and RED, resolved in L2
    assert values["INS_barrier"] == 1  # BAR.SYNC waits for the block, BAR.ARV does not
    assert values["INS_int"] == 2 * 64  # IADD3 and ISETP in the loop
    params = analysis.model_params()
    assert params["tensorInstructions"] == 128
    assert params["tensorPrecision"] == "bf16"
    assert params["INTInstructions"] == 128
    assert (params["atomicsPerThread"], params["barrierInstructions"]) == (2, 1)
    # a kernel without atomics or barriers gets neither parameter
    plain = analyze_sass(MMA_LOOP.split("ATOMG")[0] + "EXIT;\n", "sm_80", trips={"a": 64})
    assert not {"atomicsPerThread", "barrierInstructions"} & set(plain.model_params())
    assert analysis.counts.tensor_precisions == ("bf16",)


# ptxas 13.0 (sm_90) for `atomicAdd(p, in[threadIdx.x])` with `p` a kernel parameter and
# unsigned values: the warp votes, elects its lowest lane, sums with REDUX and the leader adds
WARP_AGGREGATED = """
S2R R5, SR_TID.X;
LDG.E R2, desc[UR6][R2.64];
VOTEU.ANY UR4, UPT, PT;
S2R R0, SR_LANEID;
UFLO.U32 UR4, UR4;
ISETP.EQ.U32.AND P0, PT, R0, UR4, PT;
REDUX.SUM UR5, R2;
MOV R7, UR5;
@P0 REDG.E.ADD.STRONG.GPU desc[UR6][R4.64], R7;
EXIT;
"""


def test_a_warp_aggregated_atomic_is_one_operation_per_warp() -> None:
    analysis = analyze_sass(WARP_AGGREGATED, "sm_90")
    values = analysis.values()
    assert values["INS_atomic_global"] == 1  # one instruction per warp either way
    assert values["OPS_atomic_global"] == pytest.approx(1 / 32)  # issued by the leader alone
    assert analysis.model_params()["atomicsPerThread"] == pytest.approx(1 / 32)
    # the same REDG under a predicate that does not elect one lane: every lane an operation
    bounded = WARP_AGGREGATED.replace(
        "ISETP.EQ.U32.AND P0, PT, R0, UR4, PT;", "ISETP.GE.AND P0, PT, R5, 0x10, PT;"
    )
    assert analyze_sass(bounded, "sm_90").values()["OPS_atomic_global"] == 1
    # a compare of the lane id with a constant is not an election: as for any other predicate
    # (`if (threadIdx.x == 0)`), the analyzer does not know which lanes are off and counts all
    fixed = WARP_AGGREGATED.replace("UFLO.U32 UR4, UR4;", "MOV UR4, 0x3;")
    assert analyze_sass(fixed, "sm_90").values()["OPS_atomic_global"] == 1
    # negated guard: the lanes that are not the leader
    negated = WARP_AGGREGATED.replace("@P0 REDG", "@!P0 REDG")
    assert analyze_sass(negated, "sm_90").values()["OPS_atomic_global"] == 1


@pytest.mark.parametrize(
    ("opcode", "precision"),
    [
        ("HMMA.16816.F32", "fp16"),
        ("HMMA.1688.F32.TF32", "tf32"),
        ("HGMMA.64x128x16.F32.BF16", "bf16"),
        ("QGMMA.64x128x32.F32.E4M3.E4M3", "fp8"),
        ("DMMA.884", "fp64"),
        ("IMMA.16832.S8.S8", "int8"),
        ("BMMA.88128.AND.POPC", None),
        ("FFMA", None),
    ],
)
def test_a_tensor_instructions_precision_comes_from_its_opcode(opcode, precision) -> None:
    from simulator.analyzer.isa import tensor_precision

    assert tensor_precision(opcode) == precision
