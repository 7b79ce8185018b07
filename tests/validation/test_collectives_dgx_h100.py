"""The collectives on a DGX H100-like system against published nccl-tests bus bandwidth
(validation/collectives_dgx_h100.py, docs/validation/collectives-dgx-h100.md)."""

from __future__ import annotations

import json

from validation import collectives_dgx_h100 as dgx


def test_every_published_figure_names_its_source() -> None:
    figures = json.loads(dgx.FIGURES.read_text())["figures"]
    assert {f["collective"] for f in figures} == {
        "allreduce",
        "allgather",
        "reduceScatter",
        "alltoall",
    }
    for figure in figures:
        assert figure["source"]["url"].startswith("https://github.com/NVIDIA/nccl-tests/issues/")
        assert figure["source"]["where"]
        assert figure["busbw_gbps"] > 0


def test_the_ring_and_all_to_all_stay_within_15_percent_of_nccl_tests_at_1_gib() -> None:
    # The errors this branch's store-and-forward network gives (docs/validation/
    # collectives-dgx-h100.md says why they are this small); a network model change that
    # moves them past issue 40's 15 % shows here.
    rows = dgx.comparison(sizes=(2**30,))
    modelled = {row["collective"]: row for row in rows if row["error"] is not None}
    assert set(modelled) == {"allreduce", "allgather", "reduceScatter", "alltoall"}
    for row in modelled.values():
        assert abs(row["error"]) < 0.15, row
    assert [row["error"] for row in rows if row["simulated_gbps"] is None] == [None, None]


def test_the_committed_report_is_the_one_the_program_writes() -> None:
    committed = (dgx.ROOT / "docs" / "validation" / "collectives-dgx-h100.md").read_text()
    written = dgx.report(dgx.comparison(sizes=(2**30,)))
    rows = [line for line in written.splitlines() if line.startswith("| ") and "1073741824" in line]
    assert len(rows) == 6
    for row in rows:
        assert row in committed
