"""Serializers of the hardware database API: they check the shape of a request and render
records; the rules themselves live in `hwdb.validation`, `hwdb.graphs` and the services."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from django.db.models import Manager, QuerySet
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from hwdb.graphs import graph_errors
from hwdb.models import Attribute, Component, ComputationalModel, OwnedRecord, SystemModel
from hwdb.selectors import can_change, component_get
from hwdb.validation import MESSAGES, attribute_row_errors, memory_attribute_errors
from simulator import memory_spec
from simulator.flows import NETWORK_MODELS, SHARING_POLICIES
from simulator.js_names import JS_IDENTIFIER

GRAPH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": (
        "System graph (docs/contracts.md): nodes are hardware instances (`hardware` is a "
        "component id, `model` a computational model id) or groups (`group: true`); `parent` "
        "nests a node in a group; edges are pairs of node ids."
    ),
    "required": ["nodes"],
    "properties": {
        "nodes": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id"],
                "properties": {
                    "id": {"type": "string"},
                    "name": {"type": "string"},
                    "hardware": {"type": "integer"},
                    "model": {"type": "integer"},
                    "count": {"type": "integer", "minimum": 1},
                    "labels": {"type": "object", "additionalProperties": {"type": "integer"}},
                    "parent": {"type": "string"},
                    "group": {"type": "boolean"},
                    "sharing": {
                        "type": "string",
                        "enum": list(SHARING_POLICIES),
                        "description": "How a NETWORK node's link carries messages "
                        "(docs/network-model.md): fifo (store and forward, the default), "
                        "shared or full-duplex flow links.",
                    },
                },
            },
        },
        "edges": {
            "type": "array",
            "items": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2},
        },
        "networkModel": {
            "type": "string",
            "enum": list(NETWORK_MODELS),
            "description": "How flow links share bandwidth (docs/network-model.md); "
            "maxmin when left out.",
        },
        "topologies": {
            "type": "array",
            "description": "Topology templates (docs/topologies.md): fatTree, railLeafSpine, "
            "ring, torus or nvswitch, naming the endpoints node and its switch or link nodes.",
            "items": {
                "type": "object",
                "required": ["kind", "endpoints"],
                "properties": {
                    "id": {"type": "string"},
                    "kind": {
                        "type": "string",
                        "enum": ["fatTree", "railLeafSpine", "ring", "torus", "nvswitch"],
                    },
                    "endpoints": {"type": "string"},
                    "routing": {"type": "string"},
                },
            },
        },
    },
}


class FiniteFloatField(serializers.FloatField):
    """A float that must be finite: NaN and +/-infinity are refused, as are booleans."""

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool):
            self.fail("invalid")
        if not isinstance(data, str) or len(data) <= self.MAX_STRING_LENGTH:
            try:
                finite = math.isfinite(float(data))
            except (TypeError, ValueError, OverflowError):
                finite = True  # not a number at all: the parent class says so
            if not finite:
                raise serializers.ValidationError(MESSAGES["not_finite"], code="not_finite")
        return float(super().to_internal_value(data))


# A record's `version`: read with the record, sent back with a save to have a stale save
# refused (409) instead of overwriting someone else's; optional on writes.
VERSION_FIELD = {
    "required": False,
    "min_value": 1,
    "help_text": "The version this save was made from; a save from an older one answers 409.",
}


class OwnedRecordSerializer(serializers.ModelSerializer):
    """Read-only fields every record carries: owner, built-in flag, whether I may change it."""

    owner = serializers.SerializerMethodField()
    can_edit = serializers.SerializerMethodField()

    def get_owner(self, record: OwnedRecord) -> str | None:
        """Return the owner's username; None for built-in records."""
        return record.owner.get_username() if record.owner is not None else None

    def get_can_edit(self, record: OwnedRecord) -> bool:
        """Return True when the requesting user may change the record."""
        request = self.context.get("request")
        return request is not None and can_change(user=request.user, record=record)


ATTRIBUTE_KEYS = {"key", "value", "unit", "source"}


class AttributeListSerializer(serializers.ListSerializer):
    """A component's attributes, rendered as DRF would render each one but without a field
    walk per attribute (a page of GPUs holds some 500): from the plain rows
    `hwdb.selectors.component_attributes` set when present, else from the records."""

    def get_attribute(self, instance: Any) -> Any:
        rows = getattr(instance, "attribute_rows", None)
        return rows if rows is not None else super().get_attribute(instance)

    def to_internal_value(self, data: Any) -> list[dict[str, Any]]:
        """Return the attributes; refuse them with every error at once, keyed by row: each
        row's own fields, then the rules across rows (duplicate keys) and each key's range
        (simulator.attribute_ranges) on every row whose key and value read."""
        errors: dict[int, Any] = {}
        validated: list[dict[str, Any]] = []
        try:
            validated = super().to_internal_value(data)
        except serializers.ValidationError as error:
            if not isinstance(data, list) or not isinstance(error.detail, dict):
                raise
            errors = {int(index): detail for index, detail in error.detail.items()}
        for index, field, message in attribute_row_errors(data):
            row = errors.setdefault(index, {})
            # A row that is no object has one message of its own (a list), nothing by field.
            if isinstance(row, dict) and field not in row:
                errors[index] = {**row, field: [message]}
        if errors:
            raise serializers.ValidationError(
                {str(index): errors[index] for index in sorted(errors)}
            )
        return validated

    def to_representation(self, data: Any) -> list[dict[str, Any]]:
        if isinstance(data, Manager | QuerySet):
            return [_attribute_output(a.key, a.value, a.unit, a.source) for a in data.all()]
        if isinstance(data, list) and all(
            isinstance(row, dict) and row.keys() == ATTRIBUTE_KEYS for row in data
        ):
            return [_attribute_output(**row) for row in data]
        return super().to_representation(data)


def _attribute_output(key: str, value: float, unit: str, source: str) -> dict[str, Any]:
    """Return one attribute as AttributeSerializer's fields render it."""
    return {"key": str(key), "value": float(value), "unit": str(unit), "source": str(source)}


class AttributeSerializer(serializers.ModelSerializer):
    value = FiniteFloatField()

    class Meta:
        model = Attribute
        fields = ["key", "value", "unit", "source"]
        list_serializer_class = AttributeListSerializer


def _row_order(key: str) -> tuple[int, str]:
    """Sort the rows of an attributes error by their number, what names no row last."""
    return (int(key), "") if key.isdigit() else (1 << 62, key)


def _check_memory_attributes(kind: object, attributes: list[dict[str, Any]] | None) -> None:
    """Refuse a cache's or fabric's impossible attributes (simulator.memory_spec), in DRF's
    nested shape: {"attributes": {"<index>": {"value": [...]}}}, or a list when one is
    missing."""
    if kind not in memory_spec.MEMORY_TYPES or attributes is None:
        return
    index_of = {item["key"]: index for index, item in enumerate(attributes)}
    values = {item["key"]: float(item["value"]) for item in attributes}
    nested: dict[str, Any] = {}
    missing: list[str] = []
    for key, messages in memory_spec.attribute_errors(str(kind), values).items():
        if key in index_of:
            nested.setdefault(str(index_of[key]), {}).setdefault("value", []).extend(messages)
        else:
            missing.extend(messages)
    if nested or missing:
        raise serializers.ValidationError({"attributes": nested or missing})


class ComponentSerializer(OwnedRecordSerializer):
    attributes = AttributeSerializer(many=True, required=False)

    class Meta:
        model = Component
        fields = [
            "id",
            "type",
            "name",
            "vendor",
            "comment",
            "source_url",
            "recommended_model",
            "shared",
            "owner",
            "can_edit",
            "attributes",
            "version",
            "created",
            "updated",
        ]
        read_only_fields = ["id", "created", "updated"]
        extra_kwargs = {"version": VERSION_FIELD}

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        instance: Component | None = self.instance
        kind = attrs.get("type", instance.type if instance is not None else None)
        _check_memory_attributes(kind, attrs.get("attributes"))
        return attrs

    def to_internal_value(self, data: Any) -> Any:
        """Return the validated fields; when some are refused, refuse a cache's or fabric's
        impossible attributes with them (on the rows that read), not after they are fixed."""
        try:
            return super().to_internal_value(data)
        except serializers.ValidationError as error:
            detail = error.detail
            rows = data.get("attributes") if isinstance(data, Mapping) else None
            if not isinstance(detail, dict) or not isinstance(rows, list):
                raise
            instance: Component | None = self.instance
            kind = data.get("type", instance.type if instance is not None else None)
            row_errors = detail.get("attributes", {})
            if not isinstance(row_errors, dict):
                raise
            unread = {int(index) for index in row_errors}
            by_row, missing = memory_attribute_errors(kind, rows, unread)
            if not by_row and not missing:
                raise
            found: dict[str, Any] = dict(detail)
            nested: dict[str, Any] = dict(row_errors)
            for index, messages in by_row.items():
                nested[str(index)] = {"value": messages}
            if not nested:
                # What validate() answers: a list when only missing attributes are wrong.
                found["attributes"] = missing
                raise serializers.ValidationError(found) from error
            if missing:
                # A missing attribute has no row: named for the list as a whole (DRF's key for
                # that; the editor shows it at "attributes"), beside the rows' errors.
                nested["non_field_errors"] = missing
            found["attributes"] = {key: nested[key] for key in sorted(nested, key=_row_order)}
            raise serializers.ValidationError(found) from error


class ComponentImportItemSerializer(serializers.ModelSerializer):
    attributes = AttributeSerializer(many=True, required=False)

    class Meta:
        model = Component
        fields = [
            "type",
            "name",
            "vendor",
            "comment",
            "source_url",
            "recommended_model",
            "attributes",
        ]


class ComponentsImportSerializer(serializers.Serializer):
    components = ComponentImportItemSerializer(many=True)
    shared = serializers.BooleanField(default=False)


class ComponentsExportSerializer(serializers.Serializer):
    components = ComponentImportItemSerializer(many=True)


class ComputationalModelSerializer(OwnedRecordSerializer):
    class Meta:
        model = ComputationalModel
        fields = [
            "id",
            "name",
            "language",
            "source",
            "description",
            "validated_architectures",
            "shared",
            "builtin",
            "owner",
            "can_edit",
            "version",
            "created",
            "updated",
        ]
        read_only_fields = ["id", "builtin", "created", "updated"]
        extra_kwargs = {"version": VERSION_FIELD}


@extend_schema_field(GRAPH_SCHEMA)
class GraphField(serializers.JSONField):
    """The system graph; its rules are checked against the database in `validate`."""


class SystemModelSerializer(OwnedRecordSerializer):
    graph = GraphField()

    class Meta:
        model = SystemModel
        fields = [
            "id",
            "name",
            "description",
            "shared",
            "graph",
            "owner",
            "can_edit",
            "version",
            "created",
            "updated",
        ]
        read_only_fields = ["id", "created", "updated"]
        extra_kwargs = {"version": VERSION_FIELD}

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        instance: SystemModel | None = self.instance
        owner = instance.owner if instance is not None else self.context["request"].user
        shared = attrs.get("shared", instance.shared if instance else False)
        if "graph" in attrs or (instance is not None and shared and not instance.shared):
            graph = attrs.get("graph", instance.graph if instance else None)
            errors = graph_errors(graph, owner=owner, shared=shared)
            if errors:
                raise serializers.ValidationError({"graph": errors})
        return attrs


class CloneSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, required=False)


class SnapshotSerializer(serializers.Serializer):
    """A self-contained system snapshot (docs/contracts.md), hardware and models inlined.

    Documents the shape in the schema; the import service checks the whole snapshot.
    """

    name = serializers.CharField()
    description = serializers.CharField(required=False)
    hardware = serializers.DictField(child=serializers.JSONField())
    models = serializers.DictField(child=serializers.JSONField(), required=False)
    nodes = serializers.ListField(child=serializers.JSONField())
    edges = serializers.ListField(child=serializers.JSONField(), required=False)


MAX_EVALUATE_ARGS = 8
MAX_EVALUATE_STRING = 200
MSG_NOT_IDENTIFIER = "Expected a JavaScript function name, e.g. computationTime."
MSG_BAD_ARGUMENT = "Expected a finite number or a string of at most {limit} characters."
MSG_NOT_JSON_VALUE = "Expected JSON values with finite numbers only."
MSG_NO_COMPONENT = "No component with id {id}."


def _finite_json(value: Any) -> bool:
    """Return whether `value` is JSON made of strings, booleans, null and finite numbers."""
    if value is None or isinstance(value, bool | str):
        return True
    if isinstance(value, int | float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_finite_json(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _finite_json(v) for k, v in value.items())
    return False


class EvaluateArgumentField(serializers.JSONField):
    """One positional argument of a model function: a finite number or a short string."""

    def to_internal_value(self, data: Any) -> Any:
        ok_number = isinstance(data, int | float) and not isinstance(data, bool)
        ok_number = ok_number and math.isfinite(data)
        ok_string = isinstance(data, str) and len(data) <= MAX_EVALUATE_STRING
        if not (ok_number or ok_string):
            raise serializers.ValidationError(MSG_BAD_ARGUMENT.format(limit=MAX_EVALUATE_STRING))
        return data


class EvaluateSerializer(serializers.Serializer):
    """A test-run of one function of a computational model against a component I can see."""

    component = serializers.IntegerField(help_text="Id of the component whose attributes to use.")
    function = serializers.RegexField(
        JS_IDENTIFIER,
        max_length=100,
        error_messages={"invalid": MSG_NOT_IDENTIFIER},
        help_text="Function to call, e.g. computationTime, p2pTime, power, failureRate.",
    )
    args = serializers.ListField(
        child=EvaluateArgumentField(),
        max_length=MAX_EVALUATE_ARGS,
        required=False,
        default=list,
        help_text="Positional arguments before params (p2pTime: [size], power: [state]).",
    )
    params = serializers.DictField(
        child=serializers.JSONField(),
        required=False,
        default=dict,
        help_text="The params object the function receives as its last argument.",
    )

    def validate_component(self, value: int) -> Component:
        try:
            return component_get(user=self.context["request"].user, component_id=value)
        except Component.DoesNotExist:
            raise serializers.ValidationError(MSG_NO_COMPONENT.format(id=value)) from None

    def validate_params(self, value: dict[str, Any]) -> dict[str, Any]:
        if not _finite_json(value):
            raise serializers.ValidationError(MSG_NOT_JSON_VALUE)
        return value


class EvaluationResultSerializer(serializers.Serializer):
    value = serializers.FloatField(help_text="What the function returned.")


class CalibrateSerializer(serializers.Serializer):
    """Measurements to fit to one component (simulator.calibrate).

    The shape of each measurement is checked by the service, so its errors name the field
    ("measurements[2].seconds").
    """

    kind = serializers.ChoiceField(
        choices=["transfer", "kernel", "energy"],
        help_text=(
            "transfer: t_s and lambda_c per direction (4.6), stored as startupHTD/lambdaHTD and "
            "startupDth/lambdaDth; kernel: lambda_k (4.1), stored as kernelExecutionLambda; "
            "energy: E_b and P_s (003 eq. 3), stored as blockEnergy [J] and powerIdle [W]."
        ),
    )
    measurements = serializers.ListField(
        child=serializers.JSONField(),
        help_text=(
            "transfer: [{bytes, seconds, direction: HostToDevice|DeviceToHost}] (bandwidth from "
            "the component's `bandwidth` attribute, B/s); kernel: [{estimated_s, measured_s}] "
            "(estimated with lambda_k = 1); energy: [{blocks, seconds, joules}], at least 3."
        ),
    )
    idle_power_w = FiniteFloatField(
        required=False,
        min_value=0,
        help_text="energy only: a known idle power P_s [W]; then only E_b is fitted and stored.",
    )
    store = serializers.BooleanField(
        default=False, help_text="Write the fitted values as attributes (owner or staff)."
    )


@extend_schema_field(
    {
        "type": "object",
        "description": (
            "transfer: {bandwidth, directions: {HostToDevice: {startup_s, lambda_c, count, "
            "residuals_s, r2}, DeviceToHost: {...}}}; kernel: {lambda_k, count, residuals_s, "
            "r2}; energy: {block_energy_j, static_power_w, static_power_given, time_slope_s, "
            "time_intercept_s, count, residuals_j, r2}."
        ),
    }
)
class CalibrationFitField(serializers.JSONField):
    """The fitted values of one calibration kind."""


class CalibrationResultSerializer(serializers.Serializer):
    kind = serializers.CharField()
    component = serializers.IntegerField()
    fit = CalibrationFitField()
    attributes = AttributeSerializer(many=True, help_text="The attributes stored (or to store).")
    stored = serializers.BooleanField()
