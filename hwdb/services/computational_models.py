"""Writes of computational models: create (a user's JavaScript is syntax-checked in the
sandbox), update, clone, delete, and evaluating one function against a component."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.db import transaction

from hwdb.models import Component, ComputationalModel, ModelLanguage
from hwdb.sandbox import sandbox_runner
from hwdb.services.common import (
    Errors,
    RecordInUseError,
    check_version,
    copy_name,
    in_use_message,
    merge_errors,
    note_changes,
    others_keep_copies,
    raise_if,
    record_field_errors,
    unshare_errors,
)
from hwdb.validation import MESSAGES, MODEL_SOURCE_MAX_LENGTH
from simulator.errors import ModelEvaluationError

if TYPE_CHECKING:
    from django.contrib.auth.models import User

COMPUTATIONAL_MODEL_FIELDS = (
    "name",
    "language",
    "source",
    "description",
    "validated_architectures",
    "shared",
)


def _model_errors(model: ComputationalModel, *, check_syntax: bool = False) -> Errors:
    errors = record_field_errors(model, exclude=["owner"])
    if isinstance(model.source, str) and len(model.source) > MODEL_SOURCE_MAX_LENGTH:
        errors.setdefault("source", []).append(
            f"Ensure this field has no more than {MODEL_SOURCE_MAX_LENGTH} characters."
        )
    if check_syntax and not errors:
        merge_errors(errors, "", _syntax_errors(model))
    return errors


def _syntax_errors(model: ComputationalModel) -> Errors:
    """Return {"source": ["Line N: SyntaxError: ..."]} when the JavaScript does not parse.

    The check runs in the sandbox's child process on the interactive worker (never in this
    one, webapp/interactive.py), as one of the owner's interactive jobs; a user's model is
    checked when it is saved, a built-in one is trusted.
    """
    # Lazy: simulator.evaluate imports py_mini_racer (V8), which only the sandbox child runs.
    from simulator.evaluate import check_in_sandbox

    try:
        check_in_sandbox(
            model_key=model.name,
            source=model.source,
            run=sandbox_runner(user_id=model.owner_id),
        )
    except ModelEvaluationError as error:
        last_line = model.source.count("\n") + 1
        line = min(error.line, last_line) if error.line is not None else None
        where = f"Line {line}: " if line is not None else ""
        return {"source": [where + error.detail]}
    return {}


@transaction.atomic
def computational_model_create(
    *,
    owner: User | None,
    name: str,
    source: str,
    description: str = "",
    language: str = ModelLanguage.JAVASCRIPT,
    shared: bool = False,
    builtin: bool = False,
    validated_architectures: Sequence[str] = (),
) -> ComputationalModel:
    """Return a new computational model; built-in ones have no owner and are shared."""
    model = ComputationalModel(
        owner=owner,
        name=name,
        source=source,
        description=description,
        language=language,
        shared=shared,
        builtin=builtin,
        validated_architectures=list(validated_architectures),
    )
    raise_if(_model_errors(model, check_syntax=owner is not None))
    model.save()
    return model


@transaction.atomic
def computational_model_update(
    *,
    model: ComputationalModel,
    fields: Mapping[str, Any],
    expected_version: int | None = None,
) -> ComputationalModel:
    """Return the updated computational model; with `expected_version`, raise
    RecordVersionError (and write nothing) when the stored one is another version."""
    unknown = sorted(set(fields) - set(COMPUTATIONAL_MODEL_FIELDS))
    if unknown:
        raise ValidationError({key: ["This field cannot be changed."] for key in unknown})
    stored = ComputationalModel.objects.select_for_update().get(pk=model.pk)
    check_version(stored, expected_version)
    before = {field: getattr(stored, field) for field in COMPUTATIONAL_MODEL_FIELDS}
    was_shared = stored.shared
    source_changed = "source" in fields and fields["source"] != stored.source
    for key, value in fields.items():
        setattr(stored, key, value)
    errors = _model_errors(stored, check_syntax=source_changed and stored.owner_id is not None)
    withdrawn = was_shared and not stored.shared
    if withdrawn:
        merge_errors(errors, "", unshare_errors(stored.system_models.all(), stored.owner_id))
    raise_if(errors)
    if withdrawn:
        others_keep_copies(
            record=stored, users=stored.system_models.all(), key="model", copy=_copier(stored)
        )
    note_changes(
        stored, before, {field: getattr(stored, field) for field in COMPUTATIONAL_MODEL_FIELDS}
    )
    stored.save()
    return stored


@transaction.atomic
def computational_model_clone(
    *, model: ComputationalModel, owner: User, name: str | None = None
) -> ComputationalModel:
    """Return a private, editable copy of `model` (built-in or not) owned by `owner`."""
    return computational_model_create(
        owner=owner,
        name=name if name is not None else copy_name(model.name),
        source=model.source,
        description=model.description,
        language=model.language,
        # A copy is the same model until its owner edits it; the owner may drop the claim.
        validated_architectures=model.validated_architectures,
    )


def computational_model_evaluate(
    *,
    model: ComputationalModel,
    component: Component,
    function: str,
    args: Sequence[object],
    params: Mapping[str, object],
    user_id: int | None = None,
) -> float:
    """Return `function(*args, params)` of `model` bound to `component`'s attributes.

    The JavaScript runs in the sandbox's limited child process on the interactive worker,
    never in this one, as one of `user_id`'s interactive jobs (webapp/interactive.py: 429
    past the user's limit); raise simulator.errors.ModelEvaluationError (with the model's
    line where known) on failure.
    """
    # Lazy: simulator.evaluate imports py_mini_racer (V8), which only the sandbox child runs.
    from simulator.evaluate import evaluate_in_sandbox

    return evaluate_in_sandbox(
        model_key=model.name,
        source=model.source,
        attributes={a.key: a.value for a in component.attributes.all()},
        function=function,
        args=args,
        params=params,
        run=sandbox_runner(user_id=user_id),
    )


@transaction.atomic
def computational_model_delete(*, model: ComputationalModel) -> None:
    """Delete `model`; raise RecordInUseError while its owner's system models reference it.
    Other users' system models that do get copies of their own."""
    users = model.system_models.all()
    refused = in_use_message(MESSAGES["model_in_use"], users, model.owner_id)
    if refused is not None:
        raise RecordInUseError(refused)
    others_keep_copies(record=model, users=users, key="model", copy=_copier(model))
    model.delete()


def _copier(model: ComputationalModel) -> Callable[[User | None, bool], ComputationalModel]:
    """Return a function making a copy of `model` as stored now (before the change under way)
    for another owner. The source was checked when it was saved: it is copied as it is."""
    original = ComputationalModel.objects.get(pk=model.pk)

    def copy(owner: User | None, shared: bool) -> ComputationalModel:
        return ComputationalModel.objects.create(
            owner=owner,
            name=original.name,
            source=original.source,
            description=original.description,
            language=original.language,
            shared=shared,
        )

    return copy
