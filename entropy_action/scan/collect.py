"""The property tests a module defines and the fixtures they can request.

Collection follows pytest's defaults (python_functions / python_classes from the config,
unittest.TestCase subclasses, `__test__ = False`); what they reach is reach.py's.
"""

from __future__ import annotations

import ast
import fnmatch
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from entropy_action.scan.names import FunctionNode, ModuleIndex, const_str, keyword
from entropy_action.scan.scope import Scope

FIXTURE_DECORATORS = frozenset(
    {"pytest.fixture", "pytest.yield_fixture", "pytest_asyncio.fixture", "_pytest.fixtures.fixture"}
)

Key = tuple[str, int, int]


@dataclass(frozen=True)
class Func:
    """A function the analysis can reach, with the classes of the instance it runs on (for
    `self.x()`: the last is the class whose methods `self` dispatches to, which may inherit
    the function from a base class in another module)."""

    module: ModuleIndex  # the module that defines the function
    node: FunctionNode
    classes: tuple[ast.ClassDef, ...] = ()
    home: ModuleIndex | None = None  # the module of classes[-1], when not `module`

    @cached_property
    def key(self) -> Key:
        return (self.module.path, self.node.lineno, self.node.col_offset)

    @property
    def class_module(self) -> ModuleIndex:
        return self.home or self.module

    @property
    def visit(self) -> tuple[Key, int]:
        """The function on the instance it runs on: one node reached through two classes is
        followed twice (its `self.x()` calls lead to different methods)."""
        return (self.key, id(self.classes[-1]) if self.classes else 0)


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
