"""The block-level kernel simulation: against a plain global event list, sequential against
parallel, and against Volkov's (4.1) where its assumptions hold."""

from __future__ import annotations

import heapq
import math

import pytest

from simulator.models import volkov
from simulator.models.kernel_sim import (
    DetailedKernel,
    DetailedRun,
    simulate_kernel,
    spread_work,
)

PAPER_GPUS = {
    "GTX 970": {"SMs": 13, "SMCoreClock": 1253, "memoryClock": 1753, "busWidth": 256},
    "GTX TITAN X": {"SMs": 24, "SMCoreClock": 1076, "memoryClock": 1753, "busWidth": 384},
    "GTX 1070": {"SMs": 15, "SMCoreClock": 1923, "memoryClock": 2002, "busWidth": 256},
}


def reference(
    kernel: DetailedKernel,
) -> tuple[float, list[tuple[float, int, float]], list[tuple[int, int, int, float, float]]]:
    """Simulate `kernel` with one global event list, block by block as the scheduler hands
    them out: (kernel cycles, per SM (busy, blocks, end), placements (block, sm, slot, start,
    end)). Block ends come before warp arrivals at equal times, lower SM and slot first."""
    events: list[tuple[float, int, int, int, object]] = []  # (time, kind, sm, order, payload)
    busy = [0.0] * kernel.sms
    free = [0.0] * kernel.sms
    count = [0] * kernel.sms
    end = [0.0] * kernel.sms
    placements = []
    sequence = 0

    def start_block(block: int, sm: int, slot: int, now: float) -> None:
        nonlocal sequence
        work = kernel.work(block)
        record = {
            "block": block,
            "slot": slot,
            "start": now,
            "left": kernel.warps_per_block,
            "end": now + kernel.block_launch_cycles,
        }
        count[sm] += 1
        for _ in range(kernel.warps_per_block):
            sequence += 1
            warp = {
                "record": record,
                "left": kernel.segments,
                "service": kernel.segment_service * work,
                "cycle": kernel.segment_cycle * work,
            }
            heapq.heappush(events, (now + kernel.block_launch_cycles, 1, sm, sequence, warp))

    for block in range(min(kernel.blocks, kernel.blocks_per_wave)):
        start_block(block, block % kernel.sms, block // kernel.sms, 0.0)
    next_block = min(kernel.blocks, kernel.blocks_per_wave)
    while events:
        time, kind, sm, _order, payload = heapq.heappop(events)
        if kind == 0:
            record = payload
            placements.append((record["block"], sm, record["slot"], record["start"], time))
            end[sm] = time
            if next_block < kernel.blocks:
                start_block(next_block, sm, record["slot"], time)
                next_block += 1
            continue
        warp = payload
        start = max(time, free[sm])
        free[sm] = start + warp["service"]
        busy[sm] += warp["service"]
        following = start + warp["cycle"]
        warp["left"] -= 1
        if warp["left"]:
            sequence += 1
            heapq.heappush(events, (following, 1, sm, sequence, warp))
            continue
        record = warp["record"]
        record["end"] = max(record["end"], following)
        record["left"] -= 1
        if not record["left"]:
            heapq.heappush(events, (record["end"], 0, sm, record["slot"], record))
    figures = [(busy[i], count[i], end[i]) for i in range(kernel.sms)]
    return max(end), figures, sorted(placements)


def as_reference(
    run: DetailedRun,
) -> tuple[float, list[tuple[float, int, float]], list[tuple[int, int, int, float, float]]]:
    assert run.placements is not None
    return (
        run.cycles,
        [(sm.busy_cycles, sm.blocks, sm.end_cycles) for sm in run.sms],
        sorted((p.block, p.sm, p.slot, p.start, p.end) for p in run.placements),
    )


KERNELS = {
    "full waves": DetailedKernel(
        sms=4,
        resident_blocks=2,
        warps_per_block=4,
        blocks=64,
        service_cycles=20.0,
        latency_cycles=300.0,
        segments=4,
    ),
    "a tail wave": DetailedKernel(
        sms=5,
        resident_blocks=3,
        warps_per_block=2,
        blocks=47,
        service_cycles=35.0,
        latency_cycles=200.0,
        segments=3,
    ),
    "latency bound": DetailedKernel(
        sms=3,
        resident_blocks=1,
        warps_per_block=8,
        blocks=40,
        service_cycles=5.0,
        latency_cycles=900.0,
        segments=8,
    ),
    "unequal blocks": DetailedKernel(
        sms=4,
        resident_blocks=2,
        warps_per_block=3,
        blocks=90,
        service_cycles=12.0,
        latency_cycles=150.0,
        segments=5,
        block_work=(1.0, 2.5, 0.5, 1.25, 3.0),
    ),
    "random block work": DetailedKernel(
        sms=6,
        resident_blocks=2,
        warps_per_block=4,
        blocks=200,
        service_cycles=9.0,
        latency_cycles=400.0,
        segments=6,
        block_work=spread_work(200, 0.4, 7),
    ),
    "block launch cycles": DetailedKernel(
        sms=3,
        resident_blocks=4,
        warps_per_block=2,
        blocks=500,
        service_cycles=30.0,
        latency_cycles=120.0,
        segments=2,
        block_launch_cycles=150.0,
    ),
    "fewer blocks than SMs": DetailedKernel(
        sms=8,
        resident_blocks=2,
        warps_per_block=4,
        blocks=5,
        service_cycles=10.0,
        latency_cycles=100.0,
    ),
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_the_round_scheduler_matches_a_global_event_list(name: str) -> None:
    kernel = KERNELS[name]
    assert as_reference(simulate_kernel(kernel, record_placements=True)) == reference(kernel)


@pytest.mark.parametrize("name", ["a tail wave", "unequal blocks", "block launch cycles"])
@pytest.mark.parametrize("workers", [2, 3])
def test_parallel_runs_give_the_sequential_result_exactly(name: str, workers: int) -> None:
    kernel = KERNELS[name]
    sequential = simulate_kernel(kernel, record_placements=True)
    parallel = simulate_kernel(kernel, workers=workers, record_placements=True)
    assert parallel.workers == workers
    assert (parallel.cycles, parallel.sms, parallel.rounds) == (
        sequential.cycles,
        sequential.sms,
        sequential.rounds,
    )
    assert parallel.placements == sequential.placements


def test_identical_blocks_meet_the_scheduler_in_few_rounds() -> None:
    kernel = DetailedKernel(
        sms=13,
        resident_blocks=8,
        warps_per_block=8,
        blocks=3907,
        service_cycles=27.87,
        latency_cycles=966.0,
    )
    run = simulate_kernel(kernel)
    assert run.rounds < 60 < kernel.waves * kernel.resident_blocks  # vs. a meeting per block end
    assert sum(sm.blocks for sm in run.sms) == 3907


def saxpy2(gpu: str, a: int, occupancy: int, n: int) -> tuple[float, float]:
    attributes = {**PAPER_GPUS[gpu], "CUDACores": 128, "schedulers": 4, "dataRate": 4}
    hardware = volkov.GpuHardware.from_attributes(attributes)
    profile = volkov.saxpy2_profile(a)
    estimate = volkov.estimate_kernel(hardware, profile, block_size=256, n=n, occupancy=occupancy)
    kernel = DetailedKernel(
        sms=hardware.sms,
        resident_blocks=occupancy // 8,
        warps_per_block=8,
        blocks=estimate.grid_size,
        service_cycles=max(c for _, c in volkov.throughput_terms(hardware, profile)),
        latency_cycles=profile.latency_bound,
    )
    return simulate_kernel(kernel).cycles / hardware.sm_clock_hz, estimate.time_s


@pytest.mark.parametrize("gpu", sorted(PAPER_GPUS))
@pytest.mark.parametrize("a", [1, 8, 64])
@pytest.mark.parametrize("occupancy", [8, 16, 32, 64])
def test_the_detailed_mode_agrees_with_volkov_on_saxpy2_where_its_assumptions_hold(
    gpu: str, a: int, occupancy: int
) -> None:
    # Many full waves of identical blocks (N = 10^6, 3907 blocks of 256 threads). The stated
    # tolerance is 3 %: a warp waits for its block's last sibling, (warps - 1) x d / segments
    # cycles per block, which (4.3) leaves out; at the knee this is largest.
    detailed, analytic = saxpy2(gpu, a, occupancy, 10**6)
    assert detailed == pytest.approx(analytic, rel=0.03)
    assert detailed >= analytic * 0.999  # the formula is the steady state's upper bound on speed


def test_a_tail_wave_costs_a_whole_wave_which_the_formula_spreads_thin() -> None:
    # 003's staircase: one block more than a full wave takes two waves' time.
    one_wave = DetailedKernel(
        sms=13,
        resident_blocks=8,
        warps_per_block=8,
        blocks=104,
        service_cycles=27.87,
        latency_cycles=966.0,
    )
    one_more = DetailedKernel(
        sms=13,
        resident_blocks=8,
        warps_per_block=8,
        blocks=105,
        service_cycles=27.87,
        latency_cycles=966.0,
    )
    first = simulate_kernel(one_wave).cycles
    second = simulate_kernel(one_more).cycles
    assert second > 1.4 * first  # the lone block of the tail runs alone on its SM
    analytic_ratio = 105 / 104  # (4.1) grows with W_L only
    assert second / first > analytic_ratio + 0.3


def test_unequal_block_work_leaves_sms_idle_at_the_end() -> None:
    base = dict(
        sms=13,
        resident_blocks=8,
        warps_per_block=8,
        blocks=2000,
        service_cycles=27.87,
        latency_cycles=966.0,
    )
    even = simulate_kernel(DetailedKernel(**base))  # type: ignore[arg-type]
    skewed = simulate_kernel(DetailedKernel(**base, block_work=(1.0,) * 1995 + (20.0,) * 5))  # type: ignore[arg-type]
    ends = [sm.end_cycles for sm in skewed.sms]
    assert skewed.cycles > even.cycles * 1.3
    assert min(ends) < 0.8 * max(ends)  # five SMs run the five heavy blocks, eight wait
    assert min(skewed.busy_fractions) < 0.8


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"sms": 0}, "sms must be a positive whole number"),
        ({"resident_blocks": 1.5}, "resident_blocks must be a positive whole number"),
        ({"latency_cycles": 0.0}, "latency_cycles must be a positive number"),
        ({"service_cycles": math.nan}, "service_cycles must be a non-negative number"),
        ({"block_work": (1.0, -2.0)}, "blockWork must be a non-empty list of positive numbers"),
        ({"segments": 10_001}, "(at most 10000)"),
    ],
)
def test_bad_kernels_are_refused_with_the_field_named(
    changes: dict[str, object], message: str
) -> None:
    fields: dict[str, object] = dict(
        sms=2,
        resident_blocks=1,
        warps_per_block=1,
        blocks=4,
        service_cycles=1.0,
        latency_cycles=10.0,
    )
    fields.update(changes)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        DetailedKernel(**fields)  # type: ignore[arg-type]


def test_workers_must_be_positive() -> None:
    with pytest.raises(ValueError, match="workers must be a positive whole number"):
        simulate_kernel(KERNELS["full waves"], workers=0)


def test_block_work_spread_is_seeded_and_bounded() -> None:
    work = spread_work(1000, 0.25, seed=3)
    assert work == spread_work(1000, 0.25, seed=3) != spread_work(1000, 0.25, seed=4)
    assert all(0.75 <= w <= 1.25 for w in work)
    with pytest.raises(ValueError, match="blockWorkSpread"):
        spread_work(10, 1.0, seed=0)


def test_workers_that_never_report_ready_leave_the_run_to_this_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A worker forked while another thread held a lock can hang for ever; the run must not.
    import time

    from simulator.models import kernel_sim

    monkeypatch.setattr(kernel_sim, "READY_TIMEOUT_S", 0.2)
    monkeypatch.setattr(kernel_sim, "_worker_main", lambda *args: time.sleep(60))
    kernel = KERNELS["a tail wave"]
    started = time.monotonic()
    run = simulate_kernel(kernel, workers=2, record_placements=True)
    sequential = simulate_kernel(kernel, record_placements=True)
    assert run.workers == 1
    assert (run.cycles, run.sms, run.placements) == (
        sequential.cycles,
        sequential.sms,
        sequential.placements,
    )
    assert time.monotonic() - started < 10
