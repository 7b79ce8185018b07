"""`python -m simulator`: the command line (see simulator.cli).

A sandboxed `run` takes a started sandbox child from the user's pool (simulator.sandbox.pool)
or starts one first (simulator.sandbox.launch), so that the child's start-up (interpreter,
imports, V8) is over or runs while this process imports the command line.
"""

from __future__ import annotations

import sys

from simulator.sandbox.pool import child_for

if __name__ == "__main__":
    _child = child_for(sys.argv[1:])
    from simulator.cli import main

    raise SystemExit(main(child=_child))
