"""Rule 2: skip calls reachable from a property test.

`pytest.skip`, `pytest.xfail`, `pytest.importorskip`, `raise unittest.SkipTest`,
`self.skipTest`, and markers added at run time (`request.applymarker(pytest.mark.skip)`) —
in the test, the helpers and fixtures it reaches, the code its module and conftests run at
import, and the conftest hooks that run around every test.
"""

from __future__ import annotations

import ast

from entropy_action.scan import markers
from entropy_action.scan.model import Context, Hit, Unit, units
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
            what = skip_kind(ctx, unit, node)
            if what is not None:
                why = WHY["pytest.xfail"] if "xfail" in what.lower() else WHY.get(what, DEFAULT_WHY)
                message = f"{what} in {unit.where()}: {short(node)} — {why}"
                hits.append(unit.hit("skip_call", node, message))
    return hits


def skip_kind(ctx: Context, unit: Unit, node: ast.AST) -> str | None:
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
