"""API views: each validates the request, calls one selector or service, serializes the result.

Records a user may not see answer 404; records a user may see but not change answer 403.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from django.core.exceptions import ValidationError as DjangoValidationError
from django_filters import BooleanFilter, ChoiceFilter, OrderingFilter
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from hwdb import selectors, services
from hwdb.api.serializers import (
    CalibrateSerializer,
    CalibrationResultSerializer,
    CloneSerializer,
    ComponentSerializer,
    ComponentsExportSerializer,
    ComponentsImportSerializer,
    ComputationalModelSerializer,
    EvaluateSerializer,
    EvaluationErrorSerializer,
    EvaluationResultSerializer,
    SnapshotSerializer,
    SystemModelSerializer,
)
from hwdb.filters import (
    AttributeConditionsFilter,
    ComponentFilter,
    ComputationalModelFilter,
    OwnedFilterSet,
    SystemModelFilter,
)
from hwdb.models import Component, ComputationalModel, OwnedRecord, SystemModel
from simulator.errors import ModelEvaluationError

if TYPE_CHECKING:
    from django.contrib.auth.models import User

PERMISSION_DENIED = "Only the owner or staff may change this record."


class LenientJSONParser(JSONParser):
    """JSON parser that lets NaN and Infinity through to field validation.

    Python's JSON reader accepts them; refusing them at parse time would lose the field name,
    so the finite-number check of the field reports them instead (attributes[0].value).
    """

    strict = False


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


class RecordViewSet(viewsets.GenericViewSet):
    """Shared plumbing: lenient JSON, service errors as 400/409, the owner-or-staff rule."""

    parser_classes = [LenientJSONParser]
    permission_classes = [IsAuthenticated]
    lookup_value_regex = r"[0-9]{1,18}"

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, DjangoValidationError):
            detail = exc.message_dict if hasattr(exc, "error_dict") else exc.messages
            exc = ValidationError(detail=detail)
        elif isinstance(exc, services.RecordInUseError):
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return super().handle_exception(exc)

    @property
    def user(self) -> User:
        """Return the signed-in user (IsAuthenticated lets no anonymous request through)."""
        return cast("User", self.request.user)

    def check_can_change(self, record: OwnedRecord) -> None:
        """Raise PermissionDenied unless the requesting user owns the record or is staff."""
        if not selectors.can_change(user=self.request.user, record=record):
            raise PermissionDenied(PERMISSION_DENIED)

    def input(self, serializer_class: type[serializers.Serializer], **kwargs: Any) -> Any:
        """Return the validated data of the request body (400 with field errors otherwise)."""
        serializer = serializer_class(
            data=self.request.data, context=self.get_serializer_context(), **kwargs
        )
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    def output(self, record: Any, status_code: int = status.HTTP_200_OK) -> Response:
        """Return a response with the record rendered by the view's serializer."""
        return Response(self.get_serializer(record).data, status=status_code)

    def paginated(self, queryset: Any) -> Response:
        """Return one page of `queryset`, rendered."""
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(self.get_serializer(page, many=True).data)


def _clone_schema(serializer: type[serializers.Serializer]) -> Any:
    return extend_schema(request=CloneSerializer, responses={201: serializer})


@extend_schema_view(list=extend_schema(parameters=filter_parameters(ComponentFilter)))
class ComponentViewSet(RecordViewSet):
    """Hardware components with their attributes (nested, replaced as a whole on update)."""

    serializer_class = ComponentSerializer
    queryset = Component.objects.none()  # for the schema only; reads go through selectors

    def list(self, request: Request) -> Response:
        components = selectors.component_list(user=request.user, filters=request.query_params)
        page = selectors.component_attributes(components=self.paginate_queryset(components) or [])
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    def retrieve(self, request: Request, pk: str) -> Response:
        return self.output(selectors.component_get(user=request.user, component_id=pk))

    def create(self, request: Request) -> Response:
        data = self.input(ComponentSerializer)
        component = services.component_create(owner=self.user, **data)
        return self.output(component, status.HTTP_201_CREATED)

    def update(self, request: Request, pk: str, partial: bool = False) -> Response:
        component = selectors.component_get(user=request.user, component_id=pk)
        self.check_can_change(component)
        data = self.input(ComponentSerializer, instance=component, partial=partial)
        attributes = data.pop("attributes", None)
        if attributes is None and not partial:
            attributes = []
        component = services.component_update(
            component=component, fields=data, attributes=attributes
        )
        return self.output(selectors.component_get(user=request.user, component_id=component.pk))

    def partial_update(self, request: Request, pk: str) -> Response:
        return self.update(request, pk, partial=True)

    def destroy(self, request: Request, pk: str) -> Response:
        component = selectors.component_get(user=request.user, component_id=pk)
        self.check_can_change(component)
        services.component_delete(component=component)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @_clone_schema(ComponentSerializer)
    @action(detail=True, methods=["post"])
    def clone(self, request: Request, pk: str) -> Response:
        """Return a private copy of a component I can see."""
        component = selectors.component_get(user=request.user, component_id=pk)
        data = self.input(CloneSerializer)
        clone = services.component_clone(component=component, owner=self.user, **data)
        return self.output(clone, status.HTTP_201_CREATED)

    @extend_schema(
        parameters=filter_parameters(ComponentFilter), responses=ComponentsExportSerializer
    )
    @action(detail=False, methods=["get"])
    def export(self, request: Request) -> Response:
        """Return every component I can see (filtered like the list) in the import format."""
        components = selectors.component_list(user=request.user, filters=request.query_params)
        return Response(
            services.components_export(
                components=selectors.component_attributes(components=components)
            )
        )

    @extend_schema(
        request=ComponentsImportSerializer, responses={201: ComponentSerializer(many=True)}
    )
    @action(detail=False, methods=["post"], url_path="import")
    def import_components(self, request: Request) -> Response:
        """Create my own copies of the components in the body; all or none."""
        data = self.input(ComponentsImportSerializer)
        components = services.components_import(
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
        component = selectors.component_get(user=request.user, component_id=pk)
        data = self.input(CalibrateSerializer)
        try:
            result = services.component_calibrate(component=component, user=self.user, **data)
        except services.CalibrationPermissionError as error:
            raise PermissionDenied(str(error)) from None
        return Response(result)


@extend_schema_view(list=extend_schema(parameters=filter_parameters(ComputationalModelFilter)))
class ComputationalModelViewSet(RecordViewSet):
    """Computational models: JavaScript shallow functions; built-in ones are read-only."""

    serializer_class = ComputationalModelSerializer
    queryset = ComputationalModel.objects.none()  # for the schema only; reads go through selectors

    def list(self, request: Request) -> Response:
        return self.paginated(
            selectors.computational_model_list(user=request.user, filters=request.query_params)
        )

    def retrieve(self, request: Request, pk: str) -> Response:
        return self.output(selectors.computational_model_get(user=request.user, model_id=pk))

    def create(self, request: Request) -> Response:
        data = self.input(ComputationalModelSerializer)
        model = services.computational_model_create(owner=self.user, **data)
        return self.output(model, status.HTTP_201_CREATED)

    def update(self, request: Request, pk: str, partial: bool = False) -> Response:
        model = selectors.computational_model_get(user=request.user, model_id=pk)
        self.check_can_change(model)
        data = self.input(ComputationalModelSerializer, instance=model, partial=partial)
        return self.output(services.computational_model_update(model=model, fields=data))

    def partial_update(self, request: Request, pk: str) -> Response:
        return self.update(request, pk, partial=True)

    def destroy(self, request: Request, pk: str) -> Response:
        model = selectors.computational_model_get(user=request.user, model_id=pk)
        self.check_can_change(model)
        services.computational_model_delete(model=model)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @_clone_schema(ComputationalModelSerializer)
    @action(detail=True, methods=["post"])
    def clone(self, request: Request, pk: str) -> Response:
        """Return a private, editable copy of a model I can see (built-in ones included)."""
        model = selectors.computational_model_get(user=request.user, model_id=pk)
        data = self.input(CloneSerializer)
        clone = services.computational_model_clone(model=model, owner=self.user, **data)
        return self.output(clone, status.HTTP_201_CREATED)

    @extend_schema(
        request=EvaluateSerializer,
        responses={200: EvaluationResultSerializer, 400: EvaluationErrorSerializer},
    )
    @action(detail=True, methods=["post"])
    def evaluate(self, request: Request, pk: str) -> Response:
        """Return the value of one function of a model I can see, on a component I can see.

        The model's saved source runs in the sandbox's child process (a few seconds at most);
        a failing model answers 400 with its message and the line of its source.
        """
        model = selectors.computational_model_get(user=request.user, model_id=pk)
        data = self.input(EvaluateSerializer)
        try:
            value = services.computational_model_evaluate(model=model, **data)
        except ModelEvaluationError as error:
            body = {
                "detail": error.detail,
                "line": error.line,
                "function": error.function,
                "model": error.model,
            }
            return Response(body, status=status.HTTP_400_BAD_REQUEST)
        return Response({"value": value})


@extend_schema_view(list=extend_schema(parameters=filter_parameters(SystemModelFilter)))
class SystemModelViewSet(RecordViewSet):
    """System models: graphs of hardware instances, groups and edges."""

    serializer_class = SystemModelSerializer
    queryset = SystemModel.objects.none()  # for the schema only; reads go through selectors

    def list(self, request: Request) -> Response:
        return self.paginated(
            selectors.system_model_list(user=request.user, filters=request.query_params)
        )

    def retrieve(self, request: Request, pk: str) -> Response:
        return self.output(selectors.system_model_get(user=request.user, system_model_id=pk))

    def create(self, request: Request) -> Response:
        data = self.input(SystemModelSerializer)
        system_model = services.system_model_create(owner=self.user, **data)
        return self.output(system_model, status.HTTP_201_CREATED)

    def update(self, request: Request, pk: str, partial: bool = False) -> Response:
        system_model = selectors.system_model_get(user=request.user, system_model_id=pk)
        self.check_can_change(system_model)
        data = self.input(SystemModelSerializer, instance=system_model, partial=partial)
        return self.output(services.system_model_update(system_model=system_model, fields=data))

    def partial_update(self, request: Request, pk: str) -> Response:
        return self.update(request, pk, partial=True)

    def destroy(self, request: Request, pk: str) -> Response:
        system_model = selectors.system_model_get(user=request.user, system_model_id=pk)
        self.check_can_change(system_model)
        services.system_model_delete(system_model=system_model)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @_clone_schema(SystemModelSerializer)
    @action(detail=True, methods=["post"])
    def clone(self, request: Request, pk: str) -> Response:
        """Return a private copy of a system model I can see."""
        system_model = selectors.system_model_get(user=request.user, system_model_id=pk)
        data = self.input(CloneSerializer)
        clone = services.system_model_clone(system_model=system_model, owner=self.user, **data)
        return self.output(clone, status.HTTP_201_CREATED)

    @extend_schema(responses=SnapshotSerializer)
    @action(detail=True, methods=["get"])
    def snapshot(self, request: Request, pk: str) -> Response:
        """Return the self-contained snapshot (hardware and models inlined) of a system model."""
        system_model = selectors.system_model_get(user=request.user, system_model_id=pk)
        return Response(services.system_model_export_snapshot(system_model=system_model))

    @extend_schema(request=SnapshotSerializer, responses={201: SystemModelSerializer})
    @action(detail=False, methods=["post"], url_path="import")
    def import_snapshot(self, request: Request) -> Response:
        """Create a private system model, with my own copies of its records, from a snapshot.

        Errors are keyed by their path inside the snapshot ("nodes[2].count").
        """
        system_model = services.system_model_import_snapshot(snapshot=request.data, owner=self.user)
        return self.output(system_model, status.HTTP_201_CREATED)
