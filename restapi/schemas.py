"""OpenAPI schema fragments shared by both apps' views."""

from __future__ import annotations

from typing import Any

# The OpenAPI schema of a 400's field errors as DRF and the exception handler write them: each
# field (or "non_field_errors") to its messages, or, for a nested field, to its own errors.
FIELD_ERRORS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Field errors: each field to its messages (a nested field to its errors).",
    "additionalProperties": {
        "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "object"}]
    },
}
