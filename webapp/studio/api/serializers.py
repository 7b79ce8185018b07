"""Serializers of the studio API: shapes in and out; the rules live in the services."""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from django.urls import get_script_prefix, reverse
from rest_framework import serializers

from hwdb.api.serializers import VERSION_FIELD
from webapp.studio.models import ApplicationModel, Share, Simulation, Study, Sweep
from webapp.studio.selectors import (
    ACCESS_OWNER,
    ACCESS_SHARED,
    MAX_ID,
    study_progress,
    sweep_points,
)


class ApplicationModelSerializer(serializers.ModelSerializer):
    """An application model; `variables` is a list of {name, type, default}."""

    owner = serializers.CharField(source="owner.username", read_only=True)
    variables = serializers.JSONField(required=False)

    class Meta:
        model = ApplicationModel
        fields = [
            "id",
            "name",
            "source",
            "variables",
            "description",
            "owner",
            "shared",
            "version",
            "created",
            "updated",
        ]
        read_only_fields = ["id", "owner", "created", "updated"]
        # The services check names and sources; leave their messages to them, so that one
        # save reports the errors of every field together.
        extra_kwargs = {
            "version": VERSION_FIELD,
            "name": {"validators": [], "allow_blank": True},
            "source": {"trim_whitespace": False, "allow_blank": True},
        }


class SimulationLaunchSerializer(serializers.Serializer):
    """What a launch accepts. Either `system_model` or `snapshot`; `application` or `app_source`."""

    name = serializers.CharField(required=False, allow_blank=True, max_length=200)
    system_model = serializers.IntegerField(required=False)
    snapshot = serializers.JSONField(required=False)
    application = serializers.IntegerField(required=False)
    app_source = serializers.CharField(required=False, trim_whitespace=False)
    variables = serializers.JSONField(required=False)
    labels = serializers.JSONField()
    queue = serializers.CharField(required=False)
    seed = serializers.IntegerField(required=False)
    time_limit_s = serializers.IntegerField(
        required=False, help_text="Wall-clock limit in seconds; default and maximum: the queue's."
    )
    cpu_limit_s = serializers.IntegerField(
        required=False, help_text="CPU-time limit in seconds; default and maximum: the queue's."
    )
    timeline_limit = serializers.IntegerField(required=False)
    failures = serializers.JSONField(
        required=False,
        help_text='Monte Carlo failure injection: {"mode": "abort" or "restart", "samples", '
        '"restart_s"} (docs/models.md, section 6).',
    )
    uncertainty = serializers.JSONField(
        required=False,
        help_text='A prediction interval of time and energy: {"samples": N (2 to 200), "seed", '
        '"scale"} (docs/uncertainty.md).',
    )


_DATETIME_FIELD = serializers.DateTimeField()


def _datetime(value: datetime | None) -> str | None:
    """Return a timestamp as serializers.DateTimeField renders it (ISO 8601, UTC as "Z")."""
    return None if value is None else _DATETIME_FIELD.to_representation(value)


@functools.cache
def _run_path_parts(name: str, script_prefix: str) -> tuple[str, str]:
    """Return the path of URL `name` of run 0 split around its id (reversed once a prefix)."""
    head, _, tail = reverse(name, kwargs={"pk": 0}).rpartition("/0/")
    return head + "/", "/" + tail


def run_path(name: str, pk: int) -> str:
    """Return reverse(name, kwargs={"pk": pk}) of a run's URL, without reversing per run (a
    page of runs reversed one each; tests/webapp/studio/test_serializers.py compares)."""
    head, tail = _run_path_parts(name, get_script_prefix())
    return f"{head}{pk}{tail}"


def _float(value: float | None) -> float | None:
    return None if value is None else float(value)


class SimulationSerializer(serializers.ModelSerializer):
    """A simulation with its live progress; the full result is downloaded from `result_url`.

    Lists carry no error body, only its kind (`error_kind`): the run's page reads the error
    (`SimulationDetailSerializer`)."""

    owner = serializers.CharField(source="owner.username", read_only=True)
    result_url = serializers.SerializerMethodField()
    queue_position = serializers.SerializerMethodField()
    system_name = serializers.SerializerMethodField()
    application_name = serializers.SerializerMethodField()
    sweep_name = serializers.SerializerMethodField()
    sweep_size = serializers.SerializerMethodField()
    error_kind = serializers.SerializerMethodField()

    class Meta:
        model = Simulation
        fields = [
            "id",
            "name",
            "owner",
            "system_model",
            "application",
            "variables",
            "labels",
            "queue",
            "seed",
            "time_limit_s",
            "cpu_limit_s",
            "held",
            "timeline_limit",
            "status",
            "progress",
            "overall_time_s",
            "energy_j",
            "error_kind",
            "attempts",
            "worker",
            "created",
            "started",
            "finished",
            "heartbeat",
            "engine_version",
            "sweep",
            "sweep_point",
            "result_url",
            # the runs page: live figures and the names of what the run used
            "simulated_time_s",
            "queue_position",
            "system_name",
            "application_name",
            "sweep_name",
            "sweep_size",
        ]
        read_only_fields = fields

    def get_result_url(self, simulation: Simulation) -> str:
        """Return the path of the run's result download."""
        return run_path("simulation-result", simulation.pk)

    def get_queue_position(self, simulation: Simulation) -> int | None:
        """Return a queued run's place in its queue (1: next), as the selectors annotate it."""
        return getattr(simulation, "queue_position", None)

    def owner_name(self, simulation: Simulation) -> str:
        """Return the owner's username (as the runs list joins it, or from the record)."""
        listed = getattr(simulation, "listed_owner", None)
        return str(listed) if listed is not None else simulation.owner.username

    def get_system_name(self, simulation: Simulation) -> str | None:
        """Return the name, at launch, of the system model the run was launched from (None: a
        snapshot)."""
        return simulation.system_name or None

    def get_application_name(self, simulation: Simulation) -> str | None:
        """Return the name, at launch, of the application model the run was launched from
        (None: a bare source)."""
        return simulation.application_name or None

    def get_error_kind(self, simulation: Simulation) -> str | None:
        """Return the kind of a failed run's error ("user_code", "limit", ...; None: none)."""
        if hasattr(simulation, "listed_error_kind"):
            return simulation.listed_error_kind
        kind = (simulation.error or {}).get("kind")
        return None if kind is None else str(kind)

    def get_sweep_name(self, simulation: Simulation) -> str | None:
        """Return the name of the run's sweep (None outside any sweep)."""
        sweep = simulation.sweep if simulation.sweep_id else None
        return sweep.name if sweep is not None else None

    def get_sweep_size(self, simulation: Simulation) -> int | None:
        """Return how many runs the run's sweep has (its aggregate's count)."""
        sweep = simulation.sweep if simulation.sweep_id else None
        if sweep is None:
            return None
        total = (sweep.aggregate or {}).get("total")
        return total if isinstance(total, int) else None

    def to_representation(self, instance: Simulation) -> dict[str, Any]:
        """Return the fields of Meta.fields, as DRF's field-by-field walk renders them.

        Written out because that walk took half the time of a runs-list request (50 runs x
        25 fields); tests/webapp/studio/test_api.py checks that both give the same.
        """
        simulation = instance
        return {
            "id": simulation.pk,
            "name": simulation.name,
            "owner": self.owner_name(simulation),
            "system_model": simulation.system_model_id,
            "application": simulation.application_id,
            "variables": simulation.variables,
            "labels": simulation.labels,
            "queue": simulation.queue,
            "seed": simulation.seed,
            "time_limit_s": simulation.time_limit_s,
            "cpu_limit_s": simulation.cpu_limit_s,
            "held": simulation.held,
            "timeline_limit": simulation.timeline_limit,
            "status": str(simulation.status),
            "progress": _float(simulation.progress),
            "overall_time_s": _float(simulation.overall_time_s),
            "energy_j": _float(simulation.energy_j),
            "error_kind": self.get_error_kind(simulation),
            "attempts": simulation.attempts,
            "worker": simulation.worker,
            "created": _datetime(simulation.created),
            "started": _datetime(simulation.started),
            "finished": _datetime(simulation.finished),
            "heartbeat": _datetime(simulation.heartbeat),
            "engine_version": simulation.engine_version,
            "sweep": simulation.sweep_id,
            "sweep_point": simulation.sweep_point,
            "result_url": self.get_result_url(simulation),
            "simulated_time_s": _float(simulation.simulated_time_s),
            "queue_position": self.get_queue_position(simulation),
            "system_name": self.get_system_name(simulation),
            "application_name": self.get_application_name(simulation),
            "sweep_name": self.get_sweep_name(simulation),
            "sweep_size": self.get_sweep_size(simulation),
        }


class SimulationDetailSerializer(SimulationSerializer):
    """A simulation with its error, what it froze at launch (the snapshot and the application
    source) and where its memory-hierarchy figures download as CSV and its Chrome trace."""

    memory_csv_url = serializers.SerializerMethodField()
    trace_url = serializers.SerializerMethodField()
    access = serializers.SerializerMethodField()

    class Meta(SimulationSerializer.Meta):
        fields = [
            *SimulationSerializer.Meta.fields,
            "error",
            "snapshot",
            "app_source",
            "memory_csv_url",
            "failures",
            "uncertainty",
            "trace_url",
            "access",
        ]
        read_only_fields = fields

    def get_memory_csv_url(self, simulation: Simulation) -> str:
        """Return the path of the run's memory CSV download."""
        return reverse("simulation-memory", kwargs={"pk": simulation.pk})

    def get_trace_url(self, simulation: Simulation) -> str:
        """Return the path of the run's Chrome trace download (issue 43 item 6)."""
        return reverse("simulation-trace", kwargs={"pk": simulation.pk})

    def get_access(self, simulation: Simulation) -> str:
        """Return how the reader sees the run (selectors.ACCESS_*): "owner" when no selector
        said (a launch's answer)."""
        return simulation.access or ACCESS_OWNER

    def to_representation(self, instance: Simulation) -> dict[str, Any]:
        access = self.get_access(instance)
        shown = {
            **super().to_representation(instance),
            "error": instance.error,
            "snapshot": instance.snapshot,
            "app_source": instance.app_source,
            "memory_csv_url": self.get_memory_csv_url(instance),
            "failures": instance.failures,
            "uncertainty": instance.uncertainty,
            "trace_url": self.get_trace_url(instance),
            "access": access,
        }
        if access == ACCESS_SHARED:
            # The records it was launched from are the owner's: the run's frozen snapshot,
            # source and names are what a share shows, never the records themselves.
            shown.update(system_model=None, application=None)
        if instance.sweep_hidden:
            shown.update(sweep=None, sweep_name=None, sweep_size=None)
        return shown


class SweepLaunchSerializer(serializers.Serializer):
    """A sweep: a name and its specification (see `webapp.studio.services.sweeps.sweep_launch`)."""

    name = serializers.CharField(required=False, allow_blank=True, max_length=200)
    spec = serializers.JSONField()


class SweepSerializer(serializers.ModelSerializer):
    """A sweep with its aggregate; `points` (detail only) is the table of its children."""

    owner = serializers.CharField(source="owner.username", read_only=True)
    results_url = serializers.SerializerMethodField()

    class Meta:
        model = Sweep
        fields = [
            "id",
            "name",
            "owner",
            "spec",
            "status",
            "aggregate",
            "created",
            "finished",
            "results_url",
        ]
        read_only_fields = fields

    def get_results_url(self, sweep: Sweep) -> str:
        """Return the path of the sweep's CSV table."""
        return reverse("sweep-results", kwargs={"pk": sweep.pk})


class SweepDetailSerializer(SweepSerializer):
    """A sweep with one row per point."""

    points = serializers.SerializerMethodField()
    # What flagged the points (selectors.sweep_objectives), as the view applied it.
    objectives = serializers.SerializerMethodField()
    constraints = serializers.SerializerMethodField()
    access = serializers.SerializerMethodField()
    points_total = serializers.SerializerMethodField()

    class Meta(SweepSerializer.Meta):
        fields = [
            *SweepSerializer.Meta.fields,
            "points",
            "points_total",
            "objectives",
            "constraints",
            "access",
        ]
        read_only_fields = fields

    def get_points_total(self, sweep: Sweep) -> int:
        """Return how many points the sweep has (`points` may show a sample of them)."""
        if "points_total" in self.context:
            return int(self.context["points_total"])
        return sweep.simulations.count()

    def get_access(self, sweep: Sweep) -> str:
        """Return how the reader sees the sweep (selectors.ACCESS_*; "owner" after a launch)."""
        return sweep.access or ACCESS_OWNER

    def get_points(self, sweep: Sweep) -> list[dict[str, Any]]:
        """Return the sweep's table rows (those the view flagged, when it passes them)."""
        if "points" in self.context:
            return list(self.context["points"])
        return sweep_points(sweep=sweep)[1]

    def get_objectives(self, sweep: Sweep) -> list[dict[str, str]]:
        """Return the objectives the points' `pareto` flags are for: [{metric, direction}]."""
        return list(self.context.get("objectives", []))

    def get_constraints(self, sweep: Sweep) -> list[str]:
        """Return the constraints the points' `feasible` flags are for."""
        return list(self.context.get("constraints", []))


class StudyLaunchSerializer(serializers.Serializer):
    """A study (see `webapp.studio.services.studies.study_launch`): a sweep's `spec` (its
    axes are searched), what to optimise, the sampler and its seed, the budget and how many
    runs may be in flight at once. The service checks every field and names a bad one."""

    name = serializers.CharField(required=False, allow_blank=True, max_length=200)
    spec = serializers.JSONField()
    objectives = serializers.JSONField(help_text='[{"metric": ..., "direction": "min"|"max"}]')
    constraints = serializers.JSONField(required=False, help_text='["gpu_power_w <= 700"]')
    sampler = serializers.JSONField(required=False, help_text="auto, tpe, nsga2 or random")
    seed = serializers.JSONField(required=False)
    budget = serializers.JSONField(help_text="{runs, wall_s}")
    parallel = serializers.JSONField(required=False)


class StudySerializer(serializers.ModelSerializer):
    """A study: its settings and state; `progress` (detail only) is read from its storage."""

    owner = serializers.CharField(source="owner.username", read_only=True)
    budget = serializers.SerializerMethodField()
    sweep_status = serializers.CharField(source="sweep.status", read_only=True)

    class Meta:
        model = Study
        fields = [
            "id",
            "name",
            "owner",
            "status",
            "sweep",
            "sweep_status",
            "axes",
            "objectives",
            "constraints",
            "sampler",
            "seed",
            "budget",
            "parallel",
            "created",
            "finished",
        ]
        read_only_fields = fields

    def get_budget(self, study: Study) -> dict[str, int | None]:
        """Return the study's budget: {runs, wall_s} (wall_s null: none)."""
        return {"runs": study.max_runs, "wall_s": study.max_wall_s}


class StudyTrialSerializer(serializers.Serializer):
    """One trial of a study (selectors.study_trials): the shape of the trials list."""

    number = serializers.IntegerField()
    state = serializers.CharField(help_text="running, complete or fail")
    point = serializers.DictField()
    metrics = serializers.DictField()
    error = serializers.CharField(allow_null=True)
    simulation = serializers.IntegerField(allow_null=True)
    simulation_status = serializers.CharField(allow_null=True)
    feasible = serializers.BooleanField()
    best = serializers.BooleanField()


class StudyDetailSerializer(StudySerializer):
    """A study with its progress: counts, the best trials and a sample of the others (at
    most selectors.STUDY_TRIALS_SHOWN), and `trials_url`, where every trial is paged."""

    progress = serializers.SerializerMethodField()
    access = serializers.SerializerMethodField()
    trials_url = serializers.SerializerMethodField()

    class Meta(StudySerializer.Meta):
        fields = [*StudySerializer.Meta.fields, "progress", "access", "trials_url"]
        read_only_fields = fields

    def get_trials_url(self, study: Study) -> str:
        """Return the path of the study's trials, a page at a time."""
        return reverse("study-trials", kwargs={"pk": study.pk})

    def get_access(self, study: Study) -> str:
        """Return how the reader sees the study (selectors.ACCESS_*; "owner" after a launch)."""
        return study.access or ACCESS_OWNER

    def get_progress(self, study: Study) -> dict[str, Any]:
        """Return selectors.study_progress: trials (best and sampled), shown, asked, done,
        running, failed, budget, best."""
        return study_progress(study=study)


class LimitRangeSerializer(serializers.Serializer):
    """One limit of a queue's runs: the default a launch gets and the most it may ask for."""

    default = serializers.IntegerField()
    max = serializers.IntegerField()


class QueueLimitsSerializer(serializers.Serializer):
    """A queue's run limits, in seconds, by the launch field that sets each."""

    time_limit_s = LimitRangeSerializer()
    cpu_limit_s = LimitRangeSerializer()


class QueueSerializer(serializers.Serializer):
    """A configured simulation queue, the workers serving it now and its run limits."""

    name = serializers.CharField()
    description = serializers.CharField()
    workers = serializers.ListField(child=serializers.CharField())
    limits = QueueLimitsSerializer()


class ShareCreateSerializer(serializers.Serializer):
    """A share to make: the run or the sweep, and the username or `link: true` (publish)."""

    # Within a 64-bit id: a larger number is no record (and overflows SQLite's integer).
    simulation = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=MAX_ID
    )
    sweep = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=MAX_ID)
    username = serializers.CharField(required=False, allow_blank=True, max_length=150)
    link = serializers.BooleanField(required=False, default=False)


class ShareRedeemSerializer(serializers.Serializer):
    """A link's token, as its page path carries it."""

    link = serializers.CharField(max_length=64)


class ShareSerializer(serializers.ModelSerializer):
    """A share as its owner and its grantee see it: the run or sweep, who shared it, with whom
    (a username, or none for a link: its `link` token and `link_path`), and whether it came
    from a link (`via_link`: revoked with that link)."""

    owner = serializers.SerializerMethodField()
    target_name = serializers.SerializerMethodField()
    user = serializers.SerializerMethodField()
    link_path = serializers.SerializerMethodField()
    via_link = serializers.SerializerMethodField()

    class Meta:
        model = Share
        fields = [
            "id",
            "simulation",
            "sweep",
            "target_name",
            "owner",
            "user",
            "link",
            "link_path",
            "via_link",
            "created",
        ]
        read_only_fields = fields

    def _target(self, share: Share) -> Simulation | Sweep:
        target = share.simulation or share.sweep
        assert target is not None
        return target

    def get_owner(self, share: Share) -> str:
        """Return the username of the run's or sweep's owner (who shared it)."""
        return str(self._target(share).owner.username)

    def get_target_name(self, share: Share) -> str:
        """Return the run's or sweep's name as its page heads it."""
        target = self._target(share)
        if target.name:
            return str(target.name)
        return f"Simulation {target.pk}" if share.simulation_id else f"Sweep {target.pk}"

    def get_user(self, share: Share) -> str | None:
        """Return the grantee's username (None: a link)."""
        return share.user.username if share.user_id and share.user else None

    def get_link_path(self, share: Share) -> str | None:
        """Return the browser path that opens a link share (None: a user's share)."""
        return f"/app/shared/{share.link}" if share.link else None

    def get_via_link(self, share: Share) -> bool:
        """Return True for a grant given by opening a link."""
        return share.via_id is not None
