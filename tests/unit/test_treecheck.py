"""A host's report against the tree the judge judges (verdict.treecheck, pure): the same
commit, the same changes to it; untracked files that can change what runs are said."""

from __future__ import annotations

import hashlib

from entropy_action import __version__
from entropy_action.core.hostinfo import HostInfo, TreeState
from entropy_action.verdict import treecheck
from tests.unit.test_reports import host_info

COMMIT = "a" * 40
OTHER = "b" * 40
CLEAN = hashlib.sha256().hexdigest()  # no changed file: the digest of nothing


def state(*changed: str, untracked: tuple[str, ...] = ()) -> TreeState:
    digest = hashlib.sha256(" ".join(changed).encode()).hexdigest() if changed else CLEAN
    return TreeState(
        changed=list(changed),
        changed_count=len(changed),
        changed_sha256=digest,
        untracked=list(untracked),
        untracked_count=len(untracked),
    )


def info(
    tree: TreeState | None, *, commit: str | None = COMMIT, version: str = __version__
) -> HostInfo:
    return host_info("a", "/w", commit=commit, tree=tree, gate_version=version)


def test_a_host_that_ran_its_commit_as_checked_out_is_of_the_judged_tree() -> None:
    assert treecheck.problems("a", info(state()), COMMIT, state()) == []


def test_a_host_whose_install_rewrote_a_tracked_file_did_not_run_its_commit() -> None:
    found = treecheck.problems("a", info(state("invoice_lib.py")), COMMIT, state())
    assert found == [
        f"host A: its working tree differed from commit {COMMIT[:12]} at the end of its run in "
        "1 tracked file (invoice_lib.py): it did not run the commit it names (a step of its "
        "job changed them: the project's install, a setup.py, a test)"
    ]


def test_more_changed_files_are_counted_and_three_named() -> None:
    found = treecheck.problems("b", info(state("a.py", "b.py", "c.py", "d.py")), COMMIT, state())
    assert "in 4 tracked files (a.py, b.py, c.py and 1 more)" in found[0]


def test_the_local_gate_judges_the_working_tree_its_hosts_ran() -> None:
    """The patch is uncommitted: the hosts' changes are the judged tree's, and agree."""
    patch = state("invoice_lib.py")
    assert treecheck.problems("a", info(patch), COMMIT, patch) == []
    other = treecheck.problems("a", info(state("tests/x.py")), COMMIT, patch)
    assert other == [
        f"host A: at the end of its run its working tree's changes to commit {COMMIT[:12]} are "
        "not the judged tree's: 1 tracked file (tests/x.py) there, 1 tracked file "
        "(invoice_lib.py) here"
    ]


def test_a_report_of_another_commit_is_not_of_the_judged_tree() -> None:
    assert treecheck.problems("a", info(state(), commit=OTHER), COMMIT, state()) == [
        f"host A ran commit {OTHER[:12]}, the tree judged here is commit {COMMIT[:12]}: its "
        "report is of another commit"
    ]


def test_this_gates_report_without_a_tree_cannot_be_checked_an_older_gates_is_a_note() -> None:
    missing = treecheck.problems("a", info(None), COMMIT, state())
    assert missing == [
        f"host A: its host.json records no working-tree state (`tree`): the tree it ran cannot "
        f"be checked against commit {COMMIT[:12]}"
    ]
    older = info(None, version="0.0.9")
    assert treecheck.problems("a", older, COMMIT, state()) == []
    assert treecheck.notes("a", older) == ["host A: entropy-gate 0.0.9 recorded no tree"]


def test_outside_git_nothing_is_compared() -> None:
    assert treecheck.problems("a", info(None, commit=None), COMMIT, state()) == []
    assert treecheck.problems("a", info(state("x.py")), None, None) == []


def test_untracked_files_that_can_change_what_runs_are_said_not_judged() -> None:
    tree = state(untracked=("invoice_lib/__init__.py",))
    assert treecheck.problems("a", info(tree), COMMIT, state()) == []
    assert treecheck.notes("a", info(tree)) == [
        "host A: at the end of its run its working tree held 1 untracked file "
        "(invoice_lib/__init__.py) that can change what runs (not ignored, not in the commit)"
    ]
    assert treecheck.notes("a", info(state())) == []
