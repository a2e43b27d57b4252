"""The property's test side (its closure): everything besides production code that decides
what the property checks. Defined here once; the strength check runs the base's closure on
the head's production code (strength.base_on_head), and the scan reads its Python files.

One revision's closure is:

- the property module, the `__init__.py` of its packages (Python runs them first) and the
  conftest.py files from the repository root down to its folder;
- the repository plugins those conftests load (`pytest_plugins`, `-p` in addopts) and every
  test-area module any of these import, followed through their imports (helpers,
  `tests/support`, data builders), with their packages' `__init__.py`;
- pytest's configuration that reaches it: the section of the file pytest reads for the
  module (pytest.ini's `[pytest]`, pyproject's `[tool.pytest.ini_options]`, setup.cfg's
  `[tool:pytest]`, tox.ini's `[pytest]`): only that section counts, so a version bump in
  pyproject.toml changes no closure, and of it all but `pythonpath` (where production is
  imported from is the code's layout: a move to src/ sets it). Hypothesis's configuration
  (`settings.register_profile`/`load_profile`, `register_type_strategy`) lives in those
  Python files, so it is part of it;
- the data files its tests open, recorded by the test process on host A (host.json's
  `test_data`, testproc/datafiles.py): a non-Python file in the test area, or one that
  test-area code opened.

The closure of a patch is the union of the base's and the head's, so a conftest or helper
the head adds (or drops) is in it. Test area: conftest.py, `test_*.py`, `*_test.py`, and any
file under a folder named tests, test, testing, testutils or test_utils — never production
code, since the base's closure runs on the head's production code: a production file in it
would run the base's production. A helper beside the property module in a folder of another
name is not in it (a package of production code often holds its tests' folder).
"""

from __future__ import annotations

import ast
import configparser
import hashlib
import json
import os
import shlex
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import cast

from entropy_action.core import git, treestate
from entropy_action.core.hostinfo import TestData
from entropy_action.scan import config
from entropy_action.scan.scope import Finder, Scope
from entropy_action.scan.source import CommitTree, Tree, head_tree, parse

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

MAX_FILES = 300  # Python files of one revision's closure; past it the walk stops, with a note
TEST_DIRS = frozenset({"test", "tests", "testing", "testutils", "test_utils"})
NOT_DATA = frozenset({".py", ".pyc", ".pyo", ".pyd", ".so"})
_PYTHONPATH_OPTIONS = ("-o", "--override-ini")


def in_test_area(path: str) -> bool:
    """Whether `path` (repository-relative) is test code or test data, never production."""
    pure = PurePosixPath(path)
    name = pure.name
    if (
        name == "conftest.py"
        or name.startswith("test_")
        or name.endswith(("_test.py", "_tests.py"))
    ):
        return True
    return any(part in TEST_DIRS for part in pure.parts[:-1])


@dataclass(frozen=True)
class Side:
    """One revision's closure, without its data files."""

    python: tuple[str, ...]  # the property module first, then the rest as found
    config: str | None = None  # the file pytest reads its configuration from
    notes: tuple[str, ...] = ()


def side_of(tree: Tree, module: str, run_args: Sequence[str] = ()) -> Side:
    """The property module's closure in `tree` (a work tree, the index or a commit)."""
    pytest_config = config.locate(tree, module)
    scope = Scope(tree, module, pytest_config, pythonpath(run_args))
    finder = scope.finder
    inits = [p for p in scope.package_inits() if in_test_area(p)]  # toolz/__init__.py is code
    start = [module, *inits, *scope.conftests()]
    start += [p for p in scope.plugins() if in_test_area(p)]
    found: dict[str, None] = {}
    queue = [p for p in start if tree.is_file(p)]
    notes: list[str] = []
    while queue:
        path = queue.pop(0)
        if path in found:
            continue
        if len(found) >= MAX_FILES:
            notes.append(f"the test side's walk stopped at {MAX_FILES} files ({module})")
            break
        found[path] = None
        queue += [p for p in _imported(tree, finder, path) if p not in found]
    return Side(tuple(found), pytest_config.path, tuple(notes))


def pythonpath(run_args: Sequence[str]) -> tuple[str, ...]:
    """The `pythonpath` ini option the manifest's `run.pytest_args` set (`-o pythonpath=X`)."""
    found: list[str] = []
    args = list(run_args)
    for index, arg in enumerate(args):
        value = None
        if arg in _PYTHONPATH_OPTIONS and index + 1 < len(args):
            value = args[index + 1]
        elif arg.startswith("--override-ini="):
            value = arg.partition("=")[2]
        if value is not None and value.startswith("pythonpath="):
            try:
                found += shlex.split(value.partition("=")[2])
            except ValueError:
                found += value.partition("=")[2].split()
    return tuple(p.strip("/") for p in found if p not in ("", "."))


def _imported(tree: Tree, finder: Finder, path: str) -> list[str]:
    """The test-area files an import in `path` leads to, with their packages' `__init__.py`."""
    parsed = parse(tree, path)
    if parsed is None or parsed.tree is None:
        return []
    found: list[str] = []
    for node in ast.walk(parsed.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found += _dotted(finder, alias.name, path)
        elif isinstance(node, ast.ImportFrom):
            found += _from(finder, node, path)
    out = [p for p in dict.fromkeys(found) if tree.is_file(p) and in_test_area(p)]
    return [q for p in out for q in (*_packages(tree, p), p)]


def _dotted(finder: Finder, dotted: str, importer: str) -> list[str]:
    """`import a.b.c` runs a, a.b and a.b.c."""
    parts = dotted.split(".")
    return [
        found
        for end in range(1, len(parts) + 1)
        if (found := finder.find(".".join(parts[:end]), importer)) is not None
    ]


def _from(finder: Finder, node: ast.ImportFrom, importer: str) -> list[str]:
    """`from M import a, b`: M, and each of a and b that is a submodule of M."""
    module = node.module or ""
    if node.level:
        base = finder.relative(importer, node.level, module)
    else:
        found = _dotted(finder, module, importer) if module else []
        base = found[-1] if found else None
    if base is None:
        return []
    subs = [finder.submodule(base, alias.name) for alias in node.names if alias.name != "*"]
    return [base, *(sub for sub in subs if sub)]


def _packages(tree: Tree, path: str) -> list[str]:
    """The `__init__.py` files of the packages `path` sits in, outermost first."""
    found: list[str] = []
    folder = PurePosixPath(path).parent
    while str(folder) != "." and tree.is_file(f"{folder}/__init__.py"):
        found.insert(0, f"{folder}/__init__.py")
        folder = folder.parent
    return [p for p in found if p != path]


def config_section(tree: Tree, path: str | None) -> bytes | None:
    """What of a configuration file reaches pytest: its pytest section as canonical JSON
    (None: no such file or no such section). A file that does not parse counts whole."""
    raw = tree.read(path) if path else None
    if raw is None or path is None:
        return None
    name = PurePosixPath(path).name
    text = raw.decode("utf-8", "replace")
    try:
        if name.endswith(".toml"):
            document = tomllib.loads(text)
            if name == "pyproject.toml":
                table = document.get("tool", {}).get("pytest")
            else:
                table = document.get("pytest")
            values: object = table
        else:
            parser = configparser.ConfigParser(interpolation=None, strict=False)
            parser.read_string(text, source=path)
            section = "tool:pytest" if name == "setup.cfg" else "pytest"
            values = dict(parser.items(section)) if parser.has_section(section) else None
    except (configparser.Error, tomllib.TOMLDecodeError, ValueError):
        return raw
    kept = _without_layout(values) if isinstance(values, dict) else {}
    if not kept or kept == {"ini_options": {}}:
        return None  # no option that reaches the tests: as if there were no section
    return json.dumps(kept, sort_keys=True, default=str).encode("utf-8")


def _without_layout(values: dict[str, object]) -> dict[str, object]:
    """The section less `pythonpath`: where production is imported from is the layout of the
    code, not the test side (a patch that moves the code to src/ sets it; the base's value
    would not find the head's code)."""
    inner = values.get("ini_options")
    if isinstance(inner, dict):
        return {**values, "ini_options": _without_layout(inner)}
    return {key: value for key, value in values.items() if key != "pythonpath"}


@dataclass(frozen=True)
class Closure:
    """The property's test side at the base and at the head, and how they differ."""

    module: str  # the property module at the head
    files: tuple[str, ...]  # every file of the closure, in either revision (module first)
    changed: tuple[str, ...] = ()  # the files whose content differs (the module included)
    base: Mapping[str, bytes | None] = field(default_factory=dict)  # of each changed file
    # but the module: the base's bytes (None: absent at the base, so absent where it runs)
    digest: str = ""  # sha256 of the base's closure as its run writes it (a cache key's part)
    notes: tuple[str, ...] = ()
    links: frozenset[str] = frozenset()  # changed files that are symbolic links at the base
    # (their `base` bytes are the link's target path)

    @property
    def side_changed(self) -> tuple[str, ...]:
        """The changed files other than the property module."""
        return tuple(p for p in self.changed if p != self.module)


@dataclass(frozen=True)
class Revisions:
    """Where the two revisions are read from, and which module is the property at each."""

    root: Path
    base_commit: str
    base_module: str
    head_module: str
    staged: bool = False  # the head is git's index (the pre-commit hook), not the work tree
    run_args: tuple[str, ...] = ()  # the head manifest's run.pytest_args


def between(revisions: Revisions, data: Iterable[str] = ()) -> Closure:
    """The closure of a patch: both revisions' test sides, the data files host A's tests
    opened (repository-relative, already filtered: `data_files`), and what differs. Asked
    again while no run can write the tree (core.treestate.settled: the judging asks it for
    each of a property's strength plans), the first answer is the answer."""
    opened = tuple(data)
    memo = treestate.settled_memo(revisions.root.resolve())
    if memo is None:
        return _between(revisions, opened)
    key = (between, revisions, opened)
    if key not in memo:
        memo[key] = _between(revisions, opened)
    return cast(Closure, memo[key])


def _between(revisions: Revisions, data: tuple[str, ...]) -> Closure:
    base_tree = CommitTree(revisions.root, revisions.base_commit)
    head = head_tree(revisions.root, staged=revisions.staged)
    base_side = side_of(base_tree, revisions.base_module, revisions.run_args)
    head_side = side_of(head, revisions.head_module, revisions.run_args)
    python = [revisions.head_module, *head_side.python[1:], *base_side.python[1:]]
    configs = [c for c in (head_side.config, base_side.config) if c]
    files = list(dict.fromkeys([*python, *configs, *data]))
    changed: list[str] = []
    base: dict[str, bytes | None] = {}
    digest = hashlib.sha256()
    links: set[str] = set()
    for path in files:
        at_base = base_tree.read(revisions.base_module if path == revisions.head_module else path)
        if path in configs:
            differs = config_section(base_tree, path) != config_section(head, path)
        else:
            differs = at_base != head.read(path) and _differs(revisions, path, at_base)
        if differs:
            changed.append(path)
            if path != revisions.head_module:
                base[path] = at_base
                if at_base is not None and git.is_symlink(
                    revisions.root, revisions.base_commit, path
                ):
                    links.add(path)
        shown = hashlib.sha256(at_base).hexdigest() if at_base is not None else "absent"
        digest.update(f"{path}\0{shown}\0".encode("utf-8", "surrogateescape"))
    notes = tuple(dict.fromkeys((*head_side.notes, *base_side.notes)))
    return Closure(
        revisions.head_module,
        tuple(files),
        tuple(changed),
        base,
        digest.hexdigest(),
        notes,
        frozenset(links),
    )


def _differs(revisions: Revisions, path: str, at_base: bytes | None) -> bool:
    """Whether a file whose bytes differ as read differs as git holds it: a symbolic link is
    its target's path in git (`git show`) and its target's bytes in the work tree, so a link
    the patch left as it was is compared by its target's path."""
    target = revisions.root / path
    if revisions.staged or not target.is_symlink():
        return True
    if not git.is_symlink(revisions.root, revisions.base_commit, path):
        return True
    return os.fsencode(os.readlink(target)) != at_base


def data_files(recorded: TestData | None) -> tuple[str, ...]:
    """The data files of the closure among those a host run recorded (host.json's
    `test_data`): a non-Python file in the test area, or one test-area code opened."""
    found = [
        path
        for path, opener in ((f.path, f.opener) for f in (recorded.files if recorded else ()))
        if PurePosixPath(path).suffix.lower() not in NOT_DATA
        and (in_test_area(path) or (opener is not None and in_test_area(opener)))
    ]
    return tuple(sorted(dict.fromkeys(found)))
