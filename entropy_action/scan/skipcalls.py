"""Rule 2: skip calls reachable from a property test.

`pytest.skip`, `pytest.xfail`, `pytest.importorskip`, `raise unittest.SkipTest`,
`self.skipTest`, and markers added at run time (`request.applymarker(pytest.mark.skip)`) —
in the test, the helpers and fixtures it reaches, the code its module and conftests run at
import, and the conftest hooks that run around every test.

Import guards (`import_guards`): a skip that fires only when an import fails —
`pytest.importorskip(...)`, or a skip inside `except ImportError:` (or ModuleNotFoundError)
around a `try:` that imports — guards the tests against a missing dependency, not against an
entropy source. Where the run-time evidence shows every test it guards ran on both hosts
(and at the base, where the base had it), it never fired, and the judge makes its finding a
notice (gate/judge.py). A skip on anything else (TZ, the platform, a flag) stays a finding
whatever the run shows: the pins keep it from firing under the gate, not elsewhere.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from entropy_action.scan import markers
from entropy_action.scan.model import Context, Hit, Unit, ancestors, units
from entropy_action.scan.names import short

SKIP_CALLS = {
    "pytest.skip": "pytest.skip",
    "pytest.xfail": "pytest.xfail",
    "pytest.importorskip": "pytest.importorskip",
    "_pytest.outcomes.skip": "pytest.skip",
    "_pytest.outcomes.xfail": "pytest.xfail",
    "_pytest.outcomes.importorskip": "pytest.importorskip",
}
SKIP_EXCEPTIONS = frozenset(
    {
        "unittest.SkipTest",
        "unittest.case.SkipTest",
        "pytest.skip.Exception",
        "pytest.xfail.Exception",
        "_pytest.outcomes.Skipped",
        "_pytest.outcomes.XFailed",
        "nose.SkipTest",
    }
)
WHY = {
    "pytest.importorskip": "a missing or broken import reads as a skip, not a failure",
    "pytest.xfail": "the property stops and reports an expected failure instead of a verdict",
}
DEFAULT_WHY = "the property stops and reports skipped instead of running to a verdict"


def find(ctx: Context) -> list[Hit]:
    hits: list[Hit] = []
    for unit in units(ctx, production=True, whole_module=False):
        for node in unit.nodes:
            what = _skip(ctx, unit, node)
            if what is not None:
                why = WHY["pytest.xfail"] if "xfail" in what.lower() else WHY.get(what, DEFAULT_WHY)
                message = f"{what} in {unit.where()}: {short(node)} — {why}"
                hits.append(unit.hit("skip_call", node, message))
    return hits


def _skip(ctx: Context, unit: Unit, node: ast.AST) -> str | None:
    """What kind of skip `node` is, or None."""
    if isinstance(node, ast.Raise) and node.exc is not None:
        exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        dotted = ctx.dotted(exc, unit.module)
        return "raise SkipTest" if dotted in SKIP_EXCEPTIONS else None
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "skipTest":
        return "self.skipTest"
    if isinstance(func, ast.Attribute) and func.attr in ("applymarker", "add_marker") and node.args:
        marker = markers.classify(ctx, node.args[0], unit.module)
        if marker is not None and marker.name not in markers.CLOCK_MARKERS:
            return f"run-time marker '{marker.name}' ({func.attr})"
        return None
    dotted = ctx.dotted(func, unit.module)
    return SKIP_CALLS.get(dotted) if dotted else None


IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})


@dataclass(frozen=True)
class Guard:
    """A skip that fires only when an import fails, and the property tests it can skip."""

    path: str
    line: int
    tests: tuple[str, ...] | None  # None: every property of the module (import-time code)


def import_guards(ctx: Context) -> list[Guard]:
    """The skip calls `find` reports that only an import failure reaches."""
    found: list[Guard] = []
    for unit in units(ctx, production=True, whole_module=False):
        for node in unit.nodes:
            what = _skip(ctx, unit, node)
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
    names = [
        name for name, funcs in ctx.reached.items() if any(f.node is root for f in funcs.values())
    ]
    return tuple(dict.fromkeys(names)) or None
