"""Serializers of the studio API: shapes in and out; the rules live in the services."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.urls import reverse
from rest_framework import serializers

from webapp.studio.models import ApplicationModel, Simulation, Sweep
from webapp.studio.selectors import sweep_points


class VariableDeclarationSerializer(serializers.Serializer):
    """One launch variable of an application model (checked by the services)."""

    name = serializers.CharField()
    type = serializers.ChoiceField(choices=["int", "float", "bool", "str"])
    default = serializers.JSONField()
    description = serializers.CharField(required=False)


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
            "created",
            "updated",
        ]
        read_only_fields = ["id", "owner", "created", "updated"]
        # The services check names and sources; leave their messages to them, so that one
        # save reports the errors of every field together.
        extra_kwargs = {
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
    time_limit_s = serializers.IntegerField(required=False)
    timeline_limit = serializers.IntegerField(required=False)


_DATETIME_FIELD = serializers.DateTimeField()


def _datetime(value: datetime | None) -> str | None:
    """Return a timestamp as serializers.DateTimeField renders it (ISO 8601, UTC as "Z")."""
    return None if value is None else _DATETIME_FIELD.to_representation(value)


def _float(value: float | None) -> float | None:
    return None if value is None else float(value)


class SimulationSerializer(serializers.ModelSerializer):
    """A simulation with its live progress; the full result is downloaded from `result_url`."""

    owner = serializers.CharField(source="owner.username", read_only=True)
    result_url = serializers.SerializerMethodField()

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
            "timeline_limit",
            "status",
            "progress",
            "overall_time_s",
            "energy_j",
            "error",
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
        ]
        read_only_fields = fields

    def get_result_url(self, simulation: Simulation) -> str:
        """Return the path of the run's result download."""
        return reverse("simulation-result", kwargs={"pk": simulation.pk})

    def to_representation(self, instance: Simulation) -> dict[str, Any]:
        """Return the fields of Meta.fields, as DRF's field-by-field walk renders them.

        Written out because that walk took half the time of a runs-list request (50 runs x
        25 fields); tests/webapp/studio/test_api.py checks that both give the same.
        """
        simulation = instance
        return {
            "id": simulation.pk,
            "name": simulation.name,
            "owner": simulation.owner.username,
            "system_model": simulation.system_model_id,
            "application": simulation.application_id,
            "variables": simulation.variables,
            "labels": simulation.labels,
            "queue": simulation.queue,
            "seed": simulation.seed,
            "time_limit_s": simulation.time_limit_s,
            "timeline_limit": simulation.timeline_limit,
            "status": str(simulation.status),
            "progress": _float(simulation.progress),
            "overall_time_s": _float(simulation.overall_time_s),
            "energy_j": _float(simulation.energy_j),
            "error": simulation.error,
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
        }


class SimulationDetailSerializer(SimulationSerializer):
    """A simulation with what it froze at launch (the snapshot and the application source)
    and where its memory-hierarchy figures download as CSV."""

    memory_csv_url = serializers.SerializerMethodField()

    class Meta(SimulationSerializer.Meta):
        fields = [*SimulationSerializer.Meta.fields, "snapshot", "app_source", "memory_csv_url"]
        read_only_fields = fields

    def get_memory_csv_url(self, simulation: Simulation) -> str:
        """Return the path of the run's memory CSV download."""
        return reverse("simulation-memory", kwargs={"pk": simulation.pk})

    def to_representation(self, instance: Simulation) -> dict[str, Any]:
        return {
            **super().to_representation(instance),
            "snapshot": instance.snapshot,
            "app_source": instance.app_source,
            "memory_csv_url": self.get_memory_csv_url(instance),
        }


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

    class Meta(SweepSerializer.Meta):
        fields = [*SweepSerializer.Meta.fields, "points"]
        read_only_fields = fields

    def get_points(self, sweep: Sweep) -> list[dict[str, Any]]:
        """Return the sweep's table rows."""
        return sweep_points(sweep=sweep)[1]


class QueueSerializer(serializers.Serializer):
    """A configured simulation queue and the workers serving it now."""

    name = serializers.CharField()
    description = serializers.CharField()
    workers = serializers.ListField(child=serializers.CharField())
