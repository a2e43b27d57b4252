"""Rule 3b: the hooks a name-based reading misses, and the plugins that load them.

- the spec a hook implements: `@pytest.hookimpl(specname="pytest_runtest_call")` on a
  function of any name counts as `pytest_runtest_call` (`spec`);
- the files the run loads as plugins beyond conftests, `pytest_plugins` and `-p`: modules
  named by `pluginmanager.register(...)` / `import_plugin(...)` calls and the project's own
  `pytest11` entry points (entrypoints.py) (`loaded`); the calls and the entry points are findings
  themselves (`hook_added`);
- a hook wrapper (`wrapper=True` / `hookwrapper=True`) that catches broadly (`Exception`,
  `BaseException`, bare) around its `yield`, and so swallows every outcome it wraps;
- pytest's own internals (`Function.runtest`, `CallInfo.from_call`, ...) assigned or
  `setattr`-ed from test code;
- retry loops: `for ...: try: <a test function's call> except Exception: continue`.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator

from entropy_action.scan import entrypoints
from entropy_action.scan.model import Context, Hit, hit
from entropy_action.scan.names import ModuleIndex, const_str, short
from entropy_action.scan.scope import Scope
from entropy_action.testproc import vocabulary

PLUGIN_CALLS = frozenset({"register", "import_plugin", "consider_module", "consider_pluginarg"})
PYTEST_OWN = ("_pytest.", "pytest.")
# Attributes of pytest's objects that run a test or report it (hookinventory.INTERNALS).
INTERNAL_ATTRS = frozenset(
    {
        "runtest",
        "setup",
        "call_and_report",
        "call_runtest_hook",
        "runtestprotocol",
        "from_call",
        "from_item_and_call",
        "pytest_pyfunc_call",
        "pytest_runtest_call",
        "pytest_runtest_makereport",
        "pytest_runtest_logreport",
        "pytest_runtestloop",
        "_outcome",
        "outcome",
    }
)
TEST_CALLEES = frozenset({"obj", "runtest", "function", "_obj", "testfunction"})


def spec(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The hook spec a function implements: its `hookimpl(specname=...)`, else its name."""
    for decorator in node.decorator_list:
        named = _hookimpl_option(decorator, "specname")
        if isinstance(named, str) and named:
            return named
    return node.name


def wraps(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`hookimpl(wrapper=True)` or `hookimpl(hookwrapper=True)`."""
    return any(
        _hookimpl_option(d, option) is True
        for d in node.decorator_list
        for option in ("wrapper", "hookwrapper")
    )


def _hookimpl_option(decorator: ast.expr, option: str) -> object:
    if not isinstance(decorator, ast.Call):
        return None
    func = decorator.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name != "hookimpl":
        return None
    for keyword in decorator.keywords:
        if keyword.arg == option and isinstance(keyword.value, ast.Constant):
            return keyword.value.value
    return None


# --- what the run loads ---------------------------------------------------------------------


def loaded(ctx: Context) -> list[str]:
    """Repository files the run loads as plugins that conftests and `-p` do not name: the
    targets of plugin-manager calls in conftests and plugins, `-p` in run.pytest_args, and
    the project's pytest11 entry points."""
    scope = ctx.scope
    found: list[str] = []
    for index in (*ctx.conftests, *ctx.plugins):
        for call in _plugin_calls(index):
            target = _call_target(scope, index, call)
            found += [target] if target else []
    args = list(ctx.rules.run_args)
    for option, value in itertools.pairwise(args):
        if option == "-p" and not value.startswith("no:"):
            target = scope.finder.find(value, scope.property_path)
            found += [target] if target else []
    for entry in entrypoints.entry_points(scope):
        target = scope.finder.find(entry.value.partition(":")[0].strip(), scope.property_path)
        found += [target] if target else []
    return list(dict.fromkeys(found))


def _plugin_calls(index: ModuleIndex) -> Iterator[ast.Call]:
    aliases = _manager_aliases(index.tree)
    for node in ast.walk(index.tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr in PLUGIN_CALLS and _is_manager(node.func.value, aliases):
            yield node


def _manager_aliases(tree: ast.Module) -> frozenset[str]:
    """Names bound to a plugin manager: `pm = config.pluginmanager`."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _is_manager(node.value, frozenset()):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return frozenset(names)


def _is_manager(expr: ast.expr, aliases: frozenset[str]) -> bool:
    if isinstance(expr, ast.Attribute):
        return expr.attr in ("pluginmanager", "_pluginmanager")
    if isinstance(expr, ast.Call):  # PytestPluginManager(), get_plugin_manager()
        return "pluginmanager" in short(expr.func).lower().replace("_", "")
    return isinstance(expr, ast.Name) and expr.id in aliases


def _call_target(scope: Scope, index: ModuleIndex, call: ast.Call) -> str | None:
    """The repository file a plugin-manager call loads, when the scan can name it."""
    if not call.args:
        return None
    arg = call.args[0]
    text = const_str(arg)
    if text is not None:
        return scope.finder.find(text, index.path)
    if isinstance(arg, ast.Call):
        arg = arg.func
    ref = scope.resolve(arg, index) if isinstance(arg, (ast.Name, ast.Attribute)) else None
    return ref.path if ref is not None and ref.path != index.path else None


# --- the findings ---------------------------------------------------------------------------


def find(ctx: Context) -> list[Hit]:
    hits: list[Hit] = []
    modules = _modules(ctx)
    for index in (*ctx.conftests, *ctx.plugins):
        hits += [_registration(index, call) for call in _plugin_calls(index)]
        hits += _swallowing_wrappers(index)
    for entry in entrypoints.entry_points(ctx.scope):
        message = (
            f"pytest11 entry point '{entry.name} = {entry.value}' in {entry.path}: installing "
            "the project (the workflow's `pip install -e .`) loads it as a plugin in every run"
        )
        hits.append(
            hit("hook_added", entry.path, entry.line, message, subject=entry.name, key=entry.value)
        )
    for index in modules:
        hits += _internals(ctx, index)
        hits += _retries(index)
    return hits


def _modules(ctx: Context) -> list[ModuleIndex]:
    found = [m for m in (ctx.module, *ctx.conftests, *ctx.plugins) if m is not None]
    return list({m.path: m for m in found}.values())


def _registration(index: ModuleIndex, call: ast.Call) -> Hit:
    assert isinstance(call.func, ast.Attribute)
    message = (
        f"{short(call)} in {index.path} registers a plugin at run time: its hooks run for "
        "every property, and the scan reads them only where it can name the module"
    )
    return hit("hook_added", index.path, call.lineno, message, subject=call.func.attr, node=call)


def _swallowing_wrappers(index: ModuleIndex) -> list[Hit]:
    hits: list[Hit] = []
    for node in ast.walk(index.tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not wraps(node):
            continue
        for guard in ast.walk(node):
            if not isinstance(guard, ast.Try) or not _yields(guard.body):
                continue
            for handler in guard.handlers:
                if _broad(handler.type) and not _reraises(handler):
                    caught = short(handler.type) if handler.type else "bare except"
                    message = (
                        f"hook wrapper {node.name} ({spec(node)}) in {index.path} catches "
                        f"{caught} around its yield: every outcome of the hooks it wraps is "
                        "swallowed, so a failing property reports as passed"
                    )
                    hits.append(
                        hit(
                            "report_tampering",
                            index.path,
                            handler.lineno,
                            message,
                            subject=node.name,
                            node=guard,
                        )
                    )
    return hits


def _yields(body: list[ast.stmt]) -> bool:
    return any(isinstance(n, (ast.Yield, ast.YieldFrom)) for s in body for n in ast.walk(s))


def _broad(expr: ast.expr | None, *, assertion: bool = True) -> bool:
    """A bare except, `Exception`, `BaseException` (in a tuple too), or with `assertion`
    AssertionError: a handler that catches a failing test."""
    if expr is None:
        return True
    names = expr.elts if isinstance(expr, ast.Tuple) else [expr]
    ids = {n.id if isinstance(n, ast.Name) else getattr(n, "attr", "") for n in names}
    caught = vocabulary.BROAD_EXCEPTIONS | ({vocabulary.ASSERTION_ERROR} if assertion else set())
    return bool(ids & caught)


def _reraises(handler: ast.ExceptHandler) -> bool:
    return any(isinstance(n, ast.Raise) for s in handler.body for n in ast.walk(s))


def _internals(ctx: Context, index: ModuleIndex) -> list[Hit]:
    """`Function.runtest = ...`, `setattr(Function, "runtest", ...)`, monkeypatch.setattr."""
    hits: list[Hit] = []
    for node in ast.walk(index.tree):
        target = _replaced(ctx, index, node)
        if target is None:
            continue
        message = (
            f"{short(node)} in {index.path} replaces pytest's own {target}, which runs or "
            "reports every test: a replacement can swallow a failure"
        )
        hits.append(
            hit(
                "report_tampering",
                index.path,
                int(getattr(node, "lineno", 1)),
                message,
                subject=target,
                node=node,
            )
        )
    return hits


def _replaced(ctx: Context, index: ModuleIndex, node: ast.AST) -> str | None:
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and target.attr in INTERNAL_ATTRS:
                owner = ctx.dotted(target.value, index) or ""
                if owner.startswith(PYTEST_OWN):
                    return f"{owner}.{target.attr}"
        return None
    if not isinstance(node, ast.Call) or not node.args:
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name != "setattr":
        return None
    first = const_str(node.args[0])
    if first is not None:  # monkeypatch.setattr("_pytest.python.Function.runtest", ...)
        attr = first.rpartition(".")[2]
        return first if first.startswith(PYTEST_OWN) and attr in INTERNAL_ATTRS else None
    named = const_str(node.args[1]) if len(node.args) > 1 else None
    owner = ctx.dotted(node.args[0], index) or ""
    if named in INTERNAL_ATTRS and owner.startswith(PYTEST_OWN):
        return f"{owner}.{named}"
    return None


def _retries(index: ModuleIndex) -> list[Hit]:
    """A loop around `try: <a test function's call> except <broad>: continue/pass`."""
    hits: list[Hit] = []
    seen: set[int] = set()
    for func in ast.walk(index.tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = _parameters(func)
        for loop in ast.walk(func):
            if not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
                continue
            for guard in (n for s in loop.body for n in ast.walk(s)):
                if not isinstance(guard, ast.Try) or id(guard) in seen:
                    continue
                if not _calls_test(guard.body, params):
                    continue
                seen.add(id(guard))
                for handler in guard.handlers:
                    # AssertionError alone: the assertion_swallowed rule's (weakening)
                    if _broad(handler.type, assertion=False) and not _reraises(handler):
                        hits.append(_retry_hit(index, func, guard, handler))
    return hits


def _retry_hit(
    index: ModuleIndex, func: ast.FunctionDef | ast.AsyncFunctionDef, guard: ast.Try,
    handler: ast.ExceptHandler,
) -> Hit:  # fmt: skip
    caught = short(handler.type) if handler.type else "bare except"
    message = (
        f"{func.name} in {index.path} retries a test function and catches {caught}: a "
        "failing attempt is discarded until one passes, so a property that fails only "
        "sometimes reports as passed"
    )
    return hit(
        "assertion_swallowed", index.path, handler.lineno, message, subject=func.name, node=guard
    )


def _parameters(func: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The parameters of `func` and of the functions nested in it: a decorator's wrapper
    calls the test it was given, a name of the decorator's own."""
    names: set[str] = set()
    for node in ast.walk(func):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            names.update(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))
    return frozenset(names)


def _calls_test(body: list[ast.stmt], params: frozenset[str]) -> bool:
    """A call of something the function was given (a decorated test), or of a test item's
    `obj` / `runtest` / `function`."""
    for node in (n for s in body for n in ast.walk(s)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in TEST_CALLEES:
            return True
        if isinstance(func, ast.Name) and (func.id in params or func.id in TEST_CALLEES):
            return True
    return False
