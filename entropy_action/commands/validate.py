"""`entropy-gate validate`: check entropy.yaml alone, without git or a baseline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from entropy_action.commands import options

NAME = "validate"
HELP = "validate entropy.yaml (schema, duplicate keys, files it names); exit 2 when invalid"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_manifest(parser)


def run(args: argparse.Namespace) -> int:
    from entropy_action import baseline, manifest  # noqa: PLC0415 (--help imports no model)

    path: Path = args.manifest
    root = baseline.repo_root(path)
    loaded = manifest.load(path, repo_root=root, name=str(path))
    for warning in loaded.warnings:
        print(warning, file=sys.stderr)
    pins = loaded.manifest.pins.flat()
    print(f"{path}: valid ({len(pins)} pins: {', '.join(pins)})")
    return 0
