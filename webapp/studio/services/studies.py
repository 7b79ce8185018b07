"""Studies: an optimiser's search over a sweep's axes whose trials are the project's runs.

A study is launched like a sweep (the same `spec`, checked by the same rules: its axes'
shapes by `sweep_size`, what each varies by `checked_axes`, each point's system and labels by
`PointBuilder`, the hardware it swaps in by `sweep_hardware`, searched as one more
categorical dimension), plus what to optimise (`objectives`, `constraints`, simulator.study), the
sampler and its seed, a budget (`runs`, and `wall_s` from launch) and how many trials may be
in flight at once (`parallel`, at most the user's runs in flight, PARASIM_MAX_RUNNING_PER_USER).

Its trials are the children of its sweep, launched through the sweep's code and sent by
`dispatch` like any run. `study_advance` (the `studio.advance_study` task, sent whenever one
of its runs ends, and by `studio.advance_studies` periodically) is the one place that talks
to Optuna, under a lease so that one advance runs per study at a time, and never inside a
Django transaction (webapp.studio.study_storage):

1. every trial Optuna holds as running is settled: its run finished: told its metrics
   (simulator.result_metrics; a failed or cancelled run: a failed trial); no run at all (the
   advance that asked for it died before storing it): failed as lost;
2. while the study runs, within its budget of runs and wall time, new trials are asked for
   until `parallel` are in flight, each stored as a run and sent;
3. with none in flight, a study whose budget is spent finishes.

A study of a training workload's plans (`spec` a plan sweep's, `kind` "train") searches
its plan axes instead (`_workload_study_launch`): each trial's run is made by the plan
sweep's code (services.workloads.workload_child), and a plan that cannot run is a failed
trial whose error names the field and the reason, no run made.

Stopping asks for no more trials (its runs in flight finish and are told); resuming runs
step 1 and goes on from Optuna's storage, so a study outlives a restart of every worker.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q

from hwdb.selectors import gpu_catalogue
from simulator.errors import LaunchError
from simulator.gpu_catalogue import GpuNotFound
from simulator.result_metrics import result_metrics
from simulator.study import (
    Dimension,
    StudyError,
    StudySetup,
    ask_point,
    check_sampler,
    load_study,
    parse_constraints,
    parse_objectives,
    search_space,
    study_metrics,
    tell_metrics,
    trial_count,
    unfinished_trials,
)
from simulator.sweep import AxisError
from simulator.uncertainty import check_uncertainty
from simulator.workloads.plan_axes import parse_plan_axes, plan_points
from webapp.studio import dispatch
from webapp.studio.models import (
    Simulation,
    SimulationStatus,
    Study,
    StudyStatus,
    Sweep,
    SweepStatus,
)
from webapp.studio.selectors import (
    WORKLOAD_METRICS,
    active_run_count,
    known_metrics,
    sweep_aggregate,
)
from webapp.studio.services import workloads as workload_services
from webapp.studio.services.common import MESSAGES, check_name, current_time, field_error
from webapp.studio.services.launch import LaunchPlan, check_active_runs, check_snapshot, launch_plan
from webapp.studio.services.sweeps import (
    PointBuilder,
    SweepOption,
    checked_axes,
    plan_labels,
    sweep_hardware,
    sweep_size,
)
from webapp.studio.study_storage import optuna_storage
from webapp.studio.validation import reject_nul

if TYPE_CHECKING:
    import optuna
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

# One advance per study at a time; a lease outlives an advance that died holding it.
LEASE_S = 120
# How soon an advance that found the lease taken is sent again.
LEASE_RETRY_S = 2.0
# The launch fields of a study's runs (as a sweep's, `sweep_launch`).
LAUNCH_FIELDS = (
    "system_model",
    "snapshot",
    "application",
    "app_source",
    "labels",
    "queue",
    "seed",
    "time_limit_s",
    "cpu_limit_s",
    "timeline_limit",
    "failures",
)
# The dimension of the hardware records swapped in (spec.hardware), by component name.
HARDWARE_AXIS = "hardware"
STUDY_MESSAGES = {
    "hardware": "An axis is called 'hardware', the name of the hardware swapped in; rename it.",
    "runs": "Expected a whole number of runs from 1 to {limit}.",
    "wall_s": "Expected a whole number of seconds, at least 1, or null for no limit.",
    "parallel": "Expected a whole number of runs in flight at once, from 1 to {limit}.",
    "seed": "Expected a whole number.",
    "budget": "Expected an object {runs, wall_s}.",
    "not_running": "The study is {status}; only a running study can be stopped.",
    "not_stopped": "The study is {status}; only a stopped study can be resumed.",
    "lost": "The trial's run was never stored (its advance stopped); counted as failed.",
    "dp_gpus": "A dp axis sets the GPUs (dp x tp x pp x cp): leave gpus out.",
}


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _parallel_limit() -> int:
    """Return the most trials in flight a study may ask for: the user's runs in flight."""
    cap = int(settings.PARASIM_MAX_RUNNING_PER_USER)
    return cap if cap > 0 else int(settings.PARASIM_MAX_ACTIVE_RUNS)


def _axes_of(spec: Mapping[str, Any]) -> tuple[dict[str, object], dict[str, object]]:
    return dict(spec.get("variables") or {}), dict(spec.get("axes") or {})


def _builder(
    plan: LaunchPlan,
    spec: Mapping[str, Any],
    dimensions: list[Dimension],
    option: SweepOption | None = None,
) -> PointBuilder:
    """Return the point builder of a study on its frozen system (or on one of its hardware
    `option`s), its axes checked on the values each dimension can take
    (simulator.study.Dimension.probe)."""
    variables, others = _axes_of(spec)
    probes = {d.name: d.probe() for d in dimensions}
    declared = None if plan.declared is None else [item["name"] for item in plan.declared]
    snapshot, system, hardware = option or (plan.snapshot, plan.system, None)
    return PointBuilder(
        plan=plan,
        labels=plan_labels(spec),
        snapshot=snapshot,
        system=system,
        hardware=hardware,
        axes=checked_axes(
            {name: probes[name] for name in variables},
            {name: probes[name] for name in others},
            snapshot,
            declared,
        ),
    )


def _hardware_choices(options: list[dict[str, Any]]) -> list[str]:
    """Return the values of the hardware dimension: each swapped-in component's name, with
    its id where two share a name."""
    names = [str(option["hardware"]["name"]) for option in options]
    return [
        name if names.count(name) == 1 else f"{name} (id {option['hardware']['id']})"
        for name, option in zip(names, options, strict=True)
    ]


def _dimensions(spec: Mapping[str, Any], hardware: list[dict[str, Any]]) -> list[Dimension]:
    """Return the study's search space: its axes, and the hardware swapped in as one more
    categorical dimension (HARDWARE_AXIS) when it swaps any."""
    variables, others = _axes_of(spec)
    axes: dict[str, object] = {**variables, **others}
    if hardware:
        axes[HARDWARE_AXIS] = _hardware_choices(hardware)
    return search_space(axes, field="spec")


def _setup(study: Study, dimensions: list[Dimension] | None = None) -> StudySetup:
    """Return the optimiser's setup of a stored study (checked at launch)."""
    known = known_metrics(study.frozen)
    hardware = study.frozen.get("hardware_options") or []
    return StudySetup(
        dimensions=tuple(dimensions or _dimensions(study.sweep.spec, hardware)),
        objectives=tuple(parse_objectives(study.objectives, known)),
        constraints=tuple(parse_constraints(study.constraints, known)),
        sampler=study.sampler,
        seed=study.seed,
    )


def _study_error(error: StudyError, prefix: str = "") -> ValidationError:
    return field_error(f"{prefix}{error.field}", error.message)


@transaction.atomic
def study_launch(
    *,
    user: User,
    name: object,
    spec: object,
    objectives: object,
    constraints: object = None,
    sampler: object = None,
    seed: object = None,
    budget: object = None,
    parallel: object = None,
) -> Study:
    """Return a new running study; its first trials are asked for once it is stored.

    `spec` is a sweep's (`sweep_launch`): the hardware it swaps in, if any, is one more
    categorical dimension (HARDWARE_AXIS); `budget` is {runs, wall_s};
    every bad field is refused naming it, before anything is stored.
    """
    if not isinstance(spec, Mapping):
        raise field_error("spec", MESSAGES["sweep_object"])
    reject_nul(spec, field="spec")
    reject_nul([objectives, constraints], field="objectives")
    study_name = check_name(name) if name not in (None, "") else "study"
    if "kind" in spec:  # a training workload's plans (a plan sweep's spec)
        return _workload_study_launch(
            user=user,
            name=study_name,
            spec=spec,
            objectives=objectives,
            constraints=constraints,
            sampler=sampler,
            seed=seed,
            budget=budget,
            parallel=parallel,
        )
    sweep_size(spec)  # the axes' shapes, by the sweep's rule and messages
    try:
        plan = launch_plan(
            user=user, **{key: spec.get(key) for key in LAUNCH_FIELDS}, check_labels=False
        )
    except ValidationError as error:
        raise ValidationError(
            {f"spec.{field}": messages for field, messages in error.message_dict.items()}
        ) from error
    if not isinstance(spec.get("labels"), Mapping):
        raise field_error(
            "spec.labels",
            MESSAGES["required"] if not spec.get("labels") else "Expected an object.",
        )
    variables, others = _axes_of(spec)
    options: list[SweepOption] = []
    if spec.get("hardware") is not None:
        if HARDWARE_AXIS in variables or HARDWARE_AXIS in others:
            raise field_error("spec.hardware", STUDY_MESSAGES["hardware"])
        options = sweep_hardware(user, plan, spec["hardware"])
    hardware = [{"snapshot": o[0], "hardware": o[2]} for o in options]
    try:
        dimensions = _dimensions(spec, hardware)
    except StudyError as error:
        raise _study_error(error) from error
    # Each value a dimension can take at its ends, the others at their first, on every
    # hardware swapped in: the point's variables, system and label counts are checked as
    # its trial's would be.
    searched = [d for d in dimensions if d.name != HARDWARE_AXIS]
    first = {d.name: d.probe()[0] for d in searched}
    probe_sweep = Sweep(owner=user, name=study_name, spec={})
    for option in options or [(plan.snapshot, plan.system, None)]:
        builder = _builder(plan, spec, searched, option)
        for dimension in searched:
            for value in dimension.probe():
                point = {**first, dimension.name: value}
                builder.child(point, sweep=probe_sweep, sweep_name="")
    settings_ = _check_settings(
        user, study_metrics(plan.snapshot), objectives, constraints, sampler, seed, budget, parallel
    )
    return _create(
        user=user,
        name=study_name,
        spec=spec,
        frozen={**_frozen(plan), "hardware_options": hardware},
        axes={**variables, **others},
        settings_=settings_,
        system_model=plan.system_model,
        application=plan.application,
    )


@dataclass(frozen=True)
class _Settings:
    objectives: list[Any]
    constraints: list[Any]
    sampler: str
    seed: int
    runs: int
    wall_s: int | None
    parallel: int


def _check_settings(
    user: User,
    known: list[str],
    objectives: object,
    constraints: object,
    sampler: object,
    seed: object,
    budget: object,
    parallel: object,
) -> _Settings:
    """Return a study's checked settings besides its spec; raise ValidationError naming
    the first bad field."""
    try:
        parse_objectives(objectives, known)
        parse_constraints(constraints, known)
        sampler_name = check_sampler(sampler)
    except StudyError as error:
        raise _study_error(error) from error
    if seed is None:
        seed = 0
    if not _whole(seed):
        raise field_error("seed", STUDY_MESSAGES["seed"])
    runs, wall_s = _check_budget(budget)
    limit = min(_parallel_limit(), runs)
    parallel = 1 if parallel is None else parallel
    if not isinstance(parallel, int) or isinstance(parallel, bool) or not 1 <= parallel <= limit:
        raise field_error("parallel", STUDY_MESSAGES["parallel"].format(limit=limit))
    assert isinstance(seed, int)
    check_active_runs(user, adding=parallel, field="parallel")
    return _Settings(
        objectives=list(objectives),  # type: ignore[call-overload]
        constraints=list(constraints or []),  # type: ignore[call-overload]
        sampler=sampler_name,
        seed=seed,
        runs=runs,
        wall_s=wall_s,
        parallel=parallel,
    )


def _create(
    *,
    user: User,
    name: str,
    spec: Mapping[str, Any],
    frozen: dict[str, Any],
    axes: dict[str, object],
    settings_: _Settings,
    system_model: Any = None,
    application: Any = None,
) -> Study:
    """Store the study and its sweep; its first trials are asked for once committed."""
    sweep = Sweep.objects.create(owner=user, name=name, spec=dict(spec))
    study = Study.objects.create(
        owner=user,
        name=name,
        sweep=sweep,
        system_model=system_model,
        application=application,
        frozen=frozen,
        axes=axes,
        objectives=settings_.objectives,
        constraints=settings_.constraints,
        sampler=settings_.sampler,
        seed=settings_.seed,
        max_runs=settings_.runs,
        max_wall_s=settings_.wall_s,
        parallel=settings_.parallel,
        optuna_name=f"parasim-study-{uuid.uuid4().hex}",
    )
    sweep.aggregate = sweep_aggregate(sweep=sweep)
    sweep.save(update_fields=["aggregate"])
    transaction.on_commit(lambda: dispatch.advance_study(study.pk))
    return study


# A workload study's spec: a plan sweep's (POST /api/workloads/sweep/) without `launch`;
# these of its fields are no plan field.
WORKLOAD_RUN_FIELDS = ("axes", "launch", "name", "queue", "uncertainty")


def _workload_study_launch(
    *,
    user: User,
    name: str,
    spec: Mapping[str, Any],
    objectives: object,
    constraints: object,
    sampler: object,
    seed: object,
    budget: object,
    parallel: object,
) -> Study:
    """Return a new running study of a training workload's plans (`spec` a plan sweep's:
    kind "train", model, system, the plan's fields, `axes` of plan axes, each a list, a
    range or one value; `uncertainty`, `queue`). The axes are checked by the plan sweep's
    rule (simulator.workloads.plan_axes) on the values each dimension can take, the model
    and system on the first point; a point whose plan cannot run is, when asked for, a
    failed trial whose error is the field and reason (`_WorkloadBuilder`)."""
    if spec.get("kind") != "train":
        raise field_error("spec.kind", workload_services.MSG_SWEEP_KIND)
    raw = spec.get("axes")
    if not isinstance(raw, Mapping) or not raw:
        raise field_error("spec.axes", workload_services.MSG_SWEEP_AXES)
    try:
        dimensions = search_space(dict(raw), field="spec.axes")
    except StudyError as error:
        raise _study_error(error) from error
    probes = {d.name: d.probe() for d in dimensions}
    try:
        parse_plan_axes(probes, field="spec.axes")
    except AxisError as error:
        raise field_error(error.field, error.message) from error
    base = {k: v for k, v in spec.items() if k not in WORKLOAD_RUN_FIELDS}
    for field, also in (("gpus", "dp"), ("gbs", None)):
        if field not in base and field not in raw and (also is None or also not in raw):
            raise field_error(f"spec.{field}", MESSAGES["required"])
    if "dp" in raw and "gpus" in base:
        raise field_error("spec.gpus", STUDY_MESSAGES["dp_gpus"])
    workload_services.workload_queue(spec.get("queue"))
    uncertainty = spec.get("uncertainty")
    if uncertainty is not None:
        try:
            check_uncertainty(uncertainty)
        except LaunchError as error:
            raise field_error("spec.uncertainty", str(error)) from error
    first = {name: values[0] for name, values in probes.items()}
    point, fields = plan_points(base, {k: [v] for k, v in first.items()})[0]
    try:  # a model or system no plan could fix is refused; a plan that cannot run is not
        workload_services.check_point(user, point, fields)
    except GpuNotFound as error:
        raise field_error("spec.system", str(error)) from error
    except ValidationError as error:
        raise ValidationError(
            {f"spec.{field}": messages for field, messages in error.message_dict.items()}
        ) from error
    settings_ = _check_settings(
        user, list(WORKLOAD_METRICS), objectives, constraints, sampler, seed, budget, parallel
    )
    frozen = {"workload": True, "snapshot": {}, "system_name": "", "application_name": ""}
    return _create(
        user=user, name=name, spec=spec, frozen=frozen, axes=dict(raw), settings_=settings_
    )


def _check_budget(budget: object) -> tuple[int, int | None]:
    """Return (runs, wall_s) of a budget {runs, wall_s}; runs at most PARASIM_MAX_SWEEP."""
    if not isinstance(budget, Mapping) or set(budget) - {"runs", "wall_s"}:
        raise field_error("budget", STUDY_MESSAGES["budget"])
    limit = int(settings.PARASIM_MAX_SWEEP)
    runs = budget.get("runs")
    if not isinstance(runs, int) or isinstance(runs, bool) or not 1 <= runs <= limit:
        raise field_error("budget.runs", STUDY_MESSAGES["runs"].format(limit=limit))
    wall_s = budget.get("wall_s")
    if wall_s is None:
        return runs, None
    if not isinstance(wall_s, int) or isinstance(wall_s, bool) or wall_s < 1:
        raise field_error("budget.wall_s", STUDY_MESSAGES["wall_s"])
    return runs, wall_s


def _frozen(plan: LaunchPlan) -> dict[str, Any]:
    """Return what a study's later runs are launched with (its `frozen`)."""
    return {
        "snapshot": plan.snapshot,
        "app_source": plan.app_source,
        "declared": plan.declared,
        "system_name": plan.system_model.name if plan.system_model is not None else "",
        "application_name": plan.application.name if plan.application is not None else "",
        "queue": plan.queue,
        "seed": plan.seed,
        "time_limit_s": plan.time_limit_s,
        "cpu_limit_s": plan.cpu_limit_s,
        "timeline_limit": plan.timeline_limit,
        "failures": plan.failures,
    }


def _plan(study: Study) -> LaunchPlan:
    """Return the launch plan of a study's trials from what was frozen at its launch."""
    frozen = study.frozen
    snapshot, system = check_snapshot(frozen["snapshot"], "spec.snapshot")
    return LaunchPlan(
        owner=study.owner,
        name=study.name,
        system_model=study.system_model,
        snapshot=snapshot,
        system=system,
        application=study.application,
        app_source=frozen["app_source"],
        declared=frozen["declared"],
        variables={},
        labels={},
        queue=frozen["queue"],
        seed=frozen["seed"],
        time_limit_s=frozen["time_limit_s"],
        cpu_limit_s=frozen["cpu_limit_s"],
        timeline_limit=frozen["timeline_limit"],
        failures=frozen["failures"],
    )


# --- advancing ---------------------------------------------------------------------------


class _Builders:
    """The point builders of a study's trials, one per hardware swapped in, made on first
    use from what was frozen at launch."""

    def __init__(self, study: Study, setup: StudySetup) -> None:
        self.study = study
        self.dimensions = [d for d in setup.dimensions if d.name != HARDWARE_AXIS]
        self.options = study.frozen.get("hardware_options") or []
        self.choices = _hardware_choices(self.options) if self.options else []
        self.made: dict[int, PointBuilder] = {}

    def for_point(self, point: Mapping[str, object]) -> tuple[PointBuilder, dict[str, object]]:
        """Return the builder of `point`'s hardware and the point without that choice."""
        rest = {k: v for k, v in point.items() if k != HARDWARE_AXIS}
        index = self.choices.index(str(point[HARDWARE_AXIS])) if self.options else 0
        if index not in self.made:
            plan = _plan(self.study)
            option: SweepOption | None = None
            if self.options:
                chosen = self.options[index]
                snapshot, system = check_snapshot(chosen["snapshot"], "spec.hardware")
                option = (snapshot, system, chosen["hardware"])
            self.made[index] = _builder(plan, self.study.sweep.spec, self.dimensions, option)
        return self.made[index], rest


class _WorkloadBuilder:
    """The point builder of a workload study's trials: each point's plan checked as a plan
    sweep's, its run made by the plan sweep's code (services.workloads.workload_child)."""

    def __init__(self, study: Study) -> None:
        self.study = study
        self.spec = study.sweep.spec
        self.base = {k: v for k, v in self.spec.items() if k not in WORKLOAD_RUN_FIELDS}

    def for_point(self, point: Mapping[str, object]) -> tuple[_WorkloadBuilder, dict[str, object]]:
        return self, dict(point)

    def child(
        self,
        point: Mapping[str, object],
        *,
        sweep: Sweep,
        sweep_name: str,
        extra: Mapping[str, Any] | None = None,
    ) -> Simulation:
        """Return the unsaved run of `point`; raise ValidationError (`invalid plan (FIELD)`:
        the reason) for a plan that cannot run."""
        owner = self.study.owner
        point, fields = plan_points(self.base, {k: [v] for k, v in point.items()})[0]
        try:
            answer = workload_services.check_point(owner, point, fields)
        except GpuNotFound as error:  # the template's GPU is no record the owner sees
            raise field_error("system", str(error)) from error
        if "invalid" in answer:
            invalid = answer["invalid"]
            raise field_error(f"invalid plan ({invalid['field']})", invalid["reason"])
        return workload_services.workload_child(
            user=owner,
            sweep=sweep,
            sweep_name=sweep_name,
            point=point,
            fields=fields,
            basis=answer["basis"],
            catalogue=gpu_catalogue(user=owner),
            queue=workload_services.workload_queue(self.spec.get("queue")),
            uncertainty=self.spec.get("uncertainty"),
            extra=extra,
        )


def _take_lease(study_id: int) -> datetime | None:
    """Return this advance's lease of the study (its expiry, which releases it), or None
    when another advance holds one."""
    now = current_time()
    until = now + timedelta(seconds=LEASE_S)
    free = Q(lease_until__isnull=True) | Q(lease_until__lt=now)
    taken = Study.objects.filter(free, pk=study_id).update(lease_until=until)
    return until if taken else None


def _release_lease(study_id: int, lease: datetime) -> None:
    Study.objects.filter(pk=study_id, lease_until=lease).update(lease_until=None)


def trial_metrics(simulation: Simulation) -> dict[str, object] | None:
    """Return what a finished trial's run tells its trial: its metrics, or None (failed)."""
    if simulation.status != SimulationStatus.SUCCEEDED or not simulation.result:
        return None
    return dict(result_metrics(simulation.result))


def _settle(optuna_study: optuna.Study, setup: StudySetup, study: Study) -> int:
    """Tell every running trial whose run ended, fail those without a run; return how
    many trials are still in flight. Only the results of the runs told are read."""
    runs = {
        child["sweep_point"]["trial"]: (child["pk"], child["status"])
        for child in study.sweep.simulations.values("pk", "status", "sweep_point")
        if isinstance(child["sweep_point"], Mapping) and "trial" in child["sweep_point"]
    }
    in_flight = 0
    for trial in unfinished_trials(optuna_study):
        run = runs.get(trial.number)
        if run is None:
            tell_metrics(optuna_study, setup, trial.number, None, error=STUDY_MESSAGES["lost"])
        elif run[1] in (SimulationStatus.QUEUED, SimulationStatus.RUNNING):
            in_flight += 1
        else:
            simulation = Simulation.objects.only("pk", "status", "result").get(pk=run[0])
            tell_metrics(optuna_study, setup, trial.number, trial_metrics(simulation))
    return in_flight


def _budget_spent(study: Study, asked: int) -> bool:
    if asked >= study.max_runs:
        return True
    if study.max_wall_s is None:
        return False
    return current_time() >= study.created + timedelta(seconds=study.max_wall_s)


def study_advance(*, study_id: int) -> Study | None:
    """Settle the study's trials and ask for the next ones (module docstring); return the
    study, or None when another advance holds its lease (the caller tries again later)."""
    lease = _take_lease(study_id)
    if lease is None:
        return None
    children: list[Simulation] = []
    try:
        study = Study.objects.select_related("sweep", "owner").get(pk=study_id)
        sweep_cancelled = study.sweep.status == SweepStatus.CANCELLED
        if sweep_cancelled and study.status == StudyStatus.RUNNING:
            study.status = StudyStatus.STOPPED  # its sweep's runs were cancelled
        setup = _setup(study)
        optuna_study = load_study(setup, storage=optuna_storage(), name=study.optuna_name)
        in_flight = _settle(optuna_study, setup, study)
        asked = trial_count(optuna_study)
        wanted = 0
        if study.status == StudyStatus.RUNNING and not _budget_spent(study, asked):
            room = int(settings.PARASIM_MAX_ACTIVE_RUNS) - active_run_count(owner_id=study.owner_id)
            wanted = max(0, min(study.parallel - in_flight, study.max_runs - asked, room))
        builders: _Builders | _WorkloadBuilder = (
            _WorkloadBuilder(study) if study.frozen.get("workload") else _Builders(study, setup)
        )
        # A trial refused before it runs (a plan that cannot run) takes no run's place: ask
        # again within the budget, or a round of refusals would leave nothing to advance it.
        while len(children) < wanted and not _budget_spent(study, asked):
            number, point = ask_point(optuna_study, setup)
            asked += 1
            try:
                builder, point = builders.for_point(point)
                child = builder.child(
                    point, sweep=study.sweep, sweep_name=study.name, extra={"trial": number}
                )
            except ValidationError as error:
                message = "; ".join(f"{f}: {' '.join(m)}" for f, m in error.message_dict.items())
                tell_metrics(optuna_study, setup, number, None, error=message)
                continue
            child.system_name = study.frozen["system_name"]
            child.application_name = study.frozen["application_name"]
            children.append(child)
        asked = trial_count(optuna_study)
        idle = in_flight == 0 and not children
        with transaction.atomic():
            Simulation.objects.bulk_create(children)
            # Read again: a stop or resume may have been stored while this advance ran.
            study = (
                Study.objects.select_for_update().select_related("sweep", "owner").get(pk=study_id)
            )
            if sweep_cancelled and study.status == StudyStatus.RUNNING:
                study.status = StudyStatus.STOPPED
            if idle and study.status == StudyStatus.RUNNING and _budget_spent(study, asked):
                study.status = StudyStatus.FINISHED
                study.finished = current_time()
            study.lease_until = None  # released with the runs it stored
            study.save(update_fields=["status", "finished", "lease_until"])
            sweep = Sweep.objects.select_for_update().get(pk=study.sweep_id)
            sweep.aggregate = sweep_aggregate(sweep=sweep)
            if idle and study.status != StudyStatus.RUNNING and sweep.status == SweepStatus.RUNNING:
                sweep.status = SweepStatus.FINISHED
                sweep.finished = sweep.finished or current_time()
            sweep.save(update_fields=["aggregate", "status", "finished"])
            if children:
                dispatch.enqueue(children)  # sent once committed
        lease = None
        return study
    finally:
        if lease is not None:
            _release_lease(study_id, lease)


def study_stop(*, study: Study) -> Study:
    """Stop asking for trials; the runs in flight finish and are told. Raise
    ValidationError for a study that is not running."""
    with transaction.atomic():
        current = Study.objects.select_for_update().get(pk=study.pk)
        if current.status != StudyStatus.RUNNING:
            raise field_error(
                "status",
                STUDY_MESSAGES["not_running"].format(status=current.get_status_display().lower()),
            )
        current.status = StudyStatus.STOPPED
        current.save(update_fields=["status"])
    transaction.on_commit(lambda: dispatch.advance_study(current.pk))
    return current


def study_resume(*, study: Study) -> Study:
    """Run a stopped study again from its storage (module docstring: its trials settled
    first). Raise ValidationError for a study that is not stopped."""
    with transaction.atomic():
        current = Study.objects.select_for_update().get(pk=study.pk)
        if current.status != StudyStatus.STOPPED:
            raise field_error(
                "status",
                STUDY_MESSAGES["not_stopped"].format(status=current.get_status_display().lower()),
            )
        current.status = StudyStatus.RUNNING
        current.save(update_fields=["status"])
        Sweep.objects.filter(pk=current.sweep_id).update(status=SweepStatus.RUNNING, finished=None)
    transaction.on_commit(lambda: dispatch.advance_study(current.pk))
    return current


def studies_to_advance() -> list[int]:
    """Return the studies the periodic advance visits: running ones, and stopped ones whose
    sweep has not finished (runs in flight to tell)."""
    return list(
        Study.objects.filter(
            Q(status=StudyStatus.RUNNING)
            | Q(status=StudyStatus.STOPPED, sweep__status=SweepStatus.RUNNING)
        ).values_list("pk", flat=True)
    )
