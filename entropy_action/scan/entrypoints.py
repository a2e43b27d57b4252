"""The project's own `pytest11` entry points: pyproject.toml, setup.cfg and setup.py at the
repository root, read as data (toml, configparser, ast — setup.py is never run). The workflow's
`pip install -e .` installs them, so every run loads their modules as plugins."""

from __future__ import annotations

import ast
import configparser
import re
import sys
from dataclasses import dataclass

from entropy_action.core import pyast
from entropy_action.scan.names import const_str
from entropy_action.scan.scope import Scope

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

ENTRY_GROUP = "pytest11"


@dataclass(frozen=True)
class EntryPoint:
    path: str  # the file declaring it
    line: int
    name: str
    value: str  # "package.module" or "package.module:attr"


def entry_points(scope: Scope) -> list[EntryPoint]:
    """The project's own `pytest11` entry points, at the repository root."""
    found: list[EntryPoint] = []
    for name, reader in (
        ("pyproject.toml", _from_pyproject),
        ("setup.cfg", _from_setup_cfg),
        ("setup.py", _from_setup_py),
    ):
        raw = scope.tree.read(name) if scope.tree.is_file(name) else None
        if raw is None:
            continue
        text = raw.decode("utf-8", "replace")
        try:
            pairs = reader(text)
        except (ValueError, SyntaxError, configparser.Error, RecursionError):
            scope.notes.append(f"{name}: cannot read its entry points")
            continue
        found += [EntryPoint(name, _line_of(text, n, v), n, v) for n, v in pairs]
    return found


def _from_pyproject(text: str) -> list[tuple[str, str]]:
    project = tomllib.loads(text).get("project")
    groups = project.get("entry-points") if isinstance(project, dict) else None
    table = groups.get(ENTRY_GROUP) if isinstance(groups, dict) else None
    if not isinstance(table, dict):
        return []
    return [(str(k), str(v)) for k, v in table.items()]


def _from_setup_cfg(text: str) -> list[tuple[str, str]]:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.read_string(text)
    if not parser.has_option("options.entry_points", ENTRY_GROUP):
        return []
    return _pairs(parser.get("options.entry_points", ENTRY_GROUP).splitlines())


def _from_setup_py(text: str) -> list[tuple[str, str]]:
    found: list[str] = []
    for node in ast.walk(pyast.parse(text)):
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values, strict=True):
            if key is not None and const_str(key) == ENTRY_GROUP:
                items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
                found += [s for item in items if (s := const_str(item))]
    return _pairs(found)


def _pairs(lines: list[str]) -> list[tuple[str, str]]:
    out = []
    for line in lines:
        name, sep, value = line.partition("=")
        if sep and name.strip() and value.strip():
            out.append((name.strip(), value.strip()))
    return out


def _line_of(text: str, name: str, value: str) -> int:
    pattern = re.compile(rf"""["']?{re.escape(name)}["']?\s*=\s*["']?{re.escape(value)}""")
    for number, line in enumerate(text.splitlines(), 1):
        if pattern.search(line):
            return number
    return 1
