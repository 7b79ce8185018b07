"""Tests of simulator.study: the search space, objectives and constraints, and the samplers
over known models (a bowl with one minimum; a grid whose Pareto front the sweep's rule gives)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pytest

from simulator.pareto import pareto_flags, parse_constraint
from simulator.study import (
    STUDY_MESSAGES,
    Objective,
    StudyError,
    StudySetup,
    ask_point,
    best_trials,
    constraint_values,
    load_study,
    parse_objectives,
    run_study,
    search_space,
    tell_metrics,
    trial_count,
    trial_rows,
)
from simulator.sweep import range_values, sweep_points

KNOWN = ("overall_time_s", "energy_j", "cost_usd", "p_success", "gpu_power_w")


def test_a_range_is_a_dimension_of_its_values_never_listed() -> None:
    (big, floats, listed, fixed) = search_space(
        {
            "N": {"start": 1, "stop": 10**15, "step": 1},
            "x": {"start": 0, "stop": 1, "step": 0.1},
            "gpu": ["a", "b"],
            "steps": 4,
        }
    )
    assert big.count == 10**15 and big.value(10**15 - 1) == 10**15
    assert [floats.value(i) for i in range(floats.count)] == range_values(0, 1, 0.1)
    assert listed.choices == ("a", "b") and not listed.fixed
    assert fixed.fixed and fixed.probe() == [4]
    assert floats.probe() == [0.0, 1.0]


@pytest.mark.parametrize(
    ("axes", "field", "message"),
    [
        ({"N": []}, "axes.N", STUDY_MESSAGES["empty"]),
        ({"N": {"start": 1, "stop": 0, "step": 1}}, "axes.N.stop", None),
        ({"N": {"start": 1, "stop": 4}}, "axes.N", STUDY_MESSAGES["axis"]),
        ({"N": 3, "M": [2]}, "axes", STUDY_MESSAGES["axes"]),
    ],
)
def test_a_bad_axis_is_refused_naming_it(
    axes: dict[str, object], field: str, message: str | None
) -> None:
    with pytest.raises(StudyError) as caught:
        search_space(axes)
    assert caught.value.field == field
    if message is not None:
        assert caught.value.message == message


def test_objectives_are_checked_by_the_pareto_rule_naming_the_entry() -> None:
    assert parse_objectives(["cost_usd", {"metric": "p_success"}], KNOWN) == [
        Objective("cost_usd", "min"),
        Objective("p_success", "max"),
    ]
    with pytest.raises(StudyError) as caught:
        parse_objectives([{"metric": "overall_time_s"}, {"metric": "speed"}], KNOWN)
    assert caught.value.field == "objectives[1].metric"
    assert caught.value.message.startswith("Unknown metric 'speed'")
    with pytest.raises(StudyError) as caught:
        parse_objectives([{"metric": "cost_usd", "direction": "up"}], KNOWN)
    assert caught.value.field == "objectives[0].direction"
    with pytest.raises(StudyError) as caught:
        parse_objectives(["cost_usd", "cost_usd"], KNOWN)
    assert caught.value.message == STUDY_MESSAGES["repeated"].format(metric="cost_usd")


def test_constraint_values_are_below_zero_exactly_when_the_constraint_holds() -> None:
    rules = [parse_constraint(text, KNOWN) for text in ("gpu_power_w <= 700", "p_success > 0.9")]
    assert constraint_values(rules, {"gpu_power_w": 650, "p_success": 0.95}) == pytest.approx(
        [-50, -0.05]
    )
    assert all(v > 0 for v in constraint_values(rules, {"gpu_power_w": 701, "p_success": 0.9}))
    assert constraint_values(rules, {"gpu_power_w": None}) == [math.inf, math.inf]


def bowl(point: Mapping[str, object]) -> dict[str, object]:
    """A known model: time is least (1.0) at x = 37, y = 0.62."""
    x, y = float(point["x"]), float(point["y"])  # type: ignore[arg-type]
    return {"overall_time_s": 1.0 + ((x - 37) / 10) ** 2 + 4 * (y - 0.62) ** 2}


def evaluate_with(
    model: object,
) -> object:
    def evaluate(points: Sequence[Mapping[str, object]]) -> list[Mapping[str, object] | None]:
        return [model(point) for point in points]  # type: ignore[operator]

    return evaluate


BOWL_AXES = {"x": {"start": 0, "stop": 100, "step": 1}, "y": {"start": 0, "stop": 1, "step": 0.01}}


def best_time(sampler: str, seed: int, trials: int) -> float:
    setup = StudySetup(
        dimensions=tuple(search_space(BOWL_AXES)),
        objectives=(Objective("overall_time_s", "min"),),
        sampler=sampler,
        seed=seed,
    )
    study = run_study(setup, evaluate_with(bowl), trials=trials)  # type: ignore[arg-type]
    return min(row["metrics"]["overall_time_s"] for row in trial_rows(study))


def test_seeded_tpe_gets_closer_to_a_known_minimum_than_random_search() -> None:
    seeds = range(4)
    tpe = [best_time("tpe", seed, 40) for seed in seeds]
    random = [best_time("random", seed, 40) for seed in seeds]
    # Regret over the known minimum (1.0), summed over the seeds.
    assert sum(t - 1.0 for t in tpe) < 0.5 * sum(r - 1.0 for r in random)
    assert best_time("tpe", 0, 40) == tpe[0]  # seeded: the same trials again


def trade_off(point: Mapping[str, object]) -> dict[str, object]:
    """Two conflicting objectives over a small grid: more of x is faster and dearer."""
    x, y = float(point["x"]), float(point["y"])  # type: ignore[arg-type]
    return {
        "overall_time_s": 12 / x + 0.5 * y,
        "cost_usd": x + 3 / y,
        "gpu_power_w": 100 * x,
    }


GRID_AXES: dict[str, object] = {"x": [1, 2, 3, 4, 5, 6], "y": {"start": 1, "stop": 5, "step": 1}}
OBJECTIVES = (Objective("overall_time_s", "min"), Objective("cost_usd", "min"))
# NSGA-II draws points again (30 in the grid): after 48 trials (seed 1) its front still held
# one point the grid's front dominates; after 80 it held none.
TRIALS = 80


def grid_front(constraints: Sequence[object] = ()) -> set[tuple[object, object]]:
    """The Pareto front of every point of the grid, by the sweep's rule."""
    points = sweep_points({"x": [1, 2, 3, 4, 5, 6], "y": range_values(1, 5, 1)})
    flags = pareto_flags(
        [trade_off(p) for p in points],
        [(o.metric, o.direction) for o in OBJECTIVES],
        constraints,  # type: ignore[arg-type]
    )
    return {(p["x"], p["y"]) for p, (_, front) in zip(points, flags, strict=True) if front}


@pytest.mark.parametrize("constraints", [(), ("gpu_power_w <= 400",)])
def test_the_nsga2_front_lies_on_the_grids_pareto_front(constraints: tuple[str, ...]) -> None:
    rules = tuple(parse_constraint(text, KNOWN) for text in constraints)
    setup = StudySetup(
        dimensions=tuple(search_space(GRID_AXES)),
        objectives=OBJECTIVES,
        constraints=rules,
        seed=1,
    )
    study = run_study(setup, evaluate_with(trade_off), trials=TRIALS)  # type: ignore[arg-type]
    assert type(study.sampler).__name__ == "NSGAIISampler"
    rows = trial_rows(study)
    found = {
        (rows[i]["point"]["x"], rows[i]["point"]["y"]) for i in best_trials(rows, OBJECTIVES, rules)
    }
    expected = grid_front(rules)
    assert found and found <= expected
    assert len(found) >= len(expected) // 2
    if rules:
        assert all(x <= 4 for x, _ in found)


def test_a_run_without_an_objectives_figure_is_a_failed_trial() -> None:
    setup = StudySetup(
        dimensions=tuple(search_space({"x": [1, 2, 3]})),
        objectives=(Objective("overall_time_s", "min"),),
    )

    def evaluate(points: Sequence[Mapping[str, object]]) -> list[Mapping[str, object] | None]:
        return [
            None if p["x"] == 2 else {"overall_time_s": None if p["x"] == 3 else 1.0}
            for p in points
        ]

    rows = trial_rows(run_study(setup, evaluate, trials=6, parallel=3))
    states = {row["point"]["x"]: row["state"] for row in rows}
    assert states.get(1, "complete") == "complete"
    assert states.get(2, "fail") == "fail" and states.get(3, "fail") == "fail"
    assert len(rows) == 6


@pytest.mark.parametrize("sampler", ["random", "tpe", "nsga2"])
def test_a_study_loaded_afresh_for_each_trial_asks_no_point_twice(sampler: str) -> None:
    # As the web side's advances and a resumed command line load it: a new sampler each time.
    from optuna.storages import InMemoryStorage

    setup = StudySetup(
        dimensions=tuple(search_space({"x": {"start": 1, "stop": 10**9, "step": 1}})),
        objectives=tuple(parse_objectives(["overall_time_s", "cost_usd"], KNOWN))
        if sampler == "nsga2"
        else tuple(parse_objectives(["overall_time_s"], KNOWN)),
        sampler=sampler,
        seed=11,
    )
    storage = InMemoryStorage()
    points = []
    for _ in range(6):
        study = load_study(setup, storage=storage, name="s")
        number, point = ask_point(study, setup)
        tell_metrics(study, setup, number, {"overall_time_s": 1.0, "cost_usd": 1.0})
        points.append(point["x"])
    assert trial_count(study) == 6
    assert len(set(points)) == 6
    # The first sampler is the seed's own: a study made again asks the same first point.
    again = load_study(setup, storage=InMemoryStorage(), name="s")
    assert ask_point(again, setup)[1]["x"] == points[0]
