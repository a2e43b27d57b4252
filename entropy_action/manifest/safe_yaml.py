"""Load YAML written by people who may be trying to fool us.

PyYAML's `safe_load` is safe against code execution but not against the tricks that
matter for a pin file: it keeps the *last* of two duplicate keys (so a pin can be
overridden further down the file), and it expands aliases (alias bombs).  This loader
composes the node graph, refuses anchors, aliases, merge keys, explicit tags and
duplicate keys, caps the size, and remembers the line of every key so that later
validation errors can point at it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from entropy_action.core.errors import GateError

MAX_BYTES = 1024 * 1024

Path = tuple[str | int, ...]

_STANDARD_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:timestamp",
    "tag:yaml.org,2002:map",
    "tag:yaml.org,2002:seq",
}


class LocatedError(GateError):
    """Problems in one file, each at a line: printed as `NAME:LINE: message` lines."""

    def __init__(self, name: str, problems: list[tuple[int, str]]) -> None:
        self.name = name
        self.problems = problems
        super().__init__("\n".join(f"{name}:{line}: {text}" for line, text in problems))


def problem(name: str, line: int, text: str) -> LocatedError:
    return LocatedError(name, [(line, text)])


@dataclass
class Located:
    """A YAML document as plain data plus where each piece of it came from."""

    data: Any
    name: str
    lines: dict[Path, int] = field(default_factory=dict)  # path -> 1-based line of its key
    plain: set[Path] = field(default_factory=set)  # scalars written without quotes
    duplicates: list[tuple[int, str]] = field(default_factory=list)  # (line, problem)

    def line_of(self, path: Path) -> int:
        """The line of `path`, or of its nearest ancestor that exists (1 for the root)."""
        for end in range(len(path), 0, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return line
        return 1

    def where(self, path: Path) -> str:
        return f"{self.name}:{self.line_of(path)}"


def load(text: bytes | str, name: str, *, keep_last_duplicate: bool = False) -> Located:
    """Parse one YAML document from `text`; `name` is used in error messages.

    Duplicate keys are an error; with `keep_last_duplicate` they are recorded in
    `duplicates` and the last value wins, as in plain YAML (to show what a patch did).
    """
    raw = text.encode("utf-8") if isinstance(text, str) else text
    if len(raw) > MAX_BYTES:
        raise problem(name, 1, f"file is {len(raw)} bytes; the limit is {MAX_BYTES} (1 MiB)")
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise problem(name, 1, f"not valid UTF-8 (byte {exc.start})") from None
    _refuse_anchors(decoded, name)
    try:
        nodes = list(yaml.compose_all(decoded, Loader=yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, name) from None
    if len(nodes) != 1:
        what = "is empty" if not nodes else f"holds {len(nodes)} documents; expected one"
        raise problem(name, 1, f"the file {what}")
    located = Located(data=None, name=name)
    located.data = _build(nodes[0], (), located)
    if located.duplicates and not keep_last_duplicate:
        raise LocatedError(name, located.duplicates)
    return located


def _yaml_error(exc: yaml.YAMLError, name: str) -> LocatedError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark is not None else 1
    what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return problem(name, line, f"invalid YAML: {what}")


def _refuse_anchors(text: str, name: str) -> None:
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):
                raise problem(
                    name,
                    _line(event),
                    f"aliases (*{event.anchor}) are not allowed; write the value out",
                )
            anchor = getattr(event, "anchor", None)
            if anchor is not None:
                raise problem(
                    name, _line(event), f"anchors (&{anchor}) are not allowed; write the value out"
                )
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, name) from None


def _line(event: yaml.Event) -> int:
    mark = event.start_mark
    return 1 if mark is None else mark.line + 1


def _build(node: yaml.Node, path: Path, located: Located) -> Any:
    line = node.start_mark.line + 1
    if node.tag not in _STANDARD_TAGS:
        raise problem(located.name, line, f"the tag {node.tag!r} is not allowed")
    if isinstance(node, yaml.MappingNode):
        return _build_mapping(node, path, located)
    if isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):  # an item's line, for an error inside it
            located.lines.setdefault((*path, i), item.start_mark.line + 1)
        return [_build(item, (*path, i), located) for i, item in enumerate(node.value)]
    assert isinstance(node, yaml.ScalarNode)
    if node.style is None:
        located.plain.add(path)
    constructor = yaml.SafeLoader("")
    try:
        return constructor.construct_object(node, deep=True)
    except (yaml.YAMLError, ValueError) as exc:
        raise problem(located.name, line, f"cannot read this value: {exc}") from None


def _build_mapping(node: yaml.MappingNode, path: Path, located: Located) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key_node, value_node in node.value:
        line = key_node.start_mark.line + 1
        if key_node.tag == "tag:yaml.org,2002:merge":
            raise problem(located.name, line, "merge keys (<<) are not allowed")
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != "tag:yaml.org,2002:str":
            raise problem(located.name, line, f"keys must be plain strings, got {key_node.value!r}")
        key = str(key_node.value)
        key_path = (*path, key)
        first = located.lines.get(key_path)
        located.lines[key_path] = line
        value = _build(value_node, key_path, located)
        if key in out:
            located.duplicates.append(
                (
                    line,
                    f"duplicate key {dotted(key_path)!r} overrides line {first}: "
                    f"{_show(out[key])} → {_show(value)} (YAML keeps the last one)",
                )
            )
        out[key] = value
    return out


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def dotted(path: Path) -> str:
    """`("pins", "env", "X")` -> `pins.env.X`; `("properties", 2, "module")` ->
    `properties[2].module`."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out
