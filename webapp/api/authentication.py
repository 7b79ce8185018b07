"""Token authentication in one plain query.

DRF's `TokenAuthentication` reads the token and its user through the ORM
(`Token.objects.select_related("user").get(key=...)`): building that query took about 1 ms of
the 5 ms a cached list request costs (bench/bench_rest.py). This class reads the same rows
with SQL written once per process from the models' own table and column names, and the
user comes back as the ORM would build it (`Manager.raw` applies the fields' converters). It
refuses what DRF refuses, with DRF's messages: an unknown token, an inactive user.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

from hwdb import sql

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser


@functools.cache
def token_user_sql() -> str:
    """Return the SQL that reads the user of the token given as its one parameter."""
    user_model = get_user_model()
    columns = ", ".join(
        f"u.{sql.column(user_model, field.name)}" for field in user_model._meta.concrete_fields
    )
    return (
        f"SELECT {columns} FROM {sql.table(Token)} t JOIN {sql.table(user_model)} u"
        f" ON u.{sql.column(user_model, 'pk')} = t.{sql.column(Token, 'user')}"
        f" WHERE t.{sql.column(Token, 'key')} = %s"
    )


class TokenAuthentication(authentication.TokenAuthentication):
    """`Authorization: Token <key>`, as DRF's, read in one plain query."""

    def authenticate_credentials(self, key: str) -> tuple[AbstractBaseUser, Any]:
        users = list(get_user_model()._default_manager.raw(token_user_sql(), [key]))
        if not users:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        user = users[0]
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        # request.auth: the token, as DRF gives it, without reading its row a second time.
        return user, Token(key=key, user=user)
