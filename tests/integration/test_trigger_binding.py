"""`resolve-run` binds the hosts' commit to GitHub's merge of one open pull request, from
GitHub's own data, and refuses what only has the shape (issue 34, cases 3, 4, 6 and 7): a
pushed commit [base, head] with a tree of its choosing, a run of a workflow file the base
branch does not hold, a pull request into another branch, a base changed after the run. A
fork's pull request (no `pull_requests` in the event, its head only in refs/pull/N/head) and
a merge GitHub made again after the base moved on bind as GitHub made them.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.integration.test_trigger import (
    CALLER,
    REPOSITORY,
    Pr,
    _commit,
    hosts,
    outputs,
    pr_fixture,  # noqa: F401 (the fixture `pr`)
    refused,
    resolve,
    write_event,
)
from tests.support import pr_world
from tests.support.github_api import Reply, event_object


def test_a_pushed_commit_of_the_right_shape_and_another_tree_is_refused(pr: Pr) -> None:
    """Case 3: anyone who can push a branch can make a commit with parents [main's tip,
    head] and a tree that holds the fix; the old binding took its shape for GitHub's merge."""
    pr_world.git(pr.github, "checkout", "-q", pr.tip)
    (pr.github / "fix.txt").write_text("a different tree\n", encoding="utf-8")
    fixed = _commit(pr.github, "a tree of its own")
    shaped = pr_world.commit_tree(pr.github, fixed, pr.tip, pr.head, "looks like a merge")
    pr_world.push(pr.github, pr.origin, {"refs/heads/shaped": shaped})
    pr.repo.git("fetch", "-q", "origin")  # every branch is in the trusted clone
    hosts(pr.worktree.parent, shaped)
    refused(
        resolve(pr), pr,
        f"names commit {shaped}, which is not GitHub's merge of pull request #7",
        f"its tree is not git's merge of {pr.head[:12]} into {pr.tip[:12]} of 'main'",
    )  # fmt: skip


def test_githubs_earlier_merge_binds_when_the_base_moved_on_while_the_hosts_ran(pr: Pr) -> None:
    """GitHub merged again once main moved: refs/pull/7/merge and merge_commit_sha name the
    new merge; the hosts ran the old one, whose tree git confirms as the merge of the head
    into a commit of main. It is judged against that commit."""
    pr_world.git(pr.github, "checkout", "-q", pr.tip)
    (pr.github / "later.txt").write_text("main moved again\n", encoding="utf-8")
    later = _commit(pr.github, "main moves again")
    again = pr_world.merge(pr.github, later, pr.head)
    pr_world.push(pr.github, pr.origin, {"refs/heads/main": later, "refs/pull/7/merge": again})
    pr.serve(pr.the_pull(base=later, merge_commit=again))
    pr_world.push(pr.github, pr.origin, {"refs/keep/old-merge": pr.merge})  # in GitHub's store
    pr.repo.git("fetch", "-q", "origin", "refs/keep/old-merge")
    done = resolve(pr)
    assert done.code == 0, done.err
    assert (outputs(pr)["commit"], outputs(pr)["base"]) == (pr.merge, pr.tip)


def test_a_fork_pull_request_is_found_through_the_api_and_its_merge_fetched(
    pr: Pr, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Case 6, a fork: the event has no pull_requests, the head is in no branch of the
    origin (only refs/pull/8/head), the trusted clone has neither."""
    pr_world.git(pr.github, "checkout", "-q", "-b", "patch-1", pr.base)
    (pr.github / "fork.txt").write_text("from a fork\n", encoding="utf-8")
    head = _commit(pr.github, "fork's fix")
    merge = pr_world.merge(pr.github, pr.tip, head)
    pr_world.push(pr.github, pr.origin, {"refs/pull/8/head": head, "refs/pull/8/merge": merge})
    fork = "forker/invoices"
    pr.serve(
        pr_world.pull_request(
            REPOSITORY, 8, head=head, head_ref="patch-1", base=pr.tip, merge_commit=merge,
            head_repo=fork,
        )
    )  # fmt: skip
    pr.event = pr_world.workflow_run(
        REPOSITORY, head=head, head_branch="patch-1", path=CALLER, head_repo=fork
    )
    write_event(pr, monkeypatch)
    hosts(tmp_path, merge)
    absent = subprocess.run(["git", "-C", str(pr.repo.path), "cat-file", "-e", head], check=False)
    assert absent.returncode != 0  # the fork's head is not in the trusted clone
    done = resolve(pr)
    assert done.code == 0, done.err
    assert outputs(pr) | {"manifest": ""} == {
        "commit": merge, "base": pr.tip, "head-sha": head, "manifest": "",
        "pull-request": "8", "base-branch": "main",
    }  # fmt: skip
    assert (pr.worktree / "fork.txt").read_text() == "from a fork\n"


def test_a_run_of_a_workflow_file_the_pull_request_edits_is_refused(pr: Pr, tmp_path: Path) -> None:
    """Case 4: GitHub ran the copy in the merge; it must be the base branch's own (by blob
    sha through the API), else the run's uploads may be anything."""
    pr_world.git(pr.github, "checkout", "-q", pr.head)
    (pr.github / CALLER).write_text("name: entropy-gate hosts\n# uploads forged folders\n")
    head = _commit(pr.github, "a workflow of its own")
    merge = pr_world.merge(pr.github, pr.tip, head)
    pr_world.push(pr.github, pr.origin, {"refs/pull/7/head": head, "refs/pull/7/merge": merge})
    pr.serve(pr.the_pull(head=head, merge_commit=merge))
    pr.event["workflow_run"]["head_sha"] = head
    write_event(pr, pytest.MonkeyPatch())
    hosts(tmp_path, merge)
    blob = pr_world.git(pr.github, "rev-parse", f"{merge}:{CALLER}")
    refused(
        resolve(pr), pr,
        f"the run's workflow {CALLER} in the merge it ran ({merge[:12]}) is blob {blob}",
        "a run of another copy of the workflow",
    )  # fmt: skip


def test_a_pull_request_into_another_branch_is_refused(pr: Pr) -> None:
    """Case 4: a second pull request with the same head into a branch whose hosts workflow
    uploads what it likes: the trusted workflow judges pull requests into main only."""
    pr_world.git(pr.github, "checkout", "-q", "-b", "evil", pr.base)
    (pr.github / "evil.txt").write_text("x\n", encoding="utf-8")
    evil = _commit(pr.github, "evil base")
    merge = pr_world.merge(pr.github, evil, pr.head)
    pr_world.push(pr.github, pr.origin, {"refs/heads/evil": evil, "refs/pull/9/merge": merge})
    pr.serve(
        pr_world.pull_request(
            REPOSITORY, 9, head=pr.head, head_ref="fix", base=evil, base_ref="evil",
            merge_commit=merge,
        )
    )  # fmt: skip
    hosts(pr.worktree.parent, merge)
    refused(resolve(pr), pr, "pull request #9 targets 'evil', not 'main'")


def test_a_base_changed_after_the_run_started_is_refused(pr: Pr) -> None:
    """Case 4, retargeted and reopened: the run read the other base's workflow file, then the
    base was set back; the issue events say when."""
    later = event_object(7, "base_ref_changed", "2026-01-10T00:05:00Z")
    pr.serve(pr.the_pull(), events={"7": [later]})
    refused(resolve(pr), pr, "base branch was changed at 2026-01-10T00:05:00Z, after the run")


def test_a_base_changed_before_the_run_started_binds(pr: Pr) -> None:
    earlier = event_object(7, "base_ref_changed", "2026-01-09T23:00:00Z")
    other = event_object(7, "labeled", "2026-01-10T00:05:00Z")
    pr.serve(pr.the_pull(), events={"7": [earlier, other]})
    done = resolve(pr)
    assert done.code == 0, done.err


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"state": "closed"}, "no open pull request has head acme:fix"),
        ({"head": "1" * 40}, "no open pull request has head acme:fix"),
        ({"head_repo": "other/invoices"}, "no open pull request has head acme:fix"),
    ],
)
def test_a_pull_request_that_is_not_the_runs_is_refused(
    pr: Pr, changes: dict[str, str], words: str
) -> None:
    pr.serve(pr.the_pull(**changes))
    refused(resolve(pr), pr, words)


def test_without_a_token_nothing_is_bound(pr: Pr, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_TOKEN")
    refused(resolve(pr), pr, "no token in $GITHUB_TOKEN")


def test_an_api_that_refuses_the_token_names_the_permissions(pr: Pr) -> None:
    pr.api.persistent = Reply.forbidden()
    refused(resolve(pr), pr, "HTTP 403", "pull-requests: read and contents: read")


def test_a_run_of_another_repository_is_refused(pr: Pr, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/other")
    refused(resolve(pr), pr, "the event is of 'acme/invoices', this job of 'acme/other'")
