"""What the names in one module stand for: its definitions, aliases and imports."""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass, field
from typing import Protocol

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
DefNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


@dataclass(frozen=True)
class Ref:
    """Where a name leads: a repository module's member, or a dotted name outside the repo."""

    path: str | None  # a repository module file; None: outside the repository
    name: str  # outside: the dotted name; inside: the member chain ("" = the module itself)

    @property
    def outside(self) -> str | None:
        return self.name if self.path is None else None


class Finder(Protocol):
    """Resolves an import to a repository file (a package as its `__init__.py` path)."""

    def find(self, dotted: str, importer: str) -> str | None: ...

    def relative(self, importer: str, level: int, module: str) -> str | None: ...


@dataclass
class ModuleIndex:
    """One parsed module: top-level definitions and aliases, and every import in it."""

    path: str
    tree: ast.Module
    defs: dict[str, DefNode] = field(default_factory=dict)
    assigns: dict[str, ast.expr] = field(default_factory=dict)
    imports: dict[str, Ref] = field(default_factory=dict)
    stars: list[str] = field(default_factory=list)

    @classmethod
    def build(cls, path: str, tree: ast.Module, finder: Finder) -> ModuleIndex:
        index = cls(path, tree)
        for stmt in tree.body:
            index._top_level(stmt)
        for node in ast.walk(tree):  # imports inside functions count: tests import late
            if isinstance(node, ast.Import):
                index._bind_import(node, finder)
            elif isinstance(node, ast.ImportFrom):
                index._bind_from(node, finder)
        return index

    @property
    def is_package(self) -> bool:
        return self.path.endswith("/__init__.py") or self.path == "__init__.py"

    def _top_level(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.defs[stmt.name] = stmt
            self.assigns.pop(stmt.name, None)
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name):
                self.assigns[target.id] = stmt.value
        elif (
            isinstance(stmt, ast.AnnAssign)
            and stmt.value is not None
            and isinstance(stmt.target, ast.Name)
        ):
            self.assigns[stmt.target.id] = stmt.value

    def _bind(self, name: str, ref: Ref) -> None:
        self.imports.setdefault(name, ref)  # the first import of a name wins

    def _bind_import(self, node: ast.Import, finder: Finder) -> None:
        for alias in node.names:
            dotted = alias.name if alias.asname else alias.name.split(".")[0]
            local = alias.asname or dotted
            path = finder.find(dotted, self.path)
            self._bind(local, Ref(path, "") if path else Ref(None, dotted))

    def _bind_from(self, node: ast.ImportFrom, finder: Finder) -> None:
        module = node.module or ""
        if node.level:
            path = finder.relative(self.path, node.level, module)
            if path is None:
                return
        else:
            path = finder.find(module, self.path)
        for alias in node.names:
            if alias.name == "*":
                if path:
                    self.stars.append(path)
                continue
            local = alias.asname or alias.name
            self._bind(
                local, Ref(path, alias.name) if path else Ref(None, f"{module}.{alias.name}")
            )


def function_params(node: FunctionNode) -> list[str]:
    """The parameter names of a function, as pytest reads fixture requests from them."""
    args = node.args
    return [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]


def const_str(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def keyword(call: ast.Call, name: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def short(node: ast.AST, limit: int = 90) -> str:
    """Source text of a node, normalized by `ast.unparse` and cut to `limit` characters."""
    try:
        text = " ".join(ast.unparse(node).split())
    except (RecursionError, ValueError):
        return f"<{type(node).__name__}>"
    return cut_on_token(text, limit)


def cut_on_token(text: str, limit: int) -> str:
    """`text` (one line of Python source) within `limit` characters, cut after a whole token
    and marked "…"; a string the limit falls in keeps its words up to the limit and its
    closing quote (`skip('slow on …')`), a name or number is never cut inside."""
    if len(text) <= limit:
        return text
    tokens = _tokens(text)
    end = max((t.end[1] for t in tokens if t.end[1] <= limit - 1), default=0)
    straddling = next((t for t in tokens if t.start[1] < limit - 1 < t.end[1]), None)
    if straddling is not None and straddling.type == tokenize.STRING:
        quote = straddling.string[-1]
        inside = text.rfind(" ", straddling.start[1] + 2, limit - 2)
        if inside > 0:
            return text[:inside] + " …" + quote
    if end == 0:  # no token ends in time: the last space, else the limit
        end = text.rfind(" ", 0, limit - 1)
        end = end if end > 0 else limit - 1
    return text[:end].rstrip() + "…"


def _tokens(text: str) -> list[tokenize.TokenInfo]:
    """The tokens of the first line of `text` (those before any error)."""
    found = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.start[0] != 1 or token.end[0] != 1:
                break
            found.append(token)
    except (tokenize.TokenError, SyntaxError):
        pass  # an unclosed bracket at the end: the tokens before it were listed
    return found
