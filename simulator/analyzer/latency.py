"""Per-architecture latency tables (cycles), loaded from data/*.json with their sources.

Every number carries its source; 000 Table 4.1 gives the Maxwell values, later families come
from published microbenchmarks (see each file). `LatencyTable.result_latency` is the label of a
register-dependency edge in the execution graph (000 section 5.1): the producer's latency, or
the latency of the storage area for memory loads.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from simulator.analyzer.errors import BAD_ARCH, UNSUPPORTED_ARCH, AnalyzerError
from simulator.analyzer.sass import Instruction

_FAMILIES = ("maxwell", "pascal", "volta", "turing", "ampere", "hopper")


@dataclass(frozen=True)
class LatencyTable:
    """The latencies of one architecture family, in cycles."""

    arch: str
    family: str
    dual_issue: bool
    issue_latency: int
    dual_issue_latency: int
    branch_taken: int
    branch_not_taken: int
    block_replacement: int
    classes: dict[str, int]
    memory: dict[str, int]
    sources: dict[str, str]

    def result_latency(self, instruction: Instruction) -> int:
        """Return the cycles until `instruction`'s result may be used (memory: the space's)."""
        memory = instruction.memory
        if memory is not None:
            return self.memory[memory[0]]
        return self.classes.get(instruction.klass, self.classes["int"])

    @property
    def compute_capability(self) -> str:
        """Return the compute capability, e.g. '5.2' for sm_52."""
        digits = re.sub(r"\D", "", self.arch)
        return f"{digits[:-1]}.{digits[-1]}"


def normalise_arch(arch: str) -> str:
    """Return 'sm_XX' for 'sm_52', '52', '5.2', 'compute_52' or 'sm_90a'."""
    text = str(arch).strip().lower()
    match = re.fullmatch(r"(?:sm_|compute_)?(\d)\.?(\d)([a-z]?)", text) or re.fullmatch(
        r"(?:sm_|compute_)?(\d{2,3})()([a-z]?)", text
    )
    if not match:
        raise AnalyzerError(BAD_ARCH.format(arch=arch))
    return f"sm_{match.group(1)}{match.group(2)}{match.group(3)}"


@cache
def _load(family: str) -> dict[str, Any]:
    text = resources.files("simulator.analyzer").joinpath("data", f"{family}.json").read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def known_architectures() -> list[str]:
    """Return every architecture with a latency table."""
    return [a for family in _FAMILIES for a in _load(family)["architectures"]]


def latency_table(arch: str) -> LatencyTable:
    """Return the latency table for `arch`; raises AnalyzerError when none exists."""
    name = normalise_arch(arch)
    for family in _FAMILIES:
        data = _load(family)
        if name in data["architectures"]:
            sources: dict[str, str] = {}
            for key in (
                "issue_latency",
                "dual_issue_latency",
                "branch_taken",
                "branch_not_taken",
                "block_replacement",
            ):
                sources[key] = data[key]["source"]
            for group in ("classes", "memory"):
                for key, entry in data[group].items():
                    sources[f"{group}.{key}"] = entry["source"]
            return LatencyTable(
                arch=name,
                family=data["family"],
                dual_issue=bool(data["dual_issue"]),
                issue_latency=int(data["issue_latency"]["value"]),
                dual_issue_latency=int(data["dual_issue_latency"]["value"]),
                branch_taken=int(data["branch_taken"]["value"]),
                branch_not_taken=int(data["branch_not_taken"]["value"]),
                block_replacement=int(data["block_replacement"]["value"]),
                classes={k: int(e["value"]) for k, e in data["classes"].items()},
                memory={k: int(e["value"]) for k, e in data["memory"].items()},
                sources=sources,
            )
    raise AnalyzerError(UNSUPPORTED_ARCH.format(arch=name, known=", ".join(known_architectures())))
