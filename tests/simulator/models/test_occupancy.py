"""The occupancy calculator against NVIDIA's rules and the papers' observations (docs/models.md 2)."""

from __future__ import annotations

import json

import pytest

from simulator.models.occupancy import (
    ARCHITECTURES_PATH,
    OCCUPANCY_ERRORS,
    architecture_limits,
    known_compute_capabilities,
    limits_from_attributes,
    normalise_compute_capability,
    occupancy,
)

REQUIRED = [
    "3.0",
    "3.2",
    "3.5",
    "3.7",
    "5.0",
    "5.2",
    "5.3",
    "6.0",
    "6.1",
    "6.2",
    "7.0",
    "7.2",
    "7.5",
    "8.0",
    "8.6",
    "8.7",
    "8.9",
    "9.0",
    "2.0",
]


def test_the_data_covers_every_compute_capability_from_3_0_to_9_0_and_fermi_with_sources():
    data = json.loads(ARCHITECTURES_PATH.read_text())
    assert set(REQUIRED) <= set(data["architectures"])
    assert any("Programming Guide" in source for source in data["sources"])
    assert any("Occupancy Calculator" in source for source in data["sources"])


def test_saxpy2_reaches_64_warps_per_sm_on_maxwell():
    result = occupancy(compute_capability="5.2", block_size=256, registers_per_thread=8)
    assert result.active_warps_per_sm == 64
    assert result.active_blocks_per_sm == 8
    assert result.occupancy == 1.0
    assert result.limiting_factor == "warps"


def test_one_block_of_1024_threads_resides_on_the_m2075():
    result = occupancy(compute_capability=2.0, block_size=1024, registers_per_thread=16)
    assert result.active_blocks_per_sm == 1
    assert result.max_warps_per_sm == 48


def test_two_blocks_of_1024_threads_reside_on_the_k20xm():
    result = occupancy(compute_capability="3.5", block_size=1024, registers_per_thread=16)
    assert result.active_blocks_per_sm == 2


def test_volta_with_64_registers_is_register_limited():
    # 64 x 32 = 2048 registers per warp; 16384 per sub-partition -> 8 warps x 4 = 32 warps.
    result = occupancy(compute_capability=7.0, block_size=256, registers_per_thread=64)
    assert (result.active_blocks_per_sm, result.active_warps_per_sm) == (4, 32)
    assert result.occupancy == 0.5
    assert result.limiting_factor == "registers"


def test_registers_round_up_to_256_per_warp():
    # 37 registers -> 1184 -> 1280 per warp; 16384 // 1280 = 12 warps per partition -> 48.
    result = occupancy(compute_capability=6.1, block_size=128, registers_per_thread=37)
    assert result.active_blocks_per_sm == 12
    assert result.limiting_factor == "registers"


def test_small_blocks_are_limited_by_the_block_count():
    result = occupancy(compute_capability=5.2, block_size=32, registers_per_thread=16)
    assert (result.active_blocks_per_sm, result.limiting_factor) == (32, "blocks")
    assert result.occupancy == 0.5


def test_shared_memory_rounds_to_the_granularity_and_reserves_1_kb_from_ampere():
    # Maxwell: 20000 B -> 20224 B; 98304 // 20224 = 4 blocks.
    maxwell = occupancy(
        compute_capability=5.2, block_size=128, registers_per_thread=32, shared_mem_per_block=20000
    )
    assert (maxwell.active_blocks_per_sm, maxwell.limiting_factor) == (4, "shared_memory")
    # Ampere 8.6: 24576 + 1024 = 25600 B; 102400 // 25600 = 4 blocks (without the reserve: 4.17).
    ampere = occupancy(
        compute_capability=8.6, block_size=128, registers_per_thread=32, shared_mem_per_block=24576
    )
    assert ampere.active_blocks_per_sm == 4
    ampere_more = occupancy(
        compute_capability=8.6, block_size=128, registers_per_thread=32, shared_mem_per_block=24577
    )
    assert ampere_more.active_blocks_per_sm == 3


def test_turing_holds_at_most_32_warps():
    result = occupancy(compute_capability=7.5, block_size=1024, registers_per_thread=32)
    assert (result.active_blocks_per_sm, result.occupancy) == (1, 1.0)


def test_it_accepts_several_spellings_of_the_compute_capability():
    assert normalise_compute_capability("sm_52") == "5.2"
    assert normalise_compute_capability("86") == "8.6"
    assert normalise_compute_capability(9.0) == "9.0"


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        (
            {"compute_capability": "4.0", "block_size": 32, "registers_per_thread": 8},
            "compute capability",
        ),
        (
            {"compute_capability": "5.2", "block_size": 2048, "registers_per_thread": 8},
            "block size",
        ),
        (
            {"compute_capability": "3.0", "block_size": 32, "registers_per_thread": 64},
            "registers per thread",
        ),
        (
            {
                "compute_capability": "5.2",
                "block_size": 32,
                "registers_per_thread": 8,
                "shared_mem_per_block": 50000,
            },
            "shared memory",
        ),
        (
            {"compute_capability": "5.2", "block_size": 1024, "registers_per_thread": 128},
            "registers but",
        ),
    ],
)
def test_it_rejects_launches_that_cannot_run(kwargs, key):
    with pytest.raises(ValueError, match=key):
        occupancy(**kwargs)


def test_the_error_messages_are_constants():
    assert "unknown compute capability" in OCCUPANCY_ERRORS["unknown_cc"]


@pytest.mark.parametrize("cc", REQUIRED)
def test_the_rules_from_attributes_reproduce_the_table(cc):
    table = architecture_limits(cc)
    derived = limits_from_attributes(
        {
            "computeCapability": float(cc),
            "maxWarpsPerSM": table.max_warps_per_sm,
            "maxBlocksPerSM": table.max_blocks_per_sm,
            "registersPerSM": table.registers_per_sm,
            "sharedMemPerSM": table.shared_memory_per_sm,
        }
    )
    assert derived == table.__class__(**{**table.__dict__, "architecture": "from attributes"})


def test_known_compute_capabilities_are_sorted():
    known = known_compute_capabilities()
    assert known == sorted(known, key=float)
