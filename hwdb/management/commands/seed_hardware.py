"""`manage.py seed_hardware`: load the built-in hardware, computational models and examples.

Idempotent: built-in records (no owner, shared) are matched by type and name (components),
name (computational models) or name (example system models) and brought up to date, so
running it again changes nothing unless the seed files changed. Example snapshots reuse the
built-in hardware of the same type and name (when it carries the example's attribute values)
and built-in models with the same source, so no built-in record is duplicated; duplicates
left by earlier versions are removed once no system model uses them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from hwdb.models import Component, ComputationalModel, SystemModel
from hwdb.selectors import component_attribute_data
from hwdb.services.components import component_create, component_delete, component_update
from hwdb.services.computational_models import (
    computational_model_create,
    computational_model_update,
)
from hwdb.services.system_models import system_model_import_snapshot
from simulator import models as builtin_library

SEED_DIR = Path(__file__).resolve().parent.parent.parent / "seed"
COMPONENT_FIELDS = ("type", "name", "vendor", "comment", "source_url", "recommended_model")


def _attribute_rows(attributes: Any) -> list[tuple[str, float, str, str]]:
    return sorted(
        (a["key"], float(a["value"]), a.get("unit", ""), a.get("source", "")) for a in attributes
    )


class Command(BaseCommand):
    help = "Load built-in hardware (hwdb/seed/*.json), computational models and example systems."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--seed-dir", type=Path, default=SEED_DIR, help="Folder of hardware seed JSON files."
        )
        parser.add_argument(
            "--examples-dir",
            type=Path,
            default=Path(settings.BASE_DIR) / "examples",
            help="Folder whose */snapshot.json files become built-in example system models.",
        )

    @transaction.atomic
    def handle(self, *args: Any, seed_dir: Path, examples_dir: Path, **options: Any) -> None:
        try:
            self.seed_components(seed_dir)
            self.seed_computational_models()
            self.seed_examples(examples_dir)
        except ValidationError as error:
            raise CommandError(f"seed data rejected: {error.message_dict}") from error
        # Counted in the database, not in the seed files: the example systems add the
        # component variants and models they use, and a new user's lists show all of them.
        components = Component.objects.filter(owner=None).count()
        models = ComputationalModel.objects.filter(owner=None).count()
        systems = SystemModel.objects.filter(owner=None).count()
        self.stdout.write(
            f"Built-in records: {components} components, {models} computational models, "
            f"{systems} example system models."
        )

    def seed_components(self, seed_dir: Path) -> int:
        """Return how many seed components there are, after creating or updating them."""
        files = sorted(seed_dir.glob("*.json"))
        if not files:
            raise CommandError(f"no seed files in {seed_dir}")
        total = 0
        for path in files:
            try:
                records = json.loads(path.read_text(encoding="utf-8"))["components"]
            except (OSError, ValueError, KeyError) as error:
                raise CommandError(f"{path}: {error}") from error
            for index, record in enumerate(records):
                try:
                    self.seed_component(record)
                except ValidationError as error:
                    raise CommandError(
                        f"{path.name}: components[{index}] ({record.get('name')!r}): "
                        f"{error.message_dict}"
                    ) from error
                total += 1
        return total

    def seed_component(self, record: dict[str, Any]) -> None:
        """Create the built-in component, or update it where it differs from `record`."""
        fields = {key: record.get(key, "") for key in COMPONENT_FIELDS}
        attributes = record.get("attributes", [])
        # The seed file's record is the oldest built-in one of its type and name; example
        # snapshots may have added variants of it later.
        existing = (
            Component.objects.filter(owner=None, type=fields["type"], name=fields["name"])
            .order_by("id")
            .first()
        )
        if existing is None:
            component_create(owner=None, shared=True, attributes=attributes, **fields)
            return
        stored = {key: getattr(existing, key) for key in COMPONENT_FIELDS}
        stored_rows = _attribute_rows(component_attribute_data(existing))
        if stored != fields or not existing.shared or stored_rows != _attribute_rows(attributes):
            component_update(
                component=existing, fields={**fields, "shared": True}, attributes=attributes
            )

    def seed_computational_models(self) -> int:
        """Return how many built-in computational models there are, after seeding them."""
        count = 0
        for builtin in builtin_library.builtin_models():
            fields: dict[str, Any] = {
                "name": builtin.name,
                "description": builtin.description,
                "source": builtin.source,
                "language": "javascript",
                "validated_architectures": list(builtin.validated_architectures),
                "shared": True,
            }
            existing = (
                ComputationalModel.objects.filter(builtin=True, name=builtin.name)
                .order_by("id")
                .first()
            )
            if existing is None:
                computational_model_create(owner=None, builtin=True, **fields)
            elif any(getattr(existing, key) != value for key, value in fields.items()):
                computational_model_update(model=existing, fields=fields)
            count += 1
        return count

    def seed_examples(self, examples_dir: Path) -> int:
        """Return how many example system models there are, after importing their snapshots."""
        count = 0
        for path in sorted(examples_dir.glob("*/snapshot.json")):
            try:
                snapshot = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as error:
                raise CommandError(f"{path}: {error}") from error
            name = snapshot.get("name") if isinstance(snapshot, dict) else None
            existing = SystemModel.objects.filter(owner=None, name=name).order_by("id").first()
            try:
                system_model_import_snapshot(
                    snapshot=snapshot, owner=None, shared=True, replace=existing
                )
            except ValidationError as error:
                raise CommandError(f"{path}: {error.message_dict}") from error
            count += 1
        self.remove_unused_duplicates()
        return count

    def remove_unused_duplicates(self) -> int:
        """Return how many built-in components were deleted because an older built-in one has
        the same type and name and no system model uses them (copies that earlier versions
        of this command made when importing the examples)."""
        removed = 0
        unused = Component.objects.filter(owner=None, system_models__isnull=True).order_by("id")
        for component in unused:
            older = Component.objects.filter(
                owner=None, type=component.type, name=component.name, id__lt=component.pk
            )
            if older.exists():
                component_delete(component=component)
                removed += 1
        return removed
