"""Writes of application models: the Python each simulated process runs, with its declared
variables. A model's source is compiled in the sandbox when it is saved."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from django.core.exceptions import ValidationError
from django.db import transaction

from hwdb.services.common import check_version, note_changes
from webapp.interactive import sandbox_runner
from webapp.studio.models import ApplicationModel
from webapp.studio.services.common import check_name, check_source
from webapp.studio.validation import validate_variable_declarations

if TYPE_CHECKING:
    from django.contrib.auth.models import User

T = TypeVar("T")

APPLICATION_MODEL_FIELDS = ("name", "source", "variables", "description", "shared")


def _compile_errors(source: str, *, owner_id: int | None) -> list[str]:
    """Return the messages ("Line N: ...") of every error in an application model's source,
    compiled on the interactive worker as one of the owner's interactive jobs."""
    # Lazy: simulator.evaluate imports py_mini_racer (V8), which only the sandbox child runs.
    from simulator.evaluate import application_errors_in_sandbox

    run = sandbox_runner(user_id=owner_id)
    return [
        (f"Line {error.line}: " if error.line is not None else "") + error.detail
        for error in application_errors_in_sandbox(source=source, run=run)
    ]


class _Checks:
    """Collects the errors of every field of an application model, so that one save reports
    them all (name, source and each variable together)."""

    def __init__(self, *, owner_id: int | None) -> None:
        self.errors: dict[str, list[str]] = {}
        self.owner_id = owner_id

    def run(self, check: Callable[[], T]) -> T | None:
        """Return what `check` returns; keep its field errors and return None instead."""
        try:
            return check()
        except ValidationError as error:
            for field, messages in error.message_dict.items():
                self.errors.setdefault(field, []).extend(messages)
            return None

    def source(self, source: object) -> str | None:
        """Return `source` when it is present, short enough and compiles; else None."""
        checked = self.run(lambda: check_source(source))
        if checked is None:
            return None
        messages = _compile_errors(checked, owner_id=self.owner_id)
        if messages:
            self.errors.setdefault("source", []).extend(messages)
            return None
        return checked

    def raise_if_any(self) -> None:
        if self.errors:
            raise ValidationError(self.errors)


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
    """Return a new application model of `owner`; every field's errors are raised together."""
    checks = _Checks(owner_id=owner.pk)
    checked_name = checks.run(lambda: check_name(name))
    checked_source = checks.source(source)
    declared = checks.run(
        lambda: validate_variable_declarations(variables if variables is not None else [])
    )
    checks.raise_if_any()
    assert checked_name is not None and checked_source is not None  # no errors: all checked
    return ApplicationModel.objects.create(
        owner=owner,
        name=checked_name,
        source=checked_source,
        variables=declared,
        description=description,
        shared=shared,
    )


@transaction.atomic
def application_model_update(
    *,
    application: ApplicationModel,
    fields: Mapping[str, Any],
    expected_version: int | None = None,
) -> ApplicationModel:
    """Return `application` with `fields` (name, source, variables, description, shared) set;
    every field's errors are raised together. With `expected_version`, raise
    hwdb.services.common.RecordVersionError (and write nothing) when the stored application
    is another version.

    Simulations launched before keep the source they froze.
    """
    application = (
        ApplicationModel.objects.select_related("owner")
        .select_for_update(of=("self",))
        .get(pk=application.pk)
    )
    check_version(application, expected_version)
    before = {field: getattr(application, field) for field in APPLICATION_MODEL_FIELDS}
    checks = _Checks(owner_id=application.owner_id)
    if "name" in fields:
        application.name = checks.run(lambda: check_name(fields["name"])) or application.name
    if "source" in fields and fields["source"] != application.source:
        application.source = checks.source(fields["source"]) or application.source
    if "variables" in fields:
        declared = checks.run(lambda: validate_variable_declarations(fields["variables"]))
        application.variables = declared if declared is not None else application.variables
    checks.raise_if_any()
    if "description" in fields:
        application.description = str(fields["description"])
    if "shared" in fields:
        application.shared = bool(fields["shared"])
    note_changes(
        application,
        before,
        {field: getattr(application, field) for field in APPLICATION_MODEL_FIELDS},
    )
    application.save()
    return application


def application_model_delete(*, application: ApplicationModel) -> None:
    """Delete `application`; its simulations keep their frozen source."""
    application.delete()
