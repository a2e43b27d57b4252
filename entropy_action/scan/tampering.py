"""Rule 3: collection and report tampering in conftests, repository plugins and pytest's config.

Hooks are identified with their whole source, so an unchanged hook that stood at the base
is a notice and any edit to it counts against the patch.
"""

from __future__ import annotations

import ast
import sys
from pathlib import PurePosixPath

from entropy_action.core.findings import FindingKind
from entropy_action.scan import hooks, markers, patching, selection
from entropy_action.scan.model import Context, Hit, hit
from entropy_action.scan.names import ModuleIndex, const_str, short
from entropy_action.verdict import hook_inventory

COLLECTION_HOOKS = {
    "pytest_collection_modifyitems": "can drop, deselect, reorder or re-mark property tests",
    "pytest_ignore_collect": "can keep the property module from being collected",
    "pytest_deselected": "reacts to deselected tests (deselection hides a property)",
    "pytest_pycollect_makeitem": "decides which functions become tests",
    "pytest_collection": "can replace collection altogether",
    "pytest_generate_tests": "can parametrize a property into zero cases (skipped)",
}
REPORT_HOOKS = {
    "pytest_runtest_makereport": "can rewrite a test's outcome (a failure reported as a pass)",
    "pytest_report_teststatus": "can rewrite how an outcome is reported",
    "pytest_runtest_logreport": "can rewrite a test's report",
    "pytest_runtest_protocol": "can run a test differently or not at all",
    "pytest_runtest_call": "can run a test's body differently or swallow its failure",
    "pytest_pyfunc_call": "can call a test function differently or not at all",
}
CONFTEST_VARIABLES = ("collect_ignore", "collect_ignore_glob")
SELECTING = {
    "-k": "deselects tests by keyword",
    "-m": "deselects tests by marker",
    "--deselect": "deselects tests by id",
    "--ignore": "ignores paths at collection",
    "--ignore-glob": "ignores paths at collection",
    "--lf": "runs only the tests that failed last time",
    "--last-failed": "runs only the tests that failed last time",
    "--sw": "skips tests up to the last failure",
    "--stepwise": "skips tests up to the last failure",
    "--stepwise-skip": "skips tests up to the last failure",
    "--reruns": "re-runs failing tests until they pass",
}
TAKES_VALUE = frozenset(
    {
        "-k",
        "-m",
        "-p",
        "--deselect",
        "--ignore",
        "--ignore-glob",
        "--reruns",
        "--hypothesis-seed",
        "--hypothesis-profile",
    }
)
FIXED_EXAMPLES = (
    "hypothesis explores the examples of one fixed seed instead of fresh ones each run, so a "
    "property that fails only on some inputs stays green"
)


def find(ctx: Context) -> list[Hit]:
    hits: list[Hit] = []
    for index in [*ctx.conftests, *ctx.plugins]:
        hits += _hooks(index, ctx)
        if index.path.endswith("conftest.py"):
            hits += _variables(ctx, index)
    hits += _addopts(ctx)
    return hits


def _hooks(index: ModuleIndex, ctx: Context) -> list[Hit]:
    hits: list[Hit] = []
    for node in ast.walk(index.tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        kind: FindingKind
        name = hooks.spec(node)  # `hookimpl(specname=...)` counts as the spec's hook
        if name in QUIET_SPECS and (bookkeeping_only(node) or reaches_no_run(node)):
            ctx.quiet_hooks.append((index.path, node.lineno))
            continue
        if name in COLLECTION_HOOKS:
            kind, why = "collection_tampering", COLLECTION_HOOKS[name]
        elif name in REPORT_HOOKS:
            kind, why = "report_tampering", REPORT_HOOKS[name]
        elif (found := hook_inventory.category(name)) is not None:
            kind, why = found[0], f"is {found[1]}"
        else:
            continue
        shown = name if name == node.name else f"{name} (as {node.name})"
        message = f"hook {shown} in {index.path} {why}"
        made = hit(kind, index.path, node.lineno, message, subject=node.name, node=node)
        if name in hook_inventory.CONFIGURE:
            ctx.configure_hooks.append((made, node.end_lineno or node.lineno))
        hits.append(made)
    return hits


def explained(ctx: Context, hits: list[Hit]) -> list[Hit]:
    """The hits without a configuration hook's own where a finding of another rule lies in
    its body (a plugin it registers, a pinned variable it writes, a profile it loads): that
    finding says what the hook does. The inventory is told to keep quiet about it too."""
    dropped: list[Hit] = []
    for found, last in ctx.configure_hooks:
        where = found.finding
        inside = any(
            other is not found
            and other.finding.path == where.path
            and where.line <= other.finding.line <= last
            for other in hits
        )
        if inside:
            dropped.append(found)
            ctx.quiet_hooks.append((where.path, where.line))
    return [h for h in hits if not any(h is d for d in dropped)]


# The hooks whose body, when it only keeps books (markers, a flag), changes nothing that runs.
QUIET_SPECS = hook_inventory.CONFIGURE | hook_inventory.SESSION_FINISH
FLAG_VALUES = (bool, int, float, str, type(None))


def bookkeeping_only(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A configuration or session-finish hook whose body only registers markers
    (`config.addinivalue_line("markers", ...)`) or sets and removes a flag: a constant on a new
    attribute of `sys` or on a module global (`sys._called_from_test = True` in
    `pytest_configure`, `del sys._called_from_test` in `pytest_unconfigure`: pytest's documented
    recipes), beside a docstring or `pass`. It changes no option, no ini value that selects
    tests, no plugin, no report. Production that reads the flag is the detection rule's
    finding, at the read."""
    declared = {name for stmt in node.body if isinstance(stmt, ast.Global) for name in stmt.names}
    return all(_bookkeeping(stmt, declared) for stmt in node.body)


# Names through which a hook's body reaches pytest's run: its own objects and modules.
RUN_NAMES = frozenset({"pytest", "_pytest", "pluggy"})


def reaches_no_run(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A configuration or session-finish hook that never touches the run: its body reads none
    of its arguments (`config`, `session`, `exitstatus`...), names neither pytest, `_pytest`
    nor pluggy (nor imports them), returns no value and does not yield — it sets the project
    up or tears it down (`django.setup()`, a database created and dropped, logging
    configured). It can still change what production does (a setting it writes): the base's
    test side run on the head's code judges that, and the other rules read its body."""
    arguments = node.args
    params = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)} | {
        a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None
    }
    for inner in ast.walk(ast.Module(body=node.body, type_ignores=[])):
        if isinstance(inner, ast.Name) and (inner.id in params or inner.id in RUN_NAMES):
            return False
        if isinstance(inner, (ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal)):
            return False
        if isinstance(inner, ast.Return) and inner.value is not None:
            return False
        if isinstance(inner, ast.Import) and any(_run_module(a.name) for a in inner.names):
            return False
        if isinstance(inner, ast.ImportFrom) and _run_module(inner.module or ""):
            return False
        if isinstance(inner, ast.Call) and any(_run_module(const_str(a)) for a in inner.args):
            return False  # importlib.import_module("_pytest.python")
        if isinstance(inner, ast.Call) and _ends_the_process(inner.func):
            return False  # os._exit(0) before the reports are written
        if isinstance(inner, ast.Constant) and str(inner.value).startswith("PYTEST_"):
            return False  # pytest's own variables (PYTEST_ADDOPTS)
    return True


def _ends_the_process(func: ast.expr) -> bool:
    if isinstance(func, ast.Attribute):
        return func.attr in ("_exit", "exit", "abort", "kill", "killpg")
    return isinstance(func, ast.Name) and func.id in ("exit", "quit")


def _run_module(name: str | None) -> bool:
    """`pytest`, `_pytest.python`, `pluggy`: a module of the run (never prose: no spaces)."""
    return name is not None and name.split(".", maxsplit=1)[0] in RUN_NAMES


def _bookkeeping(stmt: ast.stmt, declared: set[str]) -> bool:
    if isinstance(stmt, (ast.Pass, ast.Global)):
        return True
    if isinstance(stmt, ast.Assign):
        constant = isinstance(stmt.value, ast.Constant) and isinstance(
            stmt.value.value, FLAG_VALUES
        )
        return constant and all(_flag(target, declared) for target in stmt.targets)
    if isinstance(stmt, ast.Delete):
        return all(_flag(target, declared) for target in stmt.targets)
    value = stmt.value if isinstance(stmt, ast.Expr) else None
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return True  # a docstring
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr == "addinivalue_line":
        return bool(value.args) and const_str(value.args[0]) == "markers"
    if isinstance(func, ast.Name) and func.id == "delattr" and len(value.args) == 2:
        subject, attribute = value.args
        return _sys(subject) and _new_sys_attribute(const_str(attribute))
    return False


def _flag(target: ast.expr, declared: set[str]) -> bool:
    """`sys.<a name sys does not define>` or a global the hook declared."""
    if isinstance(target, ast.Name):
        return target.id in declared
    return (
        isinstance(target, ast.Attribute)
        and _sys(target.value)
        and (_new_sys_attribute(target.attr))
    )


def _sys(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "sys"


def _new_sys_attribute(name: str | None) -> bool:
    """A name the interpreter's `sys` does not define (`sys.path`, `sys.argv`, `sys.stdout`
    rebound in a hook change what runs or what is shown)."""
    return name is not None and not hasattr(sys, name)


def _variables(ctx: Context, index: ModuleIndex) -> list[Hit]:
    """`collect_ignore` / `collect_ignore_glob` entries that can drop the property module
    (an entry naming another file is not a finding; one the scan cannot read is)."""
    hits: list[Hit] = []
    module = ctx.scope.property_path
    parent = str(PurePosixPath(index.path).parent)
    folder = "" if parent == "." else parent
    for node in ast.walk(index.tree):
        target = _conftest_variable(node)
        if target is None or not isinstance(node, (ast.stmt, ast.expr)):
            continue
        entries = _entries(node)
        glob = target == "collect_ignore_glob"
        if entries is not None and not any(
            e is None or selection.ignores(module, folder, e, glob=glob) for e in entries
        ):
            continue
        named = entries is not None and None not in entries
        message = (
            f"{target} in {index.path} ({short(node)}) drops the property module "
            f"{module} from collection — its properties never run"
            if named
            else f"{target} in {index.path} ({short(node)}) drops files from collection that "
            "the scan cannot name — if they include the property module, its properties "
            "never run"
        )
        hits.append(
            hit("collection_tampering", index.path, node.lineno, message, subject=target, node=node)
        )
    return hits


def _entries(node: ast.AST) -> list[str | None] | None:
    """The paths a `collect_ignore` statement adds (None for one that is not a literal), or
    None when the statement's value is not a list the scan can read."""
    value: ast.expr | None = None
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        value = node.value
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
        if node.func.attr in ("append", "insert"):
            return [const_str(node.args[-1])]
        value = node.args[0]
    if isinstance(value, (ast.List, ast.Tuple)):
        return [const_str(element) for element in value.elts]
    return None


def _conftest_variable(node: ast.AST) -> str | None:
    """`collect_ignore = ...`, `collect_ignore += ...`, `collect_ignore.append(...)`."""
    targets: list[ast.expr] = []
    value = getattr(node, "value", None)
    if isinstance(value, (ast.List, ast.Tuple)) and not value.elts:
        return None  # `collect_ignore = []` drops nothing
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("append", "extend", "insert", "__iadd__")
    ):
        targets = [node.func.value]
    for target in targets:
        if isinstance(target, ast.Name) and target.id in CONFTEST_VARIABLES:
            return target.id
    return None


def _addopts(ctx: Context) -> list[Hit]:
    config = ctx.scope.config
    if config.path is None or _overridden(ctx.rules.run_args):
        return []
    hits: list[Hit] = []
    tokens = list(config.addopts)
    taken = -1  # the index of a value already read with its option
    for index, (_, line) in enumerate(tokens):
        if index == taken:
            continue
        option, value, taken = _option(tokens, index)
        why = _selection(ctx, option, value)
        if why is None:
            continue
        shown = f"{option} {value}".strip()
        message = f"addopts in {config.path} passes '{shown}' — {why}"
        hits.append(hit("config_selection", config.path, line, message, subject=shown, key=""))
    return hits


def _option(tokens: list[tuple[str, int]], index: int) -> tuple[str, str, int]:
    """The option at `index`, its value (inline, or the next argument when it takes one) and
    the index of that next argument when it was read (-1 otherwise)."""
    token = tokens[index][0]
    option, _, inline = token.partition("=")
    if not token.startswith("--") and len(token) > 2 and token[:2] in ("-k", "-m", "-p"):
        option, inline = token[:2], token[2:]
    if inline or option not in TAKES_VALUE or index + 1 >= len(tokens):
        return option, inline, -1
    return option, tokens[index + 1][0], index + 1


def _selection(ctx: Context, option: str, value: str) -> str | None:
    """What the option does to the properties, or None when it cannot touch them."""
    module = ctx.scope.property_path
    if option == "-p":
        plugin = value.removeprefix("no:")
        if value.startswith("no:") and plugin not in ctx.rules.reporting_plugins:
            return (
                f"it disables the plugin '{plugin}', which can change which tests run and how, "
                "so a property can stop running unnoticed"
            )
        return None
    if option == "--hypothesis-seed":
        pinned = ctx.rules.rng_seed is not None and value == str(ctx.rules.rng_seed)
        return None if pinned else FIXED_EXAMPLES
    if option == "--hypothesis-profile":
        fixed = value in patching.derandomized_profiles(ctx)
        return f"the profile '{value}' is derandomized: {FIXED_EXAMPLES}" if fixed else None
    if option not in SELECTING or not _can_deselect(ctx, module, option, value):
        return None
    return f"it {SELECTING[option]}, so a property can stop running unnoticed"


def _can_deselect(ctx: Context, module: str, option: str, value: str) -> bool:
    if option == "-m":
        return selection.deselects_marks(value, markers.carried(ctx))
    if option == "--deselect":
        return selection.deselects_id(module, [t.name for t in ctx.tests], value)
    if option in ("--ignore", "--ignore-glob"):
        return selection.ignores(module, "", value, glob=option == "--ignore-glob")
    return True


def _overridden(run_args: tuple[str, ...]) -> bool:
    """`run.pytest_args` replaces addopts (`-o addopts=...`): the file's addopts do not apply."""
    for index, arg in enumerate(run_args):
        value = arg
        if arg in ("-o", "--override-ini") and index + 1 < len(run_args):
            value = run_args[index + 1]
        value = value.removeprefix("--override-ini=").removeprefix("-o")
        if value.strip().startswith("addopts="):
            return True
    return False
