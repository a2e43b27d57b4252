"""Rule 5, continued: properties made hollow — they still run and pass, but check nothing.

- `self_comparison`: an identity or order assertion whose two sides are the same
  expression once local aliases are substituted, calls included (`assert f(got) is
  f(got)`, `expected = got; self.assertGreaterEqual(got, expected)`), over a value the
  test holds. Without calls and aliases it is a `tautology` (weakening.py), not counted
  twice. The same for equality (`equal_to_itself`: `assert got == got`, `assert
  hash(got) == hash(got)`, `expected = got; assert got == expected`) is no finding: `==`
  calls the type's `__eq__`, and the same call twice is a determinism check — how
  libraries test `__eq__`, `__hash__` and seeded output (arrow, boltons, holidays,
  icalendar, mimesis, python-ulid, toolz: 11 of the 12 such lines in the 35 replayed
  libraries' suites). It checks none of the value, so weakening does not count it among
  the test's assertions: in place of a value assertion, one is dropped. Two objects built
  alike (`assert C(1) == C(1)`, an equality test) are neither.
- `unit_patched`: a test replaces the unit it tests — a production function or class its
  property module calls — with `monkeypatch.setattr`, `mock.patch`, or an assignment
  (`invoice_lib.total_for = ...`, `global total_for`), so it checks its own copy. Patching
  a dependency (a clock port, an HTTP client: names the properties do not call) is not a
  finding; entropy sources stay patching.py's.
- `conditional_exit`: a property returns or exits (`return`, `pytest.exit`, `sys.exit`,
  `raise SystemExit`) before its assertions when the environment, the platform or the
  time says so, or runs its assertions only then. `pytest.skip` there is a `skip_call`.

Like every static rule, a finding that stood the same at the base is a notice: only what
the patch introduced rejects.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterable, Iterator, Mapping

from entropy_action.scan.model import Context, Hit, Unit, hit, units
from entropy_action.scan.names import ModuleIndex, Ref, const_str, short
from entropy_action.testproc import vocabulary

SAME_OPS = (ast.Eq, ast.Is, ast.GtE, ast.LtE)
EQUALITY = vocabulary.UNITTEST_EQUALITY
MAX_ALIAS = 5
ENV = ("os.environ", "os.getenv", "os.getenvb", "os.environb")
PLATFORM = ("sys.platform", "os.name", "platform", "sys.version_info", "sys.implementation")
TIME = ("time", "datetime", "calendar")
EXITS = frozenset({"pytest.exit", "sys.exit", "os._exit", "_pytest.outcomes.exit"})
PATCHERS = frozenset({"unittest.mock.patch", "mock.patch"})


def find(ctx: Context) -> list[Hit]:
    hits: list[Hit] = []
    called = _units_under_test(ctx)
    tests = {id(t.func.node): t.name for t in ctx.tests}
    for unit in units(ctx, production=False, whole_module=True):
        aliases = _aliases_of(unit)
        for node in unit.nodes:
            shown = _self_comparison(node, aliases)
            if shown is not None:
                message = (
                    f"assertion in {unit.where()} compares a value with itself: {shown} — "
                    "both sides are the same expression, so it passes whatever the code does"
                )
                hits.append(_self_hit(unit, node, message))
            hits += _unit_patched(ctx, unit, node, called)
        root = unit.roots[0] if len(unit.roots) == 1 else None
        if isinstance(root, (ast.FunctionDef, ast.AsyncFunctionDef)) and id(root) in tests:
            hits += _conditional_exit(ctx, unit, root)
    return hits


# --- self comparison --------------------------------------------------------------------


def _self_hit(unit: Unit, node: ast.AST, message: str) -> Hit:
    """A self comparison, identified by the stretch it stands in, not by its expression: one
    that stood there at the base stays pre-existing when the patch edits what both sides
    read (toolz's `mk_rsample(object)` made `mk_rsample(hash(object))` for Python 3.11: it was
    as hollow before). A new one in that stretch still counts (matching counts them)."""
    line = int(getattr(node, "lineno", 1))
    found = hit("self_comparison", unit.module.path, line, message, test=unit.test, key="")
    return Hit(found.finding, unit.subject, "self_comparison")


def _aliases_of(unit: Unit) -> dict[str, ast.expr]:
    return aliases(unit.nodes)


def aliases(nodes: Iterable[ast.AST]) -> dict[str, ast.expr]:
    """Names bound once among `nodes` (a stretch of test code) to another name or attribute
    chain (`expected = got`)."""
    stores: dict[str, int] = {}
    values: dict[str, ast.expr] = {}
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, ast.arg):
            stores[node.arg] = stores.get(node.arg, 0) + 1
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and _chain(node.value)
        ):
            values[node.targets[0].id] = node.value
    return {name: value for name, value in values.items() if stores.get(name) == 1}


def _chain(expr: ast.expr) -> bool:
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return isinstance(expr, ast.Name)


def _normal(expr: ast.expr, aliases: Mapping[str, ast.expr]) -> str:
    """The expression with aliases replaced by what they name, dumped without positions."""

    class Substitute(ast.NodeTransformer):
        def __init__(self) -> None:
            self.depth = 0

        def visit_Name(self, node: ast.Name) -> ast.AST:
            value = aliases.get(node.id)
            if value is None or self.depth >= MAX_ALIAS:
                return node
            self.depth += 1
            try:
                replaced: ast.AST = self.visit(_copy(value))
                return replaced
            finally:
                self.depth -= 1

    try:
        return ast.dump(Substitute().visit(_copy(expr)))
    except RecursionError:
        return f"<deep {id(expr)}>"


def _copy(expr: ast.expr) -> ast.expr:
    return copy.deepcopy(expr)


def _plain_same(left: ast.expr, right: ast.expr) -> bool:
    """What weakening.py already calls a tautology: equal, and free of calls."""
    free = not any(
        isinstance(n, (ast.Call, ast.Await, ast.Yield, ast.NamedExpr))
        for side in (left, right)
        for n in ast.walk(side)
    )
    return free and ast.dump(left) == ast.dump(right)


def _sides(node: ast.AST) -> tuple[ast.expr, ast.expr] | None:
    if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare):
        test = node.test
        if len(test.ops) == 1 and isinstance(test.ops[0], SAME_OPS):
            return test.left, test.comparators[0]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in vocabulary.UNITTEST_SAME_SIDES
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "self"
        and len(node.args) >= 2
    ):
        return node.args[0], node.args[1]
    return None


def _self_comparison(node: ast.AST, aliases: Mapping[str, ast.expr]) -> str | None:
    """How an identity or order assertion reads, when its two sides are the same value;
    else None (equality: `equal_to_itself`)."""
    sides = _sides(node)
    if sides is None or _plain_same(*sides) or _equality(node):
        return None
    return short(node) if _same_value(*sides, aliases) else None


def equal_to_itself(node: ast.AST, aliases: Mapping[str, ast.expr]) -> bool:
    """Whether `node` asserts a value the test holds equal to itself (`==` or one of
    unittest's equality methods), once `aliases` are substituted, calls included."""
    sides = _sides(node)
    return sides is not None and _equality(node) and _same_value(*sides, aliases)


def _equality(node: ast.AST) -> bool:
    if isinstance(node, ast.Assert):
        return isinstance(node.test, ast.Compare) and isinstance(node.test.ops[0], ast.Eq)
    return isinstance(node, ast.Call) and getattr(node.func, "attr", None) in EQUALITY


def _same_value(left: ast.expr, right: ast.expr, aliases: Mapping[str, ast.expr]) -> bool:
    """The two sides are one expression over a value the test holds (a variable read outside
    call position, directly or through an alias): `C(1) == C(1)` and `hash(C(1)) ==
    hash(C(1))` build two objects and compare them, which is an equality test."""
    if _normal(left, aliases) != _normal(right, aliases):
        return False
    return _reads_a_value(left) or _reads_a_value(right)


def _reads_a_value(expr: ast.expr) -> bool:
    """Whether `expr` reads a variable other than in the function it calls (`self.make(1)`
    builds a value as `make(1)` does)."""
    callees = {
        id(part) for n in ast.walk(expr) if isinstance(n, ast.Call) for part in ast.walk(n.func)
    }
    return any(
        isinstance(n, ast.Name) and id(n) not in callees and n.id not in ("None", "True", "False")
        for n in ast.walk(expr)
    )


# --- the unit under test patched --------------------------------------------------------


def _units_under_test(ctx: Context) -> frozenset[tuple[str, str]]:
    """(path, member) of each production function or class test code calls directly."""
    scope = ctx.scope
    found: set[tuple[str, str]] = set()
    for unit in units(ctx, production=False, whole_module=True):
        for node in unit.nodes:
            if isinstance(node, ast.Call):
                member = _production(ctx, scope.resolve(node.func, unit.module))
                if member is not None:
                    found.add(member)
    return frozenset(found)


def _production(ctx: Context, ref: Ref | None) -> tuple[str, str] | None:
    """(path, member) when `ref` is a member of a production (non-test) repository module."""
    if ref is None or ref.path is None or not ref.name or ctx.scope.is_support(ref.path):
        return None
    return ref.path, ref.name


def _unit_patched(
    ctx: Context, unit: Unit, node: ast.AST, called: frozenset[tuple[str, str]]
) -> list[Hit]:
    found = _patch_target(ctx, unit, node)
    if found is None:
        return []
    ref, api = found
    if _production(ctx, ref) not in called:
        return []
    name = ctx.scope.ref_name(ref)
    message = (
        f"{name} patched with {api} in {unit.where()}: {short(node)} — the property replaces "
        "the unit it tests with its own copy, so it checks the copy, not the code"
    )
    return [unit.hit("unit_patched", node, message)]


def _patch_target(ctx: Context, unit: Unit, node: ast.AST) -> tuple[Ref, str] | None:
    """(what is replaced, by which api) for setattr-style calls and assignments."""
    if isinstance(node, ast.Call):
        return _call_target(ctx, unit, node)
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            ref = _assigned_target(ctx, unit, target)
            if ref is not None:
                return ref, "an assignment"
    return None


def _call_target(ctx: Context, unit: Unit, call: ast.Call) -> tuple[Ref, str] | None:
    func, args = call.func, call.args
    dotted = ctx.dotted(func, unit.module) or ""
    api = _api(dotted, func)
    if api is None or not args:
        return None
    text = const_str(args[0])
    if api in ("monkeypatch.setattr", "mock.patch") and text is not None:
        ref = _dotted_ref(ctx, unit.module, text)
        return (ref, api) if ref is not None else None
    attr = const_str(args[1]) if len(args) > 1 else None
    if api in ("monkeypatch.setattr", "setattr", "mock.patch.object") and attr is not None:
        owner = _owner(ctx, unit.module, args[0])
        return (ctx.scope.member(owner, attr), api) if owner is not None else None
    return None


def _api(dotted: str, func: ast.expr) -> str | None:
    if isinstance(func, ast.Name) and func.id == "setattr" and dotted in ("", "setattr"):
        return "setattr"
    if isinstance(func, ast.Attribute) and func.attr == "setattr":
        return "monkeypatch.setattr"
    for patcher in PATCHERS:
        if dotted in (patcher, patcher + ".object"):
            return "mock.patch" + dotted.removeprefix(patcher)
    chain: list[str] = []
    while isinstance(func, ast.Attribute):
        chain.insert(0, func.attr)
        func = func.value
    if (
        isinstance(func, ast.Name)
        and func.id.endswith("mocker")
        and chain
        in (
            ["patch"],
            ["patch", "object"],
        )
    ):
        return "mock." + ".".join(chain)
    return None


def _owner(ctx: Context, module: ModuleIndex, expr: ast.expr) -> Ref | None:
    """What `expr` names: a repository module or member; `sys.modules[__name__]` is the
    module itself."""
    if (
        isinstance(expr, ast.Subscript)
        and ctx.dotted(expr.value, module) == "sys.modules"
        and isinstance(expr.slice, ast.Name)
        and expr.slice.id == "__name__"
    ):
        return Ref(module.path, "")
    return ctx.scope.resolve(expr, module)


def _dotted_ref(ctx: Context, module: ModuleIndex, text: str) -> Ref | None:
    """`"invoice_lib.total_for"` (mock.patch's target) as a repository member."""
    parts = text.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        path = ctx.scope.finder.find(".".join(parts[:cut]), module.path)
        if path is not None:
            ref = Ref(path, "")
            for attr in parts[cut:]:
                ref = ctx.scope.member(ref, attr)
            return ref
    return None


def _assigned_target(ctx: Context, unit: Unit, target: ast.expr) -> Ref | None:
    """`invoice_lib.total_for = ...`, `globals()["total_for"] = ...`, and a name declared
    `global` in the function that assigns it."""
    if isinstance(target, ast.Attribute):
        owner = _owner(ctx, unit.module, target.value)
        if owner is not None and owner.path is not None and not owner.name:
            return ctx.scope.member(owner, target.attr)
        return None
    if isinstance(target, ast.Subscript):
        key = const_str(target.slice)
        value = target.value
        if (
            key is not None
            and isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "globals"
        ):
            return ctx.scope.lookup(unit.module, key)
        return None
    if isinstance(target, ast.Name) and target.id in _globals(unit):
        return ctx.scope.lookup(unit.module, target.id)
    return None


def _globals(unit: Unit) -> frozenset[str]:
    return frozenset(
        name for node in unit.nodes if isinstance(node, ast.Global) for name in node.names
    )


# --- an early exit on the environment, the platform or the time ------------------------


def _conditional_exit(
    ctx: Context, unit: Unit, func: ast.FunctionDef | ast.AsyncFunctionDef
) -> list[Hit]:
    asserts = [_line(n) for n in _walk(func.body) if _asserting(ctx, unit, n)]
    if not asserts:
        return []
    locals_ = _single_assignments(unit)
    hits: list[Hit] = []
    for node in _walk(func.body):
        if not isinstance(node, ast.If):
            continue
        what = _entropy_condition(ctx, unit.module, node.test, locals_, 0)
        if what is None:
            continue
        condition = short(node.test, 60)
        exits = [
            n for branch in (node.body, node.orelse) for n in _walk(branch) if _exits(ctx, unit, n)
        ]
        inside = [n for n in _walk(node.body) if _asserting(ctx, unit, n)]
        if exits and min(_line(n) for n in exits) < max(asserts):
            shown = short(exits[0], 40)
            message = (
                f"property {func.name} exits early ({shown}) before its assertions depending "
                f"on {what} ({condition}) — on a host where that holds, nothing is checked"
            )
        elif (
            inside
            and len(inside) == len(asserts)
            and not any(_asserting(ctx, unit, n) for n in _walk(node.orelse))
        ):
            message = (
                f"property {func.name} runs its assertions only when {condition} ({what}) — "
                "on a host where it does not hold, nothing is checked"
            )
        else:
            continue
        hits.append(unit.hit("conditional_exit", node.test, message, line=node.lineno))
    return hits


def _walk(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """The nodes of a block, not descending into nested functions and classes."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _line(node: ast.AST) -> int:
    return int(getattr(node, "lineno", 0))


def _asserting(ctx: Context, unit: Unit, node: ast.AST) -> bool:
    """An `assert` statement or a call the vocabulary calls an assertion."""
    if isinstance(node, ast.Assert):
        return True
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        return vocabulary.asserting_call(name, ctx.dotted(func, unit.module))
    return False


def _exits(ctx: Context, unit: Unit, node: ast.AST) -> bool:
    if isinstance(node, ast.Return):
        return True
    if isinstance(node, ast.Raise) and node.exc is not None:
        exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        return ctx.dotted(exc, unit.module) in ("SystemExit", "builtins.SystemExit") or (
            isinstance(exc, ast.Name) and exc.id == "SystemExit"
        )
    if isinstance(node, ast.Call):
        return (ctx.dotted(node.func, unit.module) or "") in EXITS
    return False


def _single_assignments(unit: Unit) -> dict[str, ast.expr]:
    values: dict[str, list[ast.expr]] = {}
    for node in unit.nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                values.setdefault(target.id, []).append(node.value)
    return {name: found[0] for name, found in values.items() if len(found) == 1}


def _entropy_condition(
    ctx: Context, module: ModuleIndex, test: ast.expr, locals_: dict[str, ast.expr], depth: int
) -> str | None:
    """Which live source a condition reads: "the environment", "the platform", "the time"."""
    if depth > MAX_ALIAS:
        return None
    for node in ast.walk(test):
        if isinstance(node, ast.Name) and node.id in locals_ and ctx.dotted(node, module) is None:
            found = _entropy_condition(ctx, module, locals_[node.id], locals_, depth + 1)
            if found is not None:
                return found
        if not isinstance(node, (ast.Name, ast.Attribute)):
            continue
        dotted = ctx.dotted(node, module) or ""
        for prefixes, what in (
            (ENV, "the environment"),
            (PLATFORM, "the platform"),
            (TIME, "the time"),
        ):
            if any(dotted == p or dotted.startswith(p + ".") for p in prefixes):
                return what
    return None
