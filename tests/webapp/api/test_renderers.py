"""The API's JSON renderer writes what DRF's writes, faster."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import json
import uuid
from typing import Any

import pytest
from django.utils.translation import gettext_lazy
from rest_framework import renderers

from restapi.renderers import JSONRenderer


@dataclasses.dataclass
class Point:
    x: int
    label: str


UTC = datetime.UTC
CASES: list[Any] = [
    {"results": [{"id": 1, "name": "run", "progress": 0.25, "error": None, "ok": True}]},
    {"unicode": "żółw \u00e9 \U0001f600", "separators": "a\u2028b\u2029c", "quote": '"\\'},
    {1: "int key", "nested": {"list": [1, 2.5, -3, [], {}], "tuple": (1, 2)}},
    {"when": datetime.datetime(2026, 11, 28, 11, 0, 10, 659687, tzinfo=UTC)},
    {"naive": datetime.datetime(2026, 11, 28, 11, 0), "day": datetime.date(2026, 1, 2)},
    {"time": datetime.time(10, 30, 1, 500)},
    {"id": uuid.UUID("12345678-1234-5678-1234-567812345678")},
    {"money": decimal.Decimal("1.50"), "lazy": gettext_lazy("This field is required.")},
    {"huge": 2**70, "negative": -(2**63)},
    [1.0, 0.5, 0.1 + 0.2, 123456789.123456789, 1e16, -0.0],
    "plain string",
]


@pytest.mark.parametrize("data", CASES)
def test_same_bytes_as_drf(data: Any) -> None:
    assert JSONRenderer().render(data) == renderers.JSONRenderer().render(data)


def test_floats_with_an_exponent_read_back_the_same() -> None:
    # orjson writes 1e-7 where json writes 1e-07: the same number to any JSON reader.
    data = [1e-7, 1e300, 2.5e-300, 1.7976931348623157e308]
    assert json.loads(JSONRenderer().render(data)) == data


def test_what_drf_cannot_encode_is_refused_as_drf_refuses_it() -> None:
    with pytest.raises(TypeError):
        renderers.JSONRenderer().render({"point": Point(3, "p")})
    with pytest.raises(TypeError):
        JSONRenderer().render({"point": Point(3, "p")})


def test_indented_rendering_is_drfs() -> None:
    data = {"a": [1, {"b": 2}]}
    media = "application/json; indent=4"
    assert JSONRenderer().render(data, media) == renderers.JSONRenderer().render(data, media)
    assert b"\n    " in JSONRenderer().render(data, media)


def test_line_separators_are_escaped() -> None:
    assert JSONRenderer().render({"s": "\u2028"}) == b'{"s":"\\u2028"}'


def test_nothing_renders_as_nothing() -> None:
    assert JSONRenderer().render(None) == b""
