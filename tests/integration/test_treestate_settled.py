"""The judged tree's state (core.treestate): listed once while the local gate judges a
manifest's properties (`settled`), never for a host run's own record (`capture`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from entropy_action.core import treestate
from entropy_action.evidence import inputs


def _repo(path: Path) -> Path:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)

    git("init", "-q")
    (path / "lib.py").write_text("X = 1\n")
    git("add", "lib.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    return path


def test_the_judged_tree_is_listed_once_while_settled_and_a_capture_looks_again(
    tmp_path: Path,
) -> None:
    root = _repo(tmp_path)
    with treestate.settled(root):
        first = treestate.judged(root)
        (root / "lib.py").write_text("X = 2\n")
        (root / "new.py").write_text("")
        assert treestate.judged(root).changed == first.changed == []
        assert treestate.capture(root).changed == ["lib.py"]
    assert treestate.judged(root).changed == ["lib.py"]  # the block is over: asked again
    assert treestate.judged(root).untracked == ["new.py"]


def test_outside_a_settled_block_the_judged_tree_is_the_tree_now(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    assert treestate.judged(root) == treestate.capture(root)
    (root / "lib.py").write_text("X = 3\n")
    assert treestate.judged(root).changed == ["lib.py"]


def test_the_judged_tree_digest_reads_each_file_once_while_settled(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    before = inputs.tree_digest(root)
    with treestate.settled(root):
        assert inputs.tree_digest(root) == before
        (root / "lib.py").write_text("X = 4\n")
        assert inputs.tree_digest(root) == before  # read once: the run's tree is settled
        written = inputs.tree_digest(root, replaced={"lib.py": b"X = 4\n"})
    assert inputs.tree_digest(root) == written != before  # outside: the tree now
