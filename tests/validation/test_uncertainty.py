"""The uncertainty table (validation.uncertainty) is what the committed kit runs give."""

from __future__ import annotations

import json

from validation.uncertainty import TABLE_PATH, build_table, render


def test_the_committed_table_regenerates_exactly_from_the_committed_runs() -> None:
    assert render(build_table()) == TABLE_PATH.read_text(encoding="utf-8")


def test_every_spread_names_the_runs_it_comes_from_and_in_sample_residuals_say_so() -> None:
    table = json.loads(TABLE_PATH.read_text(encoding="utf-8"))
    records = table["records"]
    assert {"H100 SXM5 80GB", "H200 SXM 141GB"} <= set(records)
    for record in records.values():
        for spread in record["attributes"].values():
            assert spread["runs"] >= 2
            assert spread["relative_sd"] >= 0
            assert spread["source"].count("-2026") == spread["runs"]
        for residual in record["models"].values():
            assert residual["points"] > 10
            # the H100's fit run and the H200's calibrate run are among the judged runs
            assert residual["label"].startswith("fitted on the same data")
    # the link's bandwidth is read from the PCIe generation and width: equal in every run
    link = records["PCIe 5.0 x16 (H200 testbed, measured)"]["attributes"]
    assert link["bandwidth"]["relative_sd"] == 0.0
    assert link["lambdaHTD"]["relative_sd"] > 0
