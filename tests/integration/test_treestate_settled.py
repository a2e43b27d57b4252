"""The judged tree's state (core.treestate): listed once while the local gate judges a
manifest's properties (`settled`), never for a host run's own record (`capture`); the
scan's reads of the tree, once per settled block."""

from __future__ import annotations

import subprocess
from pathlib import Path

from entropy_action.core import treestate
from entropy_action.evidence import inputs
from entropy_action.scan import closure, source


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


def test_the_scans_reads_of_the_work_tree_are_answered_once_while_settled(
    tmp_path: Path,
) -> None:
    """scan.source.WorkTree and scan.closure.between: one answer per settled block (the
    local gate opens one for the scans before host A starts and one for the judging after
    every run in the checkout ended); outside one, the tree as it is now."""
    root = _repo(tmp_path)
    (root / "tests").mkdir()
    (root / "tests" / "test_a.py").write_text("def test_a():\n    assert 1\n")
    for args in (
        ["add", "tests"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "t"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    tree = source.WorkTree(root)
    revisions = closure.Revisions(root, _head(root), "tests/test_a.py", "tests/test_a.py")
    with treestate.settled(root):
        assert tree.read("tests/test_a.py") == b"def test_a():\n    assert 1\n"
        assert not tree.is_file("tests/conftest.py")
        first = closure.between(revisions)
        (root / "tests" / "test_a.py").write_text("def test_a():\n    assert 2\n")
        (root / "tests" / "conftest.py").write_text("")
        with treestate.settled(root):  # a block inside shares the outer's answers
            assert tree.read("tests/test_a.py") == b"def test_a():\n    assert 1\n"
        assert not tree.is_file("tests/conftest.py")  # the inner block left them in place
        assert closure.between(revisions) is first
        assert first.changed == ()
    assert tree.read("tests/test_a.py") == b"def test_a():\n    assert 2\n"
    assert tree.is_file("tests/conftest.py")
    again = closure.between(revisions)
    assert again.changed == ("tests/test_a.py", "tests/conftest.py")
    assert treestate.settled_memo(root.resolve()) is None


def _head(root: Path) -> str:
    done = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()
