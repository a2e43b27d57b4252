"""The working tree's state against its HEAD commit: what a host run records at its end
(host.json's `tree`) and what the judge takes of the tree it judges, the same way.

A host job checks the PR's commit out and then runs the PR's code (the project's install, the
tests): a step that rewrote a tracked file made the host run a tree the commit does not hold.
`changed_sha256` digests exactly those files (path and bytes, or their absence), so two trees
with the same changes have the same digest: the judge compares a host's with its own (none
in a fresh checkout; the patch itself for the local gate, which judges the working tree).
Untracked files are listed where they can change what runs, as a note: installs leave
untracked build output (`*.egg-info/`) in trees without a .gitignore.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from entropy_action.core import git
from entropy_action.core.hostinfo import MAX_TREE_LISTED, TreeState

RUNS = frozenset({".py", ".pth", ".pyc", ".so"})  # untracked files that can change what runs
CONFIG = frozenset(
    {"pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "tox.ini", "setup.cfg",
     "pyproject.toml"}
)  # fmt: skip


def capture(root: Path, exclude: Iterable[Path] = ()) -> TreeState:
    """The state of the work tree at `root` now; `exclude` are folders of the gate's own
    output inside it (never part of the tree)."""
    skip = _relative_folders(root, exclude)
    changed = [name for name in git.changed_tracked(root) if not _under(name, skip)]
    runs = [name for name in git.untracked(root) if not _under(name, skip) and _can_run(name)]
    return TreeState(
        changed=changed[:MAX_TREE_LISTED],
        changed_count=len(changed),
        changed_sha256=changes_digest(root, changed),
        untracked=runs[:MAX_TREE_LISTED],
        untracked_count=len(runs),
    )


def changes_digest(root: Path, names: Iterable[str]) -> str:
    """sha256 over each name and its bytes (a symlink: its target; gone: b"deleted")."""
    digest = hashlib.sha256()
    for name in sorted(names):
        path = root / name
        if path.is_symlink():
            content = b"link:" + os.fsencode(os.readlink(path))
        elif path.is_file():
            content = hashlib.sha256(path.read_bytes()).digest()
        else:
            content = b"deleted"
        digest.update(os.fsencode(name) + b"\0" + content + b"\0")
    return digest.hexdigest()


def _can_run(name: str) -> bool:
    pure = PurePosixPath(name)
    return pure.suffix in RUNS or pure.name in CONFIG


def _relative_folders(root: Path, folders: Iterable[Path]) -> tuple[str, ...]:
    found = []
    for folder in folders:
        try:
            found.append(folder.resolve().relative_to(root.resolve()).as_posix())
        except ValueError:
            continue  # outside the tree
    return tuple(found)


def _under(name: str, folders: tuple[str, ...]) -> bool:
    return any(folder in (".", "") or name == folder or name.startswith(folder + "/")
               for folder in folders)  # fmt: skip
