"""What the property tests reach: fixtures, helpers, decorators, setup methods and classes.

Reachability follows calls, decorators, fixtures (by parameter, usefixtures, autouse,
getfixturevalue), setup methods, and classes: `Cls(...)` into `__new__`/`__init__`/
`__post_init__`, `with Cls(...)` into `__enter__`/`__exit__` (`async with`: `__aenter__`/
`__aexit__`), `self.x()` and `super().x()` into methods inherited from repository base classes
— breadth-first, to MAX_HOPS calls from a test and MAX_REACH functions.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field

from entropy_action.scan.classes import ClassRef, Hierarchy
from entropy_action.scan.collect import (
    Collector,
    Fixture,
    Func,
    Key,
    PropertyTest,
    fixture_of,
    module_fixtures,
    usefixtures,
)
from entropy_action.scan.names import ModuleIndex, const_str, function_params
from entropy_action.scan.scope import Scope

MAX_REACH = 600  # functions reached from one test
MAX_HOPS = 8  # calls followed from a test
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
CONSTRUCTORS = ("__new__", "__init__", "__post_init__")
CONTEXT = ("__enter__", "__exit__")
ASYNC_CONTEXT = ("__aenter__", "__aexit__")


@dataclass
class Reach:
    """Everything reachable from property tests: fixtures, helpers, decorators, setups."""

    scope: Scope
    collector: Collector
    table: list[Fixture] = field(default_factory=list)  # module, conftests (near first), plugins
    fixtures: dict[Key, Fixture] = field(default_factory=dict)
    requesters: set[Key] = field(default_factory=set)  # tests: their parameters are fixtures
    classes: Hierarchy = field(init=False)
    _next: dict[tuple[Key, int], list[Func]] = field(default_factory=dict)
    _in_classes: dict[tuple[int, ...], list[Fixture]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.classes = Hierarchy(self.scope)

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
        """Fixtures the test's classes and their repository base classes define (each named
        after the class that defines it, see `definer`), registered as fixtures."""
        found: list[Fixture] = []
        home = self.collector.module
        for cls in reversed(classes):
            for module, klass in self.classes.mro(home, cls):
                for stmt in klass.body:
                    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        fixture = fixture_of(self.scope, Func(module, stmt, classes, home))
                        found += [fixture] if fixture is not None else []
        for fixture in found:
            self.fixtures.setdefault(fixture.func.key, fixture)
        return found

    def definer(self, func: Func) -> ast.ClassDef | None:
        """The class that defines a method (a base class's name for an inherited one)."""
        return self.classes.definer(func.class_module, func.classes, func.node)

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
            methods = self.classes.methods(module, cls)
            found += [
                Func(methods[m][0], methods[m][1], func.classes, module)
                for m in SETUP_METHODS
                if m in methods
            ]
        autouse = [f for f in self._class_fixtures(func.classes) if f.autouse]
        found += [f.func for f in {f.name: f for f in reversed(autouse)}.values()]
        found += [
            Func(module, setup)
            for name in MODULE_SETUP
            if isinstance(setup := module.defs.get(name), (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        return found

    def from_roots(self, roots: Sequence[Func]) -> dict[Key, Func]:
        """Breadth-first over calls, classes, decorators and fixture requests, capped."""
        seen: dict[Key, Func] = {}
        visited: set[tuple[Key, int]] = set()
        frontier = list(roots)
        for _ in range(MAX_HOPS + 1):
            nxt: list[Func] = []
            for func in frontier:
                if func.visit in visited or len(visited) >= MAX_REACH:
                    continue
                visited.add(func.visit)
                seen.setdefault(func.key, func)
                nxt.extend(self.successors(func))
            frontier = nxt
        return seen

    def successors(self, func: Func) -> list[Func]:
        if func.visit not in self._next:
            self._next[func.visit] = self._successors(func)
        return self._next[func.visit]

    def _successors(self, func: Func) -> list[Func]:
        found: list[Func] = []
        for node in self.scope.walk(func.node):
            if isinstance(node, ast.Call):
                found += self._callee(func, node.func)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                names = ASYNC_CONTEXT if isinstance(node, ast.AsyncWith) else CONTEXT
                for item in node.items:
                    made = self.classes.instance_of(func.module, item.context_expr)
                    found += self._special(made, names)
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
        bound = self._bound(func, target)
        if bound is not None:
            return bound
        ref = self.scope.resolve(target, func.module)
        found = self.scope.definition(ref) if ref is not None else None
        if found is None:
            return []
        if isinstance(found.node, ast.ClassDef):
            return self._special((found.module, found.node), CONSTRUCTORS)
        return [Func(found.module, found.node, (found.cls,) if found.cls else ())]

    def _bound(self, func: Func, target: ast.expr) -> list[Func] | None:
        """`self.x()` / `cls.x()` and `super().x()` inside a method, or None for other calls."""
        if not (isinstance(target, ast.Attribute) and func.classes):
            return None
        value = target.value
        home, cls = func.class_module, func.classes[-1]
        if isinstance(value, ast.Name) and value.id in ("self", "cls"):
            method = self.classes.methods(home, cls).get(target.attr)
        elif (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "super"
        ):
            definer = self.definer(func) or cls
            method = self.classes.after(home, cls, definer, target.attr)
        else:
            return None
        return [Func(method[0], method[1], func.classes, home)] if method is not None else []

    def _special(self, made: ClassRef | None, names: tuple[str, ...]) -> list[Func]:
        """The methods `names` (own or inherited) of a repository class, on its instance."""
        if made is None:
            return []
        module, cls = made
        methods = self.classes.methods(module, cls)
        return [
            Func(methods[name][0], methods[name][1], (cls,), module)
            for name in names
            if name in methods
        ]
