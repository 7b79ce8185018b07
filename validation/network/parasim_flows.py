"""The network scenarios (validation/network/scenarios.py) run through ParaSim's simulator:
a system snapshot and an application model per scenario, `run_simulation` as every run.

Each host is a CPU node; each router a NETWORK node without a model (it charges nothing);
each link a NETWORK node with the built-in latency-bandwidth model
(simulator/models/js/latency_bandwidth_link.js: p2pTime = latency + size / bandwidth) and the
scenario's `sharing`, between its two ends. Flow k is a process "s<k>" on its source host,
which waits until the flow's start and sends, and "r<k>" on its target host, which receives:
the flow's completion time is when r<k> finished. The flows' sizes and starts are a
literal at the top of the application model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simulator.runner import run_simulation
from validation.network.scenarios import Scenario, scenarios

LINK_MODEL = (
    Path(__file__).resolve().parents[2]
    / "simulator"
    / "models"
    / "js"
    / "latency_bandwidth_link.js"
)
WAIT_MODEL = "function computationTime(params) { return params.get('seconds'); }"

APPLICATION = """
FLOWS = {flows!r}
k = int(str(tag)[1:])
size, start = FLOWS[k]
if str(tag)[0] == "s":
    if start > 0:
        sim.computation({{"seconds": start}})
    sim.p2pCommunicationSend(size, "r%d" % k)
else:
    sim.p2pCommunicationReceive("s%d" % k)
"""


def snapshot(scenario: Scenario, model: str) -> dict[str, Any]:
    """Return the system snapshot of `scenario` with the network model `model`."""
    labels: dict[str, dict[str, int]] = {host: {} for host in scenario["hosts"]}
    for k, flow in enumerate(scenario["flows"]):
        labels[flow["src"]][f"s{k}"] = 1
        labels[flow["dst"]][f"r{k}"] = 1
    hardware: dict[str, Any] = {
        "host": {"type": "CPU", "name": "host", "attributes": {}},
        "router": {"type": "NETWORK", "name": "router", "attributes": {}},
    }
    nodes: list[dict[str, Any]] = [
        {"id": host, "hardware": "host", "model": "wait", "labels": labels[host]}
        for host in scenario["hosts"]
    ]
    nodes += [{"id": router, "hardware": "router"} for router in scenario["routers"]]
    edges: list[list[str]] = []
    for link in scenario["links"]:
        key = f"link-{link['id']}"
        hardware[key] = {
            "type": "NETWORK",
            "name": key,
            "attributes": {"bandwidth": link["bw"], "latency": link["lat"]},
        }
        nodes.append(
            {"id": link["id"], "hardware": key, "model": "link", "sharing": link["sharing"]}
        )
        edges += [[link["a"], link["id"]], [link["id"], link["b"]]]
    return {
        "name": scenario["name"],
        "networkModel": model,
        "hardware": hardware,
        "models": {
            "wait": {"language": "javascript", "source": WAIT_MODEL},
            "link": {"language": "javascript", "source": LINK_MODEL.read_text()},
        },
        "nodes": nodes,
        "edges": edges,
    }


def run(scenario: Scenario, model: str) -> tuple[list[float], dict[str, Any]]:
    """Return each flow's completion time in `scenario` under `model`, and the result."""
    flows = scenario["flows"]
    labels = {f"{side}{k}": 1 for k in range(len(flows)) for side in "sr"}
    result = run_simulation(
        snapshot(scenario, model),
        APPLICATION.format(flows=[(flow["size"], flow["start"]) for flow in flows]),
        labels=labels,
        variables={},
    )
    finish = {p["label"]: p["finish_s"] for p in result["processes"]}
    return [finish[f"r{k}"] for k in range(len(flows))], dict(result)


SWITCH_APPLICATION = """
FLOWS = {flows!r}
for source, target, size in FLOWS:
    if rank == source:
        sim.p2pCommunicationSend(size, "H", None, target)
for source, target, size in FLOWS:
    if rank == target:
        sim.p2pCommunicationReceive("H", source)
"""


def switch_snapshot(scenario: Scenario, model: str, kind: str = "switch") -> dict[str, Any]:
    """Return a `switch` scenario (validation/network/scenarios.py) as ParaSim draws a switch:
    one node of hosts (one process "H" each) and one switch node joined by a topology
    template of `kind` (simulator/topology.py), the switch charging the route's two links:
    latency twice the link's (the flow crosses two), bandwidth the link's (a port each)."""
    bandwidths = {link["bw"] for link in scenario["links"]}
    latencies = {link["lat"] for link in scenario["links"]}
    sharings = {link["sharing"] for link in scenario["links"]}
    assert len(bandwidths) == len(latencies) == len(sharings) == 1, "links all alike"
    hosts = len(scenario["hosts"])
    return {
        "name": scenario["name"],
        "networkModel": model,
        "hardware": {
            "host": {"type": "CPU", "name": "host", "attributes": {}},
            "switch": {
                "type": "NETWORK",
                "name": "switch",
                "attributes": {"bandwidth": bandwidths.pop(), "latency": 2 * latencies.pop()},
            },
        },
        "models": {
            "wait": {"language": "javascript", "source": WAIT_MODEL},
            "link": {"language": "javascript", "source": LINK_MODEL.read_text()},
        },
        "nodes": [
            {
                "id": "hosts",
                "hardware": "host",
                "model": "wait",
                "count": hosts,
                "labels": {"H": 1},
            },
            {"id": "switch", "hardware": "switch", "model": "link", "sharing": sharings.pop()},
        ],
        "edges": [],
        "topologies": [
            {"kind": kind, "endpoints": "hosts", "switch": "switch", "domainSize": hosts}
        ],
    }


def run_on_switch(scenario: Scenario, model: str, kind: str = "switch") -> list[float]:
    """Return each flow's completion time in a `switch` scenario run on a topology template
    (`switch_snapshot`): the end of its transfer on the switch. Every flow starts at 0."""
    flows = scenario["flows"]
    assert all(flow["start"] == 0 for flow in flows)
    rank = {host: i for i, host in enumerate(scenario["hosts"])}
    triples = [(rank[f["src"]], rank[f["dst"]], f["size"]) for f in flows]
    result = run_simulation(
        switch_snapshot(scenario, model, kind),
        SWITCH_APPLICATION.format(flows=triples),
        labels={"H": len(scenario["hosts"])},
        variables={},
    )
    ends: dict[tuple[object, object, object], float] = {}
    for entry in result["timeline"]:
        if entry["kind"] == "transfer":  # a transfer's entry names its target and size
            item: dict[str, Any] = dict(entry)
            ends[item["process"], item["to"], item["size"]] = item["end_s"]
    return [ends[f"H[{s}]", f"H[{t}]", size] for s, t, size in triples]


def by_name() -> dict[str, Scenario]:
    """Return the scenarios by name."""
    return {scenario["name"]: scenario for scenario in scenarios()}
