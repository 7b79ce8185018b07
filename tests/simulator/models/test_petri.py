"""Tests of the Petri-net core and the SM model of paper 004 (docs/models.md 5d)."""

from __future__ import annotations

import re

import pytest

from simulator.models.petri import (
    ERR_MAX_STEPS,
    ERR_MIX,
    ERR_NO_WARPS,
    PLACES_PER_WARP,
    TRANSITIONS_PER_WARP,
    InstructionCounts,
    PetriNet,
    build_sm_net,
    mean_sm_steps,
    radix_sort_warps,
    simulate_sm,
)


def _competing_pair() -> PetriNet:
    net = PetriNet()
    net.add_place("token", 1)
    net.add_place("left")
    net.add_place("right")
    net.add_transition("a", pre=["token"], post=["left"])
    net.add_transition("b", pre=["token"], post=["right"])
    return net


def test_two_transitions_competing_for_one_token_fire_one_of_them() -> None:
    winners = set()
    for seed in range(40):
        run = _competing_pair().run(seed=seed, record=True)
        assert run.steps == 1
        assert run.dead
        assert run.trace is not None and len(run.trace[0]) == 1
        assert sum(run.firings.values()) == 1
        winners.add(run.trace[0][0])
    # The uniform random permutation lets either win.
    assert winners == {"a", "b"}


def test_a_seed_fixes_the_outcome_of_every_conflict() -> None:
    net = build_sm_net([InstructionCounts(5, 2, 3)] * 4)
    first = net.run(seed=11, record=True)
    again = net.run(seed=11, record=True)
    assert first.trace == again.trace
    traces = {net.run(seed=seed, record=True).trace for seed in range(5)}
    assert len(traces) > 1


def test_a_chain_takes_one_step_per_transition() -> None:
    net = PetriNet()
    net.add_place("c0", 1)
    for index in range(1, 8):
        net.add_place(f"c{index}")
        net.add_transition(f"t{index}", pre=[f"c{index - 1}"], post=[f"c{index}"])
    run = net.run(seed=0)
    assert run.steps == 7
    assert run.marking == {"c7": 1}


def test_a_maximal_step_fires_every_transition_the_tokens_allow() -> None:
    net = PetriNet()
    net.add_place("pool", 2)
    net.add_place("out")
    for name in ("a", "b", "c"):
        net.add_transition(name, pre=["pool"], post=["out"])
    run = net.run(seed=3, record=True)
    # Two tokens, three candidates: one step of exactly two transitions, then dead.
    assert run.steps == 1
    assert run.trace is not None and len(run.trace[0]) == 2
    assert run.marking == {"out": 2}


def test_tokens_produced_in_a_step_are_usable_only_in_the_next_step() -> None:
    net = PetriNet()
    net.add_place("x", 1)
    net.add_place("y")
    net.add_place("z")
    net.add_transition("first", pre=["x"], post=["y"])
    net.add_transition("second", pre=["y"], post=["z"])
    run = net.run(seed=0, record=True)
    assert run.trace == (("first",), ("second",))


def test_an_inhibitor_arc_waits_for_its_place_to_empty() -> None:
    net = PetriNet()
    net.add_place("work", 3)
    net.add_place("done")
    net.add_place("go", 1)
    net.add_place("finished")
    net.add_transition("consume", pre=["work"], post=["done"])
    net.add_transition("finish", pre=["go"], post=["finished"], inhibitors=["work"])
    run = net.run(seed=0, record=True)
    assert run.trace == (("consume",), ("consume",), ("consume",), ("finish",))


def test_an_arc_weight_needs_that_many_tokens() -> None:
    net = PetriNet()
    net.add_place("tick", 1)
    net.add_place("count")
    net.add_place("alarm")
    net.add_transition("clock", pre=["tick"], post=["tick", "count"], inhibitors=["alarm"])
    net.add_transition("ring", pre={"count": 4}, post=["alarm"])
    run = net.run(seed=0)
    # clock fires in steps 1-5 (ring fires in step 5 alongside it), then alarm stops it.
    assert run.firings == {"clock": 5, "ring": 1}
    assert run.marking == {"tick": 1, "count": 1, "alarm": 1}


def test_it_stops_a_net_that_never_dies() -> None:
    net = PetriNet()
    net.add_place("loop", 1)
    net.add_transition("spin", pre=["loop"], post=["loop"])
    with pytest.raises(RuntimeError, match=re.escape(ERR_MAX_STEPS.format(max_steps=50))):
        net.run(seed=0, max_steps=50)
    assert not net.run(seed=0, max_steps=50, raise_on_limit=False).dead


def test_the_sm_net_has_18_places_and_17_transitions_per_warp() -> None:
    net = build_sm_net([InstructionCounts(1, 1, 1)] * 5)
    assert (PLACES_PER_WARP, TRANSITIONS_PER_WARP) == (18, 17)
    # p0 (SM), our "alive" place and t0 (waiting) are shared by all warps.
    assert len(net.place_names) == 5 * 18 + 2
    assert len(net.transitions) == 5 * 17 + 1
    assert net.initial_marking[net.place("p0")] == 2
    assert net.initial_marking[net.place("p9.w4")] == 1


def test_one_arithmetic_instruction_takes_five_steps() -> None:
    run = build_sm_net([InstructionCounts(1, 0, 0)]).run(seed=0, record=True)
    assert run.trace == (
        ("t2.w0",),
        ("t1.w0",),
        ("t7.w0", "t0"),
        ("t15.w0", "t0"),
        ("t16.w0",),
    )
    assert run.dead
    assert run.marking == {"p0": 2}


@pytest.mark.parametrize("latency", [1, 20, 35])
def test_a_global_access_completes_after_l1_steps(latency: int) -> None:
    # select, issue, t5, l1 x t8, t9, t10, t11, terminate.
    one = simulate_sm([InstructionCounts(0, 0, 1)], schedulers=1, global_latency=latency)
    assert one.steps == latency + 7
    # The scheduler is back after t5: idle from then until the warp terminates.
    assert one.idle_steps == latency + 3


@pytest.mark.parametrize("latency", [1, 2, 9])
def test_a_shared_access_completes_after_l2_steps_holding_the_scheduler(latency: int) -> None:
    one = simulate_sm([InstructionCounts(0, 1, 0)], schedulers=1, shared_latency=latency)
    assert one.steps == latency + 7
    assert one.idle_steps == 0


def test_a_second_warp_hides_behind_the_first_ones_global_latency() -> None:
    # One scheduler: the second warp issues as soon as t5 returns the token.
    two = simulate_sm([InstructionCounts(0, 0, 1)] * 2, schedulers=1, seed=5)
    assert two.steps == 20 + 7 + 2


def test_more_warps_hide_latency_until_the_schedulers_saturate() -> None:
    per_warp = InstructionCounts.from_mix(40, arithmetic=0.7, shared=0.0, global_=0.3)
    assert per_warp == InstructionCounts(28, 0, 12)
    spi = {w: simulate_sm([per_warp] * w, seed=1).steps_per_instruction for w in (1, 2, 4, 8, 16)}
    spi[32] = simulate_sm([per_warp] * 32, seed=1).steps_per_instruction
    assert spi[1] > spi[2] > spi[4] > spi[8] > spi[16] >= spi[32] * 0.99
    # One warp: 4 steps per arithmetic and l1 + 6 per global instruction, serially.
    assert spi[1] == pytest.approx((28 * 4 + 12 * 26 + 1) / 40)
    # Saturated: two schedulers, each held 3 steps per arithmetic and 2 per global one.
    bound = (0.7 * 3 + 0.3 * 2) / 2
    assert spi[32] == pytest.approx(bound, rel=0.03)
    assert spi[16] / spi[32] < 1.05


def test_idle_steps_vanish_once_enough_warps_are_ready() -> None:
    per_warp = InstructionCounts(28, 0, 12)
    few = simulate_sm([per_warp] * 2, seed=2)
    many = simulate_sm([per_warp] * 32, seed=2)
    assert few.idle_steps > few.steps / 2
    assert many.idle_steps < many.steps / 100


def test_it_splits_an_instruction_mix_by_largest_remainder() -> None:
    assert InstructionCounts.from_mix(10, arithmetic=0.55, shared=0.25, global_=0.2) == (
        InstructionCounts(6, 2, 2)
    )
    assert InstructionCounts.from_mix(7, arithmetic=1 / 3, shared=1 / 3, global_=1 / 3).total == 7
    with pytest.raises(ValueError, match=re.escape(ERR_MIX.format(mix=(0.5, 0.5, 0.5)))):
        InstructionCounts.from_mix(10, arithmetic=0.5, shared=0.5, global_=0.5)


def test_it_rejects_an_sm_without_warps() -> None:
    with pytest.raises(ValueError, match=ERR_NO_WARPS):
        build_sm_net([])


def test_its_mean_over_seeds_stays_near_each_run() -> None:
    warps = [InstructionCounts(10, 2, 4)] * 6
    single = [simulate_sm(warps, seed=seed).steps for seed in range(3)]
    assert min(single) <= mean_sm_steps(warps, runs=3) <= max(single)


def test_radix_sort_counts_give_warp_zero_the_serial_phase_in_implementation_one() -> None:
    warps = radix_sort_warps(threads=256, elements=65536, implementation=1)
    assert len(warps) == 8
    # memsize 256: 2 x 256 + 4 global accesses per warp, warp 0 adds 4 per thread.
    assert warps[1] == InstructionCounts(7 * 256, 0, 2 * 256 + 4)
    assert warps[0].global_ - warps[1].global_ == 4 * 256
    shared = radix_sort_warps(threads=256, elements=65536, implementation=3)
    assert shared[0].shared == 4 + 6 * 9 and shared[0].global_ == 2 * 256


@pytest.mark.slow
@pytest.mark.parametrize(("implementation", "best"), [(1, 256), (2, 512)])
def test_radix_sort_steps_fall_then_rise_with_the_thread_count(
    implementation: int, best: int
) -> None:
    # 004 section 5: 65536 integers, one block, threads 64-1024, two schedulers, l1 = 20,
    # l2 = 2. The paper's model and GPU both find 256 threads best for implementation 1
    # and 512 for implementation 2.
    steps = {
        threads: simulate_sm(
            radix_sort_warps(threads=threads, elements=65536, implementation=implementation),
            seed=0,
        ).steps
        for threads in (64, 128, 256, 512, 1024)
    }
    assert min(steps, key=steps.__getitem__) == best
    assert steps[64] > steps[best] * 1.3
    assert steps[1024] > steps[best] * 1.05
