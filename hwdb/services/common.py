"""What the hardware database's services share: error collection and the checks every
owned record gets (field validation, NUL characters, unsharing a record still in use)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.db.models import QuerySet

from hwdb.models import Attribute, OwnedRecord, SystemModel
from hwdb.validation import MESSAGES, NAME_MAX_LENGTH

if TYPE_CHECKING:
    from django.contrib.auth.models import User

Errors = dict[str, list[str]]
AttributeData = Mapping[str, Any]

COPY_SUFFIX = " (copy)"


class RecordInUseError(Exception):
    """A component or computational model cannot be deleted: its owner's system models
    reference it."""


# The graph key of each kind of record a system model references, and the relation that
# mirrors it (`hwdb.services.system_models._link_references`).
REFERENCE_RELATIONS = {"hardware": "components", "model": "computational_models"}


class RecordVersionError(Exception):
    """A save was sent with a version of the record older than the stored one (a 409).

    `record` is the stored record, `expected` the version the save was made from and `changed`
    the fields saved since then, so that the editor can show them and offer to reload or
    overwrite.
    """

    def __init__(self, record: OwnedRecord, *, expected: int, changed: list[str]) -> None:
        self.record = record
        self.expected = expected
        self.changed = changed
        fields = ", ".join(changed) or MESSAGES["version_conflict_unknown"]
        super().__init__(
            MESSAGES["version_conflict"].format(
                expected=expected, version=record.version, fields=fields
            )
        )


def check_version(stored: OwnedRecord, expected: int | None) -> None:
    """Raise RecordVersionError unless `expected` (None: not checked) is the stored version.

    `stored` must be read under the row lock (select_for_update) of the transaction that
    saves it, so that no other save slips in between the check and the write.
    """
    if expected is None or expected == stored.version:
        return
    changed = sorted(
        field for field, version in (stored.field_versions or {}).items() if version > expected
    )
    raise RecordVersionError(stored, expected=expected, changed=changed)


def note_changes(
    stored: OwnedRecord, before: Mapping[str, object], after: Mapping[str, object]
) -> None:
    """Raise the version of `stored` when any value in `after` differs from `before`, and
    record that version as the one at which each of those fields changed."""
    note_changed_fields(
        stored, [field for field, value in after.items() if before.get(field) != value]
    )


def note_changed_fields(stored: OwnedRecord, changed: Sequence[str]) -> None:
    """Raise the version of `stored` when `changed` names any field, and record that version
    as the one at which each of them changed."""
    if not changed:
        return
    stored.version += 1
    stored.field_versions = {
        **(stored.field_versions or {}),
        **dict.fromkeys(changed, stored.version),
    }


def merge_errors(errors: Errors, prefix: str, more: Mapping[str, Sequence[str]]) -> None:
    for path, messages in more.items():
        key = prefix if path == "__all__" else f"{prefix}.{path}" if prefix else path
        errors.setdefault(key, []).extend(messages)


def raise_if(errors: Errors) -> None:
    if errors:
        raise ValidationError(errors)


def record_field_errors(record: OwnedRecord | Attribute, exclude: Sequence[str]) -> Errors:
    errors: Errors = {}
    try:
        record.full_clean(exclude=list(exclude), validate_unique=False, validate_constraints=False)
    except ValidationError as error:
        errors = {field: list(messages) for field, messages in error.message_dict.items()}
    # Model fields, unlike form and serializer fields, let NUL through; PostgreSQL refuses it.
    for field in record._meta.concrete_fields:
        value = getattr(record, field.attname, None)
        if field.name not in exclude and isinstance(value, str) and "\x00" in value:
            errors.setdefault(field.name, []).append(MESSAGES["null_character"])
    return errors


def copy_name(name: str) -> str:
    return name[: NAME_MAX_LENGTH - len(COPY_SUFFIX)] + COPY_SUFFIX


def record_names(system_models: Iterable[SystemModel]) -> str:
    return ", ".join(repr(s.name) for s in list(system_models)[:5])


def unshare_errors(users: QuerySet[SystemModel], owner_id: int | None) -> Errors:
    """Return errors when a record about to become private is still used by shared system
    models of its owner (they would expose it to everyone). Other users' system models do not
    hold it back: they get copies of their own (`others_keep_copies`)."""
    shared = users.filter(owner_id=owner_id, shared=True)
    if shared.exists():
        return {"shared": [MESSAGES["unshare_in_shared"].format(names=record_names(shared))]}
    return {}


def in_use_message(template: str, users: QuerySet[SystemModel], owner_id: int | None) -> str | None:
    """Return why a record cannot be deleted (its owner's system models use it: named; other
    users' too: counted), or None when its owner's do not."""
    own = users.filter(owner_id=owner_id)
    if not own.exists():
        return None
    count = users.exclude(owner_id=owner_id).count()
    others = MESSAGES["others_keep_copies"].format(count=count) if count else ""
    return template.format(names=record_names(own), others=others)


def others_keep_copies(
    *,
    record: OwnedRecord,
    users: QuerySet[SystemModel],
    key: str,
    copy: Callable[[User | None, bool], OwnedRecord],
) -> int:
    """Give every other user whose system models reference `record` a copy of their own
    (`copy(owner, shared)`: shared where one of their system models using it is) and point
    those system models at it; return how many system models were repointed.

    Called before the record's owner withdraws it (unshares or deletes it): other users'
    system models keep working, the owner is not held back by records of theirs, and their
    runs were never at stake (each froze its snapshot at launch).
    """
    theirs = list(users.exclude(owner_id=record.owner_id).select_related("owner"))
    by_owner: dict[int | None, list[SystemModel]] = {}
    for system_model in theirs:
        by_owner.setdefault(system_model.owner_id, []).append(system_model)
    relation = REFERENCE_RELATIONS[key]
    for system_models in by_owner.values():
        copied = copy(system_models[0].owner, any(s.shared for s in system_models))
        for system_model in system_models:
            for node in system_model.graph.get("nodes", []):
                if isinstance(node, dict) and node.get(key) == record.pk:
                    node[key] = copied.pk
            system_model.save()
            getattr(system_model, relation).remove(record)
            getattr(system_model, relation).add(copied)
    return len(theirs)
