"""`entropy-gate validate`: check entropy.yaml alone, without git or a baseline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from entropy_action.cli import options

NAME = "validate"
HELP = "validate entropy.yaml (schema, duplicate keys, files it names); exit 2 when invalid"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_manifest(parser)
    parser.add_argument(
        "--github-output",
        action="store_true",
        help="also set the step output property-id (via $GITHUB_OUTPUT) for artifact names",
    )


def run(args: argparse.Namespace) -> int:
    from entropy_action.manifest import baseline, pinfile  # noqa: PLC0415 (--help imports no model)

    path: Path = args.manifest
    root = baseline.repo_root(path)
    loaded = pinfile.load(path, repo_root=root, name=str(path))
    for warning in loaded.warnings:
        print(warning, file=sys.stderr)
    pins = loaded.manifest.pins.flat()
    print(f"{path}: valid ({len(pins)} pins: {', '.join(pins)})")
    if args.github_output:
        options.set_output(args.environ, "property-id", loaded.manifest.property_id)
    return 0
