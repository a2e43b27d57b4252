"""What the patch changed in the property module: which tests, and whether anything else.

A test is a function whose name starts with `test`, at the top level (`name`) or in a class
(`Class::name`). When nothing but such functions differ between the base's and the head's
module (the same imports, helpers, fixtures, constants, setUp methods), a test the patch left
as it was runs alike in both modules: it kills a mutant in both or in neither, so only the
changed tests can make the modules differ (pure).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TypeGuard


@dataclass(frozen=True)
class Changes:
    tests: frozenset[str]  # tests added, removed or changed (`name`, `Class::name`)
    base_tests: frozenset[str]  # every test the base's module defines
    only_tests: bool  # nothing but tests differ: an unchanged test runs alike in both


def between(base: bytes, head: bytes) -> Changes:
    old, new = _units(base), _units(head)
    if old is None or new is None:
        return Changes(frozenset(), frozenset(), only_tests=False)
    old_tests, new_tests = old[0], new[0]
    changed = frozenset(
        n for n in old_tests.keys() | new_tests.keys() if old_tests.get(n) != new_tests.get(n)
    )
    return Changes(changed, frozenset(old_tests), only_tests=old[1] == new[1])


def _units(source: bytes) -> tuple[dict[str, str], list[str]] | None:
    """(test name -> its dump, the dumps of everything else in order), or None."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None
    tests: dict[str, str] = {}
    rest: list[str] = []
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
            rest.append(repr(shell))
        else:
            rest.append(ast.dump(stmt))
    return tests, rest


def _is_test(stmt: ast.stmt) -> TypeGuard[ast.FunctionDef | ast.AsyncFunctionDef]:
    return isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name.startswith(
        "test"
    )
