"""The property tests a patch added or changed: the test functions of the property module at
the head (module level and in test classes) whose source differs from the base's, or that
the base does not have. Host B runs the module in designed orders for them
(gate.orderdep.probe_orders)."""

from __future__ import annotations

import ast

from entropy_action.manifest.baseline import PinCheck
from entropy_action.scan.source import CommitTree, Parsed, head_tree, parse


def changed_tests(check: PinCheck) -> frozenset[str]:
    """The names of the head's property tests that are new or changed against the base ref
    (none without a base: nothing tells new from old)."""
    if check.head is None or check.base_commit is None:
        return frozenset()
    module = check.head.manifest.module
    base_module = check.base.manifest.module if check.base is not None else module
    head = _tests(parse(head_tree(check.root, staged=check.staged), module))
    base = _tests(parse(CommitTree(check.root, check.base_commit), base_module))
    return frozenset(name for name, source in head.items() if base.get(name) != source)


def _tests(parsed: Parsed | None) -> dict[str, str]:
    """Test name -> its normalized source (ast.dump: no lines, no comments)."""
    if parsed is None or parsed.tree is None:
        return {}
    found: dict[str, str] = {}
    for stmt in parsed.tree.body:
        body = stmt.body if isinstance(stmt, ast.ClassDef) else [stmt]
        for node in body:
            name = node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else ""
            if name.startswith("test"):
                found[name] = ast.dump(node)
    return found
