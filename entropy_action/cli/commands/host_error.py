"""`entropy-gate host-error`: a host job's step failed before the run reported; say why.

The host job's failure step (action.yml, the reusable workflow) calls it, so the folder the
job uploads holds DIR/error.json (evidence.hosterror): the step that failed and its one
line, which the verdict then leads with instead of "no report". A folder that already holds
the host's own word (host.json, or the error.json `run` wrote) is left as it is: the run
said more than the step's name can.
"""

from __future__ import annotations

import argparse
from pathlib import Path

NAME = "host-error"
HELP = (
    "write DIR/error.json for a host job's step that failed before `run` reported (the step, "
    "its one-line message), which the verdict leads with; a folder holding host.json or "
    "error.json already is left as it is"
)
NO_MESSAGE = "the step failed; the host job's log says why"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", choices=("a", "b"), required=True, help="the host's label")
    parser.add_argument(
        "--out", type=Path, required=True, metavar="DIR", help="the host's report folder"
    )
    parser.add_argument("--step", required=True, metavar="NAME", help="the step that failed")
    parser.add_argument(
        "--message",
        default="",
        metavar="TEXT",
        help=f"what it said, one line (default: {NO_MESSAGE!r})",
    )


def run(args: argparse.Namespace) -> int:
    from entropy_action.evidence import hosterror  # noqa: PLC0415 (--help imports no model)

    out: Path = args.out
    if hosterror.reported(out):
        print(f"host {args.host}: {out} holds the host's own report; left as it is")
        return 0
    error = hosterror.make(args.host, args.step, args.message or NO_MESSAGE)
    path = hosterror.write(out, error)
    print(f"host {args.host}: {error.step}: {error.message} (written to {path})")
    return 0
