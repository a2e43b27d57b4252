"""`entropy-gate matrix`: the host legs of the reusable workflow, for `strategy.matrix`.

The check job runs it on the HEAD manifest (read as data: nothing from the PR runs). The
legs come from manifest.legs: one per session group, packed or split by whole properties
under --legs-per-host, balanced by each property module's test functions counted from its
syntax (the base's recorded durations are not in the check job: its evidence cache is keyed
by the host's interpreter and installed distributions, which only a host job has).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from entropy_action.cli import options

if TYPE_CHECKING:
    from entropy_action.manifest.legs import Leg
    from entropy_action.manifest.pinfile import LoadedManifest

NAME = "matrix"
HELP = (
    "print the host jobs' strategy.matrix (JSON: one entry per leg and host, each with the "
    "space-separated properties it runs); exit 2 when the manifest is invalid"
)
MAX_MODULE_BYTES = 1 << 20  # a larger module is weighed 1, never read whole


def _legs_per_host(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give at least 1 (1: one leg per host)")
    return value


def _leg_number(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a leg number (1, 2, ...)")
    return int(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from entropy_action.manifest.legs import DEFAULT_LEGS_PER_HOST  # noqa: PLC0415

    options.add_manifest(parser)
    parser.add_argument(
        "--legs-per-host",
        type=_legs_per_host,
        default=DEFAULT_LEGS_PER_HOST,
        metavar="N",
        help=f"at most N legs (matrix jobs) per host (default: {DEFAULT_LEGS_PER_HOST}; "
        "1: one job per host; GitHub's 256 jobs cap it at 128)",
    )
    parser.add_argument(
        "--github-output",
        action="store_true",
        help="also set the step outputs matrix (the JSON), legs (legs per host), more (the "
        "matrix of legs 2 and up; empty when there is one leg) and, with --leg, properties",
    )
    parser.add_argument(
        "--leg",
        type=_leg_number,
        default=None,
        metavar="N",
        help="a host job's own leg: also print (and with --github-output, set the step output "
        "properties to) leg N's properties, planned as the check job plans them (empty for a "
        "manifest in the one-property form); exit 2 when there is no leg N",
    )


def run(args: argparse.Namespace) -> int:
    from entropy_action.manifest import baseline, legs, pinfile  # noqa: PLC0415

    path: Path = args.manifest
    root = baseline.repo_root(path)
    loaded = pinfile.parse_file(pinfile.read(path, str(path)), str(path), root)
    planned = plan(loaded.views, root, args.legs_per_host)
    text = json.dumps(legs.matrix(planned, many=loaded.many), separators=(",", ":"))
    more = legs.matrix(planned[1:], many=loaded.many) if len(planned) > 1 else None
    ids = None if args.leg is None else own_leg(planned, args.leg, many=loaded.many)
    for leg in planned:
        print(f"leg {leg.number} (weight {leg.weight}): {' '.join(leg.ids)}", file=sys.stderr)
    print(text)
    if args.github_output:
        options.set_output(args.environ, "matrix", text)
        options.set_output(args.environ, "legs", str(len(planned)))
        options.set_output(
            args.environ, "more", json.dumps(more, separators=(",", ":")) if more else ""
        )
    if ids is not None:
        shown = ids or "the manifest's one property"
        print(f"this job's leg: {args.leg} ({shown})", file=sys.stderr)
        if args.github_output:
            options.set_output(args.environ, "properties", ids)
    return 0


def own_leg(planned: list[Leg], number: int, *, many: bool) -> str:
    """Leg `number`'s properties as the matrix gives them (space-separated; empty for a
    manifest in the one-property form); GateError when the plan has no such leg."""
    from entropy_action.core.errors import GateError  # noqa: PLC0415

    if number > len(planned):
        raise GateError(f"--leg {number}: the manifest plans {len(planned)} leg(s) per host")
    return " ".join(planned[number - 1].ids) if many else ""


def plan(views: tuple[LoadedManifest, ...], root: Path, legs_per_host: int) -> list[Leg]:
    """The legs of `views` (a manifest's properties), each weighed by its module's tests."""
    from entropy_action.manifest import groups, legs  # noqa: PLC0415

    weighted = [
        [legs.Weighted(view.property_id, weigh(root / view.manifest.module)) for view in g.views]
        for g in groups.groups(views)
    ]
    return legs.plan(weighted, legs_per_host)


def weigh(module: Path) -> int:
    """The test functions in `module` (at least 1): read as data, never through a link."""
    from entropy_action.manifest.legs import count_tests  # noqa: PLC0415

    try:
        if module.is_symlink() or not module.is_file():
            return 1
        if module.stat().st_size > MAX_MODULE_BYTES:
            return 1
        return count_tests(module.read_bytes().decode("utf-8", errors="replace"))
    except OSError:
        return 1
