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
    loaded = pinfile.parse_file(pinfile.read(path, str(path)), str(path), root)
    for warning in loaded.warnings:
        print(warning, file=sys.stderr)
    if not loaded.many:
        pins = loaded.views[0].manifest.pins.flat()
        print(f"{path}: valid ({len(pins)} pins: {', '.join(pins)})")
    else:
        print(f"{path}: valid ({len(loaded.views)} properties)")
        for view in loaded.views:
            pins = view.manifest.pins.flat()
            listed = f"{len(pins)} pins: {', '.join(pins)}"
            print(f"  {view.property_id}: {view.manifest.module} ({listed})")
    if args.github_output:
        options.set_output(args.environ, "property-id", artifact_id(loaded.ids))
    return 0


def artifact_id(ids: tuple[str, ...]) -> str:
    """The name the workflow's artifacts carry for a manifest: its one property's id, or
    the first id and how many follow (stable while the list's head stays)."""
    return ids[0] if len(ids) == 1 else f"{ids[0]}-and-{len(ids) - 1}-more"
