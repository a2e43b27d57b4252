"""`entropy-gate host-error`: a host job's step failed before the run reported; say why.

The host job's failure step (action.yml, the reusable workflow) calls it, so the folder the
job uploads holds DIR/error.json (evidence.hosterror): the step that failed and its one
line, which the verdict then leads with instead of "no report". A folder that already holds
the host's own word (host.json, or the error.json `run` wrote) is left as it is: the run
said more than the step's name can. A leg of a manifest that lists its properties
(--property, repeated) gets one in each of its properties' folders, DIR/properties/ID: the
legs' folders are merged in the verdict job, and the verdict reads a property's own folder.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from entropy_action.core.errors import GateError

NAME = "host-error"
HELP = (
    "write DIR/error.json for a host job's step that failed before `run` reported (the step, "
    "its one-line message), which the verdict leads with; a folder holding host.json or "
    "error.json already is left as it is"
)
NO_MESSAGE = "the step failed; the host job's log says why"
PROPERTY_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")  # as entropy.yaml's property_id


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
    parser.add_argument(
        "--property",
        dest="properties",
        action="append",
        default=[],
        metavar="ID",
        help="a leg of a manifest that lists properties: write DIR/properties/ID/error.json "
        "for this one (repeat for each property of the leg; default: DIR/error.json)",
    )


def run(args: argparse.Namespace) -> int:
    from entropy_action.core import layout  # noqa: PLC0415 (--help imports no model)

    out: Path = args.out
    chosen = list(dict.fromkeys(args.properties))
    if not chosen:
        return _write(args, out)
    for property_id in chosen:
        if not PROPERTY_ID.fullmatch(property_id):
            raise GateError(f"--property {property_id!r}: not a property id (letters, digits, _.-)")
    for property_id in chosen:
        _write(args, layout.property_folder(out, property_id))
    return 0


def _write(args: argparse.Namespace, out: Path) -> int:
    from entropy_action.evidence import hosterror  # noqa: PLC0415 (--help imports no model)

    if hosterror.reported(out):
        print(f"host {args.host}: {out} holds the host's own report; left as it is")
        return 0
    error = hosterror.make(args.host, args.step, args.message or NO_MESSAGE)
    path = hosterror.write(out, error)
    print(f"host {args.host}: {error.step}: {error.message} (written to {path})")
    return 0
