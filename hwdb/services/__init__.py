"""Writes to the hardware database, one module per entity: `components`, `calibration`,
`computational_models`, `system_models` (and `common`: the error helpers and
`RecordInUseError`). Each validates everything first and then writes inside one transaction,
so a rejected write leaves the stored records exactly as they were. Reads, exports included,
are in `hwdb.selectors`; the snapshot's records in `hwdb.snapshot_codec`.

Errors are Django `ValidationError`s keyed by field path ("name", "attributes[1].value",
"graph.nodes[2].count", "components[0].type", "hardware.hw-3.attributes.SMs"), which the REST
layer's exception handler (`webapp.api.exceptions`) returns as 400 responses. Deleting a
record that system models still use raises `RecordInUseError` (a 409).

Callers import from the module that owns a service; this package re-exports nothing.
"""
