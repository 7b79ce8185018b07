"""The GPU records a name is looked up in: one reader for every part of the simulator that
takes a GPU by name (the workloads' kernel timer, simulator.workloads.kernels; the trace
import's measured and target GPUs, simulator.trace_model).

A `GpuCatalogue` is a list of records (name and attributes, hwdb's form). Where it comes
from is the caller's: the command line reads the project's hardware seed
(`seed_catalogue`, hwdb/seed/hardware.json, or a snapshot's records); the web side builds
one from the records the requesting user may see in the hardware database
(hwdb.selectors.gpu_catalogue), so that a user's private GPU record is usable by them and by
no one else. The catalogue travels to a sandbox child as data (`to_data`, `from_data`).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "SEED",
    "GpuCatalogue",
    "GpuNotFound",
    "GpuRecord",
    "record_attributes",
    "seed_catalogue",
]

SEED = Path(__file__).resolve().parent.parent / "hwdb" / "seed" / "hardware.json"

MSG_NOT_FOUND = "no GPU record {name!r} in {where}: give one of: {names}"


class GpuNotFound(ValueError):
    """No record of that name in the catalogue: the message names it and the ones there are."""


@dataclass(frozen=True)
class GpuRecord:
    """A GPU's hardware record: its name and attributes (a plain mapping)."""

    name: str
    attributes: Mapping[str, float | str]


def record_attributes(record: Mapping[str, Any], where: str) -> dict[str, float | str]:
    """Return a record's attributes as a mapping, from either form hwdb writes: the seed's
    and export's list of {key, value, unit, source} or a plain mapping."""
    attributes = record.get("attributes")
    if isinstance(attributes, list):
        return {
            str(item["key"]): item["value"]
            for item in attributes
            if isinstance(item, Mapping) and "key" in item
        }
    if isinstance(attributes, Mapping):
        return dict(attributes)
    raise GpuNotFound(f"{where}: a hardware record has 'attributes'")


def _normal(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


class GpuCatalogue:
    """GPU records in order of preference: a name that two records share finds the first
    (the web side puts the user's own records before shared and built-in ones)."""

    def __init__(self, records: Iterable[GpuRecord], *, where: str) -> None:
        self.records: tuple[GpuRecord, ...] = tuple(records)
        self.where = where  # what the messages call it: "hardware.json", "your GPU records"

    @classmethod
    def from_components(cls, components: Iterable[Any], *, where: str) -> GpuCatalogue:
        """Return the GPUs among hwdb component records (mappings with name, type and
        attributes in either form)."""
        return cls(
            (
                GpuRecord(str(item["name"]), record_attributes(item, str(item["name"])))
                for item in components
                if isinstance(item, Mapping) and item.get("type") == "GPU" and "name" in item
            ),
            where=where,
        )

    def find(self, name: str) -> GpuRecord | None:
        """Return the record named `name` (case, spaces and punctuation ignored), else None."""
        wanted = _normal(name)
        return next((r for r in self.records if _normal(r.name) == wanted), None)

    def get(self, name: str) -> GpuRecord:
        """Return the record named `name`; raise GpuNotFound naming the ones there are."""
        record = self.find(name)
        if record is None:
            names = ", ".join(sorted({r.name for r in self.records})) or "none"
            raise GpuNotFound(MSG_NOT_FOUND.format(name=name, where=self.where, names=names))
        return record

    def match(self, trace_name: str | None) -> GpuRecord | None:
        """Return the record for a GPU a profiler names ("NVIDIA A100-PG509-200", "Tesla
        V100-SXM2-32GB"): same model number (A100, V100, H100, ...), then the memory the name
        gives, then its form (SXM or PCIe; SXM when it gives none), the first among equals;
        None when no record has the model number."""
        if not trace_name:
            return None
        spaced = trace_name.replace("-", " ")
        model = re.search(r"\b((?:RTX|GTX) \d{3,4}(?: Ti)?|[A-Z]{1,2}\d{2,4})\b", spaced)
        if model is None:
            return None
        family = model.group(1)
        candidates = [r for r in self.records if re.search(rf"\b{family}\b", r.name)]
        if not candidates:
            return None
        normal = _normal(trace_name)
        memory = re.search(r"(\d+)gb", normal)
        stated_form = "sxm" if "sxm" in normal else "pcie" if "pcie" in normal else None

        def score(record: GpuRecord) -> tuple[int, int]:
            name = _normal(record.name)
            same_memory = int(memory is not None and f"{memory.group(1)}gb" in name)
            # the form the trace states, else SXM (the data-centre boards profilers mostly
            # run on)
            same_form = int((stated_form or "sxm") in name)
            return (same_memory, same_form)

        return max(candidates, key=score)

    def to_data(self) -> dict[str, Any]:
        """Return the catalogue as JSON-ready data (`from_data` reads it back)."""
        return {
            "where": self.where,
            "records": [{"name": r.name, "attributes": dict(r.attributes)} for r in self.records],
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> GpuCatalogue:
        """Return the catalogue `to_data` wrote."""
        records: Sequence[Mapping[str, Any]] = data.get("records") or ()
        return cls(
            (GpuRecord(str(r["name"]), record_attributes(r, str(r["name"]))) for r in records),
            where=str(data.get("where", "the catalogue")),
        )


@functools.cache
def seed_catalogue(path: Path = SEED) -> GpuCatalogue:
    """Return the GPUs of the project's hardware seed (none without the file): the command
    line's catalogue."""
    if not path.exists():
        return GpuCatalogue((), where=path.name)
    data = json.loads(path.read_text(encoding="utf-8"))
    items = data.get("components", []) if isinstance(data, Mapping) else data
    return GpuCatalogue.from_components(items, where=path.name)
