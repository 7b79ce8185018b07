"""Value rules of the hardware database and the messages they produce, in one place.

Model field validators, the REST serializers and the services all use these so that the
same mistake gets the same message wherever it is made.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from django.core.exceptions import ValidationError

from simulator import memory_spec
from simulator.attribute_ranges import range_error
from simulator.js_names import JS_RESERVED
from simulator.models import builtin_model_names
from simulator.models.architectures import family_named, known_families
from simulator.snapshot import IDENTIFIER

NAME_MAX_LENGTH = 200
ATTRIBUTE_KEY_MAX_LENGTH = 100
MODEL_SOURCE_MAX_LENGTH = 200_000


# Attributes become JavaScript globals inside computational models (docs/contracts.md, 2), so a key
# must not be a reserved word, a name the runtime provides, or a builtin it would hide.
RESERVED_ATTRIBUTE_KEYS = JS_RESERVED | frozenset(
    ("Math", "JSON", "Object", "Array", "Number", "String", "Boolean")
)

MESSAGES = {
    "version_conflict": (
        "Someone else saved this record after you loaded it (you edited version {expected}, it "
        "is now version {version}; changed: {fields}). Reload it, or overwrite their changes."
    ),
    "version_conflict_unknown": "unknown",
    "not_finite": "Enter a finite number; NaN and infinity are not allowed.",
    "not_a_number": "Enter a number.",
    "attribute_key": "Attribute keys are identifiers: a letter or '_', then letters, digits or '_'.",
    "attribute_key_reserved": "{key!r} is reserved inside computational models; choose another key.",
    "duplicate_attribute_key": "Row {row}: duplicate attribute key {key!r} (also in row {first}).",
    "attribute_range": "Row {row}: {message}",
    "graph_shape": 'The graph is an object with a "nodes" list and an "edges" list.',
    "graph_extra_keys": "Unknown graph keys: {keys}.",
    "hardware_not_id": "Expected a component id (a whole number).",
    "hardware_missing": "Component {ref} does not exist or is not visible to you.",
    "model_not_id": "Expected a computational model id (a whole number).",
    "model_missing": "Computational model {ref} does not exist or is not visible to you.",
    "shared_needs_shared_hardware": (
        "A shared system model can reference only shared components; component {name!r} is private."
    ),
    "shared_needs_shared_model": (
        "A shared system model can reference only shared computational models; "
        "model {name!r} is private."
    ),
    # Only the owner's own system models are named; other users' are counted (their names
    # may be private), and keep copies of their own when the record is withdrawn.
    "component_in_use": (
        "Component is used by system models: {names}. Remove it from them first.{others}"
    ),
    "model_in_use": "Computational model is used by system models: {names}. Remove it first.{others}",
    "others_keep_copies": (
        " {count} system model(s) of other users use it too; they will keep copies of their own."
    ),
    "unshare_in_shared": (
        "Shared system models use this record ({names}); unshare them or remove it from them "
        "first, or it would stay visible through them."
    ),
    "null_character": "Null characters are not allowed.",
    "snapshot_object": "A snapshot is a JSON object.",
    "architectures": "Expected a list of GPU architecture families, each one of {known}.",
    "architecture": "Unknown GPU architecture family {value!r}; expected one of {known}.",
    "recommended_model": "No built-in computational model is named {value!r}; expected one of "
    "{known}.",
}


def validate_finite(value: object) -> None:
    """Raise ValidationError unless `value` is a finite real number (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationError(MESSAGES["not_a_number"], code="invalid")
    if not math.isfinite(value):
        raise ValidationError(MESSAGES["not_finite"], code="not_finite")


def validate_attribute_key(key: object) -> None:
    """Raise ValidationError unless `key` can be a JavaScript global in a computational model."""
    if not isinstance(key, str) or not IDENTIFIER.match(key):
        raise ValidationError(MESSAGES["attribute_key"], code="invalid")
    if key in RESERVED_ATTRIBUTE_KEYS:
        raise ValidationError(MESSAGES["attribute_key_reserved"].format(key=key), code="reserved")


def duplicate_key_errors(attributes: Sequence[Mapping[str, object]]) -> dict[int, str]:
    """Return {index: message} for every attribute whose key already appeared earlier."""
    first_seen: dict[object, int] = {}
    errors: dict[int, str] = {}
    for index, attribute in enumerate(attributes):
        key = attribute.get("key")
        if key in first_seen:
            # Rows are counted from 1 for people; the field paths stay 0-based.
            errors[index] = MESSAGES["duplicate_attribute_key"].format(
                row=index + 1, key=key, first=first_seen[key] + 1
            )
        else:
            first_seen[key] = index
    return errors


def attribute_row_errors(attributes: Sequence[object]) -> list[tuple[int, str, str]]:
    """Return (row index, "key" or "value", message) for the rules of a list of attributes
    beyond each row's own fields: a key already used by an earlier row, and a value out of
    its key's range (simulator.attribute_ranges) on a row whose key and value read; rows
    that are not objects are left to the row's own checks."""
    rows = [row if isinstance(row, Mapping) else {} for row in attributes]
    # A row without a string key is no duplicate of another such row.
    keyed = [row if isinstance(row.get("key"), str) else {"key": object()} for row in rows]
    found = [(index, "key", message) for index, message in duplicate_key_errors(keyed).items()]
    for index, row in enumerate(rows):
        key, value = row.get("key"), row.get("value")
        if not isinstance(key, str) or isinstance(value, bool):
            continue
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError, OverflowError):
            continue
        message = range_error(key, number) if math.isfinite(number) else None
        if message:
            found.append(
                (index, "value", MESSAGES["attribute_range"].format(row=index + 1, message=message))
            )
    return found


def memory_attribute_errors(
    kind: object, attributes: Sequence[object], unread: set[int]
) -> tuple[dict[int, list[str]], list[str]]:
    """Return a cache's, fabric's or memory record's errors (simulator.memory_spec) as
    ({row index: messages}, [messages of attributes it lacks]), read from the rows that read.

    Rows in `unread` (they carry errors of their own) and rows whose key or value do not read
    are left out: the attribute they name is not called missing, and the checks that read it
    (a cache's geometry) wait for it; the checks of the other rows are reported with theirs.
    """
    if kind not in memory_spec.MEMORY_TYPES:
        return {}, []
    values: dict[str, float] = {}
    index_of: dict[str, int] = {}
    skipped: set[str] = set()
    for index, row in enumerate(attributes):
        key = row.get("key") if isinstance(row, Mapping) else None
        if not isinstance(key, str):
            continue
        value = row.get("value") if isinstance(row, Mapping) else None
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError, OverflowError):
            number = math.nan
        if index in unread or isinstance(value, bool) or not math.isfinite(number):
            skipped.add(key)
            continue
        values[key] = number
        index_of.setdefault(key, index)
    by_row: dict[int, list[str]] = {}
    missing: list[str] = []
    for key, messages in memory_spec.attribute_errors(str(kind), values).items():
        if key in index_of:
            by_row.setdefault(index_of[key], []).extend(messages)
        elif key not in skipped:
            missing.extend(messages)
    return by_row, missing


def null_character_paths(value: object, path: str = "") -> list[str]:
    """Return the paths ("nodes[0].name", "labels.<key>") of strings in JSON `value` that
    hold a NUL character, keys included; PostgreSQL refuses them in text and jsonb."""
    if isinstance(value, str):
        return [path] if "\x00" in value else []
    found: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            name = str(key).replace("\x00", "\\u0000")
            child = f"{path}.{name}" if path else name
            if "\x00" in str(key):
                found.append(path or "non_field_errors")
            found.extend(null_character_paths(item, child))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found.extend(null_character_paths(item, f"{path}[{index}]"))
    return found


def is_record_id(value: object) -> bool:
    """Return True when `value` can be a primary key (a positive 64-bit int, not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**63


def validate_architectures(value: object) -> None:
    """Raise ValidationError unless `value` is a list of GPU architecture families, each
    under its canonical name ("Hopper", not "hopper"), none twice."""
    known = ", ".join(known_families())
    if not isinstance(value, list):
        raise ValidationError(MESSAGES["architectures"].format(known=known), code="invalid")
    for name in value:
        if family_named(name) != name:
            raise ValidationError(
                MESSAGES["architecture"].format(value=name, known=known), code="invalid"
            )
    if len(set(value)) != len(value):
        raise ValidationError(MESSAGES["architectures"].format(known=known), code="invalid")


def validate_recommended_model(value: object) -> None:
    """Raise ValidationError unless `value` is empty or the name of a built-in model
    (simulator.models): a hardware record recommends a model every user can read."""
    names = builtin_model_names()
    if value not in ("", *names):
        raise ValidationError(
            MESSAGES["recommended_model"].format(value=value, known=", ".join(map(repr, names))),
            code="invalid",
        )
