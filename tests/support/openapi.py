"""GitHub's check-run request schemas, from its OpenAPI description, and a validator.

The description (`@octokit/openapi`, the two operations `checks/create` and `checks/update`)
is vendored in tests/data/github-api/ so tests run on a fresh machine; `GITHUB_API_OPENAPI`
points at another copy. Local `$ref`s are resolved; the limits GitHub states only in prose
(annotation `title` <= 255 characters, `message` and `raw_details` <= 64 KB) are checked too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema

# GitHub's REST description of the two endpoints (from @octokit/openapi), vendored so tests
# run on a fresh machine; `GITHUB_API_OPENAPI` points at another copy.
VENDORED = Path(__file__).parent.parent / "data" / "github-api" / "check-runs.openapi.json"
OPENAPI = Path(os.environ.get("GITHUB_API_OPENAPI") or VENDORED)
# Limits GitHub states in the descriptions, not in the schema's keywords.
_PROSE_LIMITS = {"title": 255, "message": 64 * 1024, "raw_details": 64 * 1024}


def _resolve(node: Any, root: Mapping[str, Any], depth: int = 0) -> Any:
    """The schema with every local `$ref` (`#/...`) replaced by what it points at."""
    if depth > 64:
        raise ValueError("$ref nesting too deep")
    if isinstance(node, list):
        return [_resolve(item, root, depth) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target: Any = root
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        return _resolve(target, root, depth + 1)
    return {key: _resolve(value, root, depth) for key, value in node.items()}


def load_schemas(path: Path = OPENAPI) -> dict[str, Any]:
    """`{"POST": create's request schema, "PATCH": update's}` from the OpenAPI document."""
    document = json.loads(path.read_text(encoding="utf-8"))
    schemas: dict[str, Any] = {}
    for operation in document["operations"].values():
        schema = _resolve(operation["request_schema"], document)
        jsonschema.Draft7Validator.check_schema(schema)
        schemas[operation["method"]] = schema
    return schemas


def violations(schema: Mapping[str, Any], body: Any) -> list[str]:
    """Every way `body` breaks the schema or GitHub's documented limits."""
    validator = jsonschema.Draft7Validator(schema)
    found = [
        f"{'/'.join(str(p) for p in error.absolute_path) or '(body)'}: {error.message}"
        for error in sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))
    ]
    output = body.get("output") if isinstance(body, dict) else None
    annotations = output.get("annotations", []) if isinstance(output, dict) else []
    for index, annotation in enumerate(annotations if isinstance(annotations, list) else []):
        for key, limit in _PROSE_LIMITS.items():
            value = annotation.get(key) if isinstance(annotation, dict) else None
            if isinstance(value, str) and len(value.encode("utf-8")) > limit:
                found.append(f"output/annotations/{index}/{key}: longer than {limit} bytes")
    return found
