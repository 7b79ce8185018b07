"""000 Listing 3 (saxpy2 on sm_52) through the analyzer: the paper's parameter set, exactly."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from simulator.analyzer import analyze_sass
from simulator.analyzer.analysis import KernelAnalysis
from simulator.analyzer.cli import main
from simulator.analyzer.polynomial import Polynomial
from simulator.models.volkov import GpuHardware, estimate_kernel, saxpy2_profile

LISTING3 = Path(__file__).parents[3] / "examples" / "kernels" / "listing3.sass"
a = Polynomial.symbol("a")


@pytest.fixture(scope="module")
def listing3() -> KernelAnalysis:
    return analyze_sass(LISTING3.read_text(), "sm_52")


def test_listing3_file_holds_the_thirty_printed_instructions() -> None:
    lines = [line for line in LISTING3.read_text().splitlines() if line.strip()]
    assert len(lines) == 30
    assert lines[0] == "MOV R1, c[0x0][0x20];" and lines[-1] == "EXIT;"


def test_it_derives_ins_cuda_23_plus_4a(listing3: KernelAnalysis) -> None:
    assert listing3.ins_cuda == 23 + 4 * a
    assert str(listing3.ins_cuda) == "23 + 4a"


def test_it_derives_gmem_bytes_384(listing3: KernelAnalysis) -> None:
    assert listing3.gmem_bytes == 384  # 3 x 4 bytes x 32 (000 section 5.2)
    assert listing3.counts.global_accesses == 3


def test_it_derives_lat_bound_942_plus_24a(listing3: KernelAnalysis) -> None:
    assert listing3.lat_bound.single == 942 + 24 * a
    assert str(listing3.lat_bound) == "942 + 24a"


def test_the_critical_path_splits_as_92_700_150_24a(listing3: KernelAnalysis) -> None:
    breakdown = listing3.graph.breakdown
    assert breakdown["instructions"] == 92
    assert breakdown["memory"] == 700  # two global loads of 350 cycles
    assert breakdown["block_replacement"] == 150
    assert breakdown["loops"] == 24 * a


def test_the_loop_costs_24_cycles_per_iteration(listing3: KernelAnalysis) -> None:
    (loop,) = listing3.graph.loops
    assert loop.symbol == "a" and (loop.head_line, loop.latch_line) == (21, 24)
    assert loop.per_iteration.single == 24  # IADD32I -6-> ISETP -6-> BRA -12 (taken)-> head


def test_it_finds_three_dual_issues(listing3: KernelAnalysis) -> None:
    assert listing3.counts.dual_issue_pairs == 3
    assert listing3.counts.dual_issues == 2 + a  # one pair sits in the loop


def test_issued_counts_the_loop_pair_per_iteration(listing3: KernelAnalysis) -> None:
    # 26 + 4a instructions, minus the two pairs outside and the one inside the loop
    assert listing3.ins_issued == 24 + 3 * a
    assert listing3.ins_issued.evaluate({"a": 1}) == (23 + 4 * a).evaluate({"a": 1})


def test_the_issue_convention_leaves_the_gtx970_time_unchanged(listing3: KernelAnalysis) -> None:
    gtx970 = GpuHardware(
        sms=13,
        sm_clock_hz=1253e6,
        cuda_cores=128,
        schedulers=4,
        memory_clock_hz=1753e6,
        bus_width_bits=256,
        data_rate=4,
    )
    for intensity in (1, 8, 64):
        ours = estimate_kernel(
            gtx970, listing3.profile({"a": intensity}), block_size=256, n=10**7, occupancy=64
        )
        paper = estimate_kernel(
            gtx970, saxpy2_profile(intensity), block_size=256, n=10**7, occupancy=64
        )
        assert ours.time_s == pytest.approx(paper.time_s, rel=1e-12)


def test_it_evaluates_at_given_trip_counts() -> None:
    analysis = analyze_sass(LISTING3.read_text(), "sm_52", trips={"a": 4})
    values = analysis.values()
    assert values["INS_cuda"] == 39 and values["Lat_bound"] == 1038
    assert analysis.model_params()["latencyBound"] == 1038


def test_the_svg_highlights_the_critical_path(listing3: KernelAnalysis) -> None:
    root = ET.fromstring(listing3.svg())
    thick = [e for e in root.iter() if e.get("stroke-width") == "2.6"]
    # 28 top-level critical edges plus the loop's 4 (head, IADD32I, ISETP, BRA, next)
    assert len(thick) == len(listing3.graph.top.critical) + len(
        listing3.graph.loops[0].region.critical
    )
    assert any("24a" in (t.text or "") for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert len(list(root.iter("{http://www.w3.org/2000/svg}ellipse"))) == 4  # the loop body


def test_the_cli_prints_the_paper_values(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    svg = tmp_path / "graph.svg"
    assert main([str(LISTING3), "--arch", "sm_52", "--trip", "a=1", "--svg", str(svg)]) == 0
    out = capsys.readouterr().out
    assert "INS_cuda   = 23 + 4a" in out and "GMem_bytes = 384" in out
    assert "Lat_bound  = 942 + 24a" in out
    assert svg.read_text().startswith("<svg")


def test_the_cli_writes_json_for_the_model(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "analyze",
            str(LISTING3),
            "--arch",
            "sm_52",
            "--trip",
            "a=2",
            "--block",
            "256",
            "--registers",
            "8",
            "--json",
            "-",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["parameters"]["Lat_bound"] == "942 + 24a"
    assert data["values"]["Lat_bound"] == 990
    assert data["occupancy"]["active_warps_per_sm"] == 64  # 000 section 6: maximum occupancy
    assert data["model_params"]["occupancy"] == 64


def test_the_cli_reports_errors_with_status_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.sass"
    bad.write_text("MOV R1, R2;\nWIBBLE R1;\n")
    assert main([str(bad), "--arch", "sm_52"]) == 2
    assert "unknown opcode 'WIBBLE' on line 2" in capsys.readouterr().err
    assert main([str(LISTING3), "--arch", "sm_52", "--trip", "b=3"]) == 2
    assert "loops are named a" in capsys.readouterr().err
    assert main([str(LISTING3), "--arch", "sm_20"]) == 2
    assert "unsupported architecture 'sm_20'" in capsys.readouterr().err
