"""Mutants of chosen functions, by a small set of classic operators on `ast`, deterministically.

Each mutant changes one place of one function and is written back into the file's own text
(only that span is replaced), so every other line keeps its number and its comments:

- comparison swaps: `<` ↔ `<=`, `>` ↔ `>=`, `==` ↔ `!=`, `is` ↔ `is not`, `in` ↔ `not in`;
- arithmetic swaps: `+` ↔ `-`, `*` → `/`, `/` → `*`, `//` → `*`, `%` → `//` (augmented
  assignments included);
- off by one: an integer constant `n` → `n + 1`, and a `range` bound `b` → `b + 1`;
- a returned value → a constant of its type (from the return annotation; `None` otherwise);
- a condition negated (`if`, `while`, conditional expressions);
- a statement deleted (a call or an augmented assignment replaced by `pass`).

When there are more places than `limit`, `limit` of them are drawn with `random.Random(seed)`:
the same sources, functions and seed give the same mutants, in the same order.
"""

from __future__ import annotations

import ast
import hashlib
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from entropy_action.core import pyast

COMPARE_SWAP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
ARITHMETIC_SWAP: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv,
}
ZERO_OF = {
    "int": "0",
    "float": "0.0",
    "str": "''",
    "bytes": "b''",
    "bool": "False",
    "list": "[]",
    "dict": "{}",
    "set": "set()",
    "tuple": "()",
}
MAX_SHOWN = 60
_NEWLINE = re.compile(r"\r\n|\r|\n")
FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Target:
    """A function to mutate: its file and the lines of its `def` (decorators excluded)."""

    path: str  # repository-relative, POSIX
    line: int  # the `def` line
    name: str  # qualified name, for messages ("Invoice.total")


@dataclass(frozen=True)
class Mutant:
    """One changed place, and the whole file with it."""

    path: str
    line: int
    function: str
    operator: str  # "compare", "arithmetic", "constant", "return", "negate", "delete"
    before: str
    after: str
    source: str  # the mutated file's text
    span: tuple[int, int] = (0, 0)  # the function's first line (decorators) and last line

    @property
    def digest(self) -> str:
        return hashlib.sha256(f"{self.path}\0{self.source}".encode()).hexdigest()

    def describe(self) -> str:
        """`billing/fees.py:27: amount > limit → amount >= limit`."""
        return f"{self.path}:{self.line}: {_cut(self.before)} → {_cut(self.after)}"


@dataclass(frozen=True)
class _Site:
    node: ast.AST  # the span replaced
    operator: str
    after: str


def mutants(
    sources: dict[str, str], targets: Sequence[Target], seed: int, limit: int
) -> list[Mutant]:
    """Up to `limit` mutants of `targets` (files read from `sources`), drawn with `seed`.
    Only the drawn ones are spliced into a copy of their file."""
    found: list[_Candidate] = []
    for path in sorted({t.path for t in targets}):
        text = sources.get(path)
        if text is None:
            continue
        try:
            tree = pyast.parse(text)
        except (SyntaxError, ValueError, RecursionError):
            continue
        lines = _lines(text)
        wanted = {t.line: t.name for t in targets if t.path == path}
        for func in _functions(tree):
            if func.lineno in wanted:
                found += _of_function(path, lines, func, wanted[func.lineno])
    if len(found) > limit:
        keep = sorted(random.Random(seed).sample(range(len(found)), limit))  # noqa: S311
        found = [found[i] for i in keep]
    return [candidate.mutant() for candidate in found]


@dataclass(frozen=True)
class _Candidate:
    """A mutant before its file is spliced."""

    path: str
    lines: list[str]
    site: _Site
    function: str
    before: str
    line: int
    span: tuple[int, int]

    def mutant(self) -> Mutant:
        source = _splice(self.lines, self.site.node, self.site.after)
        return Mutant(
            self.path,
            self.line,
            self.function,
            self.site.operator,
            self.before,
            self.site.after,
            source,
            self.span,
        )


def _lines(text: str) -> list[str]:
    """The lines as `ast` counts them (ends kept): a form feed or a \\u2028 ends none."""
    out: list[str] = []
    start = 0
    for match in _NEWLINE.finditer(text):
        out.append(text[start : match.end()])
        start = match.end()
    if start < len(text):
        out.append(text[start:])
    return out


def _segment(lines: list[str], node: ast.AST) -> str | None:
    """`ast.get_source_segment` over lines split once (it splits the file on every call)."""
    try:
        start, end = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined]
        col, end_col = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
    except AttributeError:
        return None
    if start < 0 or end is None or end_col is None or end >= len(lines):
        return None
    if start == end:
        return str(lines[start].encode()[col:end_col].decode())
    first = lines[start].encode()[col:].decode()
    last = lines[end].encode()[:end_col].decode()
    return "".join([first, *lines[start + 1 : end], last])


def functions(text: str) -> list[tuple[int, int, int, str]]:
    """(def line, first line (decorators included), last line, qualified name) of each
    function and method in a module."""
    try:
        tree = pyast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    out: list[tuple[int, int, int, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):  # defs under if/try/with count too
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                end = child.end_lineno or child.lineno
                out.append((child.lineno, first, end, prefix + child.name))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.stmt):
                visit(child, prefix)

    visit(tree, "")
    return out


def _functions(tree: ast.Module) -> Iterator[FunctionNode]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _own_nodes(func: FunctionNode) -> Iterator[ast.AST]:
    """The function's body, not descending into nested functions or classes (their own
    targets), in source order."""
    stack: list[ast.AST] = list(reversed(func.body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _of_function(path: str, lines: list[str], func: FunctionNode, name: str) -> list[_Candidate]:
    end = func.end_lineno or func.lineno
    span = (min([func.lineno, *(d.lineno for d in func.decorator_list)]), end)
    out: list[_Candidate] = []
    for node in _own_nodes(func):
        for site in _sites(node, func):
            before = _segment(lines, site.node)
            if before is None or before == site.after:
                continue
            line = int(getattr(site.node, "lineno", func.lineno))
            out.append(_Candidate(path, lines, site, name, before, line, span))
    return out


def _sites(node: ast.AST, func: FunctionNode) -> list[_Site]:
    if isinstance(node, ast.Compare):
        return _compare(node)
    if isinstance(node, (ast.BinOp, ast.AugAssign)):
        return _arithmetic(node)
    if (
        isinstance(node, ast.Constant)
        and type(node.value) is int
        and not isinstance(node.value, bool)
    ):
        return [_Site(node, "constant", repr(node.value + 1))]
    if isinstance(node, ast.Return) and node.value is not None:
        constant = _constant_for(func)
        return [_Site(node.value, "return", constant)]
    if isinstance(node, (ast.If, ast.While, ast.IfExp)):
        return [_Site(node.test, "negate", f"not ({ast.unparse(node.test)})")]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
        return [
            _Site(arg, "constant", f"{ast.unparse(arg)} + 1")
            for arg in node.args[:2]
            if not isinstance(arg, ast.Constant)
        ]
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        return [_Site(node, "delete", "pass")]
    return []


def _compare(node: ast.Compare) -> list[_Site]:
    out: list[_Site] = []
    for index, op in enumerate(node.ops):
        swap = COMPARE_SWAP.get(type(op))
        if swap is None:
            continue
        ops = list(node.ops)
        ops[index] = swap()
        changed = ast.Compare(left=node.left, ops=ops, comparators=node.comparators)
        out.append(_Site(node, "compare", ast.unparse(changed)))
    return out


def _arithmetic(node: ast.BinOp | ast.AugAssign) -> list[_Site]:
    swap = ARITHMETIC_SWAP.get(type(node.op))
    out: list[_Site] = []
    if swap is not None:
        if isinstance(node, ast.BinOp):
            text = ast.unparse(ast.BinOp(left=node.left, op=swap(), right=node.right))
        else:
            text = ast.unparse(ast.AugAssign(target=node.target, op=swap(), value=node.value))
        out.append(_Site(node, "arithmetic", text))
    if isinstance(node, ast.AugAssign):
        out.append(_Site(node, "delete", "pass"))
    return out


def _constant_for(func: FunctionNode) -> str:
    annotation = func.returns
    name = ""
    if isinstance(annotation, ast.Name):
        name = annotation.id
    elif isinstance(annotation, ast.Subscript) and isinstance(annotation.value, ast.Name):
        name = annotation.value.id
    elif isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        name = annotation.value.split("[")[0]
    return ZERO_OF.get(name.lower(), "None")


def _splice(lines: list[str], node: ast.AST, text: str) -> str:
    """The file with `node`'s span replaced by `text` (lines and columns kept elsewhere)."""
    start, end = int(getattr(node, "lineno", 1)) - 1, int(getattr(node, "end_lineno", 1)) - 1
    col = int(getattr(node, "col_offset", 0))
    end_col = int(getattr(node, "end_col_offset", 0))
    first, last = lines[start].encode(), lines[end].encode()
    head = first[:col].decode()
    tail = last[end_col:].decode()
    return "".join([*lines[:start], head, text, tail, *lines[end + 1 :]])


def _cut(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_SHOWN else flat[: MAX_SHOWN - 1] + "…"
