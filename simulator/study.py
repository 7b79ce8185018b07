"""Studies: an optimiser's search over a sweep's axes, one run per trial (Optuna ask and tell).

A sweep runs every point of its axes; a study runs at most a budget of them, each chosen by
a sampler from the outcomes told so far. One code path for the command line (`python -m
simulator study`, in-memory storage) and the web side (its storage in the project's database,
trials launched as runs on the Celery queues):

- the search space is the sweep's axes, by the sweep's rule (simulator.sweep): a list is a
  categorical dimension, a range {start, stop, step} an ordered one whose values are those of
  `range_values` (integers stay integers), a single value is fixed. What each axis varies
  (a variable, `NODE.attribute`, `TYPE.attribute`, `labels.LABEL`) and its checks are
  `parse_axes`'s, run on the values a dimension can take (`axis_probe`: a range's ends);
- objectives are metrics of `simulator.result_metrics` with a direction, constraints are
  simulator.pareto's ("gpu_power_w <= 700"); the best trials are the Pareto front of the
  trials told, by pareto.py's rule (one objective: the feasible trials of the best value);
- `sampler_for` picks Optuna's TPE for one objective and NSGA-II for several ("auto"), or
  the named one ("tpe", "nsga2", "random"), seeded; each trial is told its constraints'
  values with its metrics (Optuna's `set_constraint`: a value <= 0 holds), which both
  samplers read;
- a trial is told its run's metrics (`tell_metrics`): its objectives' values, or a failed
  trial when the run failed or lacks an objective's figure (the sampler learns nothing
  from it, and the trial still counts against the budget).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from simulator.pareto import (
    Constraint,
    ObjectiveError,
    check_direction,
    check_metric,
    pareto_flags,
    parse_constraint,
)
from simulator.result_metrics import SUMMARY_METRICS
from simulator.sweep import SIGNIFICANT_DIGITS, range_count, range_error

if TYPE_CHECKING:
    import optuna
    from optuna.samplers import BaseSampler
    from optuna.storages import BaseStorage
    from optuna.trial import FrozenTrial, TrialState

__all__ = [
    "ERROR_ATTR",
    "METRICS_ATTR",
    "SAMPLERS",
    "STUDY_MESSAGES",
    "Dimension",
    "Evaluate",
    "Objective",
    "Outcome",
    "StudyError",
    "StudySetup",
    "ask_point",
    "best_trials",
    "check_sampler",
    "constraint_values",
    "load_study",
    "parse_constraints",
    "parse_objectives",
    "resumed_seed",
    "run_study",
    "sampler_for",
    "search_space",
    "stored_failures",
    "stored_trials",
    "study_metrics",
    "tell_metrics",
    "trial_count",
    "trial_rows",
    "unfinished_trials",
]

SAMPLERS = ("auto", "tpe", "nsga2", "random")
# Where a trial keeps its run's metrics (Optuna user attributes), for constraints and tables.
METRICS_ATTR = "metrics"
# Why a trial failed without a run to show it (its point was refused, its run was lost).
ERROR_ATTR = "error"
# Where a trial keeps its point (the values of every axis, fixed ones included).
POINT_ATTR = "point"
# NSGA-II's generation; Optuna's default (50) exceeds most studies' budget here, and a
# generation that never fills leaves NSGA-II sampling at random.
NSGA2_POPULATION = 8

STUDY_MESSAGES = {
    "axes": "A study needs at least one axis with more than one value.",
    "axis": "Expected a list of values, a range {{start, stop, step}} or one value.",
    "empty": "A list axis needs at least one value.",
    "range": "In the range, the {part}: {message}",
    "objectives": "Expected a list of objectives, each {{metric, direction}}, at least one.",
    "objective": 'Expected {{"metric": ..., "direction": "min" or "max"}}, got {value!r}.',
    "repeated": "Metric {metric!r} is an objective twice.",
    "constraints": 'Expected a list of constraints, e.g. ["gpu_power_w <= 700"].',
    "sampler": "Expected a sampler, one of {choices}, got {value!r}.",
}


class StudyError(ValueError):
    """A bad study setting: `field` names it (`objectives[1].metric`), `message` says why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Dimension:
    """One axis as the sampler sees it: its `choices` (a list axis: categorical) or a range
    from `start` by `step`, `count` values (ordered: the sampler draws an index)."""

    name: str
    choices: tuple[object, ...] = ()
    start: float | int = 0
    step: float | int = 1
    count: int = 0

    @property
    def fixed(self) -> bool:
        return len(self.choices) == 1 or (not self.choices and self.count == 1)

    def value(self, index: int) -> object:
        """Return the range's value at `index`, by `range_values`'s rule (exact integers,
        floats rounded to its significant digits), without listing the range."""
        if isinstance(self.start, int) and isinstance(self.step, int):
            return self.start + index * self.step
        return float(f"{self.start + index * self.step:.{SIGNIFICANT_DIGITS}g}")

    def probe(self) -> list[object]:
        """Return the values `parse_axes` checks for this dimension: a list's, a range's
        first and last (its checks are intervals and types, which the ends decide)."""
        if self.choices:
            return list(self.choices)
        return [self.value(0), self.value(self.count - 1)]

    def suggest(self, trial: optuna.Trial) -> object:
        """Return this dimension's value for `trial`, as the sampler draws it."""
        if self.choices and not _ordered(self.choices):
            # By index: Optuna stores only scalars as choices, and a variable may be a list.
            index = trial.suggest_categorical(self.name, list(range(len(self.choices))))
            return self.choices[index]
        count = len(self.choices) or self.count
        index = trial.suggest_int(self.name, 0, count - 1)
        return self.choices[index] if self.choices else self.value(index)


def _ordered(values: Sequence[object]) -> bool:
    """Return whether a list axis is numbers in increasing order: then its index is ordered
    too, and the sampler may draw it as a number; any other list is categorical."""
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    return numbers and all(a < b for a, b in itertools.pairwise(values))  # type: ignore[operator]


def search_space(axes: Mapping[str, object], *, field: str = "axes") -> list[Dimension]:
    """Return the dimensions of `axes` (name -> a list, a range {start, stop, step} or one
    value); raise StudyError naming the first bad one. A range is never expanded, so a
    space far too big to enumerate costs nothing."""
    dimensions: list[Dimension] = []
    for name, axis in axes.items():
        path = f"{field}.{name}"
        if isinstance(axis, list):
            if not axis:
                raise StudyError(path, STUDY_MESSAGES["empty"])
            dimensions.append(Dimension(name, choices=tuple(axis)))
        elif isinstance(axis, Mapping):
            if set(axis) != {"start", "stop", "step"}:
                raise StudyError(path, STUDY_MESSAGES["axis"])
            start, stop, step = axis["start"], axis["stop"], axis["step"]
            fault = range_error(start, stop, step)
            if fault is not None:
                part, message = fault
                raise StudyError(
                    f"{path}.{part}", STUDY_MESSAGES["range"].format(part=part, message=message)
                )
            dimensions.append(
                Dimension(name, start=start, step=step, count=range_count(start, stop, step))
            )
        elif axis is None or isinstance(axis, str | int | float | bool):
            dimensions.append(Dimension(name, choices=(axis,)))
        else:
            raise StudyError(path, STUDY_MESSAGES["axis"])
    if all(d.fixed for d in dimensions):
        raise StudyError(field, STUDY_MESSAGES["axes"])
    return dimensions


@dataclass(frozen=True)
class Objective:
    metric: str
    direction: str  # "min" or "max"

    @property
    def optuna_direction(self) -> Literal["minimize", "maximize"]:
        return "minimize" if self.direction == "min" else "maximize"


def parse_objectives(
    raw: object, known: Collection[str], *, field: str = "objectives"
) -> list[Objective]:
    """Return the objectives of `raw`: a list of {metric, direction} (or of metric names),
    each a metric of `known` (simulator.pareto's checks and messages)."""
    if not isinstance(raw, list) or not raw:
        raise StudyError(field, STUDY_MESSAGES["objectives"])
    objectives: list[Objective] = []
    for index, item in enumerate(raw):
        entry = {"metric": item} if isinstance(item, str) else item
        if not isinstance(entry, Mapping) or set(entry) - {"metric", "direction"}:
            raise StudyError(f"{field}[{index}]", STUDY_MESSAGES["objective"].format(value=item))
        try:
            metric = check_metric(entry.get("metric"), known)
        except ObjectiveError as error:
            raise StudyError(f"{field}[{index}].metric", error.message) from error
        try:
            direction = check_direction(entry.get("direction"), metric)
        except ObjectiveError as error:
            raise StudyError(f"{field}[{index}].direction", error.message) from error
        if any(o.metric == metric for o in objectives):
            raise StudyError(
                f"{field}[{index}].metric", STUDY_MESSAGES["repeated"].format(metric=metric)
            )
        objectives.append(Objective(metric, direction))
    return objectives


def parse_constraints(
    raw: object, known: Collection[str], *, field: str = "constraints"
) -> list[Constraint]:
    """Return the constraints of `raw` (a list of "<metric> <op> <number>"; None: none)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise StudyError(field, STUDY_MESSAGES["constraints"])
    constraints = []
    for index, text in enumerate(raw):
        try:
            constraints.append(parse_constraint(text, known))
        except ObjectiveError as error:
            raise StudyError(f"{field}[{index}]", error.message) from error
    return constraints


def study_metrics(snapshot: Mapping[str, Any]) -> list[str]:
    """Return the metrics a study of this system may optimise or constrain: the run-wide
    figures of simulator.result_metrics and each node's energy and busy time."""
    nodes = [
        str(node.get("id"))
        for node in snapshot.get("nodes") or []
        if isinstance(node, Mapping) and not node.get("group")
    ]
    per_node = [f"{kind}.{node}" for node in nodes for kind in ("energy_j", "busy_s")]
    return [*SUMMARY_METRICS, *per_node]


def stored_trials(storage: str | BaseStorage, name: str) -> list[dict[str, Any]]:
    """Return the `trial_rows` of the study `name` in `storage` (none before it is made)."""
    import optuna
    from optuna.samplers import RandomSampler

    try:
        study = optuna.load_study(study_name=name, storage=storage, sampler=RandomSampler())
    except KeyError:
        return []
    return trial_rows(study)


def trial_count(study: optuna.Study) -> int:
    """Return how many trials the study holds, in any state, with one count query (Study has
    no public count: `len(get_trials())` would load every trial)."""
    return study._storage.get_n_trials(study._study_id)


def unfinished_trials(study: optuna.Study) -> list[FrozenTrial]:
    """Return the study's trials still running (or waiting), loading no finished one."""
    from optuna.trial import TrialState

    return study.get_trials(deepcopy=False, states=(TrialState.RUNNING, TrialState.WAITING))


def stored_failures(storage: str | BaseStorage, name: str) -> tuple[int, list[dict[str, Any]]]:
    """Return how many trials the study `name` in `storage` holds and the `trial_rows` of its
    failed ones (none before it is made): what a reader that takes the other trials from
    elsewhere (the web side's runs) needs, without loading every trial."""
    import optuna
    from optuna.samplers import RandomSampler
    from optuna.trial import TrialState

    try:
        study = optuna.load_study(study_name=name, storage=storage, sampler=RandomSampler())
    except KeyError:
        return 0, []
    return trial_count(study), trial_rows(study, states=(TrialState.FAIL,))


def check_sampler(value: object, *, field: str = "sampler") -> str:
    """Return the sampler's name (empty or None: "auto"); raise StudyError otherwise."""
    if value in (None, ""):
        return "auto"
    if value not in SAMPLERS:
        choices = ", ".join(SAMPLERS)
        raise StudyError(field, STUDY_MESSAGES["sampler"].format(choices=choices, value=value))
    return str(value)


def constraint_values(
    constraints: Sequence[Constraint], metrics: Mapping[str, object]
) -> list[float]:
    """Return each constraint's value in Optuna's convention (<= 0: holds): how far the
    metric is past its bound; a metric without a number violates it (infinitely)."""
    values = []
    for constraint in constraints:
        number = metrics.get(constraint.metric)
        finite = isinstance(number, int | float) and not isinstance(number, bool)
        if not finite or not math.isfinite(float(number)):  # type: ignore[arg-type]
            values.append(math.inf)
            continue
        excess = float(number) - constraint.value  # type: ignore[arg-type]
        if constraint.op in (">=", ">"):
            excess = -excess
        if constraint.op in ("<", ">") and excess == 0:
            excess = math.ulp(constraint.value) or 1e-300  # on the bound: a strict one fails
        values.append(excess)
    return values


def sampler_for(name: str, *, seed: int, objectives: Sequence[Objective]) -> BaseSampler:
    """Return the seeded sampler `name` ("auto": TPE for one objective, NSGA-II for more).
    Both read the constraints each trial was told (`tell_metrics`)."""
    from optuna.samplers import NSGAIISampler, RandomSampler, TPESampler

    if name == "auto":
        name = "tpe" if len(objectives) == 1 else "nsga2"
    if name == "tpe":
        return TPESampler(seed=seed, multivariate=True)
    if name == "nsga2":
        return NSGAIISampler(seed=seed, population_size=NSGA2_POPULATION)
    return RandomSampler(seed=seed)


@dataclass(frozen=True)
class StudySetup:
    """What a study searches and for what: its dimensions, objectives, constraints, sampler."""

    dimensions: tuple[Dimension, ...]
    objectives: tuple[Objective, ...]
    constraints: tuple[Constraint, ...] = ()
    sampler: str = "auto"
    seed: int = 0

    def sampler_instance(self, held: int = 0) -> BaseSampler:
        """Return the study's sampler for a storage already holding `held` trials: seeded
        with the study's seed mixed with that count (`resumed_seed`)."""
        seed = resumed_seed(self.seed, held)
        return sampler_for(self.sampler, seed=seed, objectives=self.objectives)


def resumed_seed(seed: int, held: int) -> int:
    """Return the seed of a sampler made for a study whose storage holds `held` trials.

    A sampler made afresh with the study's own seed draws its random points (TPE's start-up
    trials, NSGA-II's first generation, the random sampler's every point) from the start of
    the same sequence each time: a study resumed from its storage, or advanced by a new
    process, would ask for the points it asked before. Mixing in the count keeps the first
    sampler's points those of the seed, and every later one deterministic and different.
    """
    if held == 0:
        return seed
    return (seed * 1_000_003 + held * 7_919) % 2**32


def load_study(setup: StudySetup, *, storage: str | BaseStorage | None, name: str) -> optuna.Study:
    """Return the Optuna study `name` in `storage` (created on first use), with the setup's
    sampler: a resumed study continues from the trials its storage holds."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(
        storage=storage,
        study_name=name,
        sampler=setup.sampler_instance(),
        directions=[o.optuna_direction for o in setup.objectives],
        load_if_exists=True,
    )
    held = trial_count(study)
    if held:
        study.sampler = setup.sampler_instance(held)
    return study


def ask_point(study: optuna.Study, setup: StudySetup) -> tuple[int, dict[str, object]]:
    """Return (trial number, point) of a new trial: each axis's value, fixed ones included;
    the point is kept with the trial (POINT_ATTR)."""
    trial = study.ask()
    point = {
        d.name: d.choices[0] if d.fixed and d.choices else d.suggest(trial)
        for d in setup.dimensions
    }
    trial.set_user_attr(POINT_ATTR, point)
    return trial.number, point


def tell_metrics(
    study: optuna.Study,
    setup: StudySetup,
    number: int,
    metrics: Mapping[str, object] | None,
    *,
    error: str | None = None,
) -> FrozenTrial:
    """Tell trial `number` its run's metrics (None: the run failed or was lost, `error`
    saying why where the run cannot): complete with the objectives' values when all are
    finite numbers, else failed. A trial already told is left as it is."""
    import optuna
    from optuna.trial import TrialState

    # By number through the storage: the process that asked (a worker before a restart)
    # may be gone, and its Trial object with it.
    storage = study._storage
    trial_id = storage.get_trial_id_from_study_id_trial_number(study._study_id, number)
    if storage.get_trial(trial_id).state.is_finished():
        return storage.get_trial(trial_id)
    trial = optuna.Trial(study, trial_id)
    if error is not None:
        trial.set_user_attr(ERROR_ATTR, error)
    values: list[float] | None = None
    if metrics is not None:
        trial.set_user_attr(METRICS_ATTR, dict(metrics))
        for constraint, value in zip(
            setup.constraints, constraint_values(setup.constraints, metrics), strict=True
        ):
            trial.set_constraint(str(constraint), value)
        values = []
        for objective in setup.objectives:
            figure = metrics.get(objective.metric)
            finite = isinstance(figure, int | float) and not isinstance(figure, bool)
            if not finite or not math.isfinite(float(figure)):  # type: ignore[arg-type]
                values = None
                break
            values.append(float(figure))  # type: ignore[arg-type]
    if values is None:
        return study.tell(number, state=TrialState.FAIL, skip_if_finished=True)
    return study.tell(number, values, skip_if_finished=True)


def trial_rows(
    study: optuna.Study, states: Sequence[TrialState] | None = None
) -> list[dict[str, Any]]:
    """Return one row per trial (those in `states`, if given): number, state ("running",
    "complete", "fail"), point, metrics (empty until told) and the error of a trial that
    failed without a run."""
    return [
        {
            "number": trial.number,
            "state": trial.state.name.lower(),
            "point": trial.user_attrs.get(POINT_ATTR) or {},
            "metrics": trial.user_attrs.get(METRICS_ATTR) or {},
            "error": trial.user_attrs.get(ERROR_ATTR),
        }
        for trial in study.get_trials(deepcopy=False, states=states)
    ]


def best_trials(
    rows: Sequence[Mapping[str, Any]],
    objectives: Sequence[Objective],
    constraints: Sequence[Constraint] = (),
) -> list[int]:
    """Return the indices of the best rows (each {"metrics": ...}): the Pareto front of the
    feasible ones by simulator.pareto's rule; for one objective, those of the best value."""
    metrics = [row.get("metrics") or {} for row in rows]
    pairs = [(o.metric, o.direction) for o in objectives]
    return [i for i, (_, front) in enumerate(pareto_flags(metrics, pairs, constraints)) if front]


# A trial's outcome: its run's metrics, None for a run that failed, or the reason no run
# was made (a point that cannot run, such as a parallel plan breaking a rule).
Outcome = Mapping[str, object] | str | None
Evaluate = Callable[[Sequence[Mapping[str, object]]], Sequence[Outcome]]


def run_study(
    setup: StudySetup,
    evaluate: Evaluate,
    *,
    trials: int,
    parallel: int = 1,
    storage: str | BaseStorage | None = None,
    name: str = "study",
    told: Callable[[int], None] | None = None,
) -> optuna.Study:
    """Run a study in this process: ask `parallel` points at a time, `evaluate` them (their
    metrics, None for a failed run, or the reason a point could not run, in order) and tell
    each, until `trials` were run; a point that could not run is a failed trial keeping its
    reason (ERROR_ATTR)."""
    study = load_study(setup, storage=storage, name=name)
    done = 0
    while done < trials:
        batch = [ask_point(study, setup) for _ in range(min(parallel, trials - done))]
        outcomes = evaluate([point for _, point in batch])
        for (number, _), outcome in zip(batch, outcomes, strict=True):
            if isinstance(outcome, str):
                tell_metrics(study, setup, number, None, error=outcome)
            else:
                tell_metrics(study, setup, number, outcome)
        done += len(batch)
        if told is not None:
            told(done)
    return study
