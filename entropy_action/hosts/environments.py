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
"""

from __future__ import annotations

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
    holding = {parent for name in tracked for parent in PurePosixPath(name).parents}
    found = {root / name for name in _venvs(root) if PurePosixPath(name) not in holding}
    packages = {
        PurePosixPath(name).parent for name in tracked if name.rsplit("/", 1)[-1] == "__init__.py"
    }
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
