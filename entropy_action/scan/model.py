"""The values every rule family shares: the rules in force, the analysed revision, a hit."""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field

from entropy_action.core.findings import Finding, FindingKind
from entropy_action.manifest.pinfile import Manifest
from entropy_action.manifest.run_options import REPORTING_PLUGINS
from entropy_action.scan.collect import Collector, Func, Key, PropertyTest
from entropy_action.scan.names import ModuleIndex
from entropy_action.scan.reach import Reach
from entropy_action.scan.scope import Scope
from entropy_action.testproc import protocol

# Variables a test may never write, whatever the manifest says: PYTHONHASHSEED and the gate's
# own (protocol.GATE_ENV); a pin's variables (protocol.PIN_ENV) only where it is pinned.
ALWAYS_PINNED = protocol.ALWAYS_PINNED | protocol.GATE_ENV


@dataclass(frozen=True)
class Rules:
    """What the scan enforces, from the head manifest and (when there is one) the base's."""

    forbidden: frozenset[str] = frozenset()  # constraints.forbid_skip_markers (head ∪ base)
    rng_seed: int | None = None
    pinned_env: frozenset[str] = ALWAYS_PINNED
    run_args: tuple[str, ...] = ()
    reporting_plugins: frozenset[str] = REPORTING_PLUGINS

    @classmethod
    def of(cls, head: Manifest, base: Manifest | None) -> Rules:
        manifests = [head] if base is None else [head, base]
        forbidden: set[str] = set()
        env: set[str] = set(ALWAYS_PINNED)
        for manifest in manifests:
            forbidden.update(manifest.constraints.forbid_skip_markers)
            pins = manifest.pins.flat()
            for pin, names in protocol.PIN_ENV.items():
                env.update(names if pin in pins else ())
            env.update(manifest.pins.env or {})
        return cls(
            forbidden=frozenset(forbidden),
            rng_seed=head.pins.rng_seed,
            pinned_env=frozenset(env),
            run_args=tuple(head.run.pytest_args),
        )


@dataclass(frozen=True)
class Hit:
    """A finding as one revision sees it, and what identifies it across revisions: its kind,
    path, subject (the function, test, class or option it stands in) and the normalized
    source of the offending code — never the line or the message, whose words (how many
    properties reach a helper, which ones) change when an honest patch adds a test."""

    finding: Finding
    subject: str = ""
    key: str = ""

    def identity(
        self, rename: dict[str, str], tests: dict[str, str] | None = None
    ) -> tuple[str, str, str, str]:
        """`rename`: base path -> head path; `tests`: base property -> the head's name for it
        (a word-for-word rename), so a base finding in a renamed test is the head's too."""
        f = self.finding
        subject = (tests or {}).get(self.subject, self.subject)
        return (f.kind, rename.get(f.path, f.path), subject, self.key)


@dataclass(frozen=True)
class Guard:
    """A skip that fires only when a dependency or an interpreter feature is missing (an
    import fails, `hasattr(time, "time_ns")` is false), and the property tests it can skip."""

    path: str
    line: int
    tests: tuple[str, ...] | None  # None: every property of the module


def hit(
    kind: FindingKind,
    path: str,
    line: int,
    message: str,
    *,
    test: str | None = None,
    subject: str | None = None,
    node: ast.AST | None = None,
    context: tuple[ast.AST, ...] = (),
    key: str | None = None,
) -> Hit:
    """A hit; `context` (the conditions guarding `node`) and `key` join its identity."""
    finding = Finding(kind=kind, path=path, line=max(1, line), message=message, test=test)
    if key is None:
        try:
            key = "|".join(_dump(n) for n in (node, *context) if n is not None)
        except RecursionError:
            key = f"{type(node).__name__}:{line}"
    return Hit(finding, subject if subject is not None else test or "", key)


_RUNS = (ast.Call, ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)


def _dump(node: ast.AST) -> str:
    """The node's source as an identity, without its type annotations: a patch that only
    types a hook's parameters (progressbar2 4a98f814c594, `config` → `config: pytest.Config`)
    leaves the hook it was. An annotation that calls anything stays: evaluated at def time,
    it is code."""
    if not any(isinstance(n, ast.arg | ast.FunctionDef | ast.AsyncFunctionDef | ast.AnnAssign)
               for n in ast.walk(node)):  # fmt: skip
        return ast.dump(node)
    clone = copy.deepcopy(node)
    for found in ast.walk(clone):
        if isinstance(found, ast.arg) and _inert(found.annotation):
            found.annotation = None
        elif isinstance(found, ast.FunctionDef | ast.AsyncFunctionDef) and _inert(found.returns):
            found.returns = None
        elif isinstance(found, ast.AnnAssign) and _inert(found.annotation):
            found.annotation = ast.Constant(None)
    return ast.dump(clone)


def _inert(annotation: ast.AST | None) -> bool:
    return annotation is not None and not any(isinstance(n, _RUNS) for n in ast.walk(annotation))


@dataclass
class Context:
    """One revision, analysed: the scope, the property tests and what each of them reaches."""

    scope: Scope
    rules: Rules
    module: ModuleIndex | None  # the property module (None when absent or unparseable)
    collector: Collector | None = None
    tests: list[PropertyTest] = field(default_factory=list)  # redefinitions included
    reach: Reach | None = None
    reached: dict[str, dict[Key, Func]] = field(default_factory=dict)  # test -> functions
    conftests: list[ModuleIndex] = field(default_factory=list)
    plugins: list[ModuleIndex] = field(default_factory=list)
    inits: list[ModuleIndex] = field(default_factory=list)  # the property module's packages
    helpers: list[ModuleIndex] = field(default_factory=list)  # the rest of the test side
    hooks: list[Func] = field(default_factory=list)  # pytest_* in conftests and plugins
    _units: dict[tuple[bool, bool], list[Unit]] = field(default_factory=dict)
    _test_names: dict[Key, str] | None = None
    counts: dict[Key, int] = field(default_factory=dict)  # assertions per function
    # watched hooks the run-time inventory need not report (path, def line): inert, or said
    # by a finding in their body; and the configuration hooks found, with their last line
    quiet_hooks: list[tuple[str, int]] = field(default_factory=list)
    configure_hooks: list[tuple[Hit, int]] = field(default_factory=list)

    def nodes(self, func: Func) -> tuple[ast.AST, ...]:
        """Every node of a function (decorators and nested functions included), once."""
        return self.scope.walk(func.node)

    def test_name(self, func: Func) -> str | None:
        if self._test_names is None:
            self._test_names = {t.func.key: t.name for t in self.tests}
        return self._test_names.get(func.key)

    def dotted(self, expr: ast.expr, module: ModuleIndex) -> str | None:
        return self.scope.dotted(expr, module)

    def tests_reaching(self) -> dict[Key, list[str]]:
        """For each reached function, the property tests that reach it (source order)."""
        out: dict[Key, list[str]] = {}
        for name, funcs in self.reached.items():
            for key in funcs:
                out.setdefault(key, []).append(name)
        return out

    def reached_funcs(self) -> dict[Key, Func]:
        out: dict[Key, Func] = {}
        for funcs in self.reached.values():
            out.update(funcs)
        return out


def attribution(tests: list[str]) -> tuple[str | None, str]:
    """The `test` of a finding reached from `tests`, and words naming them for its message."""
    unique = list(dict.fromkeys(tests))
    if not unique:
        return None, "module import (every property in it)"
    if len(unique) == 1:
        return unique[0], f"property {unique[0]}"
    shown = ", ".join(unique[:3]) + (", …" if len(unique) > 3 else "")
    return None, f"{len(unique)} properties ({shown})"


def import_time(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements that run when a module is imported (not function bodies)."""
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            out.extend(import_time(stmt.body))
        elif not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(stmt)
    return out


def walk(nodes: list[ast.stmt]) -> list[ast.AST]:
    return [node for stmt in nodes for node in ast.walk(stmt)]


def qualname(ctx: Context, func: Func) -> str:
    """`name`, or `Class.name` after the class that defines it (`Outer.Inner.name`)."""
    name = func.node.name
    definer = ctx.reach.definer(func) if ctx.reach is not None else None
    if definer is None and func.classes:
        definer = func.classes[-1]
    if definer is None:
        return name
    chain = func.classes
    outer = chain[: chain.index(definer)] if definer in chain else ()
    return ".".join([*(c.name for c in outer), definer.name, name])


def place(ctx: Context, func: Func) -> str:
    """How a message names a reached function: property, fixture, hook or helper."""
    name = func.node.name
    if ctx.reach is not None and func.key in ctx.reach.fixtures:
        fixture = ctx.reach.fixtures[func.key]
        owner = qualname(ctx, func).removesuffix(name)
        return f"fixture '{owner}{fixture.name}'"
    if name.startswith("pytest_"):
        return f"hook {name}"
    test = ctx.test_name(func)
    if test is not None:
        return f"property {test}"
    return f"helper {qualname(ctx, func)}"


@dataclass(frozen=True)
class Unit:
    """A stretch of code a rule reads, with who runs it (for the finding's test and words)."""

    module: ModuleIndex
    roots: tuple[ast.AST, ...]  # the function, or a module's import-time statements
    nodes: tuple[ast.AST, ...]  # every node under the roots
    place: str  # "property test_x", "fixture 'db' (tests/conftest.py)", ...
    test: str | None
    whom: str | None  # "property test_x", "3 properties (...)", "every property", None
    subject: str  # what identifies the stretch across revisions: "Class.method", "<module>"

    def where(self) -> str:
        if self.whom is None or self.place == self.whom:
            return self.place
        return f"{self.place}, reached from {self.whom}"

    def hit(self, kind: FindingKind, node: ast.AST, message: str, line: int | None = None) -> Hit:
        """A finding at `node` (or `line`), identified by this stretch, the node and the
        conditions guarding it."""
        return hit(
            kind,
            self.module.path,
            line if line is not None else int(getattr(node, "lineno", 1)),
            message,
            test=self.test,
            subject=self.subject,
            node=node,
            context=guards(self.roots, node),
        )


def guards(roots: tuple[ast.AST, ...], target: ast.AST) -> tuple[ast.AST, ...]:
    """The conditions on the way from `roots` to `target`: an `if`/`while` test (with the
    branch taken) or an `except` clause's type — a skip whose condition changed is new."""
    for root in roots:
        path = _path(root, target, 0)
        if path is not None:
            out: list[ast.AST] = []
            for node, branch in path:
                if isinstance(node, (ast.If, ast.While, ast.IfExp)) and branch != "test":
                    test = node.test
                    out.append(test if branch == "body" else ast.UnaryOp(ast.Not(), test))
                elif isinstance(node, ast.ExceptHandler) and node.type is not None:
                    out.append(node.type)
            return tuple(out)
    return ()


def ancestors(roots: tuple[ast.AST, ...], target: ast.AST) -> list[ast.AST]:
    """The nodes on the way from one of `roots` down to `target` (outermost first; [] when
    `target` is under none of them)."""
    for root in roots:
        path = _path(root, target, 0)
        if path is not None:
            return [node for node, _ in path]
    return []


def _path(node: ast.AST, target: ast.AST, depth: int) -> list[tuple[ast.AST, str]] | None:
    """The (ancestor, field) pairs from `node` down to `target`, or None when not under it."""
    if node is target:
        return []
    if depth > 100:
        return None
    for name, value in ast.iter_fields(node):
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, ast.AST):
                found = _path(child, target, depth + 1)
                if found is not None:
                    return [(node, name), *found]
    return None


def units(ctx: Context, *, production: bool, whole_module: bool) -> list[Unit]:
    """What the properties reach (in production modules only when asked), the import-time
    code of the property module, its conftests and the rest of its test side (the helpers it
    imports: scan.closure), conftest and plugin hooks, and with
    `whole_module` every function of the property module, reached or not."""
    cached = ctx._units.get((production, whole_module))
    if cached is None:
        cached = ctx._units[(production, whole_module)] = _units(ctx, production, whole_module)
    return cached


def _units(ctx: Context, production: bool, whole_module: bool) -> list[Unit]:
    out: dict[object, Unit] = {}
    reaching = ctx.tests_reaching()

    def allowed(func: Func) -> bool:
        return production or ctx.scope.is_support(func.module.path)

    for key, func in ctx.reached_funcs().items():
        if allowed(func):
            test, whom = attribution(reaching[key])
            out[key] = _func_unit(ctx, func, place(ctx, func), test, whom)
    if ctx.module is not None and whole_module:
        for func in module_functions(ctx.module):
            if func.key not in out:
                out[func.key] = _func_unit(ctx, func, place(ctx, func), None, None)
    for index in [m for m in (ctx.module, *ctx.conftests, *ctx.inits, *ctx.helpers) if m]:
        roots = tuple(import_time(index.tree.body))
        whom = "every property (it runs at import)"
        out[index.path] = Unit(
            index, roots, tuple(walk(list(roots))), "module-level code", None, whom, "<module>"
        )
    for hook in ctx.hooks if ctx.reach is not None else ():
        for key, func in ctx.reach.from_roots([hook]).items() if ctx.reach else ():
            if key not in out and allowed(func):
                out[key] = _hook_unit(ctx, hook, func)
    return list(out.values())


def _hook_unit(ctx: Context, hook: Func, func: Func) -> Unit:
    """A conftest or plugin hook, or a function it reaches: it runs for every property."""
    if func.key == hook.key:
        where = f"hook {hook.node.name} (it runs for every property)"
        return _func_unit(ctx, func, where, None, None)
    whom = f"hook {hook.node.name} (every property)"
    return _func_unit(ctx, func, place(ctx, func), None, whom)


def _func_unit(ctx: Context, func: Func, where: str, test: str | None, whom: str | None) -> Unit:
    nodes = ctx.nodes(func)
    return Unit(func.module, (func.node,), nodes, where, test, whom, qualname(ctx, func))


def module_functions(module: ModuleIndex) -> list[Func]:
    """Top-level functions and methods (of classes at any depth) of a module."""
    found: list[Func] = []

    def visit(body: list[ast.stmt], classes: tuple[ast.ClassDef, ...]) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append(Func(module, stmt, classes))
            elif isinstance(stmt, ast.ClassDef):
                visit(stmt.body, (*classes, stmt))

    visit(module.tree.body, ())
    return found
