"""`entropy-gate cache-key`: the base evidence cache's key, for the Action's actions/cache.

The key is the digest `run --base-ref` files its base run under in `--cache-dir` (base
commit, the base manifest's bytes, the host, the interpreter and its installed
distributions, the gate's version), so the Action restores and saves exactly the entry the
run looks for and never re-derives the key in YAML.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from entropy_action.cli import options

NAME = "cache-key"
HELP = (
    "print the key of the base run's evidence cache entry for one host (the Action's "
    "actions/cache key); nothing when the base has no readable manifest"
)
PREFIX = "entropy-gate-base-run-"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_manifest(parser)
    options.add_property(parser)
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
    from entropy_action.gate import baserun  # noqa: PLC0415 (--help imports no model)
    from entropy_action.manifest import baseline  # noqa: PLC0415 (--help imports no model)

    path: Path = args.manifest
    check = baseline.check(path, args.base_ref, None, options.one_property(args))
    if check.base is None or check.base_commit is None:
        print(f"note: no cache key: {args.base_ref} has no readable manifest", file=sys.stderr)
        return ""
    base = baserun.BaseRun(environ=args.environ, python_a=args.python, python_b=args.python)
    return PREFIX + baserun.cache_key(base, check, args.host).digest
