"""Helpers of the hardware database's service tests."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError


def errors_of(excinfo: pytest.ExceptionInfo[ValidationError]) -> dict[str, list[str]]:
    """Return the field errors a service raised, keyed by field path."""
    return excinfo.value.message_dict
