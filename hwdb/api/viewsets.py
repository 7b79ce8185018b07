"""The generic viewset of owned records (components, computational and system models,
application models): list what the user may see, retrieve, create through a service, and
change or delete under the owner-or-staff rule.

A subclass names its selectors and services through small hooks (`record_list`,
`record_get`, `record_create`, `record_update`, `record_delete`, and `record_clone` with
`CloneMixin`); errors are left to the project's exception handler (settings'
`EXCEPTION_HANDLER`). Records a user may not see answer 404; records a user may see but not
change answer 403. Built on the shared plumbing of `restapi.viewsets`; the studio's
application models use it too (an application model is an owned record).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response

from hwdb.api.serializers import CloneSerializer
from hwdb.selectors import can_change
from restapi.viewsets import RecordViewSet

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from hwdb.models import OwnedRecord

PERMISSION_DENIED = "Only the owner or staff may change this record."


class OwnedRecordViewSet(RecordViewSet):
    """List, retrieve, create, update and delete one kind of owned record."""

    not_owner_message = PERMISSION_DENIED  # the 403 of a change by neither owner nor staff

    def record_list(self) -> QuerySet[Any]:
        """Return the records the user may see, filtered by the query (a selector)."""
        raise NotImplementedError

    def record_get(self, pk: str) -> OwnedRecord:
        """Return the record with this id if the user may see it (a selector: DoesNotExist)."""
        raise NotImplementedError

    def record_create(self, data: dict[str, Any]) -> OwnedRecord:
        """Return a new record of the user's made from the validated body (a service)."""
        raise NotImplementedError

    def record_update(
        self, record: Any, data: dict[str, Any], *, partial: bool, expected_version: int | None
    ) -> OwnedRecord:
        """Return `record` changed by the validated body (a service); `expected_version` is
        the version the client edited (None: not sent), refused with a 409 when stale."""
        raise NotImplementedError

    def record_delete(self, record: Any) -> None:
        """Delete `record` (a service; RecordInUseError while something uses it)."""
        raise NotImplementedError

    def changeable(self, pk: str) -> Any:
        """Return the record with this id; 404 if the user cannot see it, 403 if they may
        see it but neither own it nor are staff."""
        record = self.record_get(pk)
        if not can_change(user=self.request.user, record=record):
            raise PermissionDenied(self.not_owner_message)
        return record

    def list(self, request: Request) -> Response:
        return self.paginated(self.record_list())

    def retrieve(self, request: Request, pk: str) -> Response:
        return self.output(self.record_get(pk))

    def create(self, request: Request) -> Response:
        data = self.input(self.get_serializer_class())
        data.pop("version", None)  # a new record starts at version 1
        return self.output(self.record_create(data), status.HTTP_201_CREATED)

    def update(self, request: Request, pk: str, partial: bool = False) -> Response:
        record = self.changeable(pk)
        data = self.input(self.get_serializer_class(), instance=record, partial=partial)
        # The version the client loaded: optional, so that a client that never read the
        # record may still replace it; the editors always send it.
        expected_version = data.pop("version", None)
        updated = self.record_update(
            record, data, partial=partial, expected_version=expected_version
        )
        return self.output(updated)

    def partial_update(self, request: Request, pk: str) -> Response:
        return self.update(request, pk, partial=True)

    def destroy(self, request: Request, pk: str) -> Response:
        self.record_delete(self.changeable(pk))
        return Response(status=status.HTTP_204_NO_CONTENT)


class CloneMixin:
    """The clone action of an OwnedRecordViewSet: a private copy of a record I can see.

    Its schema names the view's serializer: give it with
    `extend_schema_view(clone=clone_schema(...))`.
    """

    def record_clone(self, record: Any, data: dict[str, Any]) -> OwnedRecord:
        """Return the user's copy of `record`, named `data["name"]` if given (a service)."""
        raise NotImplementedError

    @action(detail=True, methods=["post"])
    def clone(self, request: Request, pk: str) -> Response:
        view = cast("OwnedRecordViewSet", self)
        record = view.record_get(pk)
        clone = self.record_clone(record, view.input(CloneSerializer))
        return view.output(clone, status.HTTP_201_CREATED)


def clone_schema(serializer: type[serializers.Serializer], description: str) -> Any:
    """Return the schema of a viewset's clone action: the copy rendered by `serializer`."""
    return extend_schema(
        request=CloneSerializer, responses={201: serializer}, description=description
    )
