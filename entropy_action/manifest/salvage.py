"""Reading a manifest that a patch broke, the way plain YAML would, to list what changed.

A duplicate key or a renamed pin in the head manifest is a change to report line by line
(a pin mutation), not just an invalid file; and the hosts still need a manifest to run under,
so invalid values are replaced by the baseline's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from entropy_action.manifest import safe_yaml
from entropy_action.manifest.pinfile import (
    LoadedManifest,
    Manifest,
    parse,
    problems,
    refuse_unquoted,
    without_union_tag,
)


def parse_lenient(
    raw: bytes, name: str, repo_root: Path | None = None, fallback: Manifest | None = None
) -> tuple[LoadedManifest | None, list[tuple[int, str]]]:
    """Read a manifest the way plain YAML would, and list every problem with it.

    Returns the manifest
    with the last of duplicate keys, without unknown keys and with each invalid value
    replaced by the `fallback`'s (the baseline's) or dropped — or None when even that
    does not validate — and the problems as (line, message).
    """
    try:
        return parse(raw, name, repo_root), []
    except safe_yaml.LocatedError as exc:
        found = list(exc.problems)
    try:
        located = safe_yaml.load(raw, name, keep_last_duplicate=True)
    except safe_yaml.LocatedError:
        return None, found
    found.extend(located.duplicates)
    if not isinstance(located.data, dict):
        return None, found
    try:
        refuse_unquoted(located)
        Manifest.model_validate(located.data)
    except safe_yaml.LocatedError as exc:
        found.extend(exc.problems)
    except ValidationError as exc:
        found.extend(problems(exc, located))
    unique = sorted(dict.fromkeys(found), key=lambda item: item[0])
    data = _known_keys(located.data, Manifest)
    spare = fallback.model_dump() if fallback is not None else {}
    for _attempt in range(8):
        try:
            manifest = Manifest.model_validate(data)
        except ValidationError as exc:
            if not all(_repair(data, tuple(e["loc"]), spare) for e in exc.errors()):
                return None, unique
            continue
        return LoadedManifest(manifest=manifest, located=located, raw=raw), unique
    return None, unique


def _repair(data: dict[str, Any], loc: tuple[str | int, ...], spare: dict[str, Any]) -> bool:
    """Put the baseline's value where `loc` is invalid (or drop the key); False if stuck."""
    path = without_union_tag(loc)
    cut = next((i for i, part in enumerate(path) if not isinstance(part, str)), len(path))
    keys = [str(part) for part in path[:cut]]
    if not keys:
        return False
    parent: Any = data
    known: Any = spare
    for key in keys[:-1]:
        parent, known = parent.get(key), known.get(key) if isinstance(known, dict) else None
        if not isinstance(parent, dict):
            return False
    last = keys[-1]
    if isinstance(known, dict) and known.get(last) is not None:
        if parent.get(last) == known[last]:
            return False
        parent[last] = known[last]
    elif last in parent:
        del parent[last]
    else:
        return False
    return True


def _known_keys(data: Any, model: type[BaseModel]) -> Any:
    if not isinstance(data, dict):
        return data
    out = {}
    for key, value in data.items():
        field = model.model_fields.get(key)
        if field is None:
            continue
        annotation = field.annotation
        nested = isinstance(annotation, type) and issubclass(annotation, BaseModel)
        out[key] = _known_keys(value, annotation) if nested else value  # type: ignore[arg-type]
    return out
