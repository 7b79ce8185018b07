"""The Workloads page answers "Llama 3 70B on 64 H100s, TP 4 PP 8: step time, MFU, memory"
and the same on B200s (issue 43 "Done when"): the step runs as a run of every rank on the
live worker, and the page shows the figures the workload library's symmetric simulation
(one replica and one DP group per stage) gives for the same plan."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from simulator.workloads.config import PRESETS
from simulator.workloads.plan import ParallelPlan
from simulator.workloads.training import simulate_training

pytestmark = pytest.mark.e2e

PLAN = ParallelPlan(gpus=64, tp=4, pp=8, gbs=128, data_parallel="zero1", recompute="selective")


def figure(page: Any, name: str) -> str:
    row = page.get_by_role("table", name="Step figures").get_by_role("row").filter(has_text=name)
    return str(row.get_by_role("cell").inner_text())


def test_llama3_70b_on_64_h100s_and_b200s_tp4_pp8(page: Any) -> None:
    page.get_by_role("link", name="Workloads").click()
    page.get_by_role("heading", name="Workloads").wait_for()
    page.get_by_label("Model").select_option("llama3-70b")
    for label, value in (("GPUs", "64"), ("TP", "4"), ("PP", "8"), ("Global batch", "128")):
        page.get_by_label(label, exact=True).fill(value)
    page.get_by_label("Data parallelism").select_option("zero1")
    page.get_by_label("Recomputation").select_option("selective")
    # the B200 record's memorySize is 180e9 bytes, 167.64 GiB
    for system, capacity in (("dgx-h100", "80 GiB"), ("dgx-b200", "167.64 GiB")):
        expected = simulate_training(PRESETS["llama3-70b"], PLAN, system)
        page.get_by_label("System").select_option(system)
        page.get_by_role("button", name="Simulate the step").click()
        expect(page.get_by_role("heading", level=2)).to_contain_text(
            f"llama3-70b on 64 GPUs of {system}: TP 4 PP 8 DP 2"
        )
        status = page.get_by_test_id("workload-status")
        expect(status).to_have_text("succeeded", timeout=120_000)
        assert figure(page, "Step time") == f"{expected['step_time_s']:.3f} s"
        assert figure(page, "MFU") == f"{expected['mfu'] * 100:.1f} %"
        memory = page.get_by_role("table", name="Memory per GPU")
        expect(memory).to_contain_text(f"Share of the GPU's {capacity}")
        total = memory.get_by_role("row").filter(has_text="Total").inner_text()
        share = expected["memory_per_gpu_bytes"] / expected["gpu_memory_bytes"] * 100
        assert f"{share:.1f} %" in total
        for part in ("Weights", "Gradients", "Optimizer state", "Activations"):
            expect(memory.get_by_role("row").filter(has_text=part)).to_have_count(1)

    # a plan that does not fit is refused with the memory it needs against the GPU's (no
    # recomputation and the optimizer state unsharded: 84.7 GiB per GPU)
    page.get_by_label("System").select_option("dgx-h100")
    page.get_by_label("Data parallelism").select_option("ddp")
    page.get_by_label("Recomputation").select_option("none")
    page.get_by_role("button", name="Simulate the step").click()
    expect(page.get_by_role("alert").first).to_contain_text("more than the GPU's 80.0 GiB")
