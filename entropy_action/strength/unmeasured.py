"""Why a base test's failure on the head's code may say nothing about the property.

A base test that fails on the head's code where the head's version passes is evidence that
the patch changed the test to pass (base_on_head.py), whatever the exception, with two
exceptions that this module tells from the failure message and the patch's code (pure,
apart from reading the base's files from git):

- `excused`: a TypeError from calling a production function whose parameters the patch
  changed, which the head's version of the test calls differently — the base's test cannot
  call the head's function at all (an honest signature change with its calls updated);
- `unmeasured`: an ImportError, ModuleNotFoundError or AttributeError of a name the base's
  production code defined and the head's no longer does (renamed or removed) — the base's
  test cannot reach the code it tested, so the check cannot measure it. That is never clean:
  under the manifest's strength constraints it makes the verdict invalid (judge.py).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from entropy_action.core import git

Kind = Literal["counted", "excused", "unmeasured"]
SUPPORT_DIRS = frozenset({"test", "tests", "testing"})
_CALL = re.compile(
    r"^TypeError: (?:[\w.]*\.)?(\w+)\(\) (?:got an unexpected keyword|missing \d+ required|"
    r"takes |got multiple values|got some positional-only)"
)
_NAME = re.compile(
    r"^(?:ImportError|ModuleNotFoundError|AttributeError)\b.*?"
    r"(?:cannot import name|No module named|has no attribute) '([\w.]+)'"
)


@dataclass(frozen=True)
class Patched:
    """What the patch did to production code and to the property module's calls."""

    gone: frozenset[str] = frozenset()  # names (and modules) defined at the base, not the head
    resigned: frozenset[str] = frozenset()  # functions whose parameters the patch changed
    recalled: frozenset[tuple[str, str]] = frozenset()  # (test, function) called differently


@dataclass(frozen=True)
class Failure:
    kind: Kind
    name: str | None = None  # the function or name the failure is about


def classify(test: str, message: str, patched: Patched) -> Failure:
    """How a base test's failure on the head's code counts (pure): `test` is its name
    (`Class::name` in a class), `message` the first line of its failure."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    called = _CALL.match(first)
    if called and called.group(1) in patched.resigned:
        name = called.group(1)
        if (test, name) in patched.recalled or ("", name) in patched.recalled:
            return Failure("excused", name)
    missing = _NAME.search(first)
    if missing:
        name = missing.group(1)
        if name in patched.gone or name.rpartition(".")[2] in patched.gone:
            return Failure("unmeasured", name)
    return Failure("counted")


def patched(root: Path, commit: str, base_module: bytes, head_module: bytes) -> Patched:
    """The production names the patch removed or renamed and the functions whose parameters
    it changed (the files git says differ from `commit`), and which of those the head's
    property module calls differently from the base's."""
    gone: set[str] = set()
    resigned: set[str] = set()
    for path in git.changed_files(root, commit):
        if not path.endswith(".py") or is_support(path):
            continue
        base = _defs((git.show(root, commit, path) or b"").decode("utf-8", "replace"))
        try:
            head_text: str | None = (root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            head_text = None
        if head_text is None and base:
            gone.add(PurePosixPath(path).with_suffix("").as_posix().replace("/", "."))
        head = _defs(head_text or "")
        gone.update(set(base) - set(head))
        resigned.update(n for n in base.keys() & head.keys() if base[n] and base[n] != head[n])
    old, new = _calls(base_module, resigned), _calls(head_module, resigned)
    recalled = {key for key in old.keys() | new.keys() if old.get(key) != new.get(key)}
    return Patched(frozenset(gone), frozenset(resigned), frozenset(recalled))


def is_support(path: str) -> bool:
    """A test file or a file in a test folder (not production code)."""
    pure = PurePosixPath(path)
    if pure.name == "conftest.py" or pure.name.startswith("test") or pure.name.endswith("_test.py"):
        return True
    return any(part in SUPPORT_DIRS for part in pure.parts[:-1])


def _parse(text: str | bytes) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None


def _defs(text: str) -> dict[str, str]:
    """Top-level and class-level names: a function's name -> the dump of its parameters
    (for a class or an assigned name, "")."""
    tree = _parse(text)
    if tree is None:
        return {}
    found: dict[str, str] = {}
    for stmt in tree.body:
        for node in (stmt, *stmt.body) if isinstance(stmt, ast.ClassDef) else (stmt,):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found[node.name] = ast.dump(node.args)
            elif isinstance(node, ast.ClassDef):
                found.setdefault(node.name, "")
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found.update((t.id, "") for t in targets if isinstance(t, ast.Name))
    return found


def _calls(source: bytes, names: set[str]) -> dict[tuple[str, str], list[str]]:
    """(test, function) -> the dumps of its calls' arguments there; test "" is every other
    function of the module (helpers, fixtures)."""
    tree = _parse(source)
    found: dict[tuple[str, str], list[str]] = {}
    if tree is None or not names:
        return found
    for owner, func in _functions(tree):
        test = owner if func.name.startswith("test") else ""
        for node in ast.walk(func):
            if isinstance(node, ast.Call) and (name := _terminal(node.func)) in names:
                args = ast.dump(ast.Tuple(elts=[*node.args], ctx=ast.Load()))
                keywords = [ast.dump(k) for k in node.keywords]
                found.setdefault((test, name), []).append(args + repr(keywords))
    return {key: sorted(value) for key, value in found.items()}


def _functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    out: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append((stmt.name, stmt))
        elif isinstance(stmt, ast.ClassDef):
            out += [
                (f"{stmt.name}::{node.name}", node)
                for node in stmt.body
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            ]
    return out


def _terminal(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None
