"""A host's report against the tree the judge judges: the same commit, the same changes to it.

`check` takes the judged tree's commit and state (core.treestate); the rest is pure: the
host's host.json (its `commit` and the `tree` it recorded at the end of its run) and
the judged tree's own commit and state (core.treestate, taken the same way). A host whose
tracked files differed from its commit at the end of its run, where the judged tree's do not
(a step of the host job rewrote them: the project's install, a setup.py, a test), did not
run the commit it names: its report cannot be judged. The local gate judges the working tree
itself, the patch uncommitted: its hosts' changes are the judged tree's, and agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from entropy_action import __version__
from entropy_action.core import git, treestate
from entropy_action.core.errors import GateError
from entropy_action.core.hostinfo import HostInfo, TreeState

SHOWN = 3  # paths named in a reason


def check(
    root: Path | None, exclude: Sequence[Path], hosts: Mapping[str, HostInfo]
) -> tuple[list[str], list[str]]:
    """Each host's commit and end-of-run tree against the tree at `root` (the one judged;
    `exclude`: the gate's own output inside it): (invalid causes, notes)."""
    if root is None:
        return [], []
    commit = git.head_commit(root)
    judged: TreeState | None = None
    try:
        judged = treestate.judged(root, exclude=exclude) if commit else None
    except GateError:
        judged = None  # a tree git cannot list: the verdict's inputs note it
    found: tuple[list[str], list[str]] = ([], [])
    for label, info in hosts.items():
        found[0].extend(problems(label, info, commit, judged))
        found[1].extend(notes(label, info))
    return found


def problems(
    label: str, info: HostInfo, judged_commit: str | None, judged: TreeState | None
) -> list[str]:
    """Why host `label`'s report is not of the judged tree (each makes the verdict invalid)."""
    name = label.upper()
    if judged_commit is None or info.commit is None:
        return []
    if info.commit != judged_commit:
        return [
            f"host {name} ran commit {info.commit[:12]}, the tree judged here is commit "
            f"{judged_commit[:12]}: its report is of another commit"
        ]
    tree = info.tree
    if tree is None:
        if info.gate_version != __version__:
            return []  # an older gate recorded none: `notes` says so
        return [
            f"host {name}: its host.json records no working-tree state (`tree`): the tree "
            f"it ran cannot be checked against commit {info.commit[:12]}"
        ]
    if judged is None or tree.changed_sha256 == judged.changed_sha256:
        return []
    if not judged.dirty:
        return [
            f"host {name}: its working tree differed from commit {info.commit[:12]} at the end "
            f"of its run in {_files(tree.changed, tree.changed_count)}: it did not run the "
            "commit it names (a step of its job changed them: the project's install, a "
            "setup.py, a test)"
        ]
    return [
        f"host {name}: at the end of its run its working tree's changes to commit "
        f"{info.commit[:12]} are not the judged tree's: {_files(tree.changed, tree.changed_count)}"
        f" there, {_files(judged.changed, judged.changed_count)} here"
    ]


def notes(label: str, info: HostInfo) -> list[str]:
    """What the host's tree held that its commit does not and that can change what runs, and
    an older gate's missing record: said, never a reason."""
    tree = info.tree
    if tree is None:
        if info.commit is not None and info.gate_version != __version__:
            return [f"host {label.upper()}: entropy-gate {info.gate_version} recorded no tree"]
        return []
    if not tree.untracked_count:
        return []
    return [
        f"host {label.upper()}: at the end of its run its working tree held "
        f"{_files(tree.untracked, tree.untracked_count, 'untracked file')} that can change what "
        "runs (not ignored, not in the commit)"
    ]


def _files(names: list[str], count: int, noun: str = "tracked file") -> str:
    shown = ", ".join(names[:SHOWN])
    more = count - min(len(names), SHOWN)
    tail = f" and {more} more" if more > 0 else ""
    return f"{count} {noun}{'s' if count != 1 else ''} ({shown}{tail})"
