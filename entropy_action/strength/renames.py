"""Renames the patch made in production, so that the base's property module can still be
measured on the head's code.

An honest rename (`late_fee` becomes `overdue_fee`, the property module's imports follow) and
the rename an agent uses to hide a weakening (the same, plus a changed body) look alike: the
base's module no longer imports against the head's code. Measuring beats guessing, so the
base's module is run with its imports of the renamed names pointed at the new ones
(`from fees import overdue_fee as late_fee`), and then both steps of the strength check judge
it as usual: an honest rename passes, a weakened body fails the base's tests.

A rename is read from three facts, all needed: the base's property module imports `OLD`
from module `M` and the head's does not; the head's imports `NEW` from `M` and the base's
does not; and the patch removed `OLD` from `M`'s file and added `NEW` there (top-level names).
When a module holds several such pairs, only those whose definitions are the same but for
the name pair up; the rest stay unmeasured (strength/unmeasured.py). A name used through its
module (`import fees; fees.late_fee()`) is not rewritten: that stays unmeasured too.

A name the patch removed from `M`'s file (its top-level binding: a definition, an assignment
or a re-export), with no new name beside it, that the base's module imports and never uses
again (no name, no string of it: PyrateLimiter's tests kept `from pyrate_limiter import
binary_search` in a module that no longer called it, and its removal from the package left
that module unmeasurable, so `invalid`) is imported as the module's `__name__` instead: the
binding stays, nothing reads it, and the base's module imports against the head's code. A
name it uses stays as it is: the module does not import, and the strength check says so —
but for a flag of the interpreter (attrs' "Drop Python 3.9" removed `PY_3_10_PLUS =
sys.version_info[:2] >= (3, 10)` from `attr._compat` and the guards its conftest read it
in): a removed name whose base definition reads nothing but `sys` and `platform` (the
version, the implementation, the platform) is bound, after its import, to that definition
(`; PY_3_10_PLUS = __import__('sys').version_info[:2] >= (3, 10)`), which the host's
interpreter evaluates as the base's production code would have: the base's test side reads
the value it read at the base.

The same rewrites apply to each file of the property's test side the patch changed (a
conftest, a helper), which the strength check writes into its copy as the base had them.

The rewrite edits the import lines in place (column offsets), so every line number of the
base's module — which findings cite — is unchanged. Pure but for reading git.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
from dataclasses import dataclass
from pathlib import Path

from entropy_action.core import git, pyast
from entropy_action.scan import production

MAX_MODULE_BYTES = 2_000_000  # a production file larger than this is not read for renames
DROPPED = "__name__"  # what an unused import of a name the patch removed is pointed at


@dataclass(frozen=True)
class Rename:
    module: str  # dotted, as the property module imports it
    path: str  # the production file, repository-relative
    old: str
    new: str
    value: str = ""  # a removed flag of the interpreter: its base definition, bound instead
    where: str = ""  # the test side's file rewritten, when not the property module

    def render(self) -> str:
        at = f", in the base's {self.where}" if self.where else ""
        if self.value:
            return (
                f"{self.module}.{self.old} removed, a flag of the interpreter bound to its "
                f"base definition `{self.value}` ({self.path}{at})"
            )
        if self.new == DROPPED:
            return f"{self.module}.{self.old} removed, an import it never uses ({self.path}{at})"
        return f"{self.module}.{self.old} → {self.new} ({self.path}{at})"


def find(
    root: Path, commit: str, base_module: bytes, head_module: bytes, where: str = ""
) -> tuple[Rename, ...]:
    """The renames the base's module needs to run against the head's code: names imported
    from a module (`from M import OLD`) and names used through it (`M.OLD`, after `import M`
    or `from P import M`). `where`: the test side's file they are for, when not the module."""
    found: list[Rename] = []
    for base_names, head_names in (
        (_imports(base_module), _imports(head_module)),
        (_attributes(base_module), _attributes(head_module)),
    ):
        found += _renamed(root, commit, base_names, head_names)
    found += _dropped(root, commit, base_module, head_module, {(r.module, r.old) for r in found})
    return tuple(dict.fromkeys(dataclasses.replace(r, where=where) for r in found))


def _dropped(
    root: Path, commit: str, base_module: bytes, head_module: bytes, renamed: set[tuple[str, str]]
) -> list[Rename]:
    """The names the base's module imports from a module, which the head's module no longer
    imports and the patch removed from that module's file, and which the base's module never
    uses or which are flags of the interpreter (`_flags`)."""
    tree = _parse(base_module)
    if tree is None:
        return []
    unused = _unused(tree)
    head_names = _imports(head_module)
    found: list[Rename] = []
    for module, names in sorted(_imports(base_module).items()):
        for name in sorted(names - head_names.get(module, set())):
            if (module, name) in renamed or name == "*":
                continue
            path = _file_of(root, commit, module)
            if path is None:
                continue
            source = git.show(root, commit, path)
            at_base, at_head = _bound(source), _bound(read(root / path))
            if at_base is None or at_head is None or name not in at_base - at_head:
                continue
            if (module, name) in unused:
                found.append(Rename(module, path, name, DROPPED))
            elif (value := _flags(source).get(name)) is not None:
                found.append(Rename(module, path, name, DROPPED, value))
    return found


_FLAG_NODES = (
    ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Subscript, ast.Slice, ast.Tuple, ast.Constant,
    ast.Attribute, ast.Name, ast.Call, ast.cmpop, ast.boolop, ast.Not, ast.USub, ast.Load,
)  # fmt: skip
_INTERPRETER = frozenset({"sys", "platform"})


def _flags(source: bytes | None) -> dict[str, str]:
    """Top-level names a module binds once, to an expression of nothing but literals, `sys`
    and `platform` (imported as such) and their methods called with literals:
    `PY_3_10_PLUS = sys.version_info[:2] >= (3, 10)`, `PYPY =
    platform.python_implementation() == "PyPy"`, `sys.platform.startswith("linux")`.
    Name -> the expression as the base's test side binds it, its modules imported in place
    (`__import__('sys')`)."""
    tree = _parse(source) if source is not None else None
    if tree is None:
        return {}
    imported = {
        alias.name
        for stmt in tree.body
        if isinstance(stmt, ast.Import)
        for alias in stmt.names
        if alias.name in _INTERPRETER and alias.asname is None
    }
    assigned: dict[str, list[ast.expr]] = {}
    for name, value in production.bindings(tree.body):
        assigned.setdefault(name, []).append(value)
    return {
        name: ast.unparse(_imported_in_place(values[0]))
        for name, values in assigned.items()
        if len(values) == 1 and _reads_the_interpreter(values[0], imported)
    }


def _reads_the_interpreter(expr: ast.expr, imported: set[str]) -> bool:
    names = [node.id for node in ast.walk(expr) if isinstance(node, ast.Name)]
    calls = [node for node in ast.walk(expr) if isinstance(node, ast.Call)]
    return (
        bool(names)
        and set(names) <= imported
        and all(isinstance(node, _FLAG_NODES) for node in ast.walk(expr))
        and all(
            isinstance(call.func, ast.Attribute)
            and all(isinstance(arg, ast.Constant) for arg in call.args)
            and not call.keywords
            for call in calls
        )
    )


def _imported_in_place(expr: ast.expr) -> ast.expr:
    """`sys.x` -> `__import__('sys').x`: the flag's modules, whatever the test side binds."""

    class Swap(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            call = ast.Call(ast.Name("__import__", ast.Load()), [ast.Constant(node.id)], [])
            return ast.copy_location(call, node)

    return Swap().visit(copy.deepcopy(expr))  # type: ignore[no-any-return]


def _unused(tree: ast.Module) -> set[tuple[str, str]]:
    """(module, name) of each `from M import name` whose binding the module never names again:
    in no name, no string (`__all__`, `getattr`, `monkeypatch.setattr`) and no `global`."""
    imported: dict[str, set[tuple[str, str]]] = {}
    named: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module is not None:
            for alias in node.names:
                if alias.name != "*":
                    binding = alias.asname or alias.name
                    imported.setdefault(binding, set()).add((node.module, alias.name))
        elif isinstance(node, ast.Name):
            named.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            named.add(node.value)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            named.update(node.names)
    return {pair for binding, pairs in imported.items() if binding not in named for pair in pairs}


def _bound(source: bytes | None) -> set[str] | None:
    """The names a module's top level binds (definitions, assignments, imports, in `if`, `try`
    and `with` blocks too); None when it cannot be read or imports `*` (what that binds is not
    in its text)."""
    tree = _parse(source) if source is not None else None
    if tree is None:
        return None
    found: set[str] = set()
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(stmt.name)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            if any(alias.name == "*" for alias in stmt.names):
                return None
            found.update(a.asname or a.name.partition(".")[0] for a in stmt.names)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            found.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(stmt, (ast.If, ast.Try, ast.With)):
            todo += [*stmt.body, *getattr(stmt, "orelse", []), *getattr(stmt, "finalbody", [])]
            todo += [s for handler in getattr(stmt, "handlers", []) for s in handler.body]
    return found


def _renamed(
    root: Path, commit: str, base_names: dict[str, set[str]], head_names: dict[str, set[str]]
) -> list[Rename]:
    """The pairs (OLD, NEW) of each module the base uses OLD of and the head NEW instead,
    where the patch removed OLD from the module's file and added NEW there."""
    found: list[Rename] = []
    for module in sorted(base_names.keys() & head_names.keys()):
        gone = base_names[module] - head_names[module]
        added = head_names[module] - base_names[module]
        if not gone or not added:
            continue
        path = _file_of(root, commit, module)
        if path is None:
            continue
        base_defs = _definitions(git.show(root, commit, path))
        head_defs = _definitions(read(root / path))
        gone = {n for n in gone if n in base_defs and n not in head_defs}
        added = {n for n in added if n in head_defs and n not in base_defs}
        pairs = _pairs(gone, added, base_defs, head_defs)
        found += (Rename(module, path, old, new) for old, new in pairs)
    return found


def apply(base_module: bytes, renames: tuple[Rename, ...]) -> bytes:
    """The base's module with its `from M import OLD` aliases pointing at NEW and its `M.OLD`
    attributes reading `M.NEW` (lines kept: only columns move)."""
    tree = _parse(base_module)
    if tree is None or not renames:
        return base_module
    wanted = {(r.module, r.old): r.new for r in renames}
    values = {(r.module, r.old): r.value for r in renames if r.value}
    lines = base_module.splitlines(keepends=True)
    edits = [*_import_edits(tree, wanted, values), *_attribute_edits(tree, wanted)]
    for index, start, end, text in sorted(set(edits), reverse=True):
        line = lines[index]
        lines[index] = line[:start] + text + line[end:]
    return b"".join(lines)


Edit = tuple[int, int, int, bytes]  # (line index, start column, end column, replacement)


def _import_edits(
    tree: ast.Module, wanted: dict[tuple[str, str], str], values: dict[tuple[str, str], str]
) -> list[Edit]:
    """Each alias pointed at its new name; a flag's binding after its import's statement."""
    edits: list[Edit] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level or node.module is None:
            continue
        for alias in node.names:
            new = wanted.get((node.module, alias.name))
            if new is None or alias.end_lineno != alias.lineno or alias.end_col_offset is None:
                continue
            binding = alias.asname or alias.name
            text = f"{new} as {binding}".encode()
            edits.append((alias.lineno - 1, alias.col_offset, alias.end_col_offset, text))
            value = values.get((node.module, alias.name))
            if value is not None and node.end_lineno is not None and node.end_col_offset:
                end = (node.end_lineno - 1, node.end_col_offset, node.end_col_offset)
                edits.append((*end, f"; {binding} = {value}".encode()))
    return edits


def _attribute_edits(tree: ast.Module, wanted: dict[tuple[str, str], str]) -> list[Edit]:
    """`M.OLD` -> `M.NEW` where M is the module (an alias bound by an import at the top)."""
    modules = _module_names(tree)
    edits: list[Edit] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or node.end_col_offset is None:
            continue
        module = _dotted(node.value, modules)
        new = wanted.get((module, node.attr)) if module is not None else None
        if new is None or node.end_lineno != node.lineno:
            continue
        end = node.end_col_offset
        edits.append((node.lineno - 1, end - len(node.attr.encode()), end, new.encode()))
    return edits


def _attributes(source: bytes) -> dict[str, set[str]]:
    """module -> the names the property module reads through it (`parser.parse` after
    `from dates import parser`, `dates.parser.parse` after `import dates.parser`)."""
    tree = _parse(source)
    found: dict[str, set[str]] = {}
    if tree is None:
        return found
    modules = _module_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            module = _dotted(node.value, modules)
            if module is not None:
                found.setdefault(module, set()).add(node.attr)
    return found


def _module_names(tree: ast.Module) -> dict[str, str]:
    """Names the module's top-level imports bind -> the dotted name they may stand for
    (`import a.b` binds `a`; `from a import b` binds `b` as `a.b`, a module or not:
    `_file_of` decides)."""
    bound: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.asname or alias.name.split(".", 1)[0]
                bound[name] = alias.name if alias.asname else name
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module is not None:
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


def _dotted(node: ast.expr, modules: dict[str, str]) -> str | None:
    """The dotted module a `Name` or `Name.attr…` chain names through the imports, or None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in modules:
        return None
    return ".".join([modules[node.id], *reversed(parts)])


def _pairs(
    gone: set[str], added: set[str], base_defs: dict[str, str], head_defs: dict[str, str]
) -> list[tuple[str, str]]:
    """One removed and one added name pair up; among several, those defined alike."""
    if len(gone) == 1 and len(added) == 1:
        return [(next(iter(gone)), next(iter(added)))]
    pairs = []
    for old in sorted(gone):
        alike = [new for new in sorted(added) if head_defs[new] == base_defs[old]]
        if len(alike) == 1:
            pairs.append((old, alike[0]))
            added.discard(alike[0])
    return pairs


def _imports(source: bytes) -> dict[str, set[str]]:
    """module -> the names the property module imports from it (absolute imports only)."""
    tree = _parse(source)
    found: dict[str, set[str]] = {}
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.ImportFrom) and not node.level and node.module is not None:
            found.setdefault(node.module, set()).update(a.name for a in node.names)
    return found


def _file_of(root: Path, commit: str, module: str) -> str | None:
    """The production file a dotted module name stands for, when the patch changed it."""
    stem = module.replace(".", "/")
    candidates = {f"{stem}.py", f"{stem}/__init__.py", f"src/{stem}.py", f"src/{stem}/__init__.py"}
    changed = [p for p in git.changed_files(root, commit) if p in candidates]
    return changed[0] if len(changed) == 1 else None


def _definitions(source: bytes | None) -> dict[str, str]:
    """Top-level names -> the dump of their definition (a def's without its name)."""
    tree = _parse(source or b"")
    found: dict[str, str] = {}
    for stmt in tree.body if tree is not None else ():
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[stmt.name] = ast.dump(stmt).replace(repr(stmt.name), "'<name>'")
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            found.update((t.id, ast.dump(stmt)) for t in targets if isinstance(t, ast.Name))
    return found


def read(path: Path) -> bytes | None:
    """A file's bytes, None when unreadable or larger than MAX_MODULE_BYTES."""
    try:
        if path.stat().st_size > MAX_MODULE_BYTES:
            return None
        return path.read_bytes()
    except OSError:
        return None


def _parse(source: bytes) -> ast.Module | None:
    if len(source) > MAX_MODULE_BYTES:
        return None
    try:
        return pyast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None
