"""Rule 3: collection and report tampering in conftests, repository plugins and pytest's config.

Hooks are identified with their whole source, so an unchanged hook that stood at the base
is a notice and any edit to it counts against the patch.
"""

from __future__ import annotations

import ast

from entropy_action.findings import FindingKind
from entropy_action.scan.model import Context, Hit, hit
from entropy_action.scan.names import ModuleIndex, short

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


def find(ctx: Context) -> list[Hit]:
    hits: list[Hit] = []
    for index in [*ctx.conftests, *ctx.plugins]:
        hits += _hooks(index)
        if index.path.endswith("conftest.py"):
            hits += _variables(index)
    hits += _addopts(ctx)
    return hits


def _hooks(index: ModuleIndex) -> list[Hit]:
    hits: list[Hit] = []
    for node in ast.walk(index.tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        kind: FindingKind
        if node.name in COLLECTION_HOOKS:
            kind, why = "collection_tampering", COLLECTION_HOOKS[node.name]
        elif node.name in REPORT_HOOKS:
            kind, why = "report_tampering", REPORT_HOOKS[node.name]
        else:
            continue
        message = f"hook {node.name} in {index.path} {why}"
        hits.append(hit(kind, index.path, node.lineno, message, None, node))
    return hits


def _variables(index: ModuleIndex) -> list[Hit]:
    hits: list[Hit] = []
    for node in ast.walk(index.tree):
        target = _conftest_variable(node)
        if target is None or not isinstance(node, (ast.stmt, ast.expr)):
            continue
        message = (
            f"{target} in {index.path} ({short(node)}) drops files from collection — "
            "a property module it matches never runs"
        )
        hits.append(hit("collection_tampering", index.path, node.lineno, message, None, node))
    return hits


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
    for index, (token, line) in enumerate(tokens):
        option, _, inline = token.partition("=")
        if not token.startswith("--") and len(token) > 2 and token[:2] in ("-k", "-m", "-p"):
            option, inline = token[:2], token[2:]
        value = inline or (tokens[index + 1][0] if index + 1 < len(tokens) else "")
        why = _selection(ctx, option, value)
        if why is None:
            continue
        shown = f"{option} {value}".strip() if option != "--lf" else option
        message = (
            f"addopts in {config.path} passes '{shown}' — it {why}, "
            "so a property can stop running unnoticed"
        )
        hits.append(hit("config_selection", config.path, line, message))
    return hits


def _selection(ctx: Context, option: str, value: str) -> str | None:
    if option == "-p":
        plugin = value.removeprefix("no:")
        if value.startswith("no:") and plugin not in ctx.rules.reporting_plugins:
            return f"disables the plugin '{plugin}', which can change which tests run and how"
        return None
    return SELECTING.get(option)


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
