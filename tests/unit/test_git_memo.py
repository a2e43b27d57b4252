"""git.memo(): inside it, one read-only git call per (folder, arguments); outside, none kept."""

from __future__ import annotations

from entropy_action.core import git


def test_the_memo_lives_as_long_as_its_outermost_block() -> None:
    assert git._memo_depth == [0]
    with git.memo():
        with git.memo():
            assert git._memo_depth == [2]
        assert git._memo_depth == [1]
    assert git._memo_depth == [0]
    assert git._memo == {}


def test_only_reading_commands_are_remembered() -> None:
    assert {"show", "cat-file", "diff", "ls-files", "ls-tree", "rev-parse"} <= git._READS
    for writes in ("worktree", "commit", "add", "init", "checkout", "reset", "stash"):
        assert writes not in git._READS
