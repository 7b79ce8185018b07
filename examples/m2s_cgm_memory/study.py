"""002's first study on ParaSim Studio: shared LLC and coherence, streaming and collaborative.

    .venv/bin/python examples/m2s_cgm_memory/study.py [--stream-kb 16384] [--size-kb 64]
                        [--rounds 4] [--write-doc docs/memory-hierarchy.md]

Runs `app.py` on three configurations of `snapshot.json`, 002's (section 4.3):

    C-L3   coherent (MESI directory at the shared L3), GPU requests go to the L3
    NC-L3  not coherent, GPU requests go to the L3; producers flush their caches
    NC-MC  not coherent, GPU requests go to the memory controller past the L3; producers flush

and prints each workload's time normalised to NC-MC, as 002's Fig. 4.6 does, with the L3's
hit ratio and the coherence messages. `--write-doc` writes the table into the document
between its `study.py` markers.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from simulator.runner import run_simulation  # noqa: E402

CONFIGURATIONS = ("NC-MC", "NC-L3", "C-L3")
WORKLOADS = ("streaming", "collaborative")
BEGIN = "<!-- study.py --write-doc: begin -->"
END = "<!-- study.py --write-doc: end -->"


def configuration(name: str) -> dict[str, Any]:
    """Return the example snapshot changed into configuration `name`."""
    snapshot = copy.deepcopy(json.loads((HERE / "snapshot.json").read_text()))
    nodes = {node["id"]: node for node in snapshot["nodes"]}
    if name.startswith("NC"):
        nodes["llc"]["coherence"] = "none"
    if name == "NC-MC":
        nodes["gpu_l2"]["next"] = "dram"
    snapshot["name"] = f"{snapshot['name']} [{name}]"
    return snapshot


def run(name: str, workload: str, size_kb: int, rounds: int) -> dict[str, Any]:
    """Return the result of one workload on one configuration."""
    return run_simulation(
        configuration(name),
        (HERE / "app.py").read_text(),
        labels={"CPU": 8, "GPU": 1},
        variables={
            "workload": workload,
            "size_kb": size_kb,
            "rounds": rounds,
            "flush": 0 if name == "C-L3" else 1,
        },
    )


def l3_hit_ratio(result: dict[str, Any]) -> float:
    """Return the shared L3's hit ratio over the run."""
    rows = [level for level in result["memory"]["levels"] if level["node"] == "llc"]
    accesses = sum(row["accesses"] for row in rows)
    return sum(row["hits"] for row in rows) / accesses if accesses else 0.0


def table(stream_kb: int, size_kb: int, rounds: int) -> str:
    """Return the study's markdown table."""
    lines = [
        f"`app.py` with labels CPU=8,GPU=1: streaming size_kb={stream_kb}; collaborative "
        f"size_kb={size_kb}, rounds={rounds}; time normalised to NC-MC (smaller is better).",
        "",
        "| workload | configuration | time (us) | vs NC-MC | L3 hit ratio | DRAM lines "
        "| coherence messages |",
        "|---|---|---|---|---|---|---|",
    ]
    for workload in WORKLOADS:
        size = stream_kb if workload == "streaming" else size_kb
        results = {name: run(name, workload, size, rounds) for name in CONFIGURATIONS}
        base = results["NC-MC"]["overall_time_s"]
        for name in CONFIGURATIONS:
            result = results[name]
            time_s = result["overall_time_s"]
            dram = sum(
                level["accesses"]
                for level in result["memory"]["levels"]
                if level["type"] == "MEMORY"
            )
            messages = sum(result["memory"]["coherence"]["messages"].values())
            lines.append(
                f"| {workload} | {name} | {time_s * 1e6:.1f} | {time_s / base:.3f} "
                f"| {l3_hit_ratio(result):.3f} | {dram} | {messages} |"
            )
    return "\n".join(lines)


def main() -> int:
    """Run the study; print the table, and write it into a document when asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stream-kb", type=int, default=16384)
    parser.add_argument("--size-kb", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--write-doc", type=Path)
    args = parser.parse_args()
    text = table(args.stream_kb, args.size_kb, args.rounds)
    print(text)
    if args.write_doc:
        document = args.write_doc.read_text()
        head, _, rest = document.partition(BEGIN)
        _, _, tail = rest.partition(END)
        command = (
            "    .venv/bin/python examples/m2s_cgm_memory/study.py "
            f"--stream-kb {args.stream_kb} --size-kb {args.size_kb} --rounds {args.rounds} "
            f"--write-doc {args.write_doc}"
        )
        args.write_doc.write_text(f"{head}{BEGIN}\n{command}\n\n{text}\n{END}{tail}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
