"""Writes of application models: the Python each simulated process runs, with its declared
variables. A model's source is compiled in the sandbox when it is saved."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django.db import transaction

from simulator.errors import UserCodeError
from webapp.studio.models import ApplicationModel
from webapp.studio.services.common import check_name, check_source, field_error
from webapp.studio.validation import validate_variable_declarations

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def _check_compiles(source: str, field: str = "source") -> str:
    """Return `source` when it compiles as an application model; else a 400 with its line."""
    # Lazy: simulator.evaluate imports py_mini_racer (V8), which only the sandbox child runs.
    from simulator.evaluate import check_application_in_sandbox

    try:
        check_application_in_sandbox(source=source)
    except UserCodeError as error:
        where = f"Line {error.line}: " if error.line is not None else ""
        raise field_error(field, where + error.detail) from None
    return source


@transaction.atomic
def application_model_create(
    *,
    owner: User,
    name: str,
    source: str,
    variables: object = None,
    description: str = "",
    shared: bool = False,
) -> ApplicationModel:
    """Return a new application model of `owner` with its variable declarations checked."""
    return ApplicationModel.objects.create(
        owner=owner,
        name=check_name(name),
        source=_check_compiles(check_source(source)),
        variables=validate_variable_declarations(variables if variables is not None else []),
        description=description,
        shared=shared,
    )


@transaction.atomic
def application_model_update(
    *, application: ApplicationModel, fields: Mapping[str, Any]
) -> ApplicationModel:
    """Return `application` with `fields` (name, source, variables, description, shared) set.

    Simulations launched before keep the source they froze.
    """
    if "name" in fields:
        application.name = check_name(fields["name"])
    if "source" in fields and fields["source"] != application.source:
        application.source = _check_compiles(check_source(fields["source"]))
    if "variables" in fields:
        application.variables = validate_variable_declarations(fields["variables"])
    if "description" in fields:
        application.description = str(fields["description"])
    if "shared" in fields:
        application.shared = bool(fields["shared"])
    application.save()
    return application


def application_model_delete(*, application: ApplicationModel) -> None:
    """Delete `application`; its simulations keep their frozen source."""
    application.delete()
