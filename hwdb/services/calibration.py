"""Calibration of a component: fit measurements (simulator.calibrate) and, on request,
store the fitted attributes on it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from hwdb.models import Attribute, Component
from hwdb.selectors import can_change
from hwdb.services.common import AttributeData, note_changed_fields, raise_if
from hwdb.services.components import attribute_records

if TYPE_CHECKING:
    from django.contrib.auth.models import User


CALIBRATION_MESSAGES = {
    "builtin": (
        "Built-in records cannot be calibrated in place; clone this component "
        "(POST /api/components/{id}/clone/) and store the calibration on your copy."
    ),
    "not_owner": (
        "Only the owner or staff may store a calibration on this component; clone it "
        "(POST /api/components/{id}/clone/) and store the calibration on your copy."
    ),
}


class CalibrationPermissionError(Exception):
    """The user may not store a calibration on this component (403); the message says why."""


def component_calibrate(
    *,
    component: Component,
    user: User,
    kind: str,
    measurements: object,
    store: bool = False,
    idle_power_w: float | None = None,
) -> dict[str, Any]:
    """Return the fit of `measurements` (simulator.calibrate: t_s and lambda_c per direction,
    lambda_k, or E_b and P_s) with the attributes that store it; with `store`, write those
    attributes on `component` in one transaction (added, or replacing the same keys).

    A transfer fit reads the link's bandwidth from the `bandwidth` attribute [B/s]. Bad
    measurements raise ValidationError keyed by field path ("measurements[2].seconds");
    storing on a built-in record, or on someone else's without being staff, raises
    CalibrationPermissionError.
    """
    # Lazy: simulator.calibrate imports NumPy, which a web process needs only to calibrate.
    from simulator.calibrate import CalibrationInputError, calibrate

    if store:
        if component.is_builtin:
            raise CalibrationPermissionError(
                CALIBRATION_MESSAGES["builtin"].format(id=component.pk)
            )
        if not can_change(user=user, record=component):
            raise CalibrationPermissionError(
                CALIBRATION_MESSAGES["not_owner"].format(id=component.pk)
            )
    bandwidth = next((a.value for a in component.attributes.all() if a.key == "bandwidth"), None)
    try:
        result = calibrate(
            kind,
            measurements,
            bandwidth=bandwidth,
            idle_power_w=idle_power_w,
            date=timezone.now().date().isoformat(),
            user=user.get_username(),
        )
    except CalibrationInputError as error:
        raise ValidationError(error.errors) from None
    if store:
        _store_calibration(component, result.attributes)
    return {**result.to_dict(), "component": component.pk, "stored": store}


@transaction.atomic
def _store_calibration(component: Component, attributes: Sequence[AttributeData]) -> None:
    stored = Component.objects.select_for_update().get(pk=component.pk)
    records, errors = attribute_records(attributes)
    raise_if(errors)
    for record in records:
        Attribute.objects.update_or_create(
            component=stored,
            key=record.key,
            defaults={"value": record.value, "unit": record.unit, "source": record.source},
        )
    # A calibration is a save of the attributes: an editor open on the component sees it as one.
    note_changed_fields(stored, ["attributes"])
    stored.save(update_fields=["updated", "version", "field_versions"])
