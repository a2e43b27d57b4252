"""Rule 5: weakening — tautologies, swallowed assertions, shadowed tests, and (against the
base ref) removed or renamed properties and properties that check less than they did."""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from entropy_action.core.findings import Finding
from entropy_action.scan import broad, hollow
from entropy_action.scan.collect import Func, PropertyTest
from entropy_action.scan.model import Context, Hit, Unit, hit, units
from entropy_action.scan.names import ModuleIndex, short
from entropy_action.testproc import vocabulary

SAME_SIDES = (ast.Eq, ast.Is)


@dataclass(frozen=True)
class Counted:
    """What the weakening comparison needs from one revision's property module."""

    path: str
    tests: dict[str, int]  # name -> def line, source order
    assertions: dict[str, int]  # name -> assertions in the test and its helpers
    bodies: dict[str, str]  # name -> the normalized source of its body (to tell renames)
    # name -> value assertions (broad.value_assertion) and broad raises' lines in the test
    values: dict[str, frozenset[str]] = field(default_factory=dict)
    broad: dict[str, tuple[int, ...]] = field(default_factory=dict)
    # name -> what runs around its body: its decorators, its classes' decorators, bases and
    # statements other than methods, and the test-side functions it reaches (fixtures, setUp,
    # helpers), normalized; a rename that keeps it kept the test (`same_place`)
    around: dict[str, str] = field(default_factory=dict)
    # name -> each assertion in the test's own body: (its normalized source, its strings)
    checks: dict[str, tuple[tuple[str, frozenset[str]], ...]] = field(default_factory=dict)
    # name -> its own parametrize lists, (argnames, each value normalized), where each is a
    # literal list; None where one is not (a name, a call) or a class parametrizes it
    cases: dict[str, tuple[tuple[str, tuple[str, ...]], ...] | None] = field(default_factory=dict)


def count(ctx: Context) -> Counted:
    module = ctx.module
    if module is None:
        return Counted(ctx.scope.property_path, {}, {}, {})
    tests = {t.name: t.func.node.lineno for t in ctx.tests}
    assertions = {t.name: _assertions(ctx, t) for t in ctx.tests}
    bodies = {t.name: _body(t) for t in ctx.tests}
    values = {t.name: _values(ctx, t) for t in ctx.tests}
    broad = {t.name: _broad_lines(ctx, t) for t in ctx.tests}
    around = {t.name: _around(ctx, t) for t in ctx.tests}
    checks = {t.name: _checks(ctx, t) for t in ctx.tests}
    cases = {t.name: _cases(t) for t in ctx.tests}
    return Counted(module.path, tests, assertions, bodies, values, broad, around, checks, cases)


def _cases(test: PropertyTest) -> tuple[tuple[str, tuple[str, ...]], ...] | None:
    func = test.func
    if any(_parametrize(d) for cls in func.classes for d in cls.decorator_list):
        return None
    out = []
    try:
        for decorator in func.node.decorator_list:
            if not isinstance(decorator, ast.Call) or not _parametrize(decorator):
                continue
            args = decorator.args
            if len(args) < 2 or not isinstance(args[1], (ast.List, ast.Tuple)):
                return None
            out.append((ast.dump(args[0]), tuple(ast.dump(e) for e in args[1].elts)))
    except RecursionError:
        return None
    return tuple(out)


def _parametrize(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and _terminal(node.func) == "parametrize"


def deduplicated(base: Counted, head: Counted) -> dict[str, int]:
    """Property -> how many distinct cases its base version had, where the base listed a case
    twice and the head's lists still hold every distinct one (the same argnames, literal
    lists): the cases that no longer run are repeats (humanize 0e027051034b dropped eight
    repeated `naturaldelta` cases), which checked nothing the others did not."""
    out: dict[str, int] = {}
    for name in base.tests.keys() & head.tests.keys():
        before, after = base.cases.get(name), head.cases.get(name)
        if not before or after is None or [a for a, _ in before] != [a for a, _ in after]:
            continue
        if all(len(set(b)) == len(b) for _, b in before):
            continue  # nothing repeated: a case gone is a case gone
        if all(set(b) <= set(h) for (_, b), (_, h) in zip(before, after, strict=True)):
            distinct = 1
            for _, values in before:
                distinct *= len(set(values))
            out[name] = distinct
    return out


def _checks(ctx: Context, test: PropertyTest) -> tuple[tuple[str, frozenset[str]], ...]:
    module = test.func.module
    out = []
    nodes = ctx.nodes(test.func)
    aliases = hollow.aliases(nodes)
    for node in nodes:
        if _is_assertion(ctx, module, node, aliases):
            strings = frozenset(
                n.value
                for n in ast.walk(node)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            )
            try:
                out.append((ast.dump(node), strings))
            except RecursionError:
                out.append((f"<deep assertion at {getattr(node, 'lineno', 0)}>", strings))
    return tuple(out)


def _around(ctx: Context, test: PropertyTest) -> str:
    try:
        return _around_of(ctx, test)
    except RecursionError:
        return f"<deep surroundings of {test.name}>"  # matches no other name: no rename


def _around_of(ctx: Context, test: PropertyTest) -> str:
    func = test.func
    parts = [ast.dump(d) for d in func.node.decorator_list]
    for cls in func.classes:
        parts += [ast.dump(n) for n in (*cls.decorator_list, *cls.bases, *cls.keywords)]
        parts += [
            ast.dump(stmt)
            for stmt in cls.body
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
            and not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))
        ]
    reached = ctx.reached.get(test.name, {})
    parts += sorted(
        ast.dump(f.node)
        for f in reached.values()
        if f.key != func.key and ctx.scope.is_support(f.module.path)
    )
    return "\n".join(parts)


def _values(ctx: Context, test: PropertyTest) -> frozenset[str]:
    nodes = ctx.nodes(test.func)
    return frozenset(v for n in nodes if (v := broad.value_assertion(n)) is not None)


def _broad_lines(ctx: Context, test: PropertyTest) -> tuple[int, ...]:
    module = test.func.module
    return tuple(
        sorted(
            {
                n.lineno
                for n in ctx.nodes(test.func)
                if isinstance(n, ast.Call) and broad.is_broad(n, ctx.dotted(n.func, module))
            }
        )
    )


def _body(test: PropertyTest) -> str:
    try:
        return "\n".join(ast.dump(stmt) for stmt in test.func.node.body)
    except RecursionError:
        return f"<deep body of {test.name}>"


def _assertions(ctx: Context, test: PropertyTest) -> int:
    funcs = ctx.reached.get(test.name, {test.func.key: test.func})
    total = 0
    for func in funcs.values():
        if ctx.scope.is_support(func.module.path):
            if func.key not in ctx.counts:
                ctx.counts[func.key] = _in(ctx, func)
            total += ctx.counts[func.key]
    return total


def _in(ctx: Context, func: Func) -> int:
    nodes = ctx.nodes(func)
    aliases = hollow.aliases(nodes)
    return sum(_is_assertion(ctx, func.module, node, aliases) for node in nodes)


def _is_assertion(
    ctx: Context, module: ModuleIndex, node: ast.AST, aliases: Mapping[str, ast.expr] | None = None
) -> bool:
    """An `assert` statement or a call the vocabulary calls an assertion (a broad raises,
    which any exception satisfies, is none: broad.py; nor is a value compared with itself for
    equality, which checks none of the value: hollow.equal_to_itself)."""
    if hollow.equal_to_itself(node, aliases or {}):
        return False
    if isinstance(node, ast.Assert):
        return True
    if isinstance(node, ast.Call):
        dotted = ctx.dotted(node.func, module)
        return vocabulary.asserting_call(_terminal(node.func), dotted) and not broad.is_broad(
            node, dotted
        )
    return False


def _asserts(ctx: Context, unit: Unit, body: Sequence[ast.stmt]) -> bool:
    return any(_is_assertion(ctx, unit.module, n) for stmt in body for n in ast.walk(stmt))


def _terminal(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def compare(base: Counted, head: Counted) -> list[Finding]:
    """Properties removed or renamed, and properties that check less than at the base."""
    found: list[Finding] = []
    renamed = _renames(base, head)
    for name, line in base.tests.items():
        if name in renamed:
            new = renamed[name]
            message = (
                f"property renamed from {name} to {new} (line {line} at the base) — it still "
                "runs, but history, ignore lists and reports keyed on its name lose it"
            )
            found.append(_removed(head, head.tests[new], message, name))
        elif name not in head.tests:
            message = (
                f"property {name} (line {line} at the base) was removed or renamed — what it "
                "checked is no longer checked"
            )
            found.append(_removed(head, _where_it_was(base, head, name, renamed), message, name))
        elif broadened := _broadened(base, head, name):
            found.append(broadened)
        elif head.assertions.get(name, 0) < base.assertions.get(name, 0):
            found.append(
                Finding(
                    kind="assertions_dropped",
                    path=head.path,
                    line=head.tests[name],
                    message=f"property {name} checks {head.assertions[name]} assertion(s), "
                    f"{base.assertions[name]} at the base — a dropped assertion no longer "
                    "fails when its condition breaks",
                    test=name,
                )
            )
    return found


def _broadened(base: Counted, head: Counted, name: str) -> Finding | None:
    """A broad raises new in the test, where a value assertion of the base's is gone."""
    new = head.broad.get(name, ())
    if len(new) <= len(base.broad.get(name, ())):
        return None
    gone = base.values.get(name, frozenset()) - head.values.get(name, frozenset())
    if not gone:
        return None
    return Finding(
        kind="assertion_broadened",
        path=head.path,
        line=new[-1],
        message=f"property {name} expects any exception (line {new[-1]}) where the base's "
        f"test checked a value ({len(gone)} value assertion(s) gone) — a broad raises passes "
        "on every defect that raises, the one it replaced failed on a wrong value",
        test=name,
    )


def removed(base: Counted, head: Counted) -> frozenset[str]:
    """The base's properties the head has no test of that name for, nor a word-for-word
    rename: what `compare` calls removed (strength may show one moved: judge.py)."""
    renamed = _renames(base, head)
    return frozenset(n for n in base.tests if n not in head.tests and n not in renamed)


def _removed(head: Counted, line: int, message: str, name: str) -> Finding:
    return Finding(kind="test_removed", path=head.path, line=line, message=message, test=name)


def renames(base: Counted, head: Counted) -> dict[str, str]:
    """Base property -> the head property that has its body word for word, under a new name."""
    return _renames(base, head)


def retired(base: Counted, head: Counted, messages: frozenset[str]) -> dict[str, str]:
    """Property -> a message the patch removed from production (`messages`) that the checks
    its head version dropped name: where every assertion the base's version made in its own
    body and the head's does not (counted) names such a message, and those account for all
    the assertions it lost. A behaviour retired with its test (structlog abd263899e5e drops
    a warning and the test's check of that warning's text), not a check silenced."""
    out: dict[str, str] = {}
    for name in base.tests.keys() & head.tests.keys():
        fewer = base.assertions.get(name, 0) - head.assertions.get(name, 0)
        if fewer <= 0:
            continue
        now = Counter(source for source, _ in head.checks.get(name, ()))
        dropped = []
        for source, strings in base.checks.get(name, ()):
            if now[source] > 0:
                now[source] -= 1
            else:
                dropped.append(strings & messages)
        if len(dropped) >= fewer and all(dropped):
            out[name] = min(min(d) for d in dropped)
    return out


def same_place(base: Counted, head: Counted) -> dict[str, str]:
    """The renames (`renames`) that keep what runs around the test too — the same
    decorators, class decorators and bases, fixtures, setUp and helpers — in place (a typo
    fixed: loguru's `test_unkown_retention`, a lint rule's naming) or into another class
    (test classes regrouped, names changed on the way): the same test under a new name, for
    the judge to let go where it ran."""
    return {
        old: new
        for old, new in _renames(base, head).items()
        if old in base.around and base.around.get(old) == head.around.get(new)
    }


def _renames(base: Counted, head: Counted) -> dict[str, str]:
    """Base properties gone at the head whose body a new head property has, word for word."""
    new = [n for n in head.tests if n not in base.tests]
    out: dict[str, str] = {}
    for name in base.tests:
        if name in head.tests:
            continue
        same = [n for n in new if head.bodies.get(n) == base.bodies.get(name)]
        if same:
            out[name] = same[0]
            new.remove(same[0])
    return out


def _where_it_was(base: Counted, head: Counted, name: str, renamed: dict[str, str]) -> int:
    """The def line of the nearest base neighbour that survives at the head (a renamed one
    under its new name), preferring the same class, then the one before; else the first
    property at the head."""
    order = list(base.tests)
    at = order.index(name)
    owner = name.rpartition("::")[0]
    survivors = [
        (n.rpartition("::")[0] != owner, abs(i - at), i > at, renamed.get(n, n))
        for i, n in enumerate(order)
        if renamed.get(n, n) in head.tests
    ]
    if survivors:
        return head.tests[min(survivors)[3]]
    return next(iter(head.tests.values()), 1)


def find(ctx: Context, shadowed: Sequence[PropertyTest]) -> list[Hit]:
    hits: list[Hit] = []
    for unit in units(ctx, production=False, whole_module=True):
        for node in unit.nodes:
            if hollow.equal_to_itself(node, {}):  # no tautology: `==` calls __eq__
                continue
            if (isinstance(node, ast.Assert) and _always_true(node.test)) or (
                isinstance(node, ast.Call) and _unittest_tautology(node)
            ):
                hits.append(_tautology(unit, node, short(node)))
            elif isinstance(node, ast.Try):
                hits += _swallowed(ctx, unit, node)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                hits += _suppressed(ctx, unit, node)
    for test in shadowed:
        message = (
            f"property {test.name} is defined again further down, so this definition never "
            "runs — a redefinition silences the first"
        )
        hits.append(
            hit(
                "test_removed",
                test.func.module.path,
                test.func.node.lineno,
                message,
                test=test.name,
                node=test.func.node,
            )
        )
    return hits


def _tautology(unit: Unit, node: ast.stmt | ast.expr, shown: str) -> Hit:
    message = f"assertion in {unit.where()} cannot fail: {shown} — it checks nothing"
    return unit.hit("tautology", node, message)


def _call_free(node: ast.expr) -> bool:
    return not any(
        isinstance(n, (ast.Call, ast.Await, ast.Yield, ast.NamedExpr)) for n in ast.walk(node)
    )


def _same(left: ast.expr, right: ast.expr) -> bool:
    return _call_free(left) and ast.dump(left) == ast.dump(right)


def _always_true(expr: ast.expr) -> bool:
    if isinstance(expr, ast.Constant):
        return bool(expr.value)
    if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
        return bool(expr.elts)
    if isinstance(expr, ast.Dict):
        return bool(expr.keys)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        return _always_false(expr.operand)
    if isinstance(expr, ast.BoolOp):
        if isinstance(expr.op, ast.Or):
            return any(_always_true(v) for v in expr.values)
        return all(_always_true(v) for v in expr.values)
    if isinstance(expr, ast.Compare) and len(expr.ops) == 1 and isinstance(expr.ops[0], SAME_SIDES):
        return _same(expr.left, expr.comparators[0])
    return False


def _always_false(expr: ast.expr) -> bool:
    if isinstance(expr, ast.Constant):
        return not expr.value
    if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
        return not expr.elts
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        return _always_true(expr.operand)
    return False


def _unittest_tautology(call: ast.Call) -> bool:
    func = call.func
    if not (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == "self"
    ):
        return False
    args = call.args
    if func.attr in vocabulary.UNITTEST_TRUE and args:
        return _always_true(args[0])
    if func.attr in vocabulary.UNITTEST_FALSE and args:
        return _always_false(args[0])
    same = func.attr in vocabulary.UNITTEST_SAME_SIDES
    return same and len(args) >= 2 and _same(args[0], args[1])


def _swallowed(ctx: Context, unit: Unit, node: ast.Try) -> list[Hit]:
    asserts = _asserts(ctx, unit, node.body)
    hits: list[Hit] = []
    for handler in node.handlers:
        caught = _caught(handler.type)
        if caught is None or _reraises(ctx, unit, handler) or _kept(ctx, unit, node, handler):
            continue
        if caught != "AssertionError" and not asserts:
            continue
        message = (
            f"AssertionError caught and discarded in {unit.where()} "
            f"({short(handler.type) if handler.type else 'bare except'}) — the assertions in "
            "the try block can never fail the property"
        )
        hits.append(unit.hit("assertion_swallowed", node, message, line=handler.lineno))
    return hits


def _kept(ctx: Context, unit: Unit, guard: ast.Try, handler: ast.ExceptHandler) -> bool:
    """The handler keeps the exception where an assertion of the test demands there is none:
    `except Exception as ex: result.append(ex)` in a thread, then `assert result[0] ==
    "success"` (backoff's tests). Kept: passed to a method of, or assigned into, a name or
    `self.x`; demanded: `_demands_nothing_kept`, outside the `try`."""
    if handler.name is None:
        return False
    holders: set[str] = set()
    for node in (n for stmt in handler.body for n in ast.walk(stmt)):
        stored: list[ast.expr] = []
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            stored = [node.func.value] if _mentions(node, handler.name) else []
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            stored = list(targets) if _mentions(node.value, handler.name) else []
        holders.update(_holder(target) or "" for target in stored)
    holders -= {"", "self", handler.name}
    inside = {id(n) for n in ast.walk(guard)}
    return any(
        id(node) not in inside and _demands_nothing_kept(node, holder)
        for node in unit.nodes
        for holder in holders
    )


def _demands_nothing_kept(node: ast.AST, holder: str) -> bool:
    """An assertion that fails while `holder` holds an exception: `assert not H`, `H is None`,
    `H == <literal>`, `H[0] == <literal>` (an exception equals no literal), `len(H) == 0`, and
    unittest's assertFalse, assertIsNone, assertEqual and its kin spelling the same. Not `len(H)
    == 1` nor `len(H) < 5`, which an exception kept satisfies."""
    if isinstance(node, ast.Assert):
        test = node.test
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return _is_holder(test.operand, holder)
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            if isinstance(test.ops[0], ast.Is):
                return _pair_demands(test.left, test.comparators[0], holder, none=True)
            if isinstance(test.ops[0], ast.Eq):
                return _pair_demands(test.left, test.comparators[0], holder)
        return False
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    args, name = node.args, node.func.attr
    if name in ("assertFalse", "assertIsNone") and args:
        return _is_holder(args[0], holder)
    if name in ("assertEqual", "assertEquals", "assertListEqual", "assertIs") and len(args) > 1:
        return _pair_demands(args[0], args[1], holder)
    return False


def _pair_demands(left: ast.expr, right: ast.expr, holder: str, *, none: bool = False) -> bool:
    for read, literal in ((left, right), (right, left)):
        if none:
            if _is_holder(read, holder) and isinstance(literal, ast.Constant):
                return literal.value is None
            continue
        if _is_holder(read, holder, item=True) and _literal(literal):
            return True
        length = (
            isinstance(read, ast.Call)
            and isinstance(read.func, ast.Name)
            and read.func.id == "len"
            and len(read.args) == 1
            and _is_holder(read.args[0], holder)
        )
        if length and isinstance(literal, ast.Constant) and literal.value == 0:
            return True
    return False


def _is_holder(node: ast.expr, holder: str, *, item: bool = False) -> bool:
    """`node` is the holder itself (or, with `item`, a subscript of it)."""
    if item:
        while isinstance(node, ast.Subscript):
            node = node.value
    if isinstance(node, ast.Name):
        return node.id == holder
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and f"{node.value.id}.{node.attr}" == holder
    )


def _literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_literal(element) for element in node.elts)
    return isinstance(node, ast.Dict) and all(
        key is not None and _literal(key) and _literal(value)
        for key, value in zip(node.keys, node.values, strict=True)
    )


def _holder(node: ast.expr) -> str | None:
    """`x` of `x`, `x[0]`, `x.append`; `self.x` of `self.x[0]` (an attribute of self)."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"self.{node.attr}" if node.value.id == "self" else node.value.id
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _mentions(node: ast.AST, holder: str) -> bool:
    """Whether `holder` (`x` or `self.x`) is read anywhere under `node`."""
    for part in ast.walk(node):
        if isinstance(part, ast.Name) and part.id == holder:
            return True
        if (
            isinstance(part, ast.Attribute)
            and isinstance(part.value, ast.Name)
            and f"{part.value.id}.{part.attr}" == holder
        ):
            return True
    return False


def _suppressed(ctx: Context, unit: Unit, node: ast.With | ast.AsyncWith) -> list[Hit]:
    """`with contextlib.suppress(AssertionError): assert ...`."""
    asserts = _asserts(ctx, unit, node.body)
    for item in node.items:
        call = item.context_expr
        if not isinstance(call, ast.Call) or ctx.dotted(call.func, unit.module) != (
            "contextlib.suppress"
        ):
            continue
        caught = {_caught(arg) for arg in call.args}
        if "AssertionError" in caught or ("broad" in caught and asserts):
            message = (
                f"AssertionError suppressed in {unit.where()} ({short(call)}) — the assertions "
                "in the block can never fail the property"
            )
            return [unit.hit("assertion_swallowed", node, message)]
    return []


def _caught(expr: ast.expr | None) -> str | None:
    """ "AssertionError", "broad" or None (the handler does not catch assertion failures)."""
    if expr is None:
        return "broad"
    names = expr.elts if isinstance(expr, ast.Tuple) else [expr]
    ids = {
        n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else ""
        for n in names
    }
    if vocabulary.ASSERTION_ERROR in ids:
        return "AssertionError"
    return "broad" if ids & vocabulary.BROAD_EXCEPTIONS else None


def _reraises(ctx: Context, unit: Unit, handler: ast.ExceptHandler) -> bool:
    for node in (n for stmt in handler.body for n in ast.walk(stmt)):
        if isinstance(node, ast.Raise):
            return True
        if isinstance(node, ast.Call):
            dotted = ctx.dotted(node.func, unit.module) or ""
            name = _terminal(node.func) or ""
            if dotted in ("pytest.fail", "pytest.skip", "pytest.xfail") or name == "fail":
                return True
    return False
