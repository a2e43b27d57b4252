"""Arguments that several subcommands share, spelled the same everywhere."""

from __future__ import annotations

import argparse
from pathlib import Path

from entropy_action.manifest import MANIFEST_NAME


def add_manifest(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--manifest",
        type=Path,
        default=Path(MANIFEST_NAME),
        metavar="PATH",
        help=f"the pin file (default: {MANIFEST_NAME})",
    )


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
