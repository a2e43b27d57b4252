"""`entropy-gate strength`: property strength alone — the base's module on the head's code,
and mutants the base kills that the head lets survive."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from entropy_action.cli import options
from entropy_action.core.errors import ExitCode, GateError

if TYPE_CHECKING:
    from entropy_action.strength import assess

NAME = "strength"
HELP = (
    "the strength check alone: the base's property module against the head's code, and "
    "mutation strength base vs head; exit 1 when the patch made the property weaker, 2 "
    "when it cannot be measured (constraints.mutation other than off)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_manifest(parser)
    options.add_property(parser)
    parser.add_argument(
        "--base-ref",
        required=True,
        metavar="REF",
        help="git ref of the PR's base; its property module is compared with the head's",
    )
    parser.add_argument(
        "--python", metavar="PATH", help="the interpreter that runs pytest (default: this one)"
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="write findings and scores here")
    parser.add_argument("--out", type=Path, metavar="DIR", help="keep the run reports in DIR")


def run(args: argparse.Namespace) -> int:
    if args.out is not None:
        return _strength(args, args.out)
    with tempfile.TemporaryDirectory(prefix="entropy-gate-strength-") as scratch:
        return _strength(args, Path(scratch))


def _strength(args: argparse.Namespace, out: Path) -> int:
    from entropy_action.render import summary  # noqa: PLC0415 (--help imports no model)
    from entropy_action.strength import assess  # noqa: PLC0415 (--help imports no model)

    settings = assess.StrengthSettings(
        manifest=args.manifest,
        base_ref=args.base_ref,
        environ=args.environ,
        out=out,
        namespaces=options.namespaces_allowed(args.environ),
        python=args.python,
        progress=lambda line: print(f"entropy-gate: {line}", file=sys.stderr, flush=True),
        property_id=options.one_property(args),
    )
    result, notes = assess.run_strength(settings)
    for note in (*notes, *result.notes):
        print(note, file=sys.stderr)
    for why in result.unmeasured:  # under the manifest's strength constraints: never clean
        print(f"entropy-gate: strength: cannot measure: {why}", file=sys.stderr)
    print(summary.render_strength(result.score, list(result.findings)), end="")
    if args.json is not None:
        _write(args.json, result)
    if any(f.introduced for f in result.findings):
        return ExitCode.REJECTED
    return ExitCode.INVALID if result.unmeasured else ExitCode.OK


def _write(path: Path, result: assess.Strength) -> None:
    data = {
        "findings": [f.model_dump(mode="json") for f in result.findings],
        "mutation": result.score.model_dump(mode="json") if result.score else None,
        "notes": list(result.notes),
        "unmeasured": list(result.unmeasured),
    }
    try:
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise GateError(f"--json {path}: cannot write: {exc.strerror}") from None
