"""Environment variables a test file sets itself while it is imported, found statically.

`os.environ["TZ"] = "CET-1CEST"` at the top of a test module runs at collection, after the
gate pinned TZ: the pin cannot take (the probe sees the module's value, the run is invalid),
so `init` must not draft it. Pure: source text in, the writes out. What counts is a statement
that runs at import (the module body, a class body, an `if` or `with` at the top; never the
body of a function, which runs only when a test or fixture calls it):

- `os.environ[NAME] = …`, `+=`, `del os.environ[NAME]` (also `from os import environ`);
- `os.environ.setdefault(NAME, …)`, `.pop(NAME)`, `.update({NAME: …})`, `.update(NAME=…)`;
- `os.putenv(NAME, …)`, `os.unsetenv(NAME)`;
- `….setenv(NAME, …)`, `….delenv(NAME)` (a `pytest.MonkeyPatch()` made at module level).

NAME is a string literal or a module-level name bound to one. `time.tzset()` at import is
remembered so the note can say the module also applies the zone it set.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from entropy_action.core import pyast

_ENVIRON_METHODS = frozenset({"setdefault", "pop", "__setitem__", "__delitem__", "update"})
_OS_FUNCTIONS = frozenset({"putenv", "unsetenv"})
_MONKEYPATCH = frozenset({"setenv", "delenv"})


@dataclass(frozen=True)
class Write:
    name: str  # the variable: TZ
    path: str  # repository-relative
    line: int
    code: str  # how, as code: os.environ['TZ'] = …

    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class Found:
    writes: list[Write]
    tzset_lines: list[int]  # lines of `time.tzset()` run at import


def import_writes(source: str, path: str) -> Found:
    """The environment writes `source` (the file at `path`) makes at import; a file that does
    not parse makes none (pytest reports it)."""
    try:
        tree = pyast.parse(source, filename=path)
    except (SyntaxError, ValueError):
        return Found([], [])
    finder = _Finder(path, _constants(tree))
    for node in tree.body:
        finder.visit(node)
    return Found(finder.writes, finder.tzset_lines)


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level `NAME = "literal"` bindings."""
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            value = node.value.value
            for target in node.targets:
                if isinstance(target, ast.Name) and isinstance(value, str):
                    found[target.id] = value
    return found


class _Finder(ast.NodeVisitor):
    def __init__(self, path: str, constants: dict[str, str]) -> None:
        self.path, self.constants = path, constants
        self.writes: list[Write] = []
        self.tzset_lines: list[int] = []

    # Bodies that do not run at import.
    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        return None

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        return None

    def visit_Lambda(self, node: ast.Lambda) -> None:
        return None

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._subscript(target, node.lineno, "{} = …")
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._subscript(node.target, node.lineno, "{} += …")
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._subscript(target, node.lineno, "del {}")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute):
            if func.attr == "tzset" and _dotted(func.value) == "time":
                self.tzset_lines.append(node.lineno)
            elif func.attr in _ENVIRON_METHODS and _is_environ(func.value):
                self._environ_call(node, func.attr)
            elif func.attr in _OS_FUNCTIONS | _MONKEYPATCH and node.args:
                self._named_call(node, f"{_dotted(func.value) or '…'}.{func.attr}")
        elif isinstance(func, ast.Name) and func.id in _OS_FUNCTIONS and node.args:
            self._named_call(node, func.id)
        self.generic_visit(node)

    def _subscript(self, target: ast.expr, line: int, shape: str) -> None:
        if isinstance(target, ast.Subscript) and _is_environ(target.value):
            name = self._name(target.slice)
            if name is not None:
                self._add(name, line, shape.format(f"os.environ[{name!r}]"))

    def _environ_call(self, node: ast.Call, method: str) -> None:
        if method == "update":
            names = [self._name(k) for a in node.args if isinstance(a, ast.Dict) for k in a.keys]
            names += [k.arg for k in node.keywords]
            for name in names:
                if name is not None:
                    self._add(name, node.lineno, f"os.environ.update({name}=…)")
        elif node.args:
            self._named_call(node, f"os.environ.{method}")

    def _named_call(self, node: ast.Call, call: str) -> None:
        name = self._name(node.args[0])
        if name is not None:
            rest = ", …" if len(node.args) > 1 else ""
            self._add(name, node.lineno, f"{call}({name!r}{rest})")

    def _name(self, node: ast.expr | None) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.constants.get(node.id)
        return None

    def _add(self, name: str, line: int, code: str) -> None:
        self.writes.append(Write(name, self.path, line, code))


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _is_environ(node: ast.expr) -> bool:
    return _dotted(node) in ("os.environ", "environ")
