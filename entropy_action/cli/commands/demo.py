"""`entropy-gate demo`: the gate on the seed's invoice example, one patch per table row."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from entropy_action.gate import demo

NAME = "demo"
HELP = "build a scratch repo from the seed's invoice example and gate one patch per table row"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--keep", type=Path, metavar="DIR", help="build the scratch repos in DIR and keep them"
    )
    parser.add_argument("--patch", metavar="NAME", help="run only this patch")
    parser.add_argument(
        "--verbose", action="store_true", help="print each patch's full verdict summary"
    )


def run(args: argparse.Namespace) -> int:
    from entropy_action.gate import demo  # noqa: PLC0415 (--help imports no model)

    print("entropy-gate demo: the seed's invoice example, one patch per row of the table\n")
    print(demo.render_header(), end="", flush=True)
    clock = int(time.time())  # the demo snapshots its clock pin from the real clock, once
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        rows = _run(args, args.keep.resolve(), clock)
    else:
        with tempfile.TemporaryDirectory(prefix="entropy-gate-demo-") as scratch:
            rows = _run(args, Path(scratch), clock)
    print(demo.render_total(rows), end="")
    return 0 if all(row.matches for row in rows) else 1


def _run(args: argparse.Namespace, workdir: Path, clock: int) -> list[demo.Row]:
    from entropy_action.gate import demo  # noqa: PLC0415 (--help imports no model)
    from entropy_action.render import summary  # noqa: PLC0415 (--help imports no model)

    rows = demo.run_demo(
        workdir,
        args.environ,
        clock,
        only=args.patch,
        progress=_progress if args.verbose else lambda line: None,
        on_patch=lambda patch: _progress(f"{patch.name}: {patch.story}"),
        on_row=lambda row: print(demo.render_row(row), end="", flush=True),
    )
    if args.verbose:
        for row in rows:
            print(f"\n── {row.patch.name}: {row.patch.story}")
            print(summary.render_text(row.verdict), end="")
    return rows


def _progress(line: str) -> None:
    print(f"  {line}", file=sys.stderr, flush=True)
