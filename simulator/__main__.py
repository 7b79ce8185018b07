"""`python -m simulator`: the command line (see simulator.cli).

A sandboxed `run` is served by the user's pool daemon when one answers (simulator.sandbox.
served `served_run`: the daemon has the command line imported and a child started); else it
takes a started sandbox child from the pool or starts one first (simulator.sandbox.launch),
so that the child's start-up (interpreter, imports, V8) is over or runs while this process
imports the command line.
"""

from __future__ import annotations

import gc
import os
import sys

from simulator.sandbox.served import served_run

if __name__ == "__main__":
    _status = served_run(sys.argv[1:])
    if _status is not None:
        # Served: the daemon's copy wrote the output and this process holds nothing to
        # flush or clean up, so it skips the interpreter's shutdown.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_status & 0xFF)
    # Not served: the pool's and the launcher's modules only now (simulator.sandbox.served).
    from simulator.sandbox.pool import child_for

    _child = child_for(sys.argv[1:])
    from simulator.cli import main

    _status = main(child=_child)
    # What the command made goes with the process: the interpreter's exit would first collect
    # it (a full scan of every object a run left behind) for nothing. Frozen objects are
    # outside every collection; the exit still runs its handlers and frees the rest.
    gc.freeze()
    raise SystemExit(_status)
