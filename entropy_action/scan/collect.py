"""The property tests a module defines, the fixtures they can request, and what they reach.

Collection follows pytest's defaults (python_functions / python_classes from the config,
unittest.TestCase subclasses, `__test__ = False`); reachability follows calls, decorators,
fixtures (by parameter, usefixtures, autouse, getfixturevalue) and setup methods.
"""

from __future__ import annotations

import ast
import fnmatch
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from entropy_action.scan.names import FunctionNode, ModuleIndex, const_str, function_params, keyword
from entropy_action.scan.scope import Scope

MAX_REACH = 600  # functions reached from one test
MAX_HOPS = 8  # calls followed from a test
FIXTURE_DECORATORS = frozenset(
    {"pytest.fixture", "pytest.yield_fixture", "pytest_asyncio.fixture", "_pytest.fixtures.fixture"}
)
SETUP_METHODS = (
    "setup_method",
    "setup_class",
    "setUp",
    "setUpClass",
    "asyncSetUp",
    "setup",
    "teardown_method",
    "tearDown",
)
MODULE_SETUP = ("setup_module", "setUpModule", "setup_function", "setup")


Key = tuple[str, int, int]


@dataclass(frozen=True)
class Func:
    """A function the analysis can reach, with the classes around it (for `self.x()`)."""

    module: ModuleIndex
    node: FunctionNode
    classes: tuple[ast.ClassDef, ...] = ()

    @cached_property
    def key(self) -> Key:
        return (self.module.path, self.node.lineno, self.node.col_offset)


@dataclass(frozen=True)
class PropertyTest:
    name: str  # "test_total" or "TestInvoice::test_total"
    func: Func


@dataclass(frozen=True)
class Fixture:
    name: str
    func: Func
    autouse: bool
    params: ast.expr | None


def matches(name: str, patterns: tuple[str, ...]) -> bool:
    """pytest's python_functions / python_classes matching: a prefix or a glob."""
    return any(
        name.startswith(p) or (any(c in p for c in "*?[") and fnmatch.fnmatch(name, p))
        for p in patterns
    )


def _not_collected(body: list[ast.stmt]) -> bool:
    """`__test__ = False` in a module or class body."""
    for stmt in body:
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__test__" for t in stmt.targets
        ):
            return isinstance(stmt.value, ast.Constant) and not stmt.value.value
    return False


class Collector:
    """Finds property tests in the property module, following pytest's collection rules."""

    def __init__(self, scope: Scope, module: ModuleIndex) -> None:
        self.scope = scope
        self.module = module
        self.functions = scope.config.python_functions
        self.classes = scope.config.python_classes
        self._marks: dict[int, list[ast.expr]] = {}

    def marks(self, owner: ast.ClassDef | ast.Module) -> list[ast.expr]:
        """The marks a class (decorators and `pytestmark`) or the module applies."""
        if id(owner) not in self._marks:
            decorators = owner.decorator_list if isinstance(owner, ast.ClassDef) else []
            self._marks[id(owner)] = [*decorators, *body_marks(owner.body, self.module)]
        return self._marks[id(owner)]

    def tests(self) -> list[PropertyTest]:
        """Every collected test, in source order; a redefined name appears twice."""
        if _not_collected(self.module.tree.body):
            return []
        found: list[PropertyTest] = []
        for stmt in self.module.tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if matches(stmt.name, self.functions):
                    found.append(PropertyTest(stmt.name, Func(self.module, stmt)))
            elif isinstance(stmt, ast.ClassDef):
                found.extend(self._class_tests(stmt, ()))
        return found

    def _class_tests(
        self, cls: ast.ClassDef, outer: tuple[ast.ClassDef, ...]
    ) -> list[PropertyTest]:
        unittest = self.is_testcase(cls)
        if _not_collected(cls.body) or not (unittest or matches(cls.name, self.classes)):
            return []
        methods = self.methods(cls)
        if not unittest and "__init__" in methods:
            return []
        chain = (*outer, cls)
        prefix = "::".join(c.name for c in chain)
        found = [
            PropertyTest(f"{prefix}::{name}", Func(self.module, node, chain))
            for name, node in sorted(methods.items(), key=lambda item: item[1].lineno)
            if (name.startswith("test") if unittest else matches(name, self.functions))
        ]
        if not unittest:
            for stmt in cls.body:
                if isinstance(stmt, ast.ClassDef):
                    found.extend(self._class_tests(stmt, chain))
        return found

    def bases(self, cls: ast.ClassDef, depth: int = 0) -> Iterator[ast.ClassDef]:
        """The class and its base classes defined in the same module, nearest first."""
        yield cls
        if depth > 8:
            return
        for base in cls.bases:
            if isinstance(base, ast.Name):
                node = self.module.defs.get(base.id)
                if isinstance(node, ast.ClassDef) and node is not cls:
                    yield from self.bases(node, depth + 1)

    def methods(self, cls: ast.ClassDef) -> dict[str, FunctionNode]:
        found: dict[str, FunctionNode] = {}
        for klass in self.bases(cls):
            for stmt in klass.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found.setdefault(stmt.name, stmt)
        return found

    def is_testcase(self, cls: ast.ClassDef) -> bool:
        for klass in self.bases(cls):
            for base in klass.bases:
                dotted = self.scope.dotted(base, self.module) or ""
                if dotted.split(".")[-1].endswith("TestCase"):
                    return True
        return False


def fixture_of(scope: Scope, func: Func) -> Fixture | None:
    """The fixture `func` defines, when a decorator makes it one."""
    for dec in func.node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if scope.dotted(target, func.module) not in FIXTURE_DECORATORS:
            continue
        call = dec if isinstance(dec, ast.Call) else None
        name = const_str(keyword(call, "name")) if call else None
        autouse = keyword(call, "autouse") if call else None
        return Fixture(
            name=name or func.node.name,
            func=func,
            autouse=isinstance(autouse, ast.Constant) and bool(autouse.value),
            params=keyword(call, "params") if call else None,
        )
    return None


def module_fixtures(scope: Scope, module: ModuleIndex) -> list[Fixture]:
    found: list[Fixture] = []
    for stmt in module.tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            fixture = fixture_of(scope, Func(module, stmt))
            if fixture is not None:
                found.append(fixture)
    return found


def flatten_marks(expr: ast.expr | None, module: ModuleIndex, depth: int = 0) -> list[ast.expr]:
    """The mark expressions in a `pytestmark` value or a `marks=` argument."""
    if expr is None or depth > 6:
        return []
    if isinstance(expr, (ast.List, ast.Tuple)):
        return [m for e in expr.elts for m in flatten_marks(e, module, depth + 1)]
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return flatten_marks(expr.left, module, depth + 1) + flatten_marks(
            expr.right, module, depth + 1
        )
    if isinstance(expr, ast.Name) and isinstance(
        module.assigns.get(expr.id), (ast.List, ast.Tuple, ast.BinOp)
    ):
        return flatten_marks(module.assigns[expr.id], module, depth + 1)
    return [expr]


def body_marks(body: list[ast.stmt], module: ModuleIndex) -> list[ast.expr]:
    """The marks a module or class body sets through `pytestmark` (= or +=)."""
    found: list[ast.expr] = []
    for stmt in body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else []
        if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
            targets = [stmt.target]
        value = getattr(stmt, "value", None)
        if any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets):
            found.extend(flatten_marks(value, module))
    return found


def usefixtures(scope: Scope, module: ModuleIndex, marks: list[ast.expr]) -> list[str]:
    names: list[str] = []
    for mark in marks:
        if isinstance(mark, ast.Call) and (
            scope.dotted(mark.func, module) == "pytest.mark.usefixtures"
        ):
            names.extend(s for arg in mark.args if (s := const_str(arg)))
    return names


@dataclass
class Reach:
    """Everything reachable from property tests: fixtures, helpers, decorators, setups."""

    scope: Scope
    collector: Collector
    table: list[Fixture] = field(default_factory=list)  # module, conftests (near first), plugins
    fixtures: dict[Key, Fixture] = field(default_factory=dict)
    requesters: set[Key] = field(default_factory=set)  # tests: their parameters are fixtures
    _next: dict[Key, list[Func]] = field(default_factory=dict)
    _in_classes: dict[tuple[int, ...], list[Fixture]] = field(default_factory=dict)

    @classmethod
    def build(cls, scope: Scope, collector: Collector, sources: list[ModuleIndex]) -> Reach:
        reach = cls(scope, collector)
        for index in sources:
            reach.table.extend(module_fixtures(scope, index))
        reach.fixtures = {f.func.key: f for f in reach.table}
        return reach

    def lookup(
        self, name: str, classes: tuple[ast.ClassDef, ...], overriding: Key | None = None
    ) -> Fixture | None:
        """The fixture `name` resolves to (class, module, conftests near first, plugins);
        for a fixture that requests its own name, the one it overrides."""
        candidates = [f for f in self._class_fixtures(classes) if f.name == name]
        candidates += [f for f in self.table if f.name == name]
        keys = [f.func.key for f in candidates]
        start = keys.index(overriding) + 1 if overriding in keys else 0
        return candidates[start] if start < len(candidates) else None

    def _class_fixtures(self, classes: tuple[ast.ClassDef, ...]) -> list[Fixture]:
        key = tuple(id(c) for c in classes)
        if key not in self._in_classes:
            self._in_classes[key] = self._find_class_fixtures(classes)
        return self._in_classes[key]

    def _find_class_fixtures(self, classes: tuple[ast.ClassDef, ...]) -> list[Fixture]:
        found: list[Fixture] = []
        for cls in reversed(classes):
            for klass in self.collector.bases(cls):
                for stmt in klass.body:
                    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        fixture = fixture_of(self.scope, Func(self.collector.module, stmt, classes))
                        found += [fixture] if fixture is not None else []
        return found

    def roots(self, test: PropertyTest) -> list[Func]:
        """The test, the autouse and used fixtures and the setup methods pytest runs around it."""
        func = test.func
        found = [func]
        found += [f.func for f in self.table if f.autouse]
        module = self.collector.module
        marks = list(self.collector.marks(module.tree))
        for cls in func.classes:
            for klass in self.collector.bases(cls):
                marks += self.collector.marks(klass)
        for name in usefixtures(self.scope, module, marks):
            fixture = self.lookup(name, func.classes)
            found += [fixture.func] if fixture else []
        for cls in func.classes:
            methods = self.collector.methods(cls)
            found += [
                Func(func.module, methods[m], func.classes) for m in SETUP_METHODS if m in methods
            ]
            for node in methods.values():
                fixture = fixture_of(self.scope, Func(func.module, node, func.classes))
                found += [fixture.func] if fixture and fixture.autouse else []
        found += [
            Func(module, setup)
            for name in MODULE_SETUP
            if isinstance(setup := module.defs.get(name), (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        return found

    def from_roots(self, roots: Sequence[Func]) -> dict[Key, Func]:
        """Breadth-first over calls, decorators and fixture requests, capped."""
        seen: dict[Key, Func] = {}
        frontier = list(roots)
        for _ in range(MAX_HOPS + 1):
            nxt: list[Func] = []
            for func in frontier:
                if func.key in seen or len(seen) >= MAX_REACH:
                    continue
                seen[func.key] = func
                nxt.extend(self.successors(func))
            frontier = nxt
        return seen

    def successors(self, func: Func) -> list[Func]:
        if func.key not in self._next:
            self._next[func.key] = self._successors(func)
        return self._next[func.key]

    def _successors(self, func: Func) -> list[Func]:
        found: list[Func] = []
        for node in self.scope.walk(func.node):
            if isinstance(node, ast.Call):
                found += self._callee(func, node.func)
        for dec in func.node.decorator_list:
            found += self._callee(func, dec.func if isinstance(dec, ast.Call) else dec)
        if func.key in self.fixtures or func.key in self.requesters:
            for name in self._requested(func):
                fixture = self.lookup(name, func.classes, overriding=func.key)
                if fixture is not None:
                    found.append(fixture.func)
        return found

    def _requested(self, func: Func) -> list[str]:
        names = [p for p in function_params(func.node) if p not in ("self", "cls")]
        names += usefixtures(self.scope, func.module, func.node.decorator_list)
        for node in self.scope.walk(func.node):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "getfixturevalue"
                and node.args
                and (name := const_str(node.args[0]))
            ):
                names.append(name)
        return names

    def _callee(self, func: Func, target: ast.expr) -> list[Func]:
        if (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id in ("self", "cls")
            and func.classes
        ):
            methods = (
                self.collector.methods(func.classes[-1])
                if func.module is self.collector.module
                else {}
            )
            if not methods:
                methods = {
                    s.name: s
                    for s in func.classes[-1].body
                    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                }
            node = methods.get(target.attr)
            return [Func(func.module, node, func.classes)] if node is not None else []
        ref = self.scope.resolve(target, func.module)
        found = self.scope.definition(ref) if ref is not None else None
        if found is None or not isinstance(found.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return []
        return [Func(found.module, found.node, (found.cls,) if found.cls else ())]
