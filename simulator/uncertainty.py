"""Prediction intervals by Monte Carlo over the uncertain attributes of a run's hardware.

A run asked for it (`run_simulation(uncertainty={"samples": N, "seed": S})`, `python -m
simulator run --uncertainty N`) gets `uncertainty` in its result: the run is simulated N more
times, each on a copy of the snapshot whose uncertain attributes are drawn afresh, and the
result gives the median and the 5-95 % interval of the overall time and the energy, the sample
count and every attribute perturbed with the source of its spread (docs/uncertainty.md).

Where the spreads come from: `models/data/uncertainty.json`, written by `python -m
validation.uncertainty --write` from the committed kit runs (validation/data), looked up by the
hardware record's name:

- an attribute's repeat-run spread (`attributes`: relative SD s over the kit's runs): each
  sample multiplies the attribute by exp(s z), z standard normal;
- a model's residual on that GPU (`models`: SD s of ln(measured / predicted) kernel time), for
  nodes whose computational model has that name: each sample multiplies the GPU's speed
  attributes (`SPEED_ATTRIBUTES`, those the record has) by one common factor exp(s z). The SM
  clock and the memory and L2 bandwidths scaled together leave every cycle count and every
  byte per cycle of the kernel models as they were, so the kernel time less its launch
  overhead is divided by exactly that factor.

Every draw is independent (one z per record and attribute, shared by the instances of a
record), from `random.Random(seed)` in a fixed order: the same seed gives the same interval.
`scale` multiplies every spread (0: every sample is the plain run). The simulation itself runs
with the run's own seed each time, so only the attributes differ between samples.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simulator.errors import LaunchError
from simulator.snapshot import SystemSnapshot

__all__ = [
    "COMMITTED_TABLE",
    "MAX_SAMPLES",
    "NO_MEASUREMENT",
    "PERCENTILES",
    "SPEED_ATTRIBUTES",
    "TABLE_PATH",
    "UNCERTAINTY_MESSAGES",
    "UncertainSource",
    "UncertaintyOptions",
    "check_uncertainty",
    "from_spec_mode",
    "interval",
    "load_table",
    "perturbed",
    "propagate",
    "sample_factors",
    "spec_mode_label",
    "uncertain_sources",
    "unmeasured",
]

TABLE_PATH = Path(__file__).parent / "models" / "data" / "uncertainty.json"
# Each sample is a whole simulation: the cap keeps a run's wall time within a few hundred
# times the plain run's.
MAX_SAMPLES = 200
PERCENTILES = (5.0, 95.0)
# What a model's name says when its kernel times were computed by another model.
TIMED_BY = " timed by "
# What the result says of a GPU record used by the run that the table has no entry for and no
# spec-mode basis (its node's model has no spec-mode error): its part of the interval has no
# width because nothing was measured, not because it is certain.
NO_MEASUREMENT = "no interval: no measurement, and its model has no spec-mode error"
# A GPU's rates that a kernel model's time is inversely proportional to, all together.
SPEED_ATTRIBUTES = ("SMCoreClock", "memoryClock", "L2Bandwidth", "L2TileBandwidth")

UNCERTAINTY_MESSAGES = {
    "object": 'Expected an object {"samples": N, "seed": S, "scale": F}.',
    "unknown": "Unknown fields: {names}.",
    "samples": f"Expected a whole number of samples from 2 to {MAX_SAMPLES}, got {{value!r}}.",
    "samples_cap": (
        "At most {limit} samples are allowed (each is a whole simulation), got {value!r}."
    ),
    "seed": "Expected a whole number, 0 or more, got {value!r}.",
    "scale": "Expected a finite number, 0 or more, got {value!r}.",
}
FIELDS = ("samples", "seed", "scale")


@dataclass(frozen=True)
class UncertaintyOptions:
    """What a run asked for: the samples, their seed and the factor on every spread."""

    samples: int
    seed: int = 0
    scale: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        """Return the options as JSON-ready data."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class UncertainSource:
    """One uncertain quantity of a snapshot's hardware record: an attribute (`kind`
    "attribute", `name` the attribute) or a model's output (`kind` "model", `name` the model,
    `attributes` the speed attributes it scales together); `log_sd` per unit of `scale`."""

    hardware: str
    record: str
    kind: str
    name: str
    log_sd: float
    attributes: tuple[str, ...]
    source: str
    label: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Return the source as the result lists it."""
        item: dict[str, Any] = {
            "hardware": self.hardware,
            "record": self.record,
            "kind": self.kind,
            "name": self.name,
            "log_sd": self.log_sd,
            "attributes": list(self.attributes),
            "source": self.source,
        }
        if self.label:
            item["label"] = self.label
        return item


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_uncertainty(
    spec: object, *, field: str = "uncertainty", limit: int = MAX_SAMPLES
) -> UncertaintyOptions:
    """Return the options of `spec` ({samples, seed, scale}); raise LaunchError naming the
    field (`uncertainty.samples`, ...). `limit` caps the samples (at most MAX_SAMPLES)."""
    if not isinstance(spec, Mapping):
        raise LaunchError(field, UNCERTAINTY_MESSAGES["object"])
    unknown = sorted(str(name) for name in spec if name not in FIELDS)
    if unknown:
        message = UNCERTAINTY_MESSAGES["unknown"].format(names=", ".join(unknown))
        raise LaunchError(field, message)
    samples = spec.get("samples")
    if not _whole(samples) or samples < 2:  # type: ignore[operator]
        raise LaunchError(f"{field}.samples", UNCERTAINTY_MESSAGES["samples"].format(value=samples))
    cap = min(limit, MAX_SAMPLES)
    if samples > cap:  # type: ignore[operator]
        message = UNCERTAINTY_MESSAGES["samples_cap"].format(limit=cap, value=samples)
        raise LaunchError(f"{field}.samples", message)
    seed = spec.get("seed", 0)
    if not _whole(seed) or seed < 0:
        raise LaunchError(f"{field}.seed", UNCERTAINTY_MESSAGES["seed"].format(value=seed))
    scale = spec.get("scale", 1.0)
    if (
        isinstance(scale, bool)
        or not isinstance(scale, int | float)
        or not math.isfinite(scale)
        or scale < 0
    ):
        raise LaunchError(f"{field}.scale", UNCERTAINTY_MESSAGES["scale"].format(value=scale))
    return UncertaintyOptions(samples=int(samples), seed=int(seed), scale=float(scale))  # type: ignore[arg-type]


def load_table(path: Path = TABLE_PATH) -> Mapping[str, Any]:
    """Return the uncertainty table at `path` (the committed one by default)."""
    return json.loads(path.read_text(encoding="utf-8"))


# Read when the module is imported: a sandboxed run imports it with the runner, before the
# child gives up opening files.
COMMITTED_TABLE = load_table()


def _models_used(system: SystemSnapshot) -> dict[str, set[str]]:
    """Return hardware key -> the names of the models its nodes run (a model "... timed by
    <model>" runs that model too)."""
    used: dict[str, set[str]] = {}
    for node in system.nodes.values():
        if node.group or node.hardware is None:
            continue
        models = used.setdefault(node.hardware, set())
        if node.model is not None:
            title = system.models[node.model].title
            models.add(title)
            # A model that replays kernel times another model computed (the workloads'
            # "... timed by <model>", simulator.workloads.cluster) carries that model's error.
            timed_by = title.partition(TIMED_BY)[2]
            if timed_by:
                models.add(timed_by)
    return used


def _spec_mode(
    system: SystemSnapshot, key: str, used: set[str], table: Mapping[str, Any]
) -> tuple[str, Mapping[str, Any], tuple[str, ...]] | None:
    """Return (model, its spec-mode entry, the speed attributes it scales) for a GPU record
    the table does not name whose node runs a model with a spec-mode error, else None."""
    hardware = system.hardware[key]
    if hardware.type != "GPU" or hardware.name in (table.get("records") or {}):
        return None
    scaled = tuple(a for a in SPEED_ATTRIBUTES if a in hardware.attributes)
    for name, entry in sorted((table.get("spec_mode") or {}).items()):
        if name in used and scaled and entry["log_sd"] > 0:
            return name, entry, scaled
    return None


def spec_mode_label(entry: Mapping[str, Any], record: str) -> str:
    """Return what an interval drawn from a spec-mode error says of the GPU it is applied to."""
    return f"{entry['label']}, not a {record} measurement"


def uncertain_sources(system: SystemSnapshot, table: Mapping[str, Any]) -> list[UncertainSource]:
    """Return the uncertain quantities of the hardware records `system`'s nodes use, in a
    fixed order (records by key, then attributes, then models by name).

    A GPU record the table does not name (no kit measurement) whose node runs a model with a
    spec-mode error (`spec_mode`: the model's error predicting the measured GPUs from their
    spec records alone) gets that error as its model's residual, kind "spec_mode", labelled
    as coming from the other GPUs and not from a measurement of this one."""
    records: Mapping[str, Any] = table.get("records") or {}
    used = _models_used(system)
    sources: list[UncertainSource] = []
    for key in sorted(used):
        hardware = system.hardware[key]
        entry = records.get(hardware.name)
        spec = _spec_mode(system, key, used[key], table)
        if spec is not None:
            name, residual, scaled = spec
            sources.append(
                UncertainSource(
                    hardware=key,
                    record=hardware.name,
                    kind="spec_mode",
                    name=name,
                    log_sd=float(residual["log_sd"]),
                    attributes=scaled,
                    source=str(residual["source"]),
                    label=spec_mode_label(residual, hardware.name),
                )
            )
        if not isinstance(entry, Mapping):
            continue
        for name, spread in sorted((entry.get("attributes") or {}).items()):
            if name in hardware.attributes and spread["relative_sd"] > 0:
                sources.append(
                    UncertainSource(
                        hardware=key,
                        record=hardware.name,
                        kind="attribute",
                        name=name,
                        log_sd=float(spread["relative_sd"]),
                        attributes=(name,),
                        source=str(spread["source"]),
                    )
                )
        for name, residual in sorted((entry.get("models") or {}).items()):
            scaled = tuple(a for a in SPEED_ATTRIBUTES if a in hardware.attributes)
            if name in used[key] and scaled and residual["log_sd"] > 0:
                sources.append(
                    UncertainSource(
                        hardware=key,
                        record=hardware.name,
                        kind="model",
                        name=name,
                        log_sd=float(residual["log_sd"]),
                        attributes=scaled,
                        source=str(residual["source"]),
                        label=str(residual.get("label", "")),
                    )
                )
    return sources


def unmeasured(system: SystemSnapshot, table: Mapping[str, Any]) -> list[dict[str, str]]:
    """Return the GPU records `system`'s nodes use that the table has no spread for and no
    spec-mode basis either (their nodes run no model with a spec-mode error), each labelled
    NO_MEASUREMENT with that reason (by record name, in the order of their keys)."""
    records: Mapping[str, Any] = table.get("records") or {}
    used = _models_used(system)
    names = dict.fromkeys(
        system.hardware[key].name
        for key in sorted(used)
        if system.hardware[key].type == "GPU"
        and system.hardware[key].name not in records
        and _spec_mode(system, key, used[key], table) is None
    )
    return [{"record": name, "label": NO_MEASUREMENT} for name in names]


def from_spec_mode(system: SystemSnapshot, table: Mapping[str, Any]) -> list[dict[str, str]]:
    """Return the GPU records whose interval comes from a spec-mode error on other GPUs,
    each with its label (by record name, in the order of their keys)."""
    used = _models_used(system)
    found: dict[str, str] = {}
    for key in sorted(used):
        spec = _spec_mode(system, key, used[key], table)
        if spec is not None:
            name = system.hardware[key].name
            found.setdefault(name, spec_mode_label(spec[1], name))
    return [{"record": name, "label": label} for name, label in found.items()]


def sample_factors(
    sources: Sequence[UncertainSource], options: UncertaintyOptions
) -> list[list[float]]:
    """Return one factor per source for each sample: exp(scale * log_sd * z), z drawn from
    `random.Random(options.seed)` sample by sample, source by source."""
    rng = random.Random(options.seed)
    return [
        [math.exp(options.scale * source.log_sd * rng.gauss(0.0, 1.0)) for source in sources]
        for _ in range(options.samples)
    ]


def perturbed(
    system: SystemSnapshot, sources: Sequence[UncertainSource], factors: Sequence[float]
) -> SystemSnapshot:
    """Return `system` with each source's attributes multiplied by its factor."""
    attributes: dict[str, dict[str, float]] = {}
    for source, factor in zip(sources, factors, strict=True):
        values = attributes.setdefault(
            source.hardware, dict(system.hardware[source.hardware].attributes)
        )
        for name in source.attributes:
            values[name] = float(values[name]) * factor
    hardware = dict(system.hardware)
    for key, values in attributes.items():
        hardware[key] = dataclasses.replace(hardware[key], attributes=values)
    return dataclasses.replace(system, hardware=hardware)


def _percentile(ordered: Sequence[float], percent: float) -> float:
    """Return the percentile of sorted values, linear between the closest ranks (NumPy's
    default)."""
    position = (len(ordered) - 1) * percent / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def interval(values: Sequence[float]) -> dict[str, float]:
    """Return the median and the PERCENTILES of `values` ({median, low, high})."""
    ordered = sorted(values)
    low, high = PERCENTILES
    return {
        "median": _percentile(ordered, 50.0),
        "low": _percentile(ordered, low),
        "high": _percentile(ordered, high),
    }


# A sample's figures: the overall time [s] and the total energy [J] of one simulation, and
# optionally its cost (simulator.cost.run_cost of that sample's time and energy; None where
# no record is priced).
Figures = tuple[float, float] | tuple[float, float, Mapping[str, Any] | None]


def _cost_interval(costs: Sequence[Mapping[str, Any] | None]) -> dict[str, Any]:
    """Return the interval of the samples' costs ({cost_usd, cost_per_unit}), or nothing
    where a sample has no total (no record priced)."""
    totals = [cost.get("total") if cost is not None else None for cost in costs]
    if not costs or any(not isinstance(total, int | float) for total in totals):
        return {}
    units: dict[str, list[float]] = {}
    for cost in costs:
        assert cost is not None
        for unit, value in (cost.get("per_unit") or {}).items():
            units.setdefault(unit, []).append(float(value))
    return {
        "cost_usd": interval([float(total) for total in totals]),  # type: ignore[arg-type]
        "cost_per_unit": {
            unit: interval(values) for unit, values in units.items() if len(values) == len(costs)
        },
    }


def propagate(
    simulate: Callable[[SystemSnapshot], Figures],
    system: SystemSnapshot,
    options: UncertaintyOptions,
    *,
    table: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Return the result's `uncertainty`: `simulate` run on each sample's perturbed snapshot,
    the median and interval of its time and energy, the samples and the sources perturbed.

    Where each sample also gives its cost (the run's records priced), the interval of the
    cost is that of the same samples: `cost_usd` of the total and `cost_per_unit` of each
    unit of work the run declared (its `steps`, `tokens`), each sample's cost computed from
    that sample's time and energy by the run's own rule (simulator.cost), not scaled after."""
    sources = uncertain_sources(system, table if table is not None else COMMITTED_TABLE)
    times: list[float] = []
    energies: list[float] = []
    costs: list[Mapping[str, Any] | None] = []
    for factors in sample_factors(sources, options):
        figures = simulate(perturbed(system, sources, factors))
        times.append(figures[0])
        energies.append(figures[1])
        costs.append(figures[2] if len(figures) > 2 else None)
    return {
        **options.to_dict(),
        "cap": MAX_SAMPLES,
        "percentiles": list(PERCENTILES),
        "overall_time_s": interval(times),
        "energy_j": interval(energies),
        **_cost_interval(costs),
        "perturbed": [source.to_dict() for source in sources],
        "unmeasured": unmeasured(system, table if table is not None else COMMITTED_TABLE),
        "from_spec_mode": from_spec_mode(system, table if table is not None else COMMITTED_TABLE),
        "table": TABLE_PATH.name,
    }
