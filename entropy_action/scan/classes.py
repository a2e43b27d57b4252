"""Classes across the repository: their base classes, the methods they inherit, and which class
defines a method — so that reachability can follow `Cls(...)`, `with Cls(...)` and `self.x()`
into code a base class in another module defines."""

from __future__ import annotations

import ast

from entropy_action.scan.names import FunctionNode, ModuleIndex
from entropy_action.scan.scope import Scope

MAX_BASES = 8  # levels of inheritance followed
ClassRef = tuple[ModuleIndex, ast.ClassDef]
Method = tuple[ModuleIndex, FunctionNode]


class Hierarchy:
    """Base classes and inherited methods of repository classes, resolved once per class."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self._mro: dict[int, tuple[ClassRef, ...]] = {}
        self._methods: dict[int, dict[str, Method]] = {}

    def mro(self, module: ModuleIndex, cls: ast.ClassDef) -> tuple[ClassRef, ...]:
        """The class and its repository base classes, depth-first left to right (an
        approximation of Python's MRO that agrees with it without diamonds)."""
        found = self._mro.get(id(cls))
        if found is None:
            out: list[ClassRef] = []
            self._visit(module, cls, 0, out, set())
            found = self._mro[id(cls)] = tuple(out)
        return found

    def _visit(
        self,
        module: ModuleIndex,
        cls: ast.ClassDef,
        depth: int,
        out: list[ClassRef],
        seen: set[int],
    ) -> None:
        if id(cls) in seen or depth > MAX_BASES:
            return
        seen.add(id(cls))
        out.append((module, cls))
        for base in cls.bases:
            found = self.class_of(module, base)
            if found is not None:
                self._visit(found[0], found[1], depth + 1, out, seen)

    def methods(self, module: ModuleIndex, cls: ast.ClassDef) -> dict[str, Method]:
        """Every method the class has, its own or inherited from a repository base class."""
        found = self._methods.get(id(cls))
        if found is None:
            found = {}
            for owner, klass in self.mro(module, cls):
                for stmt in klass.body:
                    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        found.setdefault(stmt.name, (owner, stmt))
            self._methods[id(cls)] = found
        return found

    def after(
        self, module: ModuleIndex, cls: ast.ClassDef, definer: ast.ClassDef, name: str
    ) -> Method | None:
        """`super().name` seen from a method `definer` defines, on an instance of `cls`."""
        chain = self.mro(module, cls)
        start = next((i + 1 for i, (_, k) in enumerate(chain) if k is definer), len(chain))
        for owner, klass in chain[start:]:
            for stmt in klass.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
                    return owner, stmt
        return None

    def definer(
        self, module: ModuleIndex, classes: tuple[ast.ClassDef, ...], node: FunctionNode
    ) -> ast.ClassDef | None:
        """The class whose body defines `node`, seen from an instance of `classes[-1]`."""
        if not classes:
            return None
        for _, klass in self.mro(module, classes[-1]):
            if any(stmt is node for stmt in klass.body):
                return klass
        for klass in reversed(classes):
            if any(stmt is node for stmt in klass.body):
                return klass
        return classes[-1]

    def class_of(self, module: ModuleIndex, expr: ast.expr) -> ClassRef | None:
        """The repository class `expr` (a name or attribute chain) stands for."""
        if isinstance(expr, ast.Name) and isinstance(module.defs.get(expr.id), ast.ClassDef):
            node = module.defs[expr.id]
            return (module, node) if isinstance(node, ast.ClassDef) else None
        ref = self.scope.resolve(expr, module)
        found = self.scope.definition(ref) if ref is not None else None
        if found is None or found.cls is not None or not isinstance(found.node, ast.ClassDef):
            return None
        return found.module, found.node

    def instance_of(self, module: ModuleIndex, expr: ast.expr) -> ClassRef | None:
        """The repository class of the object `expr` makes: `Cls(...)`, or a module-level
        name bound to `Cls(...)`."""
        if isinstance(expr, ast.Call):
            return self.class_of(module, expr.func)
        ref = self.scope.resolve(expr, module)
        value = self.scope.value(ref) if ref is not None else None
        if value is not None and isinstance(value[1], ast.Call):
            return self.class_of(value[0], value[1].func)
        return None
