"""Write docs/validation/network.md: ParaSim's flow model against SimGrid's test vectors.

    .venv/bin/python -m validation.network.report --report docs/validation/network.md

Every scenario of validation/network/scenarios.py runs through ParaSim
(validation/network/parasim_flows.py) under CM02 and LV08; the report gives, per scenario,
its flows, SimGrid's last completion time and the largest relative difference of any flow's
completion time from SimGrid's (validation/network/simgrid_flows.json).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from validation.network.parasim_flows import by_name, run, run_on_switch

HERE = Path(__file__).resolve().parent
VECTORS = HERE / "simgrid_flows.json"
THRESHOLD = {"CM02": 1e-3, "LV08": 1e-2}


def report() -> str:
    """Return the report's Markdown."""
    vectors = json.loads(VECTORS.read_text())
    scenarios = by_name()
    rows: list[str] = []
    worst = dict.fromkeys(THRESHOLD, 0.0)
    for name, scenario in scenarios.items():
        cells = [f"`{name}`", scenario["what"], str(len(scenario["flows"]))]
        for model in THRESHOLD:
            expected = vectors["completion_s"][model][name]
            got, _ = run(scenario, model)
            error = max(abs(g - e) / e for g, e in zip(got, expected, strict=True))
            worst[model] = max(worst[model], error)
            cells += [f"{max(expected) * 1e3:.4f}", f"{error:.1e}"]
        rows.append("| " + " | ".join(cells) + " |")
    # the switch scenarios again, on a topology template's switch (a port per endpoint)
    switches = [name for name in scenarios if name.startswith("switch-")]
    template_worst = 0.0
    for name in switches:
        for model in THRESHOLD:
            expected = vectors["completion_s"][model][name]
            for kind in ("switch", "nvswitch"):
                got = run_on_switch(scenarios[name], model, kind)
                errors = [abs(m - t) / t for m, t in zip(got, expected, strict=True)]
                template_worst = max(template_worst, *errors)
    lines = [
        "# The flow-level network model against SimGrid",
        "",
        "Written by `.venv/bin/python -m validation.network.report --report "
        "docs/validation/network.md`; do not edit.",
        "",
        f"SimGrid's completion times come from {vectors['source']}, computed by "
        f"`{vectors['command']}` into `validation/network/simgrid_flows.json` (the scenarios: "
        "`validation/network/scenarios.py`). ParaSim runs each scenario through "
        "`run_simulation` (`validation/network/parasim_flows.py`); "
        "`tests/validation/test_network_simgrid.py` asserts every flow's completion time within "
        "0.1 % of SimGrid's under CM02 and 1 % under LV08. The model is described in "
        "[`docs/network-model.md`](../network-model.md).",
        "",
        f"{len(scenarios)} scenarios, "
        f"{sum(len(s['flows']) for s in scenarios.values())} flows. Largest relative "
        f"difference of a flow's completion time: CM02 {worst['CM02']:.1e}, "
        f"LV08 {worst['LV08']:.1e}.",
        "",
        f"The {len(switches)} `switch-*` scenarios (SimGrid's non-blocking switch: a star of "
        "like links, one per host) run a second time on a `switch` and an `nvswitch` topology "
        'template, whose switch has a port per endpoint (`docs/network-model.md`, "A '
        "template's switches\"; `parasim_flows.run_on_switch`): largest relative difference "
        f"from SimGrid under CM02 and LV08, {template_worst:.1e}.",
        "",
        "| scenario | what | flows | CM02 last flow [ms] | CM02 max rel. diff. "
        "| LV08 last flow [ms] | LV08 max rel. diff. |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    """Write the report where `--report` says."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, required=True)
    arguments = parser.parse_args()
    arguments.report.write_text(report())


if __name__ == "__main__":
    main()
