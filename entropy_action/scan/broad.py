"""Broad raises: a check that any exception satisfies, and the value assertions it replaces.

`with pytest.raises(Exception): parse(bad)` passes on every defect that raises — a
ValueError the patch introduced included — so it is no precise assertion: it does not count
in `assertions_dropped`'s comparison (weakening.py), and a broad raises new in a test whose
base version made a value assertion that the head's no longer makes is `assertion_broadened`.

Broad: `pytest.raises` (however imported), `self.assertRaises` / `assertRaisesRegex` /
`failUnlessRaises`, and `contextlib.suppress` whose expected exception is `Exception` or
`BaseException`, alone or in a tuple (`pytest.raises((ValueError, Exception))`). A value
assertion: an `assert` of a comparison (`assert x == y`, `assert x in y`) and unittest's
comparing methods (`assertEqual` and the others of vocabulary.UNITTEST_SAME_SIDES, and
`assertNotEqual`, `assertAlmostEqual`...).
"""

from __future__ import annotations

import ast

from entropy_action.testproc import vocabulary

RAISES = frozenset({"pytest.raises", "contextlib.suppress"})
UNITTEST_RAISES = vocabulary.UNITTEST_RAISES
UNITTEST_VALUES = vocabulary.UNITTEST_SAME_SIDES | frozenset(
    {"assertNotEqual", "assertNotEquals", "assertNotAlmostEqual", "assertIn", "assertNotIn"}
)


def is_broad(node: ast.AST, dotted: str | None) -> bool:
    """Whether `node` is a call that any exception satisfies (`dotted`: what the scan
    resolved its callee to)."""
    if not isinstance(node, ast.Call) or not node.args:
        return False
    func = node.func
    unittest = isinstance(func, ast.Attribute) and func.attr in UNITTEST_RAISES
    if dotted not in RAISES and not unittest:
        return False
    expected = node.args if dotted == "contextlib.suppress" else node.args[:1]
    return any(_broad_type(arg) for arg in expected)


def _broad_type(expr: ast.expr) -> bool:
    names = expr.elts if isinstance(expr, ast.Tuple) else [expr]
    return any(
        (n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else "")
        in vocabulary.BROAD_EXCEPTIONS
        for n in names
    )


def value_assertion(node: ast.AST) -> str | None:
    """The normalized source of a value assertion (to tell whether the head still makes
    it), or None for any other node."""
    if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare):
        return _dump(node.test)
    func = node.func if isinstance(node, ast.Call) else None
    if isinstance(func, ast.Attribute) and func.attr in UNITTEST_VALUES:
        return _dump(node)
    return None


def _dump(node: ast.AST) -> str:
    try:
        return ast.dump(node)
    except RecursionError:
        return f"<deep assertion at line {getattr(node, 'lineno', 0)}>"
