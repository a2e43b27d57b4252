"""`entropy-gate cache-key`: the base evidence cache's key, for the Action's actions/cache.

The key is the digest `run --base-ref` files its base run under in `--cache-dir` (base
commit, the base manifest's bytes, the host, the interpreter and its installed
distributions, the gate's version), so the Action restores and saves exactly the entry the
run looks for and never re-derives the key in YAML. A leg of the workflow that runs several
properties of a list (--property, repeated) caches them as one entry: its key is the sha256
of their digests, sorted, one a line (scripts/run-host.sh derives the saved key the same way
from the digests the run filed).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from entropy_action.cli import options

NAME = "cache-key"
HELP = (
    "print the key of the base run's evidence cache entry for one host (the Action's "
    "actions/cache key); nothing when the base has no readable manifest"
)
PREFIX = "entropy-gate-base-run-"
LEG_PREFIX = PREFIX + "leg-"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_manifest(parser)
    parser.add_argument(
        "--property",
        dest="properties",
        action="append",
        default=[],
        metavar="ID",
        help="a manifest that lists properties: this one's entry (repeat for a leg of several: "
        "one key for all of them; default: the manifest's only property)",
    )
    parser.add_argument("--base-ref", required=True, metavar="REF", help="the PR's base ref")
    parser.add_argument("--host", choices=("a", "b"), required=True, help="the host's label")
    parser.add_argument(
        "--python", metavar="PATH", help="the interpreter that runs pytest (default: this one)"
    )
    parser.add_argument(
        "--github-output",
        action="store_true",
        help="also set the step output key (via $GITHUB_OUTPUT; empty when there is none)",
    )


def run(args: argparse.Namespace) -> int:
    key = _key(args)
    if key:
        print(key)
    if args.github_output:
        options.set_output(args.environ, "key", key)
    return 0


def _key(args: argparse.Namespace) -> str:
    chosen: list[str] = list(dict.fromkeys(args.properties))
    if len(chosen) <= 1:
        digest = _digest(args, chosen[0] if chosen else None)
        return PREFIX + digest if digest else ""
    digests = [_digest(args, property_id) for property_id in chosen]
    if not all(digests):
        return ""  # one property has no base run to cache: the leg runs its base every time
    return LEG_PREFIX + leg_digest(digests)


def leg_digest(digests: list[str]) -> str:
    """One key for a leg's entries: the sha256 of their digests, sorted, one a line."""
    return hashlib.sha256("".join(f"{d}\n" for d in sorted(digests)).encode()).hexdigest()


def _digest(args: argparse.Namespace, property_id: str | None) -> str:
    from entropy_action.gate import baserun  # noqa: PLC0415 (--help imports no model)
    from entropy_action.manifest import baseline  # noqa: PLC0415 (--help imports no model)

    path: Path = args.manifest
    check = baseline.check(path, args.base_ref, None, property_id)
    if check.base is None or check.base_commit is None:
        named = f" for property {property_id}" if property_id else ""
        note = f"note: no cache key{named}: {args.base_ref} has no readable manifest"
        print(note, file=sys.stderr)
        return ""
    base = baserun.BaseRun(environ=args.environ, python_a=args.python, python_b=args.python)
    return baserun.cache_key(base, check, args.host).digest
