"""`resolve-run`: what triggered the trusted workflow, and which commit the hosts may speak for.

Real git throughout: a base branch, a PR head on its own branch, and GitHub's merge commit
(`refs/pull/N/merge`: parents [base tip, head]) made with `git merge --no-ff`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.integration.test_verdict_command import _outputs
from tests.support.helpers import Repo, Result
from tests.unit.test_reports import host_info, write_host

CALLER = ".github/workflows/entropy-gate.yml"


@dataclass(frozen=True)
class Pr:
    repo: Repo
    base: str  # the PR's base (where the branch forked)
    tip: str  # main's tip after the fork point (the PR's base branch moved on)
    head: str
    merge: str  # GitHub's test merge of head into tip
    out: Path  # GITHUB_OUTPUT
    worktree: Path


@pytest.fixture
def pr(seed_repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Pr:
    repo = seed_repo
    base = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "-q", "-b", "fix")
    repo.write("fix.txt", "the fix\n")
    head = repo.commit("fix")
    repo.git("checkout", "-q", "main")
    repo.write("other.txt", "main moved on\n")
    tip = repo.commit("main moves on")
    repo.git("checkout", "-q", "--detach", tip)
    repo.git("merge", "-q", "--no-ff", "-m", "Merge fix into main", head)
    merge = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "-q", "main")
    out = tmp_path / "github_output"
    out.write_text("", encoding="utf-8")
    monkeypatch.setenv("GITHUB_OUTPUT", str(out))
    monkeypatch.setenv("GITHUB_EVENT_NAME", "workflow_run")
    event(tmp_path, monkeypatch, head_sha=head)
    hosts(tmp_path, head)
    return Pr(repo, base, tip, head, merge, out, tmp_path / "wt")


def event(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **run: object) -> Path:
    payload = {"id": 42, "event": "pull_request", "path": CALLER, "pull_requests": []}
    payload.update(run)
    path = tmp_path / "event.json"
    path.write_text(json.dumps({"action": "completed", "workflow_run": payload}), "utf-8")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(path))
    return path


def hosts(tmp_path: Path, commit_a: str | None, commit_b: str | None = "same") -> None:
    for label, commit in (("a", commit_a), ("b", commit_a if commit_b == "same" else commit_b)):
        write_host(tmp_path / f"host-{label}", host_info(label, "/w", commit=commit), b"<x/>")


def resolve(pr: Pr, *extra: str) -> Result:
    folder = pr.worktree.parent
    argv = ["resolve-run", "--host-a", str(folder / "host-a"), "--host-b", str(folder / "host-b")]
    return pr.repo.cli(*argv, "--worktree", str(pr.worktree), "--github-output", *extra)


def outputs(pr: Pr) -> dict[str, str]:
    return _outputs(pr.out.read_text(encoding="utf-8"))


def test_hosts_that_ran_the_head_are_judged_against_its_merge_base(pr: Pr) -> None:
    done = resolve(pr)
    assert done.code == 0, done.err
    assert outputs(pr) == {
        "commit": pr.head,
        "base": pr.base,
        "head-sha": pr.head,
        "manifest": str(pr.worktree / "entropy.yaml"),
    }
    assert pr.repo.git("-C", str(pr.worktree), "rev-parse", "HEAD") == pr.head
    assert (pr.worktree / "fix.txt").read_text() == "the fix\n"


def test_hosts_that_ran_githubs_merge_commit_are_judged_against_its_first_parent(
    pr: Pr, tmp_path: Path
) -> None:
    hosts(tmp_path, pr.merge)
    done = resolve(pr, "--manifest", "sub/entropy.yaml")
    assert done.code == 0, done.err
    assert outputs(pr) == {
        "commit": pr.merge,
        "base": pr.tip,
        "head-sha": pr.head,
        "manifest": str(pr.worktree / "sub" / "entropy.yaml"),
    }
    assert pr.repo.git("-C", str(pr.worktree), "rev-parse", "HEAD") == pr.merge


def test_a_base_branch_can_be_named(pr: Pr) -> None:
    pr.repo.git("checkout", "-q", "--detach", pr.base)  # the checkout is elsewhere
    done = resolve(pr, "--base-branch", "main")
    assert done.code == 0, done.err
    assert outputs(pr)["base"] == pr.base


def refused(done: Result, pr: Pr, *words: str) -> None:
    assert done.code == 2, done
    lines = done.err.strip().splitlines()
    assert len(lines) == 1, done.err
    for word in words:
        assert word in lines[0], lines[0]
    assert pr.out.read_text(encoding="utf-8") == ""
    assert not pr.worktree.exists()


@pytest.mark.parametrize("name", ["pull_request", "pull_request_target", "push", ""])
def test_an_event_that_is_not_workflow_run_is_refused(
    pr: Pr, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv("GITHUB_EVENT_NAME", name)
    refused(resolve(pr), pr, "not workflow_run")


@pytest.mark.parametrize("triggering", ["push", "pull_request_target", "workflow_dispatch", None])
def test_a_run_not_for_a_pull_request_is_refused(
    pr: Pr, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, triggering: str | None
) -> None:
    event(tmp_path, monkeypatch, head_sha=pr.head, event=triggering)
    refused(resolve(pr), pr, "workflow_run.event", "not pull_request")


@pytest.mark.parametrize(
    "path",
    [
        ".github/workflows/evil.yml",
        ".github/workflows/entropy-gate.yaml",
        "./.github/workflows/entropy-gate.yml",
        ".github/workflows/../workflows/entropy-gate.yml",
        "entropy-gate/entropy-gate/.github/workflows/entropy-gate.yml@v1",
        "",
        None,
        7,
    ],
)
def test_a_run_of_another_workflow_is_refused(
    pr: Pr, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: object
) -> None:
    event(tmp_path, monkeypatch, head_sha=pr.head, path=path)
    refused(resolve(pr), pr, "workflow_run.path", "not the caller workflow")


def test_the_caller_is_configurable(
    pr: Pr, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    event(tmp_path, monkeypatch, head_sha=pr.head, path=".github/workflows/hosts.yml")
    refused(resolve(pr), pr, "workflow_run.path")
    done = resolve(pr, "--caller", ".github/workflows/hosts.yml")
    assert done.code == 0, done.err


@pytest.mark.parametrize("sha", [None, "", "HEAD", "main", "abc123", "A" * 40, "--all", 12])
def test_a_missing_or_invalid_head_sha_is_refused(
    pr: Pr, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sha: object
) -> None:
    event(tmp_path, monkeypatch, head_sha=sha)
    refused(resolve(pr), pr, "workflow_run.head_sha")


@pytest.mark.parametrize(
    "text", ["", "[]", "{", '{"workflow_run": 1}', '{"action": "completed"}', "\xff"]
)
def test_a_damaged_event_file_is_refused(
    pr: Pr, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    path = tmp_path / "event.json"
    path.write_bytes(text.encode("latin-1"))
    refused(resolve(pr), pr, str(path))


def test_no_event_file_is_refused(pr: Pr, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_EVENT_PATH")
    refused(resolve(pr), pr, "GITHUB_EVENT_PATH")


def test_a_symlinked_event_file_is_refused(
    pr: Pr, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "event.json")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(link))
    refused(resolve(pr), pr, "symbolic link")


def test_hosts_that_ran_another_commit_are_refused(pr: Pr, tmp_path: Path) -> None:
    hosts(tmp_path, pr.tip)  # a commit of the clone, not the PR's
    refused(resolve(pr), pr, f"names commit {pr.tip}, the run was for {pr.head}")


def test_a_merge_whose_second_parent_is_not_the_head_is_refused(pr: Pr, tmp_path: Path) -> None:
    repo = pr.repo
    repo.git("checkout", "-q", "-b", "other", pr.base)
    repo.write("other-fix.txt", "x\n")
    other = repo.commit("another PR")
    repo.git("checkout", "-q", "--detach", pr.tip)
    repo.git("merge", "-q", "--no-ff", "-m", "merge another PR", other)
    wrong = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "-q", "main")
    hosts(tmp_path, wrong)
    refused(resolve(pr), pr, f"names commit {wrong}, the run was for {pr.head}")


def test_a_merge_whose_first_parent_is_not_on_the_base_branch_is_refused(
    pr: Pr, tmp_path: Path
) -> None:
    repo = pr.repo
    repo.git("checkout", "-q", "-b", "side", pr.base)
    repo.write("side.txt", "off the base branch\n")
    side = repo.commit("side")
    repo.git("merge", "-q", "--no-ff", "-m", "merge head into side", pr.head)
    wrong = repo.git("rev-parse", "HEAD")
    assert repo.git("rev-parse", f"{wrong}^1", f"{wrong}^2").split() == [side, pr.head]
    repo.git("checkout", "-q", "main")
    hosts(tmp_path, wrong)
    refused(resolve(pr), pr, f"names commit {wrong}")


def test_a_merge_with_the_parents_swapped_is_refused(pr: Pr, tmp_path: Path) -> None:
    repo = pr.repo
    repo.git("checkout", "-q", "--detach", pr.head)
    repo.git("merge", "-q", "--no-ff", "-m", "main into fix", pr.tip)
    swapped = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "-q", "main")
    hosts(tmp_path, swapped)
    refused(resolve(pr), pr, f"names commit {swapped}")


def test_host_b_on_another_commit_is_refused(pr: Pr, tmp_path: Path) -> None:
    hosts(tmp_path, pr.head, pr.merge)
    refused(resolve(pr), pr, "host B ran commit", pr.merge)


def test_a_host_report_without_a_commit_is_refused(pr: Pr, tmp_path: Path) -> None:
    hosts(tmp_path, None)
    refused(resolve(pr), pr, "host.json", "names no commit")


def test_a_missing_host_report_is_refused(pr: Pr, tmp_path: Path) -> None:
    (tmp_path / "host-a" / "host.json").unlink()
    refused(resolve(pr), pr, "host.json", "no such file")


def test_a_symlinked_host_folder_is_refused(pr: Pr, tmp_path: Path) -> None:
    real = tmp_path / "elsewhere"
    (tmp_path / "host-a").rename(real)
    (tmp_path / "host-a").symlink_to(real)
    refused(resolve(pr), pr, "host A's folder is a symbolic link")


def test_a_symlinked_host_json_is_refused(pr: Pr, tmp_path: Path) -> None:
    target = tmp_path / "host-b" / "host.json"
    (tmp_path / "host-a" / "host.json").unlink()
    (tmp_path / "host-a" / "host.json").symlink_to(target)
    refused(resolve(pr), pr, "symbolic link")


def test_a_head_that_is_not_in_the_clone_names_the_fetch(
    pr: Pr, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    absent = "0123456789abcdef0123456789abcdef01234567"
    event(tmp_path, monkeypatch, head_sha=absent)
    refused(resolve(pr), pr, f"git fetch origin {absent}")


def test_a_host_commit_that_is_not_in_the_clone_names_the_fetch(pr: Pr, tmp_path: Path) -> None:
    absent = "fedcba9876543210fedcba9876543210fedcba98"
    hosts(tmp_path, absent)
    refused(resolve(pr), pr, "host A's commit", f"git fetch origin {absent}")


@pytest.mark.parametrize("manifest", ["/etc/entropy.yaml", "../entropy.yaml", "a/../../x", ""])
def test_a_manifest_outside_the_repository_is_refused(pr: Pr, manifest: str) -> None:
    refused(resolve(pr, "--manifest", manifest), pr, "--manifest")


def test_outputs_outside_a_workflow_are_a_usage_error(
    pr: Pr, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_OUTPUT")
    done = resolve(pr)
    assert done.code == 2
    assert "GITHUB_OUTPUT" in done.err


def _list_hosts(tmp_path: Path, commits: dict[str, tuple[str | None, str | None]]) -> None:
    """Host folders of a list manifest, the legs merged: properties/ID/host.json per
    property, (commit on host A, commit on host B); None: that host has no report for it."""
    for label in "ab":
        folder = tmp_path / f"host-{label}"
        for name in ("host.json", "junit.xml"):
            (folder / name).unlink(missing_ok=True)
        for pid, pair in commits.items():
            commit = pair[0] if label == "a" else pair[1]
            if commit is not None:
                info = host_info(label, "/w", commit=commit)
                write_host(folder / "properties" / pid, info, b"<x/>")


def test_a_list_manifests_legs_bind_the_commit_every_property_names(pr: Pr, tmp_path: Path) -> None:
    _list_hosts(tmp_path, {"p1": (pr.head, pr.head), "p2": (pr.head, pr.head)})
    done = resolve(pr)
    assert done.code == 0, done.err
    assert outputs(pr)["commit"] == pr.head


def test_a_property_whose_leg_reported_nothing_is_left_to_the_verdict(
    pr: Pr, tmp_path: Path
) -> None:
    _list_hosts(tmp_path, {"p1": (pr.head, pr.head), "p2": (pr.head, None)})
    done = resolve(pr)
    assert done.code == 0, done.err  # the verdict judges p2 invalid: no folder on host B


def test_one_leg_on_another_commit_is_refused(pr: Pr, tmp_path: Path) -> None:
    _list_hosts(tmp_path, {"p1": (pr.head, pr.head), "p2": (pr.head, pr.merge)})
    refused(resolve(pr), pr, "properties/p2/host.json", "host B ran commit", pr.merge)


def test_a_host_with_no_propertys_report_is_refused(pr: Pr, tmp_path: Path) -> None:
    _list_hosts(tmp_path, {"p1": (pr.head, None)})
    refused(resolve(pr), pr, "host-b/host.json", "no such file")  # no leg uploaded at all
    failed = tmp_path / "host-b" / "properties" / "p1"
    failed.mkdir(parents=True)
    (failed / "error.json").write_text('{"format": 1}', encoding="utf-8")  # a failed leg's
    refused(resolve(pr), pr, "host-b/properties", "no property's host.json")
