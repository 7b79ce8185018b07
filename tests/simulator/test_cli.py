"""`python -m simulator run | sweep`: parsing, summary, JSON, sweeps and one-line errors."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from simulator.cli import (
    ProgressBar,
    expand_values,
    main,
    parse_labels,
    parse_value,
    parse_variables,
)

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
    status, _, err = cli("run", "--system", str(path), "--app", "x.py", "--labels", "CPU=1")
    assert status == 2
    assert err.count("\n") == 1
    assert "nodes[1].count" in err and "edges[2][1]: Unknown node id 'nowhere'" in err


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
