"""Waves of blocks over SMs: the stepwise runtime of 003 Fig. 2 (docs/models.md 7)."""

from __future__ import annotations

import numpy as np
import pytest

from simulator.models.blocks import (
    BLOCKS_ERRORS,
    simulate_block_waves,
    step_positions,
    stepwise_runtime,
    waves,
)
from simulator.models.occupancy import occupancy


def _per_sm(cc: str) -> int:
    return occupancy(
        compute_capability=cc, block_size=1024, registers_per_thread=16
    ).active_blocks_per_sm


def test_the_m2075_steps_every_14_blocks_of_1024_threads():
    assert step_positions(60, sms=14, blocks_per_sm=_per_sm("2.0")) == [15, 29, 43, 57]


def test_the_k20xm_steps_every_28_blocks_of_1024_threads():
    assert step_positions(90, sms=14, blocks_per_sm=_per_sm("3.5")) == [29, 57, 85]


def test_the_closed_form_runtime_is_flat_within_a_wave_and_jumps_at_the_step():
    nb = np.arange(1, 100)
    runtime = stepwise_runtime(nb, wave_time_s=1e-3, sms=14, blocks_per_sm=2, launch_s=5e-6)
    jumps = (np.flatnonzero(np.diff(runtime) > 0) + 2).tolist()
    assert jumps == step_positions(99, sms=14, blocks_per_sm=2)
    assert runtime[27] == pytest.approx(5e-6 + 1e-3)
    assert runtime[28] == pytest.approx(5e-6 + 2e-3)


def test_the_simulated_waves_reproduce_the_closed_form_for_identical_blocks():
    for nb in (1, 14, 15, 28, 29, 56, 57, 100):
        schedule = simulate_block_waves([1e-3] * nb, sms=14, blocks_per_sm=2)
        assert schedule.makespan_s == pytest.approx(waves(nb, sms=14, blocks_per_sm=2) * 1e-3)


def test_blocks_are_dispatched_round_robin_over_the_sms():
    schedule = simulate_block_waves([1.0] * 30, sms=14, blocks_per_sm=2)
    assert [p.sm for p in schedule.placements[:16]] == [*range(14), 0, 1]
    assert [p.start_s for p in schedule.placements[28:]] == [1.0, 1.0]


def test_a_long_block_delays_only_its_own_slot():
    schedule = simulate_block_waves([5.0, 1.0, 1.0, 1.0], sms=2, blocks_per_sm=1)
    assert [(p.sm, p.start_s) for p in schedule.placements] == [
        (0, 0.0),
        (1, 0.0),
        (1, 1.0),
        (1, 2.0),
    ]
    assert schedule.makespan_s == 5.0


def test_it_rejects_gpus_without_sms():
    with pytest.raises(ValueError, match=BLOCKS_ERRORS["sms"]):
        waves(10, sms=0, blocks_per_sm=1)
