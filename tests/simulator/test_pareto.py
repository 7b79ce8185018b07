"""The Pareto front and constraints of a sweep's points (simulator.pareto): the one rule REST,
the CSV and the chart use."""

from __future__ import annotations

import random

import pytest

from simulator.pareto import (
    Constraint,
    ObjectiveError,
    check_direction,
    default_direction,
    pareto_flags,
    parse_constraint,
)

MIN2 = [("time", "min"), ("energy", "min")]


def _rows(*pairs: tuple[float | None, float | None]) -> list[dict[str, object]]:
    return [{"time": t, "energy": e} for t, e in pairs]


def test_the_front_holds_the_points_no_other_beats_on_both() -> None:
    rows = _rows((1, 10), (2, 5), (3, 6), (4, 1), (2, 5), (5, 5))
    flags = pareto_flags(rows, MIN2)
    # (3, 6) loses to (2, 5); (5, 5) to (2, 5) and (4, 1); the two (2, 5) both stay
    assert [front for _, front in flags] == [True, True, False, True, True, False]
    assert all(feasible for feasible, _ in flags)


def test_a_maximised_objective_turns_the_order_round() -> None:
    rows = [{"time": 1, "p": 0.5}, {"time": 2, "p": 0.9}, {"time": 3, "p": 0.8}]
    flags = pareto_flags(rows, [("time", "min"), ("p", "max")])
    assert [front for _, front in flags] == [True, True, False]


def test_constraints_make_points_infeasible_and_keep_them_off_the_front() -> None:
    rows: list[dict[str, object]] = [
        {"time": 1, "energy": 10, "gpu_power_w": 800},
        {"time": 2, "energy": 20, "gpu_power_w": 600},
        {"time": 3, "energy": 5, "gpu_power_w": 650},
        {"time": None, "energy": None, "gpu_power_w": None},  # failed
    ]
    rule = parse_constraint("gpu_power_w <= 700", ["time", "energy", "gpu_power_w"])
    flags = pareto_flags(rows, MIN2, [rule])
    # without the 800 W point, (2, 20) is on the front beside (3, 5)
    assert flags == [(False, False), (True, True), (True, True), (False, False)]


def test_a_point_without_a_number_for_an_objective_is_not_on_the_front() -> None:
    assert pareto_flags(_rows((1, None), (2, 2)), MIN2) == [(True, False), (True, True)]


def test_the_front_matches_the_definition_on_random_points() -> None:
    generator = random.Random(44)
    for _ in range(50):
        rows = _rows(*((generator.randint(0, 9), generator.randint(0, 9)) for _ in range(40)))
        flags = pareto_flags(rows, MIN2)
        for row, (_, front) in zip(rows, flags, strict=True):
            beaten = any(
                o["time"] <= row["time"]  # type: ignore[operator]
                and o["energy"] <= row["energy"]  # type: ignore[operator]
                and o != row
                for o in rows
            )
            assert front == (not beaten)


@pytest.mark.parametrize(
    "objectives",
    [
        [("time", "min"), ("energy", "max")],
        [("time", "max"), ("energy", "min"), ("power", "min")],
    ],
)
def test_the_front_matches_the_definition_for_any_directions_and_count(
    objectives: list[tuple[str, str]],
) -> None:
    generator = random.Random(7)

    def signed(row: dict[str, float]) -> tuple[float, ...]:
        return tuple(-row[m] if d == "max" else row[m] for m, d in objectives)

    for _ in range(50):
        rows = [
            {
                "time": generator.choice([generator.randint(0, 5), generator.random()]),
                "energy": generator.randint(0, 5),
                "power": generator.randint(0, 3),
            }
            for _ in range(30)
        ]
        flags = pareto_flags(rows, objectives)
        for row, (_, front) in zip(rows, flags, strict=True):
            mine = signed(row)
            beaten = any(
                all(a <= b for a, b in zip(signed(o), mine, strict=True)) and signed(o) != mine
                for o in rows
            )
            assert front == (not beaten)


def test_a_front_of_every_point_is_found_in_one_pass() -> None:
    # 20,000 points none of which beats another: compared pairwise, 2 x 10^8 comparisons.
    rows = _rows(*((float(i), float(-i)) for i in range(20_000)))
    assert all(front for _, front in pareto_flags(rows, MIN2))


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("power < ", "Expected"),
        ("gpu_power_w ~ 700", "Expected"),
        ("speed <= 3", "Unknown metric 'speed'; the sweep has: time, gpu_power_w"),
        ("time <= fast", "Expected a finite number after <="),
        ("time <= inf", "Expected a finite number"),
        (7, "Expected"),
    ],
)
def test_a_bad_constraint_says_what_is_wrong(text: object, words: str) -> None:
    with pytest.raises(ObjectiveError) as raised:
        parse_constraint(text, ["time", "gpu_power_w"])
    assert words in raised.value.message


def test_constraints_read_back_as_written() -> None:
    rule = parse_constraint(" overall_time_s<7200 ", ["overall_time_s"])
    assert rule == Constraint("overall_time_s", "<", 7200.0)
    assert str(rule) == "overall_time_s < 7200"


def test_directions_default_per_metric() -> None:
    assert default_direction("energy_j") == "min"
    assert default_direction("p_success") == "max"
    assert check_direction("", "p_success") == "max"
    with pytest.raises(ObjectiveError, match="min or max"):
        check_direction("down", "time")
