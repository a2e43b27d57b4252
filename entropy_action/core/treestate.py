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

import contextlib
import hashlib
import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath

from entropy_action.core import git
from entropy_action.core.hostinfo import MAX_TREE_LISTED, TreeState

RUNS = frozenset({".py", ".pth", ".pyc", ".so"})  # untracked files that can change what runs
CONFIG = frozenset(
    {"pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "tox.ini", "setup.cfg",
     "pyproject.toml"}
)  # fmt: skip


_Listing = tuple[list[str], list[str]]  # git's changed tracked files and untracked files
_settled: dict[Path, _Listing | None] = {}  # judged roots -> their listing, once asked
_contents: dict[Path, dict[str, bytes | None]] = {}  # judged roots -> digests of their files
_memo: dict[Path, dict[object, object]] = {}  # judged roots -> what the scan read of them
_settled_lock = threading.Lock()


@contextlib.contextmanager
def settled(root: Path) -> Iterator[None]:
    """While the local gate judges a manifest's properties one after another, every run in
    the work tree at `root` has ended (what runs from then on runs in host B's copy, a
    worktree of the base or a copy for mutants): `judged` lists the tree once for all of
    them, `inputs.tree_digest` reads each of its files once, and the scan's reads of it
    (scan.source.WorkTree, the closures of scan.closure.between) are answered once
    (`settled_memo`). Host runs take their own state with `capture`, never from here. A
    block inside another for the same root shares the outer's answers."""
    key = root.resolve()
    with _settled_lock:
        if key in _settled:
            outer = True
        else:
            outer = False
            _settled[key], _contents[key], _memo[key] = None, {}, {}
    try:
        yield
    finally:
        if not outer:
            with _settled_lock:
                _settled.pop(key, None)
                _contents.pop(key, None)
                _memo.pop(key, None)


def settled_contents(root: Path) -> dict[str, bytes | None] | None:
    """Within a `settled` block for `root`, where the digests of its files are kept by
    repository-relative name (inputs.tree_digest); None outside one."""
    with _settled_lock:
        return _contents.get(root.resolve())


def settled_memo(root: Path) -> dict[object, object] | None:
    """Within a `settled` block for `root` (resolved), answers about its files kept by the
    asker's key; None outside one, where nothing read of the tree may be kept."""
    with _settled_lock:
        return _memo.get(root)


def judged(root: Path, exclude: Iterable[Path] = ()) -> TreeState:
    """The state of the tree the judge judges: `capture`, listed once per `settled` block."""
    key = root.resolve()
    with _settled_lock:
        if key not in _settled:
            return capture(root, exclude)
        listing = _settled[key]
    if listing is None:
        listing = (git.changed_tracked(root), git.untracked(root))
        with _settled_lock:
            if key in _settled:
                _settled[key] = listing
    return _state(root, exclude, listing)


def capture(root: Path, exclude: Iterable[Path] = ()) -> TreeState:
    """The state of the work tree at `root` now; `exclude` are folders of the gate's own
    output inside it (never part of the tree)."""
    return _state(root, exclude, (git.changed_tracked(root), git.untracked(root)))


def _state(root: Path, exclude: Iterable[Path], listing: _Listing) -> TreeState:
    skip = _relative_folders(root, exclude)
    changed = [name for name in listing[0] if not _under(name, skip)]
    runs = [name for name in listing[1] if not _under(name, skip) and _can_run(name)]
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
