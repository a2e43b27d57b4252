"""`entropy-gate replay TEST --report DIR`: one test run again as the host of DIR ran it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from entropy_action.cli import options

if TYPE_CHECKING:
    from entropy_action.gate.replay import Replayed

NAME = "replay"
HELP = (
    "run one test again as a host ran it, from the host's report folder (host B: its clock "
    "shift, scrubbed environment and HOME, TZ, LANG, umask, hash seed, listing order and CPU "
    "count); exit 0 when it passes, 1 when it fails, 2 on bad input"
)
MAX_MESSAGE_LINES = 12


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("test", metavar="TEST", help="the test's id as the page names it")
    parser.add_argument(
        "--report",
        type=Path,
        required=True,
        metavar="DIR",
        help="the host's report folder: `gate --out OUT` writes OUT/host-b; in CI, the "
        "host's artifact (entropy-gate-<property>-host-b-<leg>) unpacked",
    )
    options.add_manifest(parser)
    parser.add_argument(
        "--after",
        action="append",
        default=[],
        metavar="ID",
        help="run this test first, in order (repeat; an order pair's other test)",
    )
    parser.add_argument(
        "--predecessors",
        action="store_true",
        help="run every test the host ran before it first, in the host's order",
    )
    parser.add_argument("--python", metavar="PATH", help="the interpreter to run the test with")
    parser.add_argument(
        "--out", type=Path, metavar="DIR", help="keep the replay's own report folder here"
    )
    options.add_timeout(parser)


def run(args: argparse.Namespace) -> int:
    from entropy_action.cli.commands.run import repo_root  # noqa: PLC0415 (--help imports no model)
    from entropy_action.core.errors import GateError  # noqa: PLC0415
    from entropy_action.gate import replay  # noqa: PLC0415

    if args.after and args.predecessors:
        raise GateError("replay: --after and --predecessors choose the order two ways; give one")
    request = replay.Request(
        test=args.test,
        report=args.report,
        manifest=args.manifest,
        environ=args.environ,
        after=tuple(args.after),
        predecessors=args.predecessors,
        python=args.python,
        namespaces=options.namespaces_allowed(args.environ),
        timeout=args.timeout,
        out=args.out,
    )
    found = replay.replay(request, repo_root(args.manifest))
    print("\n".join(render(found)))
    return 0 if found.passed else 1


def render(found: Replayed) -> list[str]:
    """The replay in a few lines: what ran, the host's outcome beside the replay's, why."""
    host = found.host.upper()
    lines = [f"entropy-gate replay: {found.test} as host {host} ran it"]
    if len(found.ran) > 1:
        lines.append(f"  after: {', '.join(found.ran[:-1])}")
    lines += [f"  host {host}: {found.reported}", f"  replay: {found.outcome}"]
    message = (found.message or "").strip().splitlines()
    lines += [f"    {line}" for line in message[:MAX_MESSAGE_LINES]]
    if len(message) > MAX_MESSAGE_LINES:
        lines.append(f"    … {len(message) - MAX_MESSAGE_LINES} more lines")
    if found.reproduced:
        lines.append(f"  reproduced: {', '.join(found.reproduced)}")
    lines += [f"  note: {note}" for note in found.notes]
    return lines
