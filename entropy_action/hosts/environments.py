"""Environments inside a checkout: folders of installed packages, not code under test.

`python -m venv .venv && .venv/bin/pip install -e .` puts pytest and every dependency under
the checkout; host B's import check must not call them the project's code imported from the
original tree. The gate finds them once per run (here) and hands them to the test process
(plugin.json `environments`), which adds what its own interpreter resolves to (sys.prefix,
site-packages; testproc.plugin._environment_roots).

What counts: a folder at the checkout's top that is named `.venv` or `venv` or holds a
`pyvenv.cfg`, and each folder git ignores as a whole (`git ls-files --others --ignored
--exclude-standard --directory`) — unless it lies inside a package of the project (a folder
with a tracked `__init__.py`: a build's generated modules are code under test). A folder that
holds a tracked file is never an environment: tracked files are the project's.

Two more facts about a checkout that every run needs, found here with the same git calls:

- `generated`: the files an install writes inside a package of the project that git ignores
  (setuptools-scm's or hatch-vcs' `_version.py`, a compiled extension built in place beside
  its sources): code under test, which a copy of "what git tracks or would track" lacks —
  `import pkg` then fails on host B, in the base run's worktree and in the strength copies.
  Every copy of the tree takes them (`copy_generated` into a worktree).
- `checkouts`: the other work trees of the repository (`git worktree list`). An editable
  install may point at any of them (a venv made in the main checkout, the gate run in a
  second worktree, or `backtest`'s worktrees of old commits): a run imports the project's
  code from its own tree instead (testproc.plugin's copy-first finder).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path, PurePosixPath

from entropy_action.core import git
from entropy_action.core.errors import GateError

NAMES = frozenset({".venv", "venv"})
MAX_ENVIRONMENTS = 1000  # past this many, the rest count as code (fail closed)


def environments(root: Path) -> list[Path]:
    """The environment folders inside `root` (absolute, sorted, at most MAX_ENVIRONMENTS)."""
    root = root.absolute()
    try:
        git.toplevel(root)
        tracked, ignored = git.tracked(root), git.ignored_dirs(root)
    except GateError:  # not a git work tree: only folders that say they are a venv
        tracked, ignored = [], []
    holding = {name.split("/", 1)[0] for name in tracked if "/" in name}  # top-level folders
    found = {root / name for name in _venvs(root) if name not in holding}
    packages = _packages(tracked)
    for name in ignored:
        if not packages.intersection(PurePosixPath(name).parents):
            found.add(root / name)
    return sorted(found)[:MAX_ENVIRONMENTS]


def _venvs(root: Path) -> list[str]:
    try:
        children = list(root.iterdir())
    except OSError:
        return []
    return [
        child.name
        for child in children
        if child.is_dir()
        and not child.is_symlink()
        and (child.name in NAMES or (child / "pyvenv.cfg").is_file())
    ]


def _packages(tracked: list[str]) -> set[PurePosixPath]:
    """The project's packages: folders with a tracked `__init__.py`."""
    return {
        PurePosixPath(name).parent for name in tracked if name.rsplit("/", 1)[-1] == "__init__.py"
    }


MAX_GENERATED = 1000  # ignored files inside packages taken along, at most


def generated(root: Path) -> list[str]:
    """The files git ignores inside a package of the project (relative, sorted): what an
    install generated there (`src/pkg/_version.py`, `pkg/_speedups.cpython-312-x86_64-linux-
    gnu.so`). Caches are not among them (`__pycache__/` is a folder git lists whole); nor is
    anything outside the packages (`.coverage`, `build/`, a venv)."""
    try:
        git.toplevel(root)
        tracked, ignored = git.tracked(root), git.ignored(root)
    except GateError:
        return []
    packages = _packages(tracked)
    files = [
        name
        for name in ignored
        if not name.endswith("/")
        and git.CACHE_DIRS.isdisjoint(name.split("/")[:-1])
        and packages.intersection(PurePosixPath(name).parents)
    ]
    return sorted(files)[:MAX_GENERATED]


def copy_generated(source: Path, dest: Path) -> int:
    """Copy `source`'s generated files (`generated`) into the work tree `dest` where it has
    none of that name (a worktree of another commit); how many were copied."""
    count = 0
    for name in generated(source):
        target = dest / name
        if os.path.lexists(target) or not target.parent.is_dir():
            continue  # the commit has its own, or not that package at all
        try:
            shutil.copy2(source / name, target)
        except OSError:
            continue  # deleted meanwhile, or unreadable: the run says what it misses
        count += 1
    return count


def checkouts(root: Path, checkout: Path | None = None) -> list[Path]:
    """The work trees whose code a run in `root` must not import (absolute): `checkout` (the
    head's, for a run of the base in a worktree or of a copy of the head) and every other
    work tree of the repository `checkout` (else `root`) belongs to."""
    start = checkout if checkout is not None else root
    try:
        others = git.worktrees(start) if start.is_dir() else []
    except GateError:
        others = []
    seen = {os.path.realpath(root)}
    found = []
    for path in [*([checkout.absolute()] if checkout is not None else []), *others]:
        if os.path.realpath(path) not in seen:
            seen.add(os.path.realpath(path))
            found.append(path)
    return found
