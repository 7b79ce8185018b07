"""`python -m simulator`: the command line (see simulator.cli).

A sandboxed `run` starts its sandbox child first (simulator.sandbox.launch), so that the child's
start-up (interpreter, imports, V8) runs while this process imports the command line.
"""

from __future__ import annotations

import sys

from simulator.sandbox.launch import start_child_for

if __name__ == "__main__":
    _child = start_child_for(sys.argv[1:])
    from simulator.cli import main

    raise SystemExit(main(child=_child))
