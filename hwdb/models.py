"""Hardware components with attributes, computational models and system models.

Records with no owner are built in (seeded); they are shared and only staff may change them.
Validation of values lives in `hwdb.validation` and writes go through `hwdb.services`.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from hwdb.validation import (
    ATTRIBUTE_KEY_MAX_LENGTH,
    NAME_MAX_LENGTH,
    validate_architectures,
    validate_attribute_key,
    validate_finite,
    validate_recommended_model,
)


class ComponentType(models.TextChoices):
    """Kinds of hardware a system model can be built from."""

    GPU = "GPU", "GPU"
    CPU = "CPU", "CPU"
    NETWORK = "NETWORK", "Network"
    MEMORY = "MEMORY", "Memory"
    STORAGE = "STORAGE", "Storage"
    CACHE = "CACHE", "Cache"
    FABRIC = "FABRIC", "Switching fabric"


class ModelLanguage(models.TextChoices):
    """Languages computational models may be written in."""

    JAVASCRIPT = "javascript", "JavaScript"


class OwnedRecord(models.Model):
    """Fields every user-editable record shares: owner, `shared` flag, version and timestamps.

    `version` is the optimistic lock of the editors: a client sends back the version it loaded,
    and a save over a newer one is refused, naming the fields changed since (`field_versions`).
    """

    name = models.CharField(max_length=NAME_MAX_LENGTH)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="Empty for built-in records.",
    )
    shared = models.BooleanField(default=False, help_text="Readable by every signed-in user.")
    version = models.PositiveIntegerField(
        default=1,
        help_text="Raised by one by each save that changes the record; a save sent with an older "
        "version is refused (hwdb.services.common.check_version).",
    )
    field_versions = models.JSONField(
        default=dict,
        blank=True,
        help_text="The version at which each field last changed: what a refused save was missing.",
    )
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True

    @property
    def is_builtin(self) -> bool:
        """Return True for seeded records, which have no owner."""
        return self.owner_id is None


class Component(OwnedRecord):
    """A hardware component (GPU, CPU, network link, memory, storage) with numeric attributes."""

    type = models.CharField(max_length=16, choices=ComponentType.choices)
    vendor = models.CharField(max_length=100, blank=True)
    comment = models.TextField(blank=True)
    source_url = models.URLField(max_length=500, blank=True)
    recommended_model = models.CharField(
        max_length=NAME_MAX_LENGTH,
        blank=True,
        validators=[validate_recommended_model],
        help_text="The built-in computational model to run on it (a GPU's: the kernel-time "
        "model validated on its architecture); a sweep swapping it in picks it.",
    )

    # Set by hwdb.selectors.component_attributes: the attributes as plain dicts, for lists.
    attribute_rows: list[dict[str, Any]] | None = None

    class Meta:
        ordering = ["type", "name", "id"]
        indexes = [models.Index(fields=["type", "name"]), models.Index(fields=["vendor"])]

    def __str__(self) -> str:
        return f"{self.type} {self.name}"


class Attribute(models.Model):
    """One numeric property of a component, e.g. SMs = 13 (count), with its unit and source."""

    component = models.ForeignKey(Component, on_delete=models.CASCADE, related_name="attributes")
    key = models.CharField(max_length=ATTRIBUTE_KEY_MAX_LENGTH, validators=[validate_attribute_key])
    value = models.FloatField(validators=[validate_finite])
    unit = models.CharField(max_length=50, blank=True)
    source = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["key"]
        constraints = [
            models.UniqueConstraint(fields=["component", "key"], name="hwdb_attribute_unique_key")
        ]

    def __str__(self) -> str:
        return f"{self.key}={self.value:g} {self.unit}".rstrip()


class ComputationalModel(OwnedRecord):
    """A JavaScript "shallow functions" model attached to system-model nodes."""

    language = models.CharField(
        max_length=16, choices=ModelLanguage.choices, default=ModelLanguage.JAVASCRIPT
    )
    source = models.TextField()
    description = models.TextField(blank=True)
    builtin = models.BooleanField(default=False, help_text="Shipped with ParaSim Studio.")
    validated_architectures = models.JSONField(
        default=list,
        blank=True,
        validators=[validate_architectures],
        help_text="GPU architecture families the model was validated on; a run on another "
        "family's GPU carries a warning.",
    )

    class Meta:
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name


class SystemModel(OwnedRecord):
    """A system graph of hardware instances, groups and edges (docs/contracts.md).

    `components` and `computational_models` mirror the references held in `graph`; services keep
    them in step so that a referenced record cannot be deleted from under a system model.
    """

    description = models.TextField(blank=True)
    graph = models.JSONField(default=dict)
    components = models.ManyToManyField(Component, related_name="system_models", blank=True)
    computational_models = models.ManyToManyField(
        ComputationalModel, related_name="system_models", blank=True
    )

    class Meta:
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name
