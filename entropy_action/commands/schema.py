"""`entropy-gate schema`: the JSON Schema of entropy.yaml, generated from the model."""

from __future__ import annotations

import argparse
import json

from entropy_action.manifest import Manifest

NAME = "schema"
HELP = "print the JSON Schema of entropy.yaml (for editors; committed as schema/)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    del parser


def manifest_schema() -> str:
    return json.dumps(Manifest.model_json_schema(), indent=2, sort_keys=True) + "\n"


def run(args: argparse.Namespace) -> int:
    del args
    print(manifest_schema(), end="")
    return 0
