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
    """entropy.yaml in either form: one property (the seed's), or `properties:` (a list)."""
    from pydantic import TypeAdapter  # noqa: PLC0415 (--help imports no model)

    from entropy_action.manifest.pinfile import (  # noqa: PLC0415 (--help imports no model)
        Manifest,
        ManifestList,
    )

    schema = TypeAdapter(Manifest | ManifestList).json_schema()
    schema["oneOf"] = schema.pop("anyOf")  # the forms are disjoint: each refuses the other's keys
    schema.update(
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "entropy.yaml",
            "description": "One property (property_id, module, pins) or many (properties).",
        }
    )
    for name in ("Manifest", "ManifestList"):
        schema["$defs"][name].pop("$schema", None)
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def verdict_schema() -> str:
    """The verdict JSON as written: every field is always present."""
    from entropy_action.verdict.model import Verdict  # noqa: PLC0415 (--help imports no model)

    schema = Verdict.model_json_schema(mode="serialization")
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def run(args: argparse.Namespace) -> int:
    print(verdict_schema() if args.verdict else manifest_schema(), end="")
    return 0
