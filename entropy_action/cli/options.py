"""Arguments that several subcommands share, spelled the same everywhere."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from entropy_action.core.errors import GateError
from entropy_action.github import workflow

if TYPE_CHECKING:
    from entropy_action.verdict.model import Verdict

# manifest.MANIFEST_NAME, spelled here so that building the parser imports no model
# (tests/unit/test_startup.py checks they agree)
MANIFEST_NAME = "entropy.yaml"

# Set to 1 to keep runs out of Linux namespaces (host B then blocks the network in-process).
NO_NAMESPACES_ENV = "ENTROPY_GATE_NO_NAMESPACES"


def namespaces_allowed(environ: Mapping[str, str]) -> bool:
    return environ.get(NO_NAMESPACES_ENV, "") in ("", "0")


def add_manifest(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--manifest",
        type=Path,
        default=Path(MANIFEST_NAME),
        metavar="PATH",
        help=f"the pin file (default: {MANIFEST_NAME})",
    )


def add_property(parser: argparse.ArgumentParser) -> None:
    """--property ID (repeatable): a manifest that lists its properties, only these."""
    parser.add_argument(
        "--property",
        dest="properties",
        action="append",
        default=[],
        metavar="ID",
        help="a manifest that lists properties: only this one (repeat for more; default: all)",
    )


def one_property(args: argparse.Namespace) -> str | None:
    """The one --property a command that judges one property takes (None: the only one)."""
    chosen: list[str] = list(dict.fromkeys(getattr(args, "properties", [])))
    if len(chosen) > 1:
        raise GateError(f"--property: this command takes one property, got {', '.join(chosen)}")
    return chosen[0] if chosen else None


def add_base(parser: argparse.ArgumentParser, *, required: bool) -> None:
    group = parser.add_mutually_exclusive_group(required=required)
    group.add_argument(
        "--base-ref",
        metavar="REF",
        help="git ref of the PR's base; the baseline manifest is read from it",
    )
    group.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="a baseline manifest file, for use without git",
    )


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value <= 86400:
        raise argparse.ArgumentTypeError(f"{text!r}: give between 0 and 86400 seconds")
    return value


def add_timeout(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="kill a host run's process group after this long; the verdict is then invalid "
        "(default: run.timeout_seconds in entropy.yaml, else 1800)",
    )


def set_output(environ: Mapping[str, str], name: str, value: str) -> None:
    """Set a step output (`--github-output`); outside a workflow step that is a usage error."""
    try:
        done = workflow.set_output(name, value, environ)
    except OSError as exc:
        raise GateError(f"{exc.filename}: cannot append the step output: {exc.strerror}") from None
    if not done:
        raise GateError("--github-output: $GITHUB_OUTPUT is not set (not in a workflow step?)")


def user_cache() -> Path:
    """The gate's user cache directory (base runs' evidence), as `gate` and `backtest` use it."""
    import platformdirs  # noqa: PLC0415 (only the commands that run a gate need it)

    return Path(platformdirs.user_cache_dir("entropy-gate", appauthor=False))


def write_json(path: Path, text: str, flag: str = "--json") -> None:
    """`--json FILE`'s writing: one line naming the flag when it cannot be written."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise GateError(f"{flag} {path}: cannot write: {exc.strerror}") from None


def add_report(parser: argparse.ArgumentParser) -> None:
    """--format (what stdout carries) and --summary FILE (the page a PR author sees)."""
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="stdout: the readable summary, what to do first (text, the default), or the "
        "verdict JSON, each finding with its remediation (json, for agents)",
    )
    parser.add_argument(
        "--summary",
        type=Path,
        metavar="FILE",
        help="write the Markdown page a PR author sees (the check run's summary) here",
    )


def report(args: argparse.Namespace, verdict: Verdict) -> None:
    """The verdict on stdout in --format, and its page in --summary FILE when asked."""
    from entropy_action.render import markdown, summary  # noqa: PLC0415 (--help imports no model)

    if args.format == "json":
        sys.stdout.write(summary.render_json(verdict))
    else:
        print(summary.render_text(verdict), end="")
    if args.summary is not None:
        write_json(args.summary, markdown.render(verdict), "--summary")


def at_least_one(what: str) -> Callable[[str], int]:
    """An argparse `type=` for a count of `what` that is 1 or more."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"{value} {what}: give at least 1")
        return value

    return parse
