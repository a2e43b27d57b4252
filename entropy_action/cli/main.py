"""The `entropy-gate` command line: parse once, dispatch, and map every error to an exit code."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Mapping, Sequence
from types import ModuleType

from entropy_action import __version__
from entropy_action.cli.commands import (
    accept,
    app_token,
    backtest,
    cache_key,
    check_pins,
    compare,
    demo,
    gate,
    host_error,
    init,
    matrix,
    precommit,
    publish,
    replay,
    resolve_run,
    run,
    scan,
    schema,
    strength,
    validate,
    verdict,
)
from entropy_action.core.errors import ExitCode, GateError
from entropy_action.github import workflow

COMMANDS: tuple[ModuleType, ...] = (
    demo,
    gate,
    backtest,
    check_pins,
    scan,
    precommit,
    strength,
    run,
    compare,
    verdict,
    replay,
    publish,
    accept,
    app_token,
    resolve_run,
    cache_key,
    host_error,
    validate,
    matrix,
    schema,
    init,
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
        return _internal_error(exc, args.debug, args.environ)


def _internal_error(exc: Exception, debug: bool, environ: Mapping[str, str]) -> int:
    """A bug: one line on stderr; the traceback with --debug. In GitHub Actions the traceback
    goes into a collapsed group (fenced, since it may quote PR data) plus one ::error:: line
    carrying the version, so a crash in CI is a ready bug report."""
    if debug:
        traceback.print_exc()
    summary = f"{type(exc).__name__}: {_scrub(str(exc), environ)}"
    print(
        f"entropy-gate: internal error: {summary} "
        "(a bug in entropy-gate; --debug shows the traceback)",
        file=sys.stderr,
    )
    if environ.get("GITHUB_ACTIONS") == "true":
        trace = _scrub("".join(traceback.format_exception(exc)), environ)
        title = f"entropy-gate {__version__}: internal error (traceback)"
        for line in workflow.group(title, workflow.fenced_log(trace)):
            print(line)
        message = f"entropy-gate {__version__} internal error: {summary} - please report it"
        print(workflow.annotation("error", message, title="entropy-gate internal error"))
    sys.stdout.flush()
    return int(ExitCode.INTERNAL)


def _scrub(text: str, environ: Mapping[str, str]) -> str:
    """Text without the value of any *TOKEN* or *PRIVATE_KEY* variable (a traceback must not
    leak one)."""
    for name, value in environ.items():
        if ("TOKEN" in name.upper() or "PRIVATE_KEY" in name.upper()) and len(value) >= 8:
            text = text.replace(value, "***")
    return text


def main_entry() -> None:
    """The console script."""
    raise SystemExit(main())
