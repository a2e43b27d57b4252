"""Skips that guard a dependency or an interpreter feature, not an entropy source.

A skip that fires only when an import fails — `pytest.importorskip(...)`, a skip inside
`except ImportError:` (or ModuleNotFoundError) around a `try:` that imports — and a
`skipif`/`skipIf`/`skipUnless` whose condition asks only about the interpreter or an optional
dependency (`hasattr(time, "time_ns")`, `sys.version_info < (3, 11)`, a name such an `except`
sets — in the test module or in a repository module it imports, `dev.rich is None` —,
`find_spec(...) is None`, and module-level names bound to those) guard the tests
against a missing dependency. They are reported as every skip is (rules 1 and 2); where the
run-time evidence shows every test a guard covers ran on both hosts (and at the base, where
the base had it), it never fired, and the judge makes its finding a notice (gate/judge.py,
scan.runtime.never_fired). A skip on anything else — TZ, an environment variable, the
platform, the date, a flag — stays a finding whatever the run shows: the pins keep it from
firing under the gate, not elsewhere.
"""

from __future__ import annotations

import ast

from entropy_action.scan import markers, names, skipcalls
from entropy_action.scan.model import Context, Guard, Unit, ancestors, units
from entropy_action.scan.names import ModuleIndex

IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})


def import_guards(ctx: Context) -> list[Guard]:
    """The skip calls (skipcalls.find) that only an import failure reaches."""
    found: list[Guard] = []
    for unit in units(ctx, production=True, whole_module=False):
        for node in unit.nodes:
            what = skipcalls.skip_kind(ctx, unit, node)
            if what is None:
                continue
            if what == "pytest.importorskip" or _on_import_failure(unit, node):
                line = int(getattr(node, "lineno", 1))
                found.append(Guard(unit.module.path, max(1, line), _guarded(ctx, unit)))
    return found


def _on_import_failure(unit: Unit, node: ast.AST) -> bool:
    """Whether `node` sits in an `except ImportError:` (or ModuleNotFoundError, alone or in a
    tuple) of a `try:` whose body imports, with no other condition around it inside."""
    path = ancestors(unit.roots, node)
    for index in range(len(path) - 1, 0, -1):
        handler = path[index]
        if not isinstance(handler, ast.ExceptHandler):
            continue
        parent = path[index - 1]
        caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        inner = path[index + 1 :]
        return (
            isinstance(parent, ast.Try)
            and all(_name(t) in IMPORT_ERRORS for t in caught if t is not None)
            and handler.type is not None
            and any(isinstance(s, (ast.Import, ast.ImportFrom)) for s in parent.body)
            and not any(isinstance(n, (ast.If, ast.IfExp, ast.While, ast.Try)) for n in inner)
        )
    return False


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _guarded(ctx: Context, unit: Unit) -> tuple[str, ...] | None:
    """The property tests whose run reaches the unit (None: import-time code, every one)."""
    if unit.test is not None:
        return (unit.test,)
    if unit.subject == "<module>" or not unit.roots:
        return None
    root = unit.roots[0]
    reaching = [
        name for name, funcs in ctx.reached.items() if any(f.node is root for f in funcs.values())
    ]
    return tuple(dict.fromkeys(reaching)) or None


GUARD_MARKERS = frozenset({"skipif", "unittest.skipIf", "unittest.skipUnless"})


def feature_guards(ctx: Context) -> list[Guard]:
    """The skip markers of the property tests whose condition is only a feature check."""
    module = ctx.module
    if module is None or ctx.collector is None:
        return []
    names = [t.name for t in ctx.tests]
    found: dict[int, Guard] = {}
    optional = _optional_names(module)
    for test in ctx.tests:
        for level, expr in markers.marks(ctx, test):
            marker = markers.classify(ctx, expr, module)
            if id(expr) in found or marker is None or marker.name not in GUARD_MARKERS:
                continue
            conditions = _conditions(marker)
            if conditions and all(_feature(ctx, c, module, optional) for c in conditions):
                tests = _under(level, names)
                found[id(expr)] = Guard(module.path, expr.lineno, tests)
    return list(found.values())


def _under(level: str | None, names: list[str]) -> tuple[str, ...] | None:
    if level is None:
        return None
    return tuple(n for n in names if n == level or n.startswith(level + "::")) or None


def _conditions(marker: markers.Marker) -> list[ast.expr]:
    call = marker.source if isinstance(marker.source, ast.Call) else None
    if call is None:
        return []
    given = names.keyword(call, "condition")
    return [*call.args[:1], *([given] if given is not None else [])]


def _feature(
    ctx: Context, expr: ast.expr, module: ModuleIndex, optional: set[str], depth: int = 0
) -> bool:
    """Whether `expr` asks only about the interpreter or an optional dependency."""
    if depth > 4:
        return False
    if isinstance(expr, ast.BoolOp):
        return all(_feature(ctx, v, module, optional, depth + 1) for v in expr.values)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        return _feature(ctx, expr.operand, module, optional, depth + 1)
    if isinstance(expr, ast.Compare):
        return _feature_compare(ctx, expr, module, optional)
    if isinstance(expr, ast.Call):
        return _has_attribute(ctx, expr, module)
    if isinstance(expr, ast.Name):
        if expr.id in optional:
            return True
        value = module.assigns.get(expr.id)
        return value is not None and _feature(ctx, value, module, optional, depth + 1)
    return False


def _feature_compare(
    ctx: Context, expr: ast.Compare, module: ModuleIndex, optional: set[str]
) -> bool:
    left = expr.left
    if ctx.dotted(left, module) == "sys.version_info" or (
        isinstance(left, ast.Subscript) and ctx.dotted(left.value, module) == "sys.version_info"
    ):
        return all(isinstance(c, (ast.Constant, ast.Tuple)) for c in expr.comparators)
    against_none = all(isinstance(op, (ast.Is, ast.IsNot)) for op in expr.ops) and all(
        isinstance(c, ast.Constant) and c.value is None for c in expr.comparators
    )
    if not against_none:
        return False
    if isinstance(left, ast.Name):
        return left.id in optional
    if isinstance(left, ast.Attribute):
        return _optional_in_module(ctx, left, module)
    return isinstance(left, ast.Call) and ctx.dotted(left.func, module) in (
        "importlib.util.find_spec",
        "importlib.find_loader",
    )


def _has_attribute(ctx: Context, call: ast.Call, module: ModuleIndex) -> bool:
    """`hasattr(M, "name")` of an imported module M."""
    if not (isinstance(call.func, ast.Name) and call.func.id == "hasattr" and len(call.args) == 2):
        return False
    target, name = call.args
    return (
        isinstance(target, ast.Name)
        and target.id in module.imports
        and names.const_str(name) is not None
    )


def _optional_in_module(ctx: Context, expr: ast.Attribute, module: ModuleIndex) -> bool:
    """`M.name`, where M is a repository module whose top-level `try: import … except
    ImportError:` binds `name` (structlog's `dev.rich is None`)."""
    ref = ctx.scope.resolve(expr.value, module)
    owner = ctx.scope.module(ref.path) if ref is not None and ref.path and not ref.name else None
    return owner is not None and expr.attr in _optional_names(owner)


def _optional_names(module: ModuleIndex) -> set[str]:
    """Names a module-level `try: import x … except ImportError:` binds, in either branch."""
    found: set[str] = set()
    for stmt in module.tree.body:
        if not isinstance(stmt, ast.Try):
            continue
        handles = any(
            isinstance(h.type, ast.Name) and h.type.id in IMPORT_ERRORS for h in stmt.handlers
        )
        if not handles:
            continue
        for node in ast.walk(
            ast.Module(
                body=[*stmt.body, *[n for h in stmt.handlers for n in h.body]], type_ignores=[]
            )
        ):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, ast.Assign):
                found.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return found
