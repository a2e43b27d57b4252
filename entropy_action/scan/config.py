"""The pytest configuration that applies to the property module, found the way pytest finds it."""

from __future__ import annotations

import configparser
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from entropy_action.scan.source import Tree

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

# pytest's own order within one directory; the first file that configures pytest wins.
CANDIDATES = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)


@dataclass(frozen=True)
class PytestConfig:
    """The options of one configuration file that matter to the scan."""

    path: str | None = None  # repository-relative; None when no file configures pytest
    addopts: tuple[tuple[str, int], ...] = ()  # each argument with the line it stands on
    python_functions: tuple[str, ...] = ("test",)
    python_classes: tuple[str, ...] = ("Test",)
    pythonpath: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())


def locate(tree: Tree, module: str) -> PytestConfig:
    """The configuration pytest uses when it is given `module`: nearest directory first."""
    folder = PurePosixPath(module).parent
    for base in (folder, *folder.parents):
        for name in CANDIDATES:
            relative = str(base / name) if str(base) != "." else name
            if not tree.is_file(relative):
                continue
            found = _load(tree, relative, name)
            if found is not None:
                return found
    return PytestConfig()


def _load(tree: Tree, relative: str, name: str) -> PytestConfig | None:
    raw = tree.read(relative)
    if raw is None:
        return None
    text = raw.decode("utf-8", "replace")
    try:
        if name.endswith(".toml"):
            return _from_toml(relative, name, text)
        return _from_ini(relative, name, text)
    except (configparser.Error, tomllib.TOMLDecodeError, ValueError) as exc:
        note = f"{relative}: cannot read the pytest configuration ({type(exc).__name__})"
        return PytestConfig(path=relative, notes=(note,))


def _from_ini(relative: str, name: str, text: str) -> PytestConfig | None:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.read_string(text, source=relative)
    section = "tool:pytest" if name == "setup.cfg" else "pytest"
    if not parser.has_section(section):
        return PytestConfig(path=relative) if name.endswith("pytest.ini") else None
    values = dict(parser.items(section))
    return _config(relative, text, f"[{section}]", values)


def _from_toml(relative: str, name: str, text: str) -> PytestConfig | None:
    document = tomllib.loads(text)
    if name != "pyproject.toml":
        table = document.get("pytest")
        return _config(relative, text, "[pytest]", table if isinstance(table, dict) else {})
    tool = document.get("tool", {}).get("pytest")
    if not isinstance(tool, dict):
        return None
    ini = tool.get("ini_options")
    if isinstance(ini, dict):
        return _config(relative, text, "[tool.pytest.ini_options]", ini)
    return _config(relative, text, "[tool.pytest]", tool)


def _config(relative: str, text: str, header: str, values: dict[str, Any]) -> PytestConfig:
    lines = text.splitlines()
    start = _key_line(lines, header, "addopts")
    tokens = [(token, _token_line(lines, start, token)) for token in _split(values.get("addopts"))]
    return PytestConfig(
        path=relative,
        addopts=tuple(tokens),
        python_functions=tuple(_split(values.get("python_functions"))) or ("test",),
        python_classes=tuple(_split(values.get("python_classes"))) or ("Test",),
        pythonpath=tuple(_split(values.get("pythonpath"))),
    )


def _split(value: object) -> list[str]:
    items = value if isinstance(value, list) else [value] if isinstance(value, str) else []
    out: list[str] = []
    for item in items:
        try:
            out.extend(shlex.split(str(item)))
        except ValueError:
            out.extend(str(item).split())
    return out


def _key_line(lines: list[str], header: str, key: str) -> int:
    """The 1-based line of `key` inside the section `header` (the header's line otherwise)."""
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*[=:]")
    inside, header_line = False, 1
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith("["):
            inside = stripped.replace(" ", "") == header
            header_line = number if inside else header_line
        elif inside and pattern.match(line):
            return number
    return header_line


def _token_line(lines: list[str], start: int, token: str) -> int:
    """The first line from `start` on (within the value) that carries `token`."""
    for number in range(start, min(len(lines), start + 50) + 1):
        line = lines[number - 1]
        if number > start and line.strip().startswith("["):
            break
        if token in line:
            return number
    return start
