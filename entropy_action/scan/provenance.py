"""The unit under test replaced outside the property module, statically (`unit_replaced`).

- A write to `sys.modules` in test code — the property module, its conftests, the package
  `__init__.py` files Python runs before it, what they reach — under the name of a production
  module of the repository: `sys.modules["invoice_lib"] = copy`, `.update(...)`,
  `.setdefault(...)`, `.__setitem__(...)`, `monkeypatch.setitem(sys.modules, ...)`,
  `mock.patch.dict(sys.modules, {...})`. A name the repository has no production module for
  (a test that hides an optional dependency: `sys.modules["numpy"] = None`) and `None` as
  the value are not findings.
- An import of the property module that leads to a production file at the base and to a
  file in the tests area at the head (a copy placed next to the tests, which pytest's
  rootdir insertion imports first).

The run-time record (testproc/provenance.py, verdict/provenance.py) sees what these miss: a
name built at run time, an exec'd module, a reassignment made through `request.module`.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

from entropy_action.core.findings import Finding
from entropy_action.scan.model import Context, Hit, Unit, units
from entropy_action.scan.names import ModuleIndex, const_str, short
from entropy_action.scan.scope import Scope

WRITERS = frozenset({"update", "setdefault", "__setitem__"})


@dataclass(frozen=True)
class Binding:
    """A name of the property module and where it leads: a repository member's file, its
    line (a local definition's), and whether that file is test code."""

    name: str
    path: str
    line: int
    support: bool
    local: bool  # defined in the property module itself


@dataclass(frozen=True)
class Import:
    """An import of the property module: the dotted name, where it leads, and whether that
    file is test code."""

    dotted: str
    path: str
    line: int
    support: bool


def find(ctx: Context) -> list[Hit]:
    hits: list[Hit] = []
    for unit in units(ctx, production=False, whole_module=True):
        for node in unit.nodes:
            for key in _written_keys(ctx, unit, node):
                path = ctx.scope.finder.find(key, unit.module.path)
                if path is None or ctx.scope.is_support(path):
                    continue
                message = (
                    f"sys.modules[{key!r}] written in {unit.where()}: {short(node)} — the tests "
                    f"import whatever it holds instead of the production module {path}, so "
                    "the property checks that, not the code"
                )
                hits.append(unit.hit("unit_replaced", node, message))
    return hits


def _is_sys_modules(ctx: Context, unit: Unit, expr: ast.expr) -> bool:
    return ctx.dotted(expr, unit.module) == "sys.modules"


def _written_keys(ctx: Context, unit: Unit, node: ast.AST) -> list[str]:
    """The module names a statement or call writes into sys.modules (values not None)."""
    if isinstance(node, ast.Assign) and not _none(node.value):
        return [
            key
            for target in node.targets
            if isinstance(target, ast.Subscript) and _is_sys_modules(ctx, unit, target.value)
            if (key := const_str(target.slice)) is not None
        ]
    if not isinstance(node, ast.Call):
        return []
    func, args = node.func, node.args
    if isinstance(func, ast.Attribute) and _is_sys_modules(ctx, unit, func.value):
        if func.attr == "update":
            return [k for arg in args for k in _dict_keys(arg)] + [
                kw.arg for kw in node.keywords if kw.arg and not _none(kw.value)
            ]
        if func.attr in WRITERS and len(args) >= 2 and not _none(args[1]):
            key = const_str(args[0])
            return [key] if key is not None else []
        return []
    dotted = ctx.dotted(func, unit.module) or ""
    if len(args) >= 2 and _is_sys_modules(ctx, unit, args[0]):
        if isinstance(func, ast.Attribute) and func.attr == "setitem" and len(args) >= 3:
            key = const_str(args[1])
            return [key] if key is not None and not _none(args[2]) else []
        if dotted.endswith("patch.dict") or (
            isinstance(func, ast.Attribute) and func.attr == "dict"
        ):
            return _dict_keys(args[1])
    return []


def _dict_keys(expr: ast.expr) -> list[str]:
    if not isinstance(expr, ast.Dict):
        return []
    return [
        key
        for k, v in zip(expr.keys, expr.values, strict=True)
        if k is not None and not _none(v) and (key := const_str(k)) is not None
    ]


def _none(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is None


# --- an import that leads elsewhere at the head -----------------------------------------------


def imports(scope: Scope, module: ModuleIndex) -> tuple[Import, ...]:
    """Where each absolute import of the property module leads in this revision."""
    found: dict[str, Import] = {}
    for node in ast.walk(module.tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module]
        for dotted in names:
            path = scope.finder.find(dotted, module.path)
            if path is not None and dotted not in found:
                line = int(getattr(node, "lineno", 1))
                found[dotted] = Import(dotted, path, line, scope.is_support(path))
    return tuple(found.values())


def bindings(scope: Scope, module: ModuleIndex) -> tuple[Binding, ...]:
    """The property module's top-level functions and imported members, by name."""
    found = [
        Binding(name, module.path, node.lineno, True, True)
        for name, node in module.defs.items()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    lines = {
        alias.asname or alias.name: node.lineno
        for node in ast.walk(module.tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    for name, ref in module.imports.items():
        if ref.path is not None and ref.name and name not in module.defs:
            target = scope.chase(ref)
            path = target.path or ref.path
            line = lines.get(name, 1)
            found.append(Binding(name, path, line, scope.is_support(path), False))
    return tuple(found)


def own_copies(
    module: str, base: Sequence[Binding], head: Sequence[Binding], moved_to: set[str]
) -> list[Finding]:
    """A name that led to a production function at the base and, at the head, to a function
    of the tests' own (defined in the property module, or imported from test code): the
    property asserts on its own copy of the unit (`unit_patched`)."""
    was = {b.name: b for b in base if not b.support and not b.local}
    out = []
    for now in head:
        before = was.get(now.name)
        if before is None or not now.support or now.path in moved_to:
            continue
        where = "defined in the property module" if now.local else f"imported from {now.path}"
        out.append(
            Finding(
                kind="unit_patched",
                path=now.path if now.local else module,
                line=now.line,
                message=(
                    f"{now.name}: the base's properties called the production {now.name} of "
                    f"{before.path}, the head's call a copy {where} — the property checks its "
                    "own copy of the unit, not the code"
                ),
            )
        )
    return out


def moved(module: str, base: Sequence[Import], head: Sequence[Import]) -> list[Finding]:
    """An import that led to a production file at the base and leads to test code at the
    head: the tests now import a copy."""
    was = {i.dotted: i for i in base}
    out = []
    for now in head:
        before = was.get(now.dotted)
        if before is None or before.support or not now.support or before.path == now.path:
            continue
        out.append(
            Finding(
                kind="unit_replaced",
                path=module,
                line=now.line,
                message=(
                    f"import {now.dotted} leads to {now.path} at the head, to the production "
                    f"module {before.path} at the base — a module in the tests area shadows "
                    "it (pytest puts the test's folder first on sys.path), so the property "
                    "checks the copy"
                ),
            )
        )
    return out
