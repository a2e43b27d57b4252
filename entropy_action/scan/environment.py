"""Rule 4, environment: writes to `os.environ` for variables the gate pins or sets for its own
plugins (protocol.PIN_ENV, protocol.GATE_ENV).

`os.environ[K] = v`, `del os.environ[K]`, `os.environ.update/setdefault/pop/clear`,
`os.putenv/unsetenv`, `monkeypatch.setenv/delenv/setitem/delitem`, `mock.patch.dict`.
Writing an unpinned variable (an application setting) is ordinary test code.
"""

from __future__ import annotations

import ast

from entropy_action.scan.model import Context, Hit, Unit
from entropy_action.scan.names import ModuleIndex, const_str, keyword, short
from entropy_action.testproc import protocol

EVERY = "*"  # the whole environment is replaced or cleared
ENVIRON_METHODS = frozenset({"update", "setdefault", "pop", "__setitem__", "__delitem__"})
CLEARING = frozenset({"clear", "popitem"})
PATCH_DICT = frozenset({"unittest.mock.patch.dict", "mock.patch.dict"})


def find(ctx: Context, unit: Unit) -> list[Hit]:
    hits: list[Hit] = []
    restores = _restores(ctx, unit)
    for node in unit.nodes:
        names = _written(ctx, unit.module, node)
        if not names or (EVERY in names and restores and _clears(node)):
            continue  # os.environ.clear(); os.environ.update(saved): a restore
        pinned = (
            sorted(ctx.rules.pinned_env)
            if EVERY in names
            else sorted(n for n in names if n in ctx.rules.pinned_env)
        )
        if not pinned:
            continue
        shown = ", ".join(pinned) if EVERY not in names else "every pinned variable"
        them = "it" if len(pinned) == 1 else "them"
        if EVERY not in names and set(pinned) <= protocol.GATE_ENV:
            why = f"the gate sets {them} to run its own plugins; changing {them} tampers with it"
        else:
            why = (
                f"the gate pins {them}; changing {them} inside the test process hides what "
                "the pin guards"
            )
        message = f"{shown} written in {unit.where()}: {short(node)} — {why}"
        hits.append(unit.hit("env_write", node, message))
    return hits


def _restores(ctx: Context, unit: Unit) -> bool:
    """Whether the code puts a saved copy back: `os.environ.update(saved)`."""
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "update"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Name)
        and is_environ(ctx, unit.module, node.func.value)
        for node in unit.nodes
    )


def _clears(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in CLEARING
    )


def is_environ(ctx: Context, module: ModuleIndex, expr: ast.expr) -> bool:
    if const_str(expr) == "os.environ":
        return True
    return ctx.dotted(expr, module) == "os.environ"


def reads_variable(ctx: Context, module: ModuleIndex, expr: ast.expr) -> str | None:
    """The variable `os.environ[K]`, `os.environ.get(K)` or `os.getenv(K)` reads."""
    if isinstance(expr, ast.Subscript) and is_environ(ctx, module, expr.value):
        return const_str(expr.slice)
    if isinstance(expr, ast.Call) and expr.args:
        func = expr.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "get"
            and is_environ(ctx, module, func.value)
        ):
            return const_str(expr.args[0])
        if ctx.dotted(func, module) == "os.getenv":
            return const_str(expr.args[0])
    return None


def _written(ctx: Context, module: ModuleIndex, node: ast.AST) -> set[str]:
    """The variables `node` writes (EVERY when it replaces or clears the environment)."""
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        return {name for t in targets for name in _target_names(ctx, module, t)}
    if isinstance(node, ast.Call):
        return _call_writes(ctx, module, node)
    return set()


def _target_names(ctx: Context, module: ModuleIndex, target: ast.expr) -> set[str]:
    if isinstance(target, ast.Subscript) and is_environ(ctx, module, target.value):
        key = const_str(target.slice)
        return {key} if key else set()
    if isinstance(target, ast.Attribute) and ctx.dotted(target, module) == "os.environ":
        return {EVERY}
    return set()


def _call_writes(ctx: Context, module: ModuleIndex, call: ast.Call) -> set[str]:
    func = call.func
    args = call.args
    if isinstance(func, ast.Attribute) and is_environ(ctx, module, func.value):
        if func.attr in CLEARING:
            return {EVERY}
        if func.attr == "update":
            return _mapping_keys(args[0] if args else None) | {
                k.arg for k in call.keywords if k.arg
            }
        return (
            {k for k in [const_str(args[0]) if args else None] if k}
            if func.attr in ENVIRON_METHODS
            else set()
        )
    dotted = ctx.dotted(func, module) or ""
    if dotted in ("os.putenv", "os.unsetenv") and args:
        return {k for k in [const_str(args[0])] if k}
    if isinstance(func, ast.Attribute) and func.attr in ("setenv", "delenv") and args:
        return {k for k in [const_str(args[0])] if k}
    if isinstance(func, ast.Attribute) and func.attr in ("setitem", "delitem") and len(args) >= 2:
        return {k for k in [const_str(args[1])] if k} if is_environ(ctx, module, args[0]) else set()
    if (dotted in PATCH_DICT or _mocker_dict(func)) and args and is_environ(ctx, module, args[0]):
        clear = keyword(call, "clear")
        if isinstance(clear, ast.Constant) and clear.value:
            return {EVERY}
        values = _mapping_keys(args[1] if len(args) > 1 else keyword(call, "values"))
        return values | {k.arg for k in call.keywords if k.arg and k.arg not in ("clear", "values")}
    return set()


def _mocker_dict(func: ast.expr) -> bool:
    """pytest-mock's `mocker.patch.dict`."""
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "dict"
        and isinstance(func.value, ast.Attribute)
        and func.value.attr == "patch"
        and isinstance(func.value.value, ast.Name)
        and func.value.value.id.endswith("mocker")
    )


def _mapping_keys(expr: ast.expr | None) -> set[str]:
    if isinstance(expr, ast.Dict):
        return {k for key in expr.keys if key is not None and (k := const_str(key))}
    return set()
