"""git.show inside git.memo(): one `git cat-file --batch` per folder answers what `git show`
answers outside it, for every kind of path a scan asks about."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from entropy_action.core import git


@pytest.fixture
def commit(tmp_path: Path) -> tuple[Path, str]:
    """A repository whose one commit holds a file, a file with a space, a symbolic link, a
    folder, non-UTF-8 bytes and an empty file."""

    def run(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)
        return done.stdout.decode().strip()

    run("init", "-q")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("def test_a():\n    assert 1\n")
    (tmp_path / "tests" / "with space.py").write_text("X = 1\n")
    (tmp_path / "data.bin").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "empty.txt").write_bytes(b"")
    os.symlink("tests/test_a.py", tmp_path / "link.py")
    run("add", ".")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    return tmp_path, run("rev-parse", "HEAD")


PATHS = (
    "tests/test_a.py",
    "tests/with space.py",
    "data.bin",
    "empty.txt",
    "link.py",  # its target's path, as git holds it
    "tests",  # a folder: `git show` lists it
    "missing.py",
    "tests/missing.py",
)


def test_inside_a_memo_block_each_answer_is_the_one_git_show_gives(
    commit: tuple[Path, str],
) -> None:
    root, sha = commit
    outside = {path: git.show(root, sha, path) for path in PATHS}
    assert outside["link.py"] == b"tests/test_a.py"
    assert outside["tests/missing.py"] is None
    assert b"test_a.py" in (outside["tests"] or b"")
    with git.memo():
        inside = {path: git.show(root, sha, path) for path in PATHS}
        assert {path: git.show(root, sha, path) for path in PATHS} == inside  # kept
        (batch,) = git._batches.values()
        running = batch.proc
        assert running is not None
        assert running.poll() is None
    assert inside == outside
    assert running.poll() == 0  # closed with the block
    assert (git._batches, git._blobs) == ({}, {})
    assert git.show(root, "0" * 40, "tests/test_a.py") is None


def test_a_batch_that_died_hands_its_questions_to_git_show(commit: tuple[Path, str]) -> None:
    root, sha = commit
    with git.memo():
        assert git.show(root, sha, "empty.txt") == b""
        (batch,) = git._batches.values()
        assert batch.proc is not None
        batch.proc.kill()
        batch.proc.wait()
        assert git.show(root, sha, "tests/test_a.py") == b"def test_a():\n    assert 1\n"
        assert git.show(root, sha, "missing.py") is None
        assert batch.proc is None  # stopped, not asked again
