"""python -m validation.zoo sass | predict | check | evaluate RUN_DIR... (docs/validation/zoo.md)"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from validation.zoo import predict
from validation.zoo.build import build_kernels
from validation.zoo.score import evaluate_runs


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; return the exit status (2 with a message on bad input)."""
    parser = argparse.ArgumentParser(prog="python -m validation.zoo", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("sass", help="rebuild kernels/ (zoo.sass, zoo.res, configs.csv) with nvcc")
    sub.add_parser("predict", help="write validation/zoo/predictions.json")
    sub.add_parser("check", help="fail when the model no longer gives the committed predictions")
    ev = sub.add_parser("evaluate", help="score zoo runs against the committed predictions")
    ev.add_argument("runs", nargs="+", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "sass":
            build_kernels()
            return 0
        if args.command == "predict":
            created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            document = predict.build_document(created)
            predict.PREDICTIONS.write_text(
                json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8"
            )
            print(f"{len(document['predictions'])} configurations -> {predict.PREDICTIONS}")
            return 0
        if args.command == "check":
            problems = predict.check_committed()
            for line in problems:
                print(f"validation.zoo check: {line}", file=sys.stderr)
            return 1 if problems else 0
        print(json.dumps(evaluate_runs(args.runs), indent=2))
        return 0
    except (ValueError, OSError, KeyError) as error:
        print(f"validation.zoo: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
