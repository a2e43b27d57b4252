"""`entropy-gate schema`: the JSON Schemas of entropy.yaml and of the verdict, from the models."""

from __future__ import annotations

import argparse
import json

NAME = "schema"
HELP = "print the JSON Schema of entropy.yaml, or of the verdict JSON (committed as schema/)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--verdict",
        action="store_true",
        help="print the schema of the verdict JSON (compare/gate --json) instead",
    )


def manifest_schema() -> str:
    from entropy_action.manifest.pinfile import Manifest  # noqa: PLC0415 (--help imports no model)

    return json.dumps(Manifest.model_json_schema(), indent=2, sort_keys=True) + "\n"


def verdict_schema() -> str:
    """The verdict JSON as written: every field is always present."""
    from entropy_action.verdict.model import Verdict  # noqa: PLC0415 (--help imports no model)

    schema = Verdict.model_json_schema(mode="serialization")
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def run(args: argparse.Namespace) -> int:
    print(verdict_schema() if args.verdict else manifest_schema(), end="")
    return 0
