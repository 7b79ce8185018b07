"""The name contract between the C core and its Python references: simulator.hotpath.NAMES
names every slot, method and key the C core (simulator._speedups) reads, writes or calls, and
the core receives them from it at start-up.

A slot renamed on one side only fails here, whichever side it is:

- renamed in Python only (`ProcessFigures.compute_s` -> `compute_seconds`, the table left
  alone): `test_every_name_the_c_core_uses_is_on_its_owner` fails with
  "compute_s: simulator.results:ProcessFigures has no 'compute_s'";
- renamed in the table only (`NAMES["compute_s"]` -> "compute_seconds", the class left alone):
  the same test fails with "compute_s: simulator.results:ProcessFigures has no
  'compute_seconds'";
- a key the C core uses missing from the table: the core refuses it at start-up
  (ValueError "simulator.hotpath.NAMES['compute_s'] must be a str: the C core uses that name").

`test_a_name_renamed_on_one_side_only_breaks_the_contract` runs those three renames on copies
and checks each is reported as above.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import os
from collections.abc import Callable, Mapping
from typing import Any, is_typeddict

import pytest

from simulator import hotpath
from simulator.hotpath import NAMES, Name
from simulator.results import ProcessFigures


def resolve(owner: str) -> Any:
    """Return the object `owner` ("module:attribute" or "module") names."""
    module_name, _, attribute = owner.partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, attribute) if attribute else module


def _used_in_module(module: Any, name: str) -> bool:
    """Whether the module's code uses `name` as a string or as a keyword argument."""
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if isinstance(node, ast.Constant) and node.value == name:
            return True
        if isinstance(node, ast.keyword) and node.arg == name:
            return True
    return False


def _has(owner: Any, name: str) -> bool:
    if inspect.ismodule(owner):
        return _used_in_module(owner, name)
    if is_typeddict(owner):
        return name in owner.__required_keys__ | owner.__optional_keys__
    if isinstance(owner, tuple | frozenset):
        return name in owner
    return hasattr(owner, name)


def violations(
    names: Mapping[str, Name], resolve_owner: Callable[[str], Any] = resolve
) -> list[str]:
    """Return each entry of `names` whose owner lacks its name, as "key: owner has no 'name'"."""
    return [
        f"{key}: {entry.owner} has no {entry.name!r}"
        for key, entry in names.items()
        if not _has(resolve_owner(entry.owner), entry.name)
    ]


def test_every_name_the_c_core_uses_is_on_its_owner() -> None:
    assert violations(NAMES) == []


def test_the_c_core_uses_exactly_the_table_s_names() -> None:
    if hotpath.speedups is None:
        if os.environ.get("PARASIM_REQUIRE_SPEEDUPS") == "1":
            pytest.fail("the C core is required (PARASIM_REQUIRE_SPEEDUPS=1) but not in use")
        pytest.skip("the C core is not in use")
    assert hotpath.speedups.names() == {key: entry.name for key, entry in NAMES.items()}


def test_a_name_renamed_on_one_side_only_breaks_the_contract() -> None:
    # renamed in Python only: a copy of ProcessFigures whose compute_s is compute_seconds
    fields = [
        ("compute_seconds" if field.name == "compute_s" else field.name, field.type, field)
        for field in dataclasses.fields(ProcessFigures)
    ]
    renamed_class = dataclasses.make_dataclass("ProcessFigures", fields, slots=True)

    def with_renamed_class(owner: str) -> Any:
        return renamed_class if owner == "simulator.results:ProcessFigures" else resolve(owner)

    assert violations(NAMES, with_renamed_class) == [
        "compute_s: simulator.results:ProcessFigures has no 'compute_s'"
    ]

    # renamed in the table only
    renamed_table = dict(NAMES, compute_s=Name("compute_seconds", NAMES["compute_s"].owner))
    assert violations(renamed_table) == [
        "compute_s: simulator.results:ProcessFigures has no 'compute_seconds'"
    ]

    # a key the C core uses, missing from the table: refused before anything is set
    if hotpath.speedups is None:
        return
    before = hotpath.speedups.names()
    lacking = {key: entry.name for key, entry in NAMES.items() if key != "compute_s"}
    with pytest.raises(ValueError, match=r"NAMES\['compute_s'\] must be a str"):
        hotpath.speedups.set_names(lacking)
    with pytest.raises(
        ValueError, match=f"has {len(NAMES) + 1} keys, the C core uses {len(NAMES)}"
    ):
        hotpath.speedups.set_names({**lacking, "compute_s": "compute_s", "extra": "x"})
    with pytest.raises(RuntimeError, match="set once"):
        hotpath.speedups.set_names({key: entry.name for key, entry in NAMES.items()})
    assert hotpath.speedups.names() == before


def test_the_memo_key_and_the_kernel_marker_are_the_ones_the_python_references_use() -> None:
    from simulator import results, shallow
    from simulator.models import roofline

    assert hotpath.COMPUTATION_TIME in shallow.WELL_KNOWN_FUNCTIONS
    assert hotpath.KERNEL_MARKER in roofline.KERNEL_INPUTS
    # the marker is spelled once, in the switch: results and roofline use its name
    assert roofline.KERNEL_MARKER is results.KERNEL_MARKER is hotpath.KERNEL_MARKER
    assert not _used_in_module(roofline, hotpath.KERNEL_MARKER)
    assert not _used_in_module(results, hotpath.KERNEL_MARKER)
    assert hotpath.memo_key("f", (1,), {"a": 2}) == ("f", (1,), (("a", 2),))


def test_every_class_the_c_core_recognises_is_handed_over_by_the_module_defining_it() -> None:
    import simulator.api  # noqa: F401  (it and the modules it imports hand theirs over)

    assert hotpath.handed_types() == {key: resolve(owner) for key, owner in hotpath.TYPES.items()}
    with pytest.raises(TypeError, match=r"unknown keys \['procss'\]"):
        hotpath.hand_types(procss=object)
