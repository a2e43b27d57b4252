"""`entropy-gate gate`: the whole gate locally, in one command."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from entropy_action.cli import options
from entropy_action.cli.commands import compare
from entropy_action.core import layout

NAME = "gate"
HELP = (
    "pin check, silencing scan, host A, isolated host B and compare, in one command; "
    "exit 0 only for a merge candidate"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_manifest(parser)
    options.add_property(parser)
    parser.add_argument(
        "--base-ref",
        required=True,
        metavar="REF",
        help="git ref of the PR's base; the baseline manifest is read from it",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the verdict JSON here")
    options.add_report(parser)
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="keep the host reports in DIR as the workflow's host jobs upload them: "
        "DIR/host-a and DIR/host-b (each with base/, the base ref's run on that host, and "
        "properties/ID/ for a manifest that lists its properties), which `entropy-gate "
        "verdict --host-a DIR/host-a --host-b DIR/host-b` reads",
    )
    parser.add_argument(
        "--python",
        metavar="PATH",
        help="host B's interpreter (e.g. a venv of another Python version)",
    )
    options.add_timeout(parser)
    parser.add_argument(
        "--no-base-run",
        dest="base_run",
        action="store_false",
        help="do not run the base's module; attribute skipped tests statically",
    )
    parser.add_argument(
        "--no-cache",
        dest="cache",
        action="store_false",
        help="neither reuse nor keep runs of the base's module in the user cache directory",
    )
    parser.epilog = (
        f"{options.NO_NAMESPACES_ENV}=1 keeps every run out of Linux namespaces; host B then "
        "blocks the network in-process and says so.\n\n" + (parser.epilog or "")
    )


def run(args: argparse.Namespace) -> int:
    if args.out is not None:
        return _gate(args, args.out)
    with tempfile.TemporaryDirectory(prefix="entropy-gate-") as scratch:
        return _gate(args, Path(scratch))


def _gate(args: argparse.Namespace, out: Path) -> int:
    from entropy_action.gate import local  # noqa: PLC0415 (--help imports no model)
    from entropy_action.verdict.classify import exit_code  # noqa: PLC0415 (--help imports no model)

    settings = local.GateSettings(
        manifest=args.manifest,
        base_ref=args.base_ref,
        environ=args.environ,
        out=out,
        python=args.python,
        base_run=args.base_run,
        namespaces=options.namespaces_allowed(args.environ),
        progress=_progress,
        cache_dir=options.user_cache() if args.cache else None,
        timeout=args.timeout,
        properties=tuple(args.properties),
    )
    try:
        result = local.run_gate(settings)
    finally:
        if args.out is not None:  # the layout `verdict --host-a OUT/host-a …` reads
            layout.as_uploaded(out)
    for note in result.notes:
        print(note, file=sys.stderr)
    options.report(args, result.verdict)
    if args.json is not None:
        compare.write_verdict(args.json, result.verdict)
    return exit_code(result.verdict)


def _progress(line: str) -> None:
    print(f"entropy-gate: {line}", file=sys.stderr, flush=True)
