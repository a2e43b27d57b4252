"""Rule 1: skip markers on a property test, its class or its module, whatever their condition.

skip/skipif/xfail, unittest's skip decorators and every marker in
constraints.forbid_skip_markers — applied directly, through `pytestmark`, through an alias
(`skip = pytest.mark.skip`, also from another module), or through `pytest.param(marks=...)`
in a parametrize or a fixture's `params`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from entropy_action.core.findings import FindingKind
from entropy_action.scan.collect import PropertyTest, flatten_marks
from entropy_action.scan.model import Context, Hit, attribution, hit
from entropy_action.scan.names import ModuleIndex, const_str, cut_on_token, keyword, short

SKIPS = frozenset({"skip", "skipif", "xfail"})
UNITTEST_SKIPS = frozenset({"skip", "skipIf", "skipUnless", "expectedFailure"})
CLOCK_MARKERS = frozenset({"freeze_time"})  # pytest-freezegun, pytest-freezer


@dataclass(frozen=True)
class Marker:
    name: str  # "skipif", "flaky", "unittest.skipIf", "freeze_time"
    source: ast.expr  # the mark as written where it is defined (an alias's value)
    dotted: str  # what the mark resolves to: "pytest.mark.skip"

    def shown(self) -> str:
        if isinstance(self.source, ast.Call):
            return cut_on_token(f"{self.dotted}({short(self.source, 200).partition('(')[2]}", 90)
        return self.dotted


def classify(ctx: Context, expr: ast.expr, module: ModuleIndex, depth: int = 0) -> Marker | None:
    """The silencing marker `expr` applies, or None for any other marker or decorator."""
    if depth > 6:
        return None
    head = expr.func if isinstance(expr, ast.Call) else expr
    ref = ctx.scope.resolve(head, module)
    if ref is None:
        return None
    if ref.path is not None:  # an alias defined in a repository module
        found = ctx.scope.value(ref)
        if found is None or isinstance(expr, ast.Call):
            return None
        return classify(ctx, found[1], found[0], depth + 1)
    dotted = ref.name
    for prefix in ("pytest.mark.", "_pytest.mark."):
        if dotted.startswith(prefix) and dotted.count(".") == prefix.count("."):
            name = dotted.removeprefix(prefix)
            if name in SKIPS or name in ctx.rules.forbidden or name in CLOCK_MARKERS:
                return Marker(name, expr, dotted)
            return None
    for prefix in ("unittest.", "unittest.case."):
        name = dotted.removeprefix(prefix)
        if dotted.startswith(prefix) and name in UNITTEST_SKIPS:
            return Marker(f"unittest.{name}", expr, dotted)
    return None


def describe(
    ctx: Context, marker: Marker, where: str, whom: str = "the property"
) -> tuple[FindingKind, str]:
    """The finding's kind and message for a marker on `where` (a property, class, module or
    parameter case); `whom` names what it skips. The message says what the marker does,
    never that the test did not run: whether it ran is the runtime rule's to report."""
    shown = marker.shown()
    if marker.name in CLOCK_MARKERS:
        return "entropy_patched", (
            f"clock marker '{marker.name}' on {where}: {shown} — the clock is frozen inside "
            "the test process, so production code that reads the live clock is never exercised"
        )
    if marker.name in ctx.rules.forbidden:
        return "skip_marker", (
            f"skip marker '{marker.name}' on {where} — constraints.forbid_skip_markers lists it"
        )
    when = condition(marker)
    if marker.name in ("xfail", "unittest.expectedFailure"):
        return "skip_marker", (
            f"xfail marker on {where}: {shown} — {'when ' + when + ', ' if when else ''}"
            "a failure is reported as expected, so the property cannot fail the gate"
        )
    return "skip_marker", (
        f"skip marker '{marker.name}' on {where}: {shown} — it skips {whom} "
        + (
            f"{when} (counted whatever the condition is under the pins)"
            if when
            else "unconditionally"
        )
    )


def condition(marker: Marker) -> str | None:
    """ "when X", "unless X", or None for a marker that applies unconditionally."""
    call = marker.source if isinstance(marker.source, ast.Call) else None
    if call is None:
        return None
    if marker.name in ("unittest.skipIf", "unittest.skipUnless"):
        first = call.args[0] if call.args else keyword(call, "condition")
        if first is None:
            return None
        word = "unless" if marker.name == "unittest.skipUnless" else "when"
        return f"{word} {_shown_condition(first)}"
    if marker.name not in ("skipif", "xfail"):
        return None
    conditions = [*call.args, *([c] if (c := keyword(call, "condition")) is not None else [])]
    if not conditions:
        return None
    return "when " + " or ".join(_shown_condition(c) for c in conditions)


def _shown_condition(expr: ast.expr) -> str:
    text = const_str(expr)  # pytest evaluates a string condition
    return short(ast.Name(text) if text is not None else expr, 80)


def find(ctx: Context) -> list[Hit]:
    module = ctx.module
    if module is None or ctx.collector is None:
        return []
    hits: list[Hit] = []
    seen: set[int] = set()
    for test in ctx.tests:
        for level, expr in marks(ctx, test):
            if id(expr) in seen:
                continue
            seen.add(id(expr))
            hits += _mark_hits(ctx, module, expr, level)
            hits += _param_hits(ctx, module, expr, level)
    hits += _fixture_param_hits(ctx)
    return hits


def marks(ctx: Context, test: PropertyTest) -> list[tuple[str | None, ast.expr]]:
    """Every mark on the test, with the name of what it is applied to (None: the module)."""
    assert ctx.collector is not None
    module = test.func.module
    found: list[tuple[str | None, ast.expr]] = [
        (test.name, d) for d in test.func.node.decorator_list
    ]
    chain = test.func.classes
    for index, cls in enumerate(chain):
        owner = "::".join(c.name for c in chain[: index + 1])
        for klass in ctx.collector.bases(cls):
            found += [(owner, d) for d in ctx.collector.marks(klass)]
    found += [(None, m) for m in ctx.collector.marks(module.tree)]
    return found


def _where(level: str | None, test_names: list[str]) -> tuple[str, str]:
    """How a message names what a mark is applied to, and what it skips."""
    if level is None:
        return "the property module (pytestmark: every property in it)", "every property in it"
    if level in test_names:
        return f"property {level}", "the property"
    return f"class {level} (every property in it)", "every property in it"


def _mark_hits(ctx: Context, module: ModuleIndex, expr: ast.expr, level: str | None) -> list[Hit]:
    marker = classify(ctx, expr, module)
    if marker is None:
        return []
    kind, message = describe(ctx, marker, *_where(level, [t.name for t in ctx.tests]))
    subject = level or "<module>"
    return [
        hit(
            kind, module.path, expr.lineno, message, test=level, subject=subject, node=marker.source
        )
    ]


def _param_hits(ctx: Context, module: ModuleIndex, expr: ast.expr, level: str | None) -> list[Hit]:
    """Marks inside `pytest.param(..., marks=...)` cases of a parametrize."""
    values = _parametrize_values(ctx, module, expr)
    if not values:
        return []
    where = f"a parameter case of {_where(level, [t.name for t in ctx.tests])[0]}"
    return _cases(ctx, module, values, level, where, f"{level or '<module>'}[param]")


def _parametrize_values(ctx: Context, module: ModuleIndex, expr: ast.expr) -> list[ast.expr]:
    if not isinstance(expr, ast.Call) or ctx.dotted(expr.func, module) != "pytest.mark.parametrize":
        return []
    return [*expr.args, *(k.value for k in expr.keywords)]


def _case_marks(ctx: Context, module: ModuleIndex, values: list[ast.expr]) -> list[list[ast.expr]]:
    """The marks of each `pytest.param(..., marks=...)` case among `values`."""
    expanded = list(values)
    for value in values:
        if isinstance(value, ast.Name) and value.id in module.assigns:
            expanded.append(module.assigns[value.id])  # a case list defined at module level
    return [
        flatten_marks(keyword(node, "marks"), module)
        for value in expanded
        for node in ast.walk(value)
        if isinstance(node, ast.Call) and ctx.dotted(node.func, module) == "pytest.param"
    ]


def _cases(
    ctx: Context,
    module: ModuleIndex,
    values: list[ast.expr],
    test: str | None,
    where: str,
    subject: str,
) -> list[Hit]:
    hits: list[Hit] = []
    for marks in _case_marks(ctx, module, values):
        for mark in marks:
            marker = classify(ctx, mark, module)
            if marker is None:
                continue
            kind, message = describe(ctx, marker, where, "that case")
            hits.append(
                hit(
                    kind,
                    module.path,
                    mark.lineno,
                    message,
                    test=test,
                    subject=subject,
                    node=marker.source,
                )
            )
    return hits


def _fixture_param_hits(ctx: Context) -> list[Hit]:
    """Marks in `params=[pytest.param(..., marks=...)]` of fixtures the properties use."""
    if ctx.reach is None:
        return []
    hits: list[Hit] = []
    reaching = ctx.tests_reaching()
    for fixture in ctx.reach.table:
        users = reaching.get(fixture.func.key)
        if fixture.params is None or not users:
            continue
        test, whom = attribution(users)
        where = f"a parameter case of fixture '{fixture.name}' (used by {whom})"
        subject = f"fixture {fixture.func.node.name}[param]"
        hits += _cases(ctx, fixture.func.module, [fixture.params], test, where, subject)
    return hits


def mark_name(ctx: Context, expr: ast.expr, module: ModuleIndex, depth: int = 0) -> str | None:
    """The pytest marker `expr` applies (`pytest.mark.NAME`, directly or through an alias)."""
    head = expr.func if isinstance(expr, ast.Call) else expr
    ref = ctx.scope.resolve(head, module)
    if ref is None or depth > 6:
        return None
    if ref.path is not None:
        found = ctx.scope.value(ref)
        if found is None or isinstance(expr, ast.Call):
            return None
        return mark_name(ctx, found[1], found[0], depth + 1)
    for prefix in ("pytest.mark.", "_pytest.mark."):
        if ref.name.startswith(prefix) and ref.name.count(".") == prefix.count("."):
            return ref.name.removeprefix(prefix)
    return None


def carried(ctx: Context) -> list[frozenset[str]]:
    """The markers each property test carries (on it, its classes and its module), and
    each of its parameter cases with marks of their own: what `-m` selects on."""
    if ctx.collector is None:
        return []
    out: list[frozenset[str]] = []
    for test in ctx.tests:
        module = test.func.module
        exprs = [expr for _, expr in marks(ctx, test)]
        names = frozenset(n for e in exprs if (n := mark_name(ctx, e, module)) is not None)
        out.append(names)
        for expr in exprs:
            for case in _case_marks(ctx, module, _parametrize_values(ctx, module, expr)):
                out.append(names | {n for e in case if (n := mark_name(ctx, e, module))})
    return out
