"""`python -m simulator run | sweep`: parsing, summary, JSON, sweeps and one-line errors."""

from __future__ import annotations

import gc
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simulator import runner
from simulator.cli import common, main, parser_for, sweep
from simulator.cli.common import (
    ProgressBar,
    parse_labels,
    parse_value,
    parse_variables,
    record_table,
    table,
    write_json,
)
from simulator.cli.sweep import expand_values
from simulator.sandbox.parent import RESULT_ROW_BYTES, Limits, RawResult
from simulator.sandbox.wire import encode_json
from simulator.summary import result_summary

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "merpsys_gtx970"
LAUNCH = [
    "--system",
    str(EXAMPLE / "snapshot.json"),
    "--app",
    str(EXAMPLE / "app.py"),
    "--labels",
    "CPU=1,GPU=1",
    "--var",
    "N=1000000",
    "--var",
    "blockSz=256",
    "--var",
    "occupancy=64",
]


@pytest.fixture(autouse=True)
def _collector_thresholds() -> Iterator[None]:
    """A `--no-sandbox` run raises this process's young threshold for good, as a child's
    (`common.runner`): put back for the tests that follow."""
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("10000000", 10000000),
        ("0.5", 0.5),
        ("1e3", 1000.0),
        ("true", True),
        ("False", False),
        ("gtx", "gtx"),
        ("nan", "nan"),
    ],
)
def test_variables_parse_as_int_float_bool_or_string(text: str, value: object) -> None:
    parsed = parse_value(text)
    assert parsed == value and type(parsed) is type(value)


def test_labels_and_variables_parse_from_their_options() -> None:
    assert parse_labels("CPU=1, GPU=2") == {"CPU": 1, "GPU": 2}
    assert parse_variables(["N=10", "name=x=y"]) == {"N": 10, "name": "x=y"}


def test_sweep_values_expand_lists_and_inclusive_ranges() -> None:
    assert expand_values("1,2,4") == [1, 2, 4]
    assert expand_values("32:128:32") == [32, 64, 96, 128]
    assert expand_values("0.5:1.5:0.5,7") == [0.5, 1.0, 1.5, 7]


def test_run_prints_a_summary_table() -> None:
    status, out, err = cli("run", *LAUNCH, "--var", "computeIntensity=32", "--no-sandbox")
    assert status == 0, err
    assert out.startswith("System:       MERPSYS testbed")
    for heading in ("Overall time:", "Energy:", "Reliability:", "Processes", "Components"):
        assert heading in out
    assert "GPU[0]" in out and "PCIe 3.0 16x" in out


@pytest.mark.parametrize("sandbox", [[], ["--no-sandbox"]])
def test_run_prints_the_flow_links_figures(tmp_path: Path, sandbox: list[str]) -> None:
    snapshot = json.loads((EXAMPLE / "snapshot.json").read_text())
    for node in snapshot["nodes"]:
        if node["id"] == "bus0":
            node["sharing"] = "full-duplex"  # the PCIe bus as a flow link (docs/network-model.md)
    (tmp_path / "system.json").write_text(json.dumps(snapshot))
    argv = ["run", *LAUNCH, "--var", "computeIntensity=1", *sandbox]
    argv[argv.index("--system") + 1] = str(tmp_path / "system.json")

    status, out, err = cli(*argv)

    assert status == 0, err
    heading = "Links (flows sharing bandwidth)\n"
    assert heading in out
    table = out.split(heading, 1)[1].splitlines()
    assert table[0].split() == [
        "link",
        "bytes",
        "peak_utilisation",
        "mean_utilisation",
        "saturated_s",
    ]
    rows = {line.split("  ")[0]: line.split() for line in table[1:3]}
    # two copies of 4 MB to the GPU, one back; each alone on the bus, so it is used in full
    assert float(rows["bus0[0] cpu0->gpu0"][2]) == 8e6
    assert float(rows["bus0[0] gpu0->cpu0"][2]) == 4e6
    assert float(rows["bus0[0] cpu0->gpu0"][3]) == 1


@pytest.mark.parametrize("sandbox", [[], ["--no-sandbox"]])
def test_the_summary_printed_alone_is_the_one_printed_beside_the_json(
    tmp_path: Path, sandbox: list[str]
) -> None:
    # Printed alone, the summary comes from a run that returns only that (simulator.summary);
    # beside --json FILE, from the whole result: the same text but for the engine's timing.
    argv = ["run", *LAUNCH, "--var", "computeIntensity=1", *sandbox]
    status, alone, err = cli(*argv)
    assert status == 0, err
    status, beside, err = cli(*argv, "--json", str(tmp_path / "result.json"))
    assert status == 0, err
    entries = len(json.loads((tmp_path / "result.json").read_text())["timeline"])

    def untimed(text: str) -> str:
        head, engine = text.rsplit("\nEngine: ", 1)
        return head + engine[engine.index("; timeline") :]

    assert entries > 1
    assert untimed(alone) == untimed(beside)
    assert f"; timeline {entries} entries, 0 dropped\n" in alone


def test_a_run_in_this_process_prepares_it_as_a_sandbox_child_is_prepared() -> None:
    """`--no-sandbox`: the process runs simulations from then on, so the young threshold
    stays raised after a run (its end collects nothing on the way to the result)."""
    gc.set_threshold(700, 10, 10)
    common.runner(True)
    assert gc.get_threshold() == (runner.RUN_GC_YOUNG_THRESHOLD, 10, 10)
    snapshot = json.loads((EXAMPLE / "snapshot.json").read_text())
    payload = {
        "snapshot": snapshot,
        "app_source": (EXAMPLE / "app.py").read_text(),
        "labels": {"CPU": 1, "GPU": 1},
        "variables": {"N": 1000000, "blockSz": 256, "occupancy": 64, "computeIntensity": 1},
    }
    assert common.run_once(payload, None, no_sandbox=True)["overall_time_s"] > 0
    assert gc.get_threshold() == (runner.RUN_GC_YOUNG_THRESHOLD, 10, 10)


def test_a_run_asked_for_its_summary_sends_no_lists_of_entries() -> None:
    snapshot = json.loads((EXAMPLE / "snapshot.json").read_text())
    payload = {
        "snapshot": snapshot,
        "app_source": (EXAMPLE / "app.py").read_text(),
        "labels": {"CPU": 1, "GPU": 1},
        "variables": {"N": 1000000, "blockSz": 256, "occupancy": 64, "computeIntensity": 1},
    }
    whole = common.run_once(payload, None, no_sandbox=True)
    sent = common.run_once({**payload, "summary": True}, None, no_sandbox=False)
    assert isinstance(sent, RawResult)
    summary = sent.parsed()

    assert summary == {**result_summary(whole), "stats": summary["stats"]}
    assert summary["timeline_entries"] == len(whole["timeline"]) > 1
    for key in ("timeline", "resource_timeline", "kernels", "rooflines", "power"):
        assert whole[key] and key not in summary
    assert len(sent.json) < len(encode_json(whole)) / 2


def test_a_summary_keeps_the_memory_hierarchy_s_figures_when_the_run_has_them() -> None:
    result = {
        "status": "finished",
        "overall_time_s": 2.0,
        "energy_j": {"total": 1.0, "per_component": {}},
        "reliability": {"p_success": 1.0},
        "processes": [],
        "components": [],
        "stats": {"events": 1},
        "timeline": [{}, {}, {}],
        "timeline_dropped": 4,
        "power": [{}],
    }
    summary = result_summary(result)
    assert (summary["timeline_entries"], summary["timeline_dropped"]) == (3, 4)
    assert "memory" not in summary and "power" not in summary and "timeline" not in summary
    assert result_summary({**result, "memory": {"levels": []}})["memory"] == {"levels": []}


def test_tables_pad_each_column_to_its_widest_cell_and_format_each_kind() -> None:
    headers = ["name", "count", "seconds", "flag", "note"]
    rows = [["a", 1, 0.5, True, None], ["b{0}", 12, 1 / 3, False, 2.0], ["c", 3, 1e-9, None, "x"]]
    expected = (
        "name  count  seconds   flag   note\n"
        "a     1      0.5       True   -\n"
        "b{0}  12     0.333333  False  2\n"
        "c     3      1e-09     -      x"
    )
    assert table(headers, rows) == expected
    records = [dict(zip(headers, row, strict=True)) for row in rows]
    assert record_table(headers, records) == expected
    assert table(["only", "headers"], []) == "only  headers"


def test_the_parser_kept_for_a_command_parses_each_command_line_afresh() -> None:
    parser = parser_for("run")
    base = ["run", "--system", "s.json", "--app", "a.py", "--labels", "A=1"]

    first = parser.parse_args([*base, "--seed", "5", "--var", "x=1", "--no-sandbox"])
    second = parser.parse_args(base)

    assert parser_for("run") is parser and parser_for("sweep") is not parser
    assert (first.seed, first.var, first.no_sandbox) == (5, ["x=1"], True)
    assert (second.seed, second.var, second.no_sandbox) == (0, [], False)


def test_run_writes_json_to_stdout_with_json_dash() -> None:
    status, out, _ = cli(
        "run", *LAUNCH, "--var", "computeIntensity=1", "--no-sandbox", "--json", "-"
    )
    assert status == 0
    result = json.loads(out)
    assert result["status"] == "finished"
    assert {p["process"] for p in result["processes"]} == {"CPU[0]", "GPU[0]"}


def test_run_writes_json_to_a_file_and_still_prints_the_summary(tmp_path: Path) -> None:
    target = tmp_path / "result.json"
    status, out, _ = cli(
        "run", *LAUNCH, "--var", "computeIntensity=1", "--no-sandbox", "--json", str(target)
    )
    assert status == 0
    assert json.loads(target.read_text())["overall_time_s"] > 0
    assert "Overall time:" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["run", *LAUNCH[:4], "--labels", "CPU=1,GPU=2", "--no-sandbox"],
            "labels.GPU: asked for 2",
        ),
        (["run", *LAUNCH[:4], "--labels", "CPU=x", "--no-sandbox"], "--labels: the count of 'CPU'"),
        (["run", *LAUNCH, "--no-sandbox"], "NameError: name 'computeIntensity' is not defined"),
        (["run", "--system", "missing.json", "--app", "a.py", "--labels", "P=1"], "cannot read"),
        (["run", "--app", "a.py", "--labels", "P=1"], "the following arguments are required"),
        (
            ["sweep", *LAUNCH, "--var", "computeIntensity=4:1:1", "--no-sandbox"],
            "in the range '4:1:1' (start:stop:step), the stop: The stop must not be below",
        ),
        (
            ["sweep", *LAUNCH, "--var", "computeIntensity=1:4:0", "--no-sandbox"],
            "the step: The step must be above 0.",
        ),
        (
            ["sweep", *LAUNCH, "--var", "computeIntensity=1,2", "--var", "computeIntensity=3"],
            "--var: 'computeIntensity' is given twice",
        ),
    ],
)
def test_errors_exit_with_status_2_and_one_line(argv: list[str], message: str) -> None:
    status, out, err = cli(*argv)
    assert status == 2
    assert out == ""
    assert err.startswith("error: ") and err.endswith("\n") and err.count("\n") == 1
    assert message in err


@pytest.mark.parametrize("option", ["--system", "--app"])
def test_an_input_file_that_is_not_utf8_is_one_line(tmp_path: Path, option: str) -> None:
    path = tmp_path / "latin1.bin"
    path.write_bytes(b"x = 1\n\xff\n")
    argv = [*LAUNCH, "--var", "computeIntensity=1", "--no-sandbox"]
    argv[argv.index(option) + 1] = str(path)
    status, out, err = cli("run", *argv)
    assert status == 2 and out == ""
    assert err == f"error: cannot read {path}: it is not UTF-8 text (byte 6: invalid start byte)\n"


def test_a_json_file_that_cannot_be_written_says_write(tmp_path: Path) -> None:
    target = tmp_path / "missing-folder" / "result.json"
    argv = [*LAUNCH, "--var", "computeIntensity=1", "--no-sandbox", "--json", str(target)]
    status, _, err = cli("run", *argv)
    assert status == 2
    assert err == f"error: cannot write {target}: No such file or directory\n"


def test_an_invalid_snapshot_is_one_line_with_field_paths(tmp_path: Path) -> None:
    system = json.loads((EXAMPLE / "snapshot.json").read_text())
    system["nodes"][1]["count"] = 0
    system["edges"].append(["cpu0", "nowhere"])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(system))
    app = tmp_path / "app.py"
    app.write_text("sim.computation({})\n")
    # checked where the run is (the sandbox child, or this process), with the same message
    for sandbox in ([], ["--no-sandbox"]):
        status, _, err = cli(
            "run", "--system", str(path), "--app", str(app), "--labels", "CPU=1", *sandbox
        )
        assert status == 2
        assert err.count("\n") == 1
        assert "nodes[1].count" in err and "edges[2][1]: Unknown node id 'nowhere'" in err


def test_a_sandboxed_run_s_result_cap_grows_with_the_rows_it_asks_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A base cap of 512 bytes: the example's 4 KB result fits only with its rows' allowance
    # (the default --timeline-limit asks for 10,000 rows); test_launch.py has the cap failing.
    monkeypatch.setattr(common, "Limits", lambda: Limits(wall_s=30, cpu_s=20, result_bytes=512))
    status, out, err = cli("run", *LAUNCH, "--var", "computeIntensity=1", "--json", "-")
    assert status == 0, err
    result = json.loads(out)
    assert result["status"] == "finished"
    assert len(encode_json(result)) > 512 + RESULT_ROW_BYTES * (2 + 4)  # more than without


def test_sweep_runs_the_product_of_variables_and_hardware(tmp_path: Path) -> None:
    snapshot = json.loads((EXAMPLE / "snapshot.json").read_text())
    faster = dict(snapshot["hardware"]["gtx970"], name="Faster GTX")
    faster["attributes"] = dict(faster["attributes"], SMCoreClock=2506.0)
    hardware = tmp_path / "faster.json"
    hardware.write_text(json.dumps(faster))
    status, out, err = cli(
        "sweep",
        *LAUNCH,
        "--var",
        "computeIntensity=32,64",
        "--hardware",
        f"gpu0={hardware}",
        "--no-sandbox",
        "--json",
        "-",
    )
    assert status == 0, err
    runs = json.loads(out)["runs"]
    assert [r["variables"]["computeIntensity"] for r in runs] == [32, 64]
    assert all(r["hardware"] == {"gpu0": str(hardware)} for r in runs)
    kernels = [
        next(p["compute_s"] for p in r["result"]["processes"] if p["label"] == "GPU") for r in runs
    ]
    # compute bound at a >= 32: the kernel time grows with the instruction count
    assert kernels[1] > kernels[0]


def test_sweep_prints_a_table_with_one_row_per_run() -> None:
    status, out, err = cli("sweep", *LAUNCH, "--var", "computeIntensity=1:3:1", "--no-sandbox")
    assert status == 0, err
    lines = out.strip().splitlines()
    assert lines[0].split() == [
        "N",
        "blockSz",
        "occupancy",
        "computeIntensity",
        "overall_time_s",
        "energy_j",
        "p_success",
    ]
    assert len(lines) == 4


@pytest.mark.parametrize("sandbox", [[], ["--no-sandbox"]])
def test_a_sweep_s_table_alone_is_the_one_printed_beside_the_json(
    tmp_path: Path, sandbox: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Alone, each run returns its summary only; beside --json FILE, its whole result.
    asked: list[bool] = []
    run_points = sweep.run_points

    def recorded(payloads: list[dict[str, object]], **options: Any) -> object:
        asked.extend(bool(payload.get("summary")) for payload in payloads)
        return run_points(payloads, **options)

    monkeypatch.setattr(sweep, "run_points", recorded)
    argv = ["sweep", *LAUNCH, "--var", "computeIntensity=1,64", *sandbox]
    status, alone, err = cli(*argv)
    assert status == 0, err
    status, beside, err = cli(*argv, "--json", str(tmp_path / "runs.json"))
    assert status == 0, err
    assert alone == beside and len(alone.splitlines()) == 3
    assert asked == [True, True, False, False]
    assert all(
        "timeline" in run["result"]
        for run in json.loads((tmp_path / "runs.json").read_text())["runs"]
    )


def test_the_progress_bar_draws_only_on_a_terminal() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal, pipe = Terminal(), io.StringIO()
    for stream in (terminal, pipe):
        bar = ProgressBar(stream)
        bar(0.5)
        bar(1.0)
        bar.close()
    assert terminal.getvalue().endswith("[" + "#" * 30 + "] 100.0%\n")
    assert "[" + "#" * 15 + "-" * 15 + "]  50.0%" in terminal.getvalue()
    assert pipe.getvalue() == ""


def test_python_dash_m_simulator_runs_through_the_sandbox() -> None:
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "simulator",
            "run",
            *LAUNCH,
            "--var",
            "computeIntensity=1",
            "--json",
            "-",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["status"] == "finished"


@pytest.mark.parametrize("sandbox", [True, False])
def test_output_whose_reader_went_away_ends_the_command_quietly(sandbox: bool) -> None:
    # `python -m simulator run ... --json - | head -c 0`: the pipe's reader is gone before
    # the result is written
    reader, writer = os.pipe()
    os.close(reader)
    argv = [sys.executable, "-m", "simulator", "run", *LAUNCH, "--var", "computeIntensity=1"]
    argv += ["--json", "-"]
    try:
        completed = subprocess.run(
            argv + ([] if sandbox else ["--no-sandbox"]),
            cwd=ROOT,
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(writer)
    assert completed.returncode == 141
    assert completed.stderr == ""


def test_python_dash_m_simulator_reports_user_errors_from_the_sandbox(tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text("import os\n")
    argv = [*LAUNCH[:2], "--app", str(app), "--labels", "CPU=1"]
    completed = subprocess.run(
        [sys.executable, "-m", "simulator", "run", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 2
    assert completed.stderr.startswith("error: application model, line 1: import of 'os'")
    assert completed.stderr.rstrip().endswith("(process CPU[0])")
    assert completed.stderr.count("\n") == 1


# -- calibrate ---------------------------------------------------------------------------------
def _fig_5_2_transfer_csv(path: Path) -> Path:
    """Write (4.6) times of the GTX 970's bus (000 Fig. 5.2) as a calibrate CSV."""
    from simulator.models.transfer import GTX970_PCIE_ATTRIBUTES as FIG

    lines = ["bytes,seconds,direction"]
    for direction, startup, utilisation in (
        ("HostToDevice", "startupHTD", "lambdaHTD"),
        ("DeviceToHost", "startupDth", "lambdaDth"),
    ):
        for size in (0, 65_536, 8_388_608, 268_435_456):
            seconds = FIG[startup] + size / (FIG["bandwidth"] * FIG[utilisation])  # (4.6)
            lines.append(f"{size},{seconds!r},{direction}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_calibrate_recovers_the_gtx_970_buses_parameters_as_json(tmp_path: Path) -> None:
    from simulator.models.transfer import GTX970_PCIE_ATTRIBUTES as FIG

    csv_path = _fig_5_2_transfer_csv(tmp_path / "pcie.csv")
    status, out, err = cli(
        "calibrate", "--kind", "transfer", "--bandwidth", "1.58e10", "--json", "-", str(csv_path)
    )
    assert status == 0, err
    result = json.loads(out)
    htd = result["fit"]["directions"]["HostToDevice"]
    dth = result["fit"]["directions"]["DeviceToHost"]
    assert htd["startup_s"] == pytest.approx(FIG["startupHTD"], rel=1e-9)
    assert htd["lambda_c"] == pytest.approx(FIG["lambdaHTD"], rel=1e-9)
    assert dth["startup_s"] == pytest.approx(FIG["startupDth"], rel=1e-9)
    assert dth["lambda_c"] == pytest.approx(FIG["lambdaDth"], rel=1e-9)
    keys = {a["key"]: a["value"] for a in result["attributes"]}
    assert keys["lambdaDth"] == pytest.approx(0.653, rel=1e-9)
    assert result["attributes"][0]["source"].startswith("calibrated from 4 measurements on ")


def test_calibrate_prints_a_table_of_the_fitted_values(tmp_path: Path) -> None:
    csv_path = _fig_5_2_transfer_csv(tmp_path / "pcie.csv")
    status, out, _ = cli("calibrate", "--kind", "transfer", "--bandwidth", "1.58e10", str(csv_path))
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split() == ["direction", "t_s", "[s]", "lambda_c", "points", "r2"]
    assert lines[1].split()[:3] == ["HostToDevice", "3.9687e-06", "0.689"]
    assert lines[2].split()[:3] == ["DeviceToHost", "5.1569e-06", "0.653"]
    assert "startupHTD  3.9687e-06  s" in out


def test_calibrate_fits_lambda_k_and_block_energy(tmp_path: Path) -> None:
    kernel = tmp_path / "kernel.csv"
    kernel.write_text("estimated_s,measured_s\n0.5,0.71043\n1.0,1.42086\n")
    status, out, _ = cli("calibrate", "--kind", "kernel", "--json", "-", str(kernel))
    assert status == 0
    assert json.loads(out)["fit"]["lambda_k"] == pytest.approx(1 / 1.42086, rel=1e-12)
    energy = tmp_path / "energy.csv"
    rows = ["blocks,seconds,joules"]
    for blocks in (
        14,
        28,
        448,
    ):  # (1) and (3) with a = 1e-4 s, b = 1e-5 s, E_b = 0.01 J, P_s = 29.4 W
        seconds = 1e-4 * blocks + 1e-5
        rows.append(f"{blocks},{seconds!r},{0.01 * blocks + 29.4 * seconds!r}")
    energy.write_text("\n".join(rows) + "\n")
    status, out, _ = cli("calibrate", "--kind", "energy", "--json", "-", str(energy))
    assert status == 0
    fit = json.loads(out)["fit"]
    assert fit["block_energy_j"] == pytest.approx(0.01, rel=1e-9)
    assert fit["static_power_w"] == pytest.approx(29.4, rel=1e-9)


@pytest.mark.parametrize(
    ("kind", "text", "extra", "message"),
    [
        ("energy", "blocks,seconds,joules\n1,1,1\n2,2,2\n", [], "at least 3 measurements, got 2"),
        ("energy", "blocks,seconds,joules\n1,1,1\n2,2,2\n3,-3,3\n", [], "line 4: seconds:"),
        ("kernel", "estimated_s,measured_s\n1,abc\n", [], "line 2: measured_s: Expected a number"),
        ("kernel", "estimated,measured\n1,1\n", [], "the header must name the columns"),
        (
            "transfer",
            "bytes,seconds,direction\n1,1,HostToDevice\n2,2,HostToDevice\n",
            [],
            "bandwidth",
        ),
        (
            "transfer",
            "bytes,seconds,direction\n1,1,sideways\n",
            ["--bandwidth", "1e9"],
            "direction",
        ),
    ],
)
def test_calibrate_rejects_bad_measurements_with_one_line_and_status_2(
    tmp_path: Path, kind: str, text: str, extra: list[str], message: str
) -> None:
    path = tmp_path / "m.csv"
    path.write_text(text)
    status, out, err = cli("calibrate", "--kind", kind, *extra, str(path))
    assert status == 2 and out == ""
    assert err.startswith("error: ") and message in err
    assert err.count("\n") == 1


def test_calibrate_reports_a_missing_file_and_an_unknown_kind(tmp_path: Path) -> None:
    status, _, err = cli("calibrate", "--kind", "kernel", str(tmp_path / "absent.csv"))
    assert status == 2 and "cannot read" in err
    status, _, err = cli("calibrate", "--kind", "power", str(tmp_path / "absent.csv"))
    assert status == 2 and "invalid choice" in err


@pytest.mark.parametrize("sandbox", [[], ["--no-sandbox"]])
def test_a_parallel_sweep_gives_the_serial_sweeps_results_in_order(sandbox: list[str]) -> None:
    argv = ["sweep", *LAUNCH, "--var", "computeIntensity=1,8,64,2", *sandbox, "--json", "-"]
    status, serial, err = cli(*argv, "--jobs", "1")
    assert status == 0, err
    status, parallel, err = cli(*argv, "--jobs", "3")
    assert status == 0, err

    def stable(text: str) -> list[object]:
        runs = json.loads(text)["runs"]
        for run in runs:
            run["result"]["stats"].pop("wall_s")  # the only figure that is not simulated
            run["result"]["stats"].pop("events_per_s")
        return runs

    assert stable(parallel) == stable(serial)
    assert [r["variables"]["computeIntensity"] for r in json.loads(parallel)["runs"]] == [
        1,
        8,
        64,
        2,
    ]


def test_a_parallel_sweep_reports_each_failed_point() -> None:
    status, out, err = cli(
        "sweep", *LAUNCH, "--var", "computeIntensity=1,x", "--jobs", "2", "--no-sandbox"
    )
    assert status == 2
    assert "1 of 2 runs failed" in err
    assert "error:" in out.splitlines()[-1]


@pytest.mark.parametrize("value", ["0", "-2", "many"])
def test_sweep_jobs_must_be_a_positive_whole_number(value: str) -> None:
    status, _, err = cli("sweep", *LAUNCH, "--jobs", value)
    assert status == 2
    assert (
        err
        == f"error: argument --jobs: expected a whole number of runs at once, at least 1, got {value!r}\n"
    )


def test_write_json_writes_a_raw_result_as_it_came_and_data_in_the_same_encoding(
    tmp_path: Path,
) -> None:
    data = {"name": "é", "values": [0.1, 1e-05, None], "n": 2**70}
    raw = RawResult(encode_json(data))
    target = tmp_path / "result.json"

    write_json(raw, str(target), io.StringIO())
    out = io.StringIO()
    write_json(data, "-", out)

    assert target.read_bytes() == raw.json + b"\n"
    assert out.getvalue().encode("utf-8") == raw.json + b"\n"
    assert json.loads(out.getvalue()) == data


def test_a_sweep_onto_an_h100_runs_its_recommended_model_unless_told_to_keep(
    tmp_path: Path,
) -> None:
    # the seeded H100 record recommends the current-architecture model; the example's
    # Listing 4 model is Volkov's, validated on Maxwell and Pascal only
    seed = json.loads((ROOT / "hwdb/seed/hardware.json").read_text())["components"]
    (h100,) = [c for c in seed if c["name"] == "H100 SXM5 80GB"]
    record = {
        "type": "GPU",
        "name": h100["name"],
        "attributes": {a["key"]: a["value"] for a in h100["attributes"]},
        "recommendedModel": h100["recommended_model"],
    }
    hardware = tmp_path / "h100.json"
    hardware.write_text(json.dumps(record))
    argv = ["sweep", *LAUNCH, "--var", "computeIntensity=1", "--hardware", f"gpu0={hardware}"]
    argv += ["--no-sandbox", "--json", "-"]

    status, out, err = cli(*argv)
    assert status == 0, err
    (run,) = json.loads(out)["runs"]
    assert run["models"] == {"gpu0": "GPU kernel (current architectures)"}
    # the recommended model was validated on Hopper: no architecture warning
    assert [w for w in run["result"]["warnings"] if w["code"] == "architecture"] == []

    status, out, err = cli(*argv, "--keep-model")
    assert status == 0, err
    (run,) = json.loads(out)["runs"]
    assert "models" not in run
    (warning,) = [w for w in run["result"]["warnings"] if w["code"] == "architecture"]
    assert (warning["model"], warning["architecture"]) == (
        "MERPSYS Listing 4: Volkov kernel model (GTX 970 example)",
        "Hopper",
    )


def test_run_prints_each_collective_call_with_its_algorithm_and_bus_bandwidth(
    tmp_path: Path,
) -> None:
    # 4 processes, one node each, behind one switch (latency 1 s, 2 bytes/s): a ring
    # allreduce of 40 bytes takes 2(p-1)(1 + 10/2) = 36 s; busbw = 40/36 x 2 x 3/4
    nodes: list[dict[str, Any]] = [
        {"id": f"n{index}", "hardware": "cpu", "model": "compute", "labels": {"R": 1}}
        for index in range(4)
    ]
    nodes.append({"id": "net", "hardware": "net", "model": "link"})
    system = {
        "name": "switch",
        "hardware": {
            "cpu": {"type": "CPU", "name": "Processor", "attributes": {}},
            "net": {
                "type": "NETWORK",
                "name": "Switch",
                "attributes": {"latency": 1, "bandwidth": 2},
            },
        },
        "models": {
            "compute": {
                "language": "javascript",
                "source": "function computationTime(p) { return 0; }",
            },
            "link": {
                "language": "javascript",
                "source": "function p2pTime(size, params) { return latency + size / bandwidth; }",
            },
        },
        "nodes": nodes,
        "edges": [[f"n{index}", "net"] for index in range(4)],
    }
    (tmp_path / "system.json").write_text(json.dumps(system))
    (tmp_path / "app.py").write_text("sim.allreduce(40, algorithm='ring', chunk=0)\n")
    argv = ["run", "--system", str(tmp_path / "system.json"), "--app", str(tmp_path / "app.py")]
    status, out, err = cli(*argv, "--labels", "R=4", "--json", str(tmp_path / "out.json"))
    assert status == 0, err
    (call,) = json.loads((tmp_path / "out.json").read_text())["collectives"]
    assert (call["algorithm"], call["time_s"]) == ("ring", 36.0)
    assert call["busbw"] == pytest.approx(40 / 36 * 2 * 3 / 4)
    head, rows = out.split("Collectives (busbw as nccl-tests reports it, bytes/s)\n")[1].split(
        "\n"
    )[:2]
    assert head.split() == [
        "call", "collective", "algorithm", "protocol", "participants", "size", "wire_bytes",
        "time_s", "algbw", "busbw",
    ]  # fmt: skip
    assert rows.split()[:5] == ["0", "allreduce", "ring", "ideal", "4"]
    status, alone, err = cli(*argv, "--labels", "R=4")
    assert status == 0, err
    table_alone = alone.split("Collectives (busbw")[1].split("\n\nEngine:")[0]
    assert table_alone == out.split("Collectives (busbw")[1].split("\n\nEngine:")[0]
