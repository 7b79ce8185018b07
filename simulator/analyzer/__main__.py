"""`python -m simulator.analyzer FILE ...`: the kernel analyzer's command line."""

from __future__ import annotations

import sys

from simulator.analyzer.cli import main

sys.exit(main())
