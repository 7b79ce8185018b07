"""API views of the hardware database: each validates the request, calls one selector or
service, serializes the result. CRUD and clone come from `hwdb.api.viewsets`, errors become
responses in `webapp.api.exceptions`.

Records a user may not see answer 404; records a user may see but not change answer 403.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django_filters import BooleanFilter, ChoiceFilter, OrderingFilter
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from hwdb import selectors
from hwdb.api.serializers import (
    CalibrateSerializer,
    CalibrationResultSerializer,
    ComponentSerializer,
    ComponentsExportSerializer,
    ComponentsImportSerializer,
    ComputationalModelSerializer,
    EvaluateSerializer,
    EvaluationResultSerializer,
    SnapshotSerializer,
    SystemModelSerializer,
)
from hwdb.api.viewsets import CloneMixin, OwnedRecordViewSet, clone_schema
from hwdb.filters import (
    AttributeConditionsFilter,
    ComponentFilter,
    ComputationalModelFilter,
    OwnedFilterSet,
    SystemModelFilter,
)
from hwdb.models import Component, ComputationalModel, SystemModel
from hwdb.services.calibration import component_calibrate
from hwdb.services.components import (
    component_clone,
    component_create,
    component_delete,
    component_update,
    components_import,
)
from hwdb.services.computational_models import (
    computational_model_clone,
    computational_model_create,
    computational_model_delete,
    computational_model_evaluate,
    computational_model_update,
)
from hwdb.services.system_models import (
    system_model_clone,
    system_model_create,
    system_model_delete,
    system_model_import_snapshot,
    system_model_update,
)
from restapi.cache import cached_response
from restapi.schemas import FIELD_ERRORS_SCHEMA

# A failed evaluation's 400 (webapp.api.exceptions): the model failed, with its message, the
# line of its source and which function it was; or the request had field errors.
EVALUATION_ERROR_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {
            "type": "object",
            "description": "The model failed.",
            "properties": {
                "detail": {"type": "string"},
                "line": {"type": "integer", "nullable": True},
                "function": {"type": "string"},
                "model": {"type": "string"},
            },
            "required": ["detail", "line", "function", "model"],
        },
        FIELD_ERRORS_SCHEMA,
    ]
}


def filter_parameters(filterset_class: type[OwnedFilterSet]) -> list[OpenApiParameter]:
    """Return the OpenAPI query parameters of a filter set (shared with the selectors)."""
    parameters = []
    for name, query_filter in filterset_class.base_filters.items():
        description = str(query_filter.extra.get("help_text", "") or "")
        enum: list[str] | None = None
        kind: Any = OpenApiTypes.STR
        many = False
        if isinstance(query_filter, BooleanFilter):
            kind = OpenApiTypes.BOOL
        elif isinstance(query_filter, OrderingFilter):
            fields = [f for f, _ in query_filter.param_map.items()]
            enum = [*fields, *(f"-{f}" for f in fields)]
            description = "Order by this field; prefix '-' for descending."
        elif isinstance(query_filter, ChoiceFilter):
            enum = [value for value, _ in query_filter.extra["choices"]]
        elif isinstance(query_filter, AttributeConditionsFilter):
            many = True
        parameters.append(
            OpenApiParameter(
                name, kind, OpenApiParameter.QUERY, description=description, enum=enum, many=many
            )
        )
    return parameters


@extend_schema_view(
    list=extend_schema(parameters=filter_parameters(ComponentFilter)),
    clone=clone_schema(ComponentSerializer, "Return a private copy of a component I can see."),
)
class ComponentViewSet(CloneMixin, OwnedRecordViewSet):
    """Hardware components with their attributes (nested, replaced as a whole on update)."""

    serializer_class = ComponentSerializer
    queryset = Component.objects.none()  # for the schema only; reads go through selectors

    def record_list(self) -> QuerySet[Component]:
        return selectors.component_list(user=self.user, filters=self.request.query_params)

    def record_get(self, pk: str) -> Component:
        return selectors.component_get(user=self.user, component_id=pk)

    def record_create(self, data: dict[str, Any]) -> Component:
        return component_create(owner=self.user, **data)

    def record_update(
        self,
        record: Component,
        data: dict[str, Any],
        *,
        partial: bool,
        expected_version: int | None,
    ) -> Component:
        # Attributes are replaced as a whole: a full update without them removes them all.
        attributes = data.pop("attributes", None)
        if attributes is None and not partial:
            attributes = []
        component = component_update(
            component=record,
            fields=data,
            attributes=attributes,
            expected_version=expected_version,
        )
        return self.record_get(str(component.pk))

    def record_delete(self, record: Component) -> None:
        component_delete(component=record)

    def record_clone(self, record: Component, data: dict[str, Any]) -> Component:
        return component_clone(component=record, owner=self.user, **data)

    def list(self, request: Request) -> Response:
        # Rendered once per version of the catalogue (restapi.cache): a write is seen by
        # the next request, and reads in between cost one aggregate query.
        version = selectors.component_list_version(user=self.user)
        return cached_response(self, version=version, build=self.list_data)

    def list_data(self) -> Any:
        """Return the rendered page of the list (attributes read for that page only)."""
        components = self.paginate_queryset(self.record_list()) or []
        page = selectors.component_attributes(components=components)
        return self.get_paginated_response(self.get_serializer(page, many=True).data).data

    @extend_schema(
        parameters=filter_parameters(ComponentFilter), responses=ComponentsExportSerializer
    )
    @action(detail=False, methods=["get"])
    def export(self, request: Request) -> Response:
        """Return every component I can see (filtered like the list) in the import format."""
        components = selectors.component_attributes(components=self.record_list())
        return Response(selectors.components_export(components=components))

    @extend_schema(
        request=ComponentsImportSerializer, responses={201: ComponentSerializer(many=True)}
    )
    # Not paginated: the answer is the list of the components made (the schema said a page).
    @action(
        detail=False,
        methods=["post"],
        url_path="import",
        pagination_class=None,
        filter_backends=[],
    )
    def import_components(self, request: Request) -> Response:
        """Create my own copies of the components in the body, all or none; return them as a
        list."""
        data = self.input(ComponentsImportSerializer)
        components = components_import(
            data={"components": data["components"]}, owner=self.user, shared=data["shared"]
        )
        rendered = self.get_serializer(components, many=True).data
        return Response(rendered, status=status.HTTP_201_CREATED)

    @extend_schema(request=CalibrateSerializer, responses={200: CalibrationResultSerializer})
    @action(detail=True, methods=["post"])
    def calibrate(self, request: Request, pk: str) -> Response:
        """Return t_s and lambda_c per direction, lambda_k, or E_b and P_s fitted to measurements.

        With `store`, the fitted values are written as attributes of the component (owner or
        staff; a built-in record answers 403: clone it first). Errors name the field
        ("measurements[2].seconds").
        """
        component = self.record_get(pk)
        data = self.input(CalibrateSerializer)
        return Response(component_calibrate(component=component, user=self.user, **data))


@extend_schema_view(
    list=extend_schema(parameters=filter_parameters(ComputationalModelFilter)),
    clone=clone_schema(
        ComputationalModelSerializer,
        "Return a private, editable copy of a model I can see (built-in ones included).",
    ),
)
class ComputationalModelViewSet(CloneMixin, OwnedRecordViewSet):
    """Computational models: JavaScript shallow functions; built-in ones are read-only."""

    serializer_class = ComputationalModelSerializer
    queryset = ComputationalModel.objects.none()  # for the schema only; reads go through selectors

    def record_list(self) -> QuerySet[ComputationalModel]:
        return selectors.computational_model_list(user=self.user, filters=self.request.query_params)

    def record_get(self, pk: str) -> ComputationalModel:
        return selectors.computational_model_get(user=self.user, model_id=pk)

    def record_create(self, data: dict[str, Any]) -> ComputationalModel:
        return computational_model_create(owner=self.user, **data)

    def record_update(
        self,
        record: ComputationalModel,
        data: dict[str, Any],
        *,
        partial: bool,
        expected_version: int | None,
    ) -> ComputationalModel:
        return computational_model_update(
            model=record, fields=data, expected_version=expected_version
        )

    def record_delete(self, record: ComputationalModel) -> None:
        computational_model_delete(model=record)

    def record_clone(self, record: ComputationalModel, data: dict[str, Any]) -> ComputationalModel:
        return computational_model_clone(model=record, owner=self.user, **data)

    @extend_schema(
        request=EvaluateSerializer,
        responses={
            200: EvaluationResultSerializer,
            400: OpenApiResponse(
                EVALUATION_ERROR_SCHEMA,
                description="The model failed (its message and line), or the request's "
                "field errors.",
            ),
        },
    )
    @action(detail=True, methods=["post"])
    def evaluate(self, request: Request, pk: str) -> Response:
        """Return the value of one function of a model I can see, on a component I can see.

        The model's saved source runs in the sandbox's child process (a few seconds at most);
        a failing model answers 400 with its message and the line of its source.
        """
        model = self.record_get(pk)
        data = self.input(EvaluateSerializer)
        value = computational_model_evaluate(model=model, **data, user_id=request.user.pk)
        return Response({"value": value})


@extend_schema_view(
    list=extend_schema(parameters=filter_parameters(SystemModelFilter)),
    clone=clone_schema(SystemModelSerializer, "Return a private copy of a system model I can see."),
)
class SystemModelViewSet(CloneMixin, OwnedRecordViewSet):
    """System models: graphs of hardware instances, groups and edges."""

    serializer_class = SystemModelSerializer
    queryset = SystemModel.objects.none()  # for the schema only; reads go through selectors

    def record_list(self) -> QuerySet[SystemModel]:
        return selectors.system_model_list(user=self.user, filters=self.request.query_params)

    def record_get(self, pk: str) -> SystemModel:
        return selectors.system_model_get(user=self.user, system_model_id=pk)

    def record_create(self, data: dict[str, Any]) -> SystemModel:
        return system_model_create(owner=self.user, **data)

    def record_update(
        self,
        record: SystemModel,
        data: dict[str, Any],
        *,
        partial: bool,
        expected_version: int | None,
    ) -> SystemModel:
        return system_model_update(
            system_model=record, fields=data, expected_version=expected_version
        )

    def record_delete(self, record: SystemModel) -> None:
        system_model_delete(system_model=record)

    def record_clone(self, record: SystemModel, data: dict[str, Any]) -> SystemModel:
        return system_model_clone(system_model=record, owner=self.user, **data)

    @extend_schema(responses=SnapshotSerializer)
    @action(detail=True, methods=["get"])
    def snapshot(self, request: Request, pk: str) -> Response:
        """Return the self-contained snapshot (hardware and models inlined) of a system model."""
        return Response(selectors.system_model_export_snapshot(system_model=self.record_get(pk)))

    @extend_schema(request=SnapshotSerializer, responses={201: SystemModelSerializer})
    @action(detail=False, methods=["post"], url_path="import")
    def import_snapshot(self, request: Request) -> Response:
        """Create a private system model, with my own copies of its records, from a snapshot.

        Errors are keyed by their path inside the snapshot ("nodes[2].count").
        """
        system_model = system_model_import_snapshot(snapshot=request.data, owner=self.user)
        return self.output(system_model, status.HTTP_201_CREATED)
