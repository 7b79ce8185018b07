"""Token authentication in one plain query.

DRF's `TokenAuthentication` reads the token and its user through the ORM
(`Token.objects.select_related("user").get(key=...)`): building that query was a large part
of what a cached list request costs. This class reads the same rows
with SQL written once per process from the models' own table and column names, and the
user comes back as the ORM would build it (`Model.from_db`, the fields' converters applied). It
refuses what DRF refuses, with DRF's messages: an unknown token, an inactive user.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model
from django.db import connection
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
    return (
        f"SELECT {sql.columns(user_model, 'u')} FROM {sql.table(Token)} t"
        f" JOIN {sql.table(user_model)} u"
        f" ON u.{sql.column(user_model, 'pk')} = t.{sql.column(Token, 'user')}"
        f" WHERE t.{sql.column(Token, 'key')} = %s"
    )


def _token_user(key: str) -> Any:
    """Return the user of token `key` built as the ORM builds it, or None."""
    with connection.cursor() as cursor:
        cursor.execute(token_user_sql(), [key])
        row = cursor.fetchone()
    return None if row is None else sql.from_row(get_user_model(), row)


class TokenAuthentication(authentication.TokenAuthentication):
    """`Authorization: Token <key>`, as DRF's, read in one plain query."""

    def authenticate_credentials(self, key: str) -> tuple[AbstractBaseUser, Any]:
        user = _token_user(key)
        if user is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        # request.auth: the token, as DRF gives it, without reading its row a second time.
        return user, Token(key=key, user=user)
