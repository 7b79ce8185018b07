"""Writes to the hardware database, one module per entity. Each validates everything first
and then writes inside one transaction, so a rejected write leaves the stored records exactly
as they were.

Errors are Django `ValidationError`s keyed by field path ("name", "attributes[1].value",
"graph.nodes[2].count", "components[0].type", "hardware.hw-3.attributes.SMs"), which the REST
layer returns as 400 responses. Deleting a record that system models still use raises
`RecordInUseError`.

This package exports the services and errors its callers use; the reads that used to live
here (exports, attribute data) are in `hwdb.selectors` and are re-exported for those callers.
"""

from __future__ import annotations

from hwdb.selectors import (
    component_attribute_data,
    component_export_data,
    components_export,
    system_model_export_snapshot,
)
from hwdb.services.calibration import (
    CALIBRATION_MESSAGES,
    CalibrationPermissionError,
    component_calibrate,
)
from hwdb.services.common import RecordInUseError
from hwdb.services.components import (
    component_clone,
    component_create,
    component_delete,
    component_update,
    components_import,
)
from hwdb.services.computational_models import (
    computational_model_clone,
    computational_model_create,
    computational_model_delete,
    computational_model_evaluate,
    computational_model_update,
)
from hwdb.services.system_models import (
    system_model_clone,
    system_model_create,
    system_model_delete,
    system_model_import_snapshot,
    system_model_update,
)

__all__ = [
    "CALIBRATION_MESSAGES",
    "CalibrationPermissionError",
    "RecordInUseError",
    "component_attribute_data",
    "component_calibrate",
    "component_clone",
    "component_create",
    "component_delete",
    "component_export_data",
    "component_update",
    "components_export",
    "components_import",
    "computational_model_clone",
    "computational_model_create",
    "computational_model_delete",
    "computational_model_evaluate",
    "computational_model_update",
    "system_model_clone",
    "system_model_create",
    "system_model_delete",
    "system_model_export_snapshot",
    "system_model_import_snapshot",
    "system_model_update",
]
