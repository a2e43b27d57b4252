"""Why a base test's failure on the head's code may say nothing about the property.

A base test that fails on the head's code where the head's version passes is evidence that
the patch changed the test to pass (base_on_head.py), whatever the exception, with two
exceptions that this module tells from the failure message and the patch's code (pure,
apart from reading the base's files from git):

- `excused`: a TypeError from calling a production function whose parameters the patch
  changed, which the head's version of the test calls differently — the base's test cannot
  call the head's function at all (an honest signature change with its calls updated); or a
  TypeError from a test double of the property module (a fake clock's `now(cls)`) whose
  parameters, and nothing else, the patch changed, raised in a test the patch left exactly
  as it was — production now passes the double an argument the base's double cannot take;
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

from entropy_action.core import git, pyast

Kind = Literal["counted", "excused", "unmeasured"]
SUPPORT_DIRS = frozenset({"test", "tests", "testing"})
_CALL = re.compile(
    # a local class's method is qualified through `<locals>`: `fake.<locals>.Date.now()`
    r"^TypeError: (?:[\w.<>]*\.)?(\w+)\(\) (?:got an unexpected keyword|missing \d+ required|"
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
    # test doubles of the property module whose parameters, and nothing else, the patch
    # changed (a fake `now(cls)` given `tz=None`), and the tests it left exactly as they were
    doubles: frozenset[str] = frozenset()
    unchanged: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Failure:
    kind: Kind
    name: str | None = None  # the function or name the failure is about
    double: bool = False  # excused: a test double the patch re-signed, not production


def classify(test: str, message: str, patched: Patched) -> Failure:
    """How a base test's failure on the head's code counts (pure): `test` is its name
    (`Class::name` in a class), `message` the first line of its failure."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    called = _CALL.match(first)
    if called and called.group(1) in patched.resigned:
        name = called.group(1)
        if (test, name) in patched.recalled or ("", name) in patched.recalled:
            return Failure("excused", name)
    if called and called.group(1) in patched.doubles and test in patched.unchanged:
        return Failure("excused", called.group(1), double=True)
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
    doubles, unchanged = _doubles(base_module, head_module)
    return Patched(frozenset(gone), frozenset(resigned), frozenset(recalled), doubles, unchanged)


def _doubles(base_module: bytes, head_module: bytes) -> tuple[frozenset[str], frozenset[str]]:
    """The property module's own functions that are not tests (a fake's methods, helpers)
    whose parameters changed between the base's module and the head's while their decorators
    and bodies stayed the same; and the tests (`Class::name`) the patch left as they were."""
    base, head = _parse(base_module), _parse(head_module)
    if base is None or head is None:
        return frozenset(), frozenset()
    old, new = _signed(base), _signed(head)
    doubles = {
        key.rpartition(".")[2]
        for key in old.keys() & new.keys()
        if not key.rpartition(".")[2].startswith("test")
        and old[key][0] != new[key][0]
        and old[key][1] == new[key][1]
    }
    tests = {owner: ast.dump(func) for owner, func in _functions(base)}
    same = {owner for owner, func in _functions(head) if tests.get(owner) == ast.dump(func)}
    return frozenset(doubles), frozenset(name for name in same if _is_test(name))


def _signed(tree: ast.Module) -> dict[str, tuple[str, str]]:
    """`Class.name` (any depth, classes defined inside functions too: a fake built in a
    helper or a context manager's `__enter__`) -> (the dump of its parameters, the dump of
    the rest)."""
    found: dict[str, tuple[str, str]] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                rest = "|".join(ast.dump(n) for n in (*node.decorator_list, *node.body))
                found[f"{prefix}{node.name}"] = (ast.dump(node.args), rest)
                visit(node.body, f"{prefix}{node.name}.<locals>.")

    visit(tree.body, "")
    return found


def _is_test(owner: str) -> bool:
    return owner.rpartition("::")[2].startswith("test")


def is_support(path: str) -> bool:
    """A test file or a file in a test folder (not production code)."""
    pure = PurePosixPath(path)
    if pure.name == "conftest.py" or pure.name.startswith("test") or pure.name.endswith("_test.py"):
        return True
    return any(part in SUPPORT_DIRS for part in pure.parts[:-1])


def _parse(text: str | bytes) -> ast.Module | None:
    try:
        return pyast.parse(text)
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
