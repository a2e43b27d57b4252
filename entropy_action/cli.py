"""The `entropy-gate` command line: parse once, dispatch, and map every error to an exit code."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from types import ModuleType

from entropy_action import __version__
from entropy_action.commands import (
    check_pins,
    compare,
    demo,
    gate,
    run,
    scan,
    schema,
    strength,
    validate,
)
from entropy_action.errors import ExitCode, GateError

COMMANDS: tuple[ModuleType, ...] = (
    demo,
    gate,
    check_pins,
    scan,
    strength,
    run,
    compare,
    validate,
    schema,
)

EPILOG = """\
exit codes:
  0  ok / merge candidate
  1  rejected (pin mutation, silenced entropy, failing or host-coupled properties)
  2  invalid input or usage
  3  internal error (a bug in entropy-gate; run with --debug for the traceback)
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="entropy-gate",
        description="Reject patches that make tests green by silencing nondeterminism.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"entropy-gate {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        child = sub.add_parser(
            command.NAME,
            help=command.HELP,
            description=command.HELP,
            epilog=EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.add_arguments(child)
        child.set_defaults(handler=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else ExitCode.INVALID
    args.environ = dict(os.environ)
    try:
        return int(args.handler(args))
    except GateError as exc:
        print(exc.message, file=sys.stderr)
        return int(exc.code)
    except KeyboardInterrupt:
        print("entropy-gate: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # the one top-level handler: users never see a traceback
        if args.debug:
            traceback.print_exc()
        print(
            f"entropy-gate: internal error: {type(exc).__name__}: {exc} "
            "(a bug in entropy-gate; --debug shows the traceback)",
            file=sys.stderr,
        )
        return int(ExitCode.INTERNAL)


def main_entry() -> None:
    """The console script."""
    raise SystemExit(main())
