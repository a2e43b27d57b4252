"""What the patch changed in the property module: which tests, and whether anything else.

A test is a function whose name starts with `test`, at the top level (`name`) or in a class
(`Class::name`). When nothing but such functions differ between the base's and the head's
module (the same imports, helpers, fixtures, constants, setUp methods), a test the patch left
as it was runs alike in both modules: it kills a mutant in both or in neither, so only the
changed tests can make the modules differ (pure).

One more difference keeps that true: an added import of a module the test process has
already loaded or whose import does nothing else (the standard library, pytest), binding a
name the base's module never used and that is no builtin. A patch that adds `@pytest.mark.skip`
or `@unittest.skip` adds such an import, and an unchanged test cannot reach a name it never
used. Any other added, removed or changed statement still makes every test run.
"""

from __future__ import annotations

import ast
import builtins
import sys
from dataclasses import dataclass
from typing import TypeGuard

from entropy_action.core import pyast


@dataclass(frozen=True)
class Changes:
    tests: frozenset[str]  # tests added, removed or changed (`name`, `Class::name`)
    base_tests: frozenset[str]  # every test the base's module defines
    only_tests: bool  # nothing but tests differ: an unchanged test runs alike in both


def between(base: bytes, head: bytes) -> Changes:
    old_tree, new_tree = _parse(base), _parse(head)
    if old_tree is None or new_tree is None:
        return Changes(frozenset(), frozenset(), only_tests=False)
    (old_tests, old_rest), (new_tests, new_rest) = _units(old_tree), _units(new_tree)
    changed = frozenset(
        n for n in old_tests.keys() | new_tests.keys() if old_tests.get(n) != new_tests.get(n)
    )
    if old_rest != new_rest:
        used = _names(old_tree)
        before = {dump for dump, _ in old_rest}
        new_rest = [
            (dump, stmt)
            for dump, stmt in new_rest
            if dump in before or not _inert_import(stmt, used)
        ]
    same = [dump for dump, _ in old_rest] == [dump for dump, _ in new_rest]
    return Changes(changed, frozenset(old_tests), only_tests=same)


# imported before any test module (pytest's own), or nothing but definitions on import
_LOADED = frozenset({"pytest", "_pytest", "unittest"})
_NOT_INERT = frozenset({"this", "antigravity", "__future__"})  # imports with effects


def _inert_import(stmt: ast.stmt | None, used: frozenset[str]) -> bool:
    """An import that cannot change how an unchanged test runs (see the module's docstring)."""
    if isinstance(stmt, ast.Import):
        pairs = [(a.name, a.asname or a.name.partition(".")[0]) for a in stmt.names]
    elif isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module:
        pairs = [(stmt.module, a.asname or a.name) for a in stmt.names]
    else:
        return False
    for module, bound in pairs:
        top = module.partition(".")[0]
        known = top in _LOADED or top in sys.stdlib_module_names
        if not known or top in _NOT_INERT or bound == "*":
            return False
        if bound in used or hasattr(builtins, bound):
            return False
    return True


def _names(tree: ast.Module) -> frozenset[str]:
    """Every identifier the module mentions: names, attributes' roots, definitions, imports."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.alias):
            found.add(node.asname or node.name.partition(".")[0])
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            found.update(node.names)
    return frozenset(found)


def _parse(source: bytes) -> ast.Module | None:
    try:
        return pyast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None


def _units(tree: ast.Module) -> tuple[dict[str, str], list[tuple[str, ast.stmt | None]]]:
    """(test name -> its dump, everything else in order: its dump and statement)."""
    tests: dict[str, str] = {}
    rest: list[tuple[str, ast.stmt | None]] = []
    for stmt in tree.body:
        if _is_test(stmt):
            tests[stmt.name] = ast.dump(stmt)
        elif isinstance(stmt, ast.ClassDef):
            shell = [stmt.name, *map(ast.dump, (*stmt.bases, *stmt.keywords))]
            shell += map(ast.dump, stmt.decorator_list)
            for inner in stmt.body:
                if _is_test(inner):
                    tests[f"{stmt.name}::{inner.name}"] = ast.dump(inner)
                else:
                    shell.append(ast.dump(inner))
            rest.append((repr(shell), None))
        else:
            rest.append((ast.dump(stmt), stmt))
    return tests, rest


def _is_test(stmt: ast.stmt) -> TypeGuard[ast.FunctionDef | ast.AsyncFunctionDef]:
    return isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name.startswith(
        "test"
    )
