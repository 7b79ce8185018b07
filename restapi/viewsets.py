"""The plumbing every viewset of the API shares: lenient JSON in, numeric ids, a signed-in
user, request bodies validated by a serializer, records rendered by the view's serializer.

The owned-record viewset of both apps builds on it (`hwdb.api.viewsets`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from rest_framework import serializers, status, viewsets
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class LenientJSONParser(JSONParser):
    """JSON parser that lets NaN and Infinity through to field validation.

    Python's JSON reader accepts them; refusing them at parse time would lose the field name,
    so the finite-number check of the field reports them instead (attributes[0].value).
    """

    strict = False


class RecordViewSet(viewsets.GenericViewSet):
    """Shared plumbing: lenient JSON, numeric ids, request bodies in, records out."""

    parser_classes = [LenientJSONParser]
    permission_classes = [IsAuthenticated]
    lookup_value_regex = r"[0-9]{1,18}"

    @property
    def user(self) -> User:
        """Return the signed-in user (IsAuthenticated lets no anonymous request through)."""
        return cast("User", self.request.user)

    def input(self, serializer_class: type[serializers.BaseSerializer], **kwargs: Any) -> Any:
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
