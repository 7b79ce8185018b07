"""Flow-model benchmark: pairs playing ping-pong through one shared switch, ParaSim's
`run_simulation` with the switch as a full-duplex flow link (CM02) against SimGrid's Python
bindings on the same platform (bench/simgrid_scenarios.py's "pairs": one SPLITDUPLEX link,
CM02), taken in turns, best of `--repeat` each.

ParaSim's time is the whole `run_simulation` call (the snapshot checked, the models compiled,
the processes started and run); SimGrid's is measured inside its process from the actors'
creation to the end of `Engine.run()` (bench/simgrid_scenarios.py), so loading its platform is
not counted. Both must reach the same simulated time: exit status 1 otherwise.

    .venv/bin/python bench/bench_flows.py [--pairs 100] [--rounds 50] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from simulator.runner import run_simulation

HERE = Path(__file__).resolve().parent
LINK_JS = (HERE.parent / "simulator" / "models" / "js" / "latency_bandwidth_link.js").read_text()
SIZE = 1e6
BANDWIDTH = 1e9

APP = """
for _ in range(ROUNDS):
    if tag.equals("a"):
        sim.p2pCommunicationSend(SIZE, "b", None, rank)
        sim.p2pCommunicationReceive("b", rank)
    else:
        sim.p2pCommunicationReceive("a", rank)
        sim.p2pCommunicationSend(SIZE, "a", None, rank)
"""


def snapshot(pairs: int) -> dict[str, object]:
    """Return hosts A and B (`pairs` instances each) joined by one full-duplex flow link."""
    return {
        "name": "pairs through one switch",
        "networkModel": "CM02",
        "hardware": {
            "host": {"type": "CPU", "name": "host", "attributes": {}},
            "switch": {
                "type": "NETWORK",
                "name": "switch",
                "attributes": {"bandwidth": BANDWIDTH, "latency": 0.0},
            },
        },
        "models": {"link": {"language": "javascript", "source": LINK_JS}},
        "nodes": [
            {"id": "A", "hardware": "host", "count": pairs, "labels": {"a": 1}},
            {"id": "switch", "hardware": "switch", "model": "link", "sharing": "full-duplex"},
            {"id": "B", "hardware": "host", "count": pairs, "labels": {"b": 1}},
        ],
        "edges": [["A", "switch"], ["switch", "B"]],
    }


def parasim(pairs: int, rounds: int) -> tuple[float, float]:
    """Return (wall seconds, simulated seconds) of one ParaSim run."""
    started = time.perf_counter()
    result = run_simulation(
        snapshot(pairs),
        APP,
        labels={"a": pairs, "b": pairs},
        variables={"ROUNDS": rounds, "SIZE": SIZE},
        timeline_limit=0,
    )
    return time.perf_counter() - started, float(result["overall_time_s"])


def simgrid(pairs: int, rounds: int) -> tuple[float, float]:
    """Return (wall seconds, simulated seconds) of one SimGrid run (its own timing)."""
    args = {"pairs": pairs, "rounds": rounds, "message_bytes": SIZE, "bandwidth": BANDWIDTH}
    child = subprocess.run(
        ["/usr/bin/python3", str(HERE / "simgrid_scenarios.py"), "pairs", json.dumps(args)],
        capture_output=True,
        text=True,
        check=True,
        cwd=HERE,
    )
    figures = json.loads(child.stdout.strip().splitlines()[-1])
    return float(figures["wall_s"]), float(figures["simulated_s"])


def main() -> int:
    """Run both in turns; print the best wall times and the simulated times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    pairs, rounds = arguments.pairs, arguments.rounds
    ours: list[tuple[float, float]] = []
    theirs: list[tuple[float, float]] = []
    for _ in range(arguments.repeat):
        ours.append(parasim(pairs, rounds))
        theirs.append(simgrid(pairs, rounds))
    best_ours, best_theirs = min(ours), min(theirs)
    messages = 2 * pairs * rounds
    print(f"pairs {pairs} x rounds {rounds}: {messages} messages, one shared full-duplex link")
    print(f"ParaSim run_simulation: {best_ours[0]:.3f} s wall, simulated {best_ours[1]!r} s")
    print(f"SimGrid (CM02):         {best_theirs[0]:.3f} s wall, simulated {best_theirs[1]!r} s")
    print(f"ratio SimGrid / ParaSim: {best_theirs[0] / best_ours[0]:.2f}")
    same = abs(best_ours[1] - best_theirs[1]) <= 1e-9 * best_theirs[1]
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
