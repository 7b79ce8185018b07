"""`python -m simulator`: the command line (see simulator.cli)."""

from __future__ import annotations

from simulator.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
