"""Token authentication builds the user the ORM would build, from one plain query."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authtoken.models import Token

from tests.hwdb.factories import UserFactory
from webapp.api.authentication import TokenAuthentication

pytestmark = pytest.mark.django_db


def test_the_tokens_user_has_every_field_as_the_orm_reads_it() -> None:
    user = UserFactory(is_staff=True, email="a@example.org", first_name="Ada")
    user.last_login = timezone.now()
    user.save()
    key = Token.objects.create(user=user).key
    found, token = TokenAuthentication().authenticate_credentials(key)
    expected = get_user_model().objects.get(pk=user.pk)
    for field in get_user_model()._meta.concrete_fields:
        got, want = getattr(found, field.attname), getattr(expected, field.attname)
        assert (got, type(got)) == (want, type(want)), field.name
    assert isinstance(found.date_joined, datetime) and found.is_staff is True
    assert found._state.adding is False and found._state.db == "default"
    assert (token.key, token.user) == (key, found)


def test_an_unknown_token_is_refused_with_drfs_message() -> None:
    with pytest.raises(exceptions.AuthenticationFailed, match=r"^Invalid token\.$"):
        TokenAuthentication().authenticate_credentials("0" * 40)
