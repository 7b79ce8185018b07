"""SimGrid's completion times of the network scenarios (validation/network/scenarios.py), the
test vectors of tests/validation/test_network_simgrid.py.

Run by the system Python, which has Debian's python3-simgrid (SimGrid's engine can be made
once per process, so each scenario and model runs in a child process of this script):

    /usr/bin/python3 validation/network/simgrid_flows.py

It writes validation/network/simgrid_flows.json: per network model (CM02, LV08, chosen with
SimGrid's --cfg=network/model), per scenario, each flow's completion time in seconds (the
simulated time its receiver got the message), with the SimGrid version and this command.
Cross traffic (SimGrid's 5 % of each flow charged on the reverse route, for TCP's
acknowledgements) is switched off with --cfg=network/crosstraffic:0: the ParaSim model does
not charge it. Every other setting is SimGrid's default (TCP-gamma included).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import simgrid  # system Python only (Debian python3-simgrid)
from simgrid import Actor, Engine, Host, Mailbox, this_actor

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import scenarios as catalogue  # noqa: E402  (this directory, for the system Python)

MODELS = ("CM02", "LV08")
OUTPUT = HERE / "simgrid_flows.json"
COMMAND = "/usr/bin/python3 validation/network/simgrid_flows.py"

HEADER = (
    '<?xml version="1.0"?>\n'
    '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
    '<platform version="4.1">\n'
)
POLICY = {"full-duplex": "SPLITDUPLEX", "shared": "SHARED"}


def platform(scenario: dict) -> str:
    """Return the SimGrid platform of `scenario`: Full routing, a route per flow's pair."""
    lines = [HEADER, '<zone id="world" routing="Full">\n']
    lines += [f'<host id="{h}" speed="1Gf"/>\n' for h in scenario["hosts"]]
    policies = {}
    for link in scenario["links"]:
        policies[link["id"]] = link["sharing"]
        lines.append(
            f'<link id="{link["id"]}" bandwidth="{link["bw"]!r}Bps" latency="{link["lat"]!r}s" '
            f'sharing_policy="{POLICY[link["sharing"]]}"/>\n'
        )
    pairs = sorted({(f["src"], f["dst"]) for f in scenario["flows"]})
    for src, dst in pairs:
        lines.append(f'<route src="{src}" dst="{dst}" symmetrical="NO">')
        for link_id, up in catalogue.route(scenario, src, dst):
            if policies[link_id] == "full-duplex":
                direction = "UP" if up else "DOWN"
                lines.append(f'<link_ctn id="{link_id}" direction="{direction}"/>')
            else:
                lines.append(f'<link_ctn id="{link_id}"/>')
        lines.append("</route>\n")
    lines.append("</zone>\n</platform>\n")
    return "".join(lines)


def run_one(index: int, model: str) -> None:
    """In a child: run scenario `index` under `model`; print its completion times as JSON."""
    scenario = catalogue.scenarios()[index]
    done = [0.0] * len(scenario["flows"])
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "platform.xml")
        with open(path, "w") as out:
            out.write(platform(scenario))
        engine = Engine(
            [
                "flows",
                f"--cfg=network/model:{model}",
                "--cfg=network/crosstraffic:0",
                "--log=root.thres:critical",
            ]
        )
        engine.load_platform(path)

        def sender(k: int, size: float, start: float) -> None:
            if start > 0:
                this_actor.sleep_for(start)
            Mailbox.by_name(f"flow{k}").put(k, int(size))

        def receiver(k: int) -> None:
            Mailbox.by_name(f"flow{k}").get()
            done[k] = Engine.clock

        for k, flow in enumerate(scenario["flows"]):
            Actor.create(f"s{k}", Host.by_name(flow["src"]), sender, k, flow["size"], flow["start"])
            Actor.create(f"r{k}", Host.by_name(flow["dst"]), receiver, k)
        engine.run()
    version = str(simgrid.simgrid_version)
    print(json.dumps({"done": done, "simgrid": version}))


def main() -> None:
    """Run every scenario under each model and write OUTPUT."""
    table = catalogue.scenarios()
    results: dict[str, dict[str, list[float]]] = {model: {} for model in MODELS}
    version = ""
    for model in MODELS:
        for index, scenario in enumerate(table):
            child = subprocess.run(
                [sys.executable, __file__, str(index), model],
                check=True,
                capture_output=True,
                text=True,
            )
            answer = json.loads(child.stdout.strip().splitlines()[-1])
            results[model][scenario["name"]] = answer["done"]
            version = answer["simgrid"]
    OUTPUT.write_text(
        json.dumps(
            {
                "source": "SimGrid " + version + " (Debian python3-simgrid), "
                "--cfg=network/model:<model> --cfg=network/crosstraffic:0",
                "simgrid": version,
                "command": COMMAND,
                "scenarios": "validation/network/scenarios.py",
                "completion_s": results,
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    if len(sys.argv) == 3:
        run_one(int(sys.argv[1]), sys.argv[2])
    else:
        main()
