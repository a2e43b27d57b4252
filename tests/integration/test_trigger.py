"""`resolve-run`: what triggered the trusted workflow, and which pull request's merge the hosts
may speak for.

Real git throughout, as GitHub holds it (tests/support/pr_world.py): a bare origin with the
base branch, the PR's head branch and GitHub's refs (`refs/pull/7/head`, `refs/pull/7/merge`:
the head merged into the base's tip, which moved on after the head forked: the PR is behind
its base), a trusted clone of it (the default branch, fetch-depth 0: no refs/pull), and the
GitHub API stand-in (tests/support/github_api.py) answering the pull request's reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_verdict_command import _outputs
from tests.support import pr_world
from tests.support.github_api import GitHubAPI, World, serving
from tests.support.helpers import SEED_MANIFEST, SEED_PROPERTY, Repo, Result
from tests.unit.test_reports import host_info, write_host

CALLER = ".github/workflows/entropy-gate.yml"
REPOSITORY = "acme/invoices"


@dataclass
class Pr:
    repo: Repo  # the trusted clone
    github: Path  # where GitHub's commits are made
    origin: Path  # the bare origin
    base: str  # where the head forked
    tip: str  # main's tip after it (the PR's base)
    head: str
    merge: str  # GitHub's test merge of head into tip (refs/pull/7/merge)
    out: Path  # GITHUB_OUTPUT
    worktree: Path
    api: GitHubAPI
    event: dict[str, Any]

    def serve(self, *pulls: dict[str, Any], events: dict[str, list[Any]] | None = None) -> None:
        self.api.world = World(list(pulls), events or {})

    def the_pull(self, **changes: Any) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "head": self.head, "head_ref": "fix", "base": self.tip, "merge_commit": self.merge,
        }  # fmt: skip
        fields.update(changes)
        return pr_world.pull_request(REPOSITORY, 7, **fields)


@pytest.fixture(name="pr")
def pr_fixture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Pr]:
    github = tmp_path / "github"
    github.mkdir()
    pr_world.git(github, "init", "-q", "-b", "main")
    for name, text in {
        "entropy.yaml": SEED_MANIFEST.read_text(encoding="utf-8"),
        "tests/properties/test_invoice_total.py": SEED_PROPERTY,
        CALLER: "name: entropy-gate hosts\non: pull_request\n",
    }.items():
        (github / name).parent.mkdir(parents=True, exist_ok=True)
        (github / name).write_text(text, encoding="utf-8")
    base = _commit(github, "base")
    pr_world.git(github, "checkout", "-q", "-b", "fix")
    (github / "fix.txt").write_text("the fix\n", encoding="utf-8")
    head = _commit(github, "fix")
    pr_world.git(github, "checkout", "-q", "main")
    (github / "other.txt").write_text("main moved on\n", encoding="utf-8")
    tip = _commit(github, "main moves on")
    merge = pr_world.merge(github, tip, head)
    origin = pr_world.bare(github, tmp_path / "origin.git")
    pr_world.push(github, origin, {"refs/pull/7/head": head, "refs/pull/7/merge": merge})
    clone = tmp_path / "repo"
    pr_world.git(tmp_path, "clone", "-q", "--no-local", str(origin), str(clone))  # no refs/pull
    with serving(git=origin) as api:
        out = tmp_path / "github_output"
        out.write_text("", encoding="utf-8")
        for key, value in {
            "GITHUB_OUTPUT": str(out), "GITHUB_EVENT_NAME": "workflow_run",
            "GITHUB_TOKEN": api.token, "GITHUB_API_URL": api.url,
            "GITHUB_REPOSITORY": REPOSITORY,
        }.items():  # fmt: skip
            monkeypatch.setenv(key, value)
        repo = Repo(path=clone, capsys=capsys, monkeypatch=monkeypatch)
        event = pr_world.workflow_run(REPOSITORY, head=head, head_branch="fix", path=CALLER)
        made = Pr(repo, github, origin, base, tip, head, merge, out, tmp_path / "wt", api, event)
        made.serve(made.the_pull())
        write_event(made, monkeypatch)
        hosts(tmp_path, merge)
        yield made


def _commit(repo: Path, message: str) -> str:
    pr_world.git(repo, "add", "-A")
    pr_world.git(repo, "commit", "-q", "-m", message)
    return pr_world.git(repo, "rev-parse", "HEAD")


def write_event(pr: Pr, monkeypatch: pytest.MonkeyPatch, **run: object) -> Path:
    payload = json.loads(json.dumps(pr.event))
    payload["workflow_run"].update(run)
    path = pr.worktree.parent / "event.json"
    path.write_text(json.dumps(payload), "utf-8")
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


def refused(done: Result, pr: Pr, *words: str) -> None:
    assert done.code == 2, done
    lines = [
        line for line in done.err.strip().splitlines() if not line.startswith("resolve-run: refs/")
    ]
    assert len(lines) == 1, done.err
    for word in words:
        assert word in lines[0], lines[0]
    assert pr.out.read_text(encoding="utf-8") == ""
    assert not pr.worktree.exists()


def test_hosts_that_ran_githubs_merge_are_judged_against_its_first_parent(pr: Pr) -> None:
    """refs/pull/7/merge fetched by ref; the PR is behind its base (main moved on after the
    head forked): it is judged against the tip it was merged into, not the fork point."""
    done = resolve(pr)
    assert done.code == 0, done.err
    assert outputs(pr) == {
        "commit": pr.merge,
        "base": pr.tip,
        "head-sha": pr.head,
        "manifest": str(pr.worktree / "entropy.yaml"),
        "pull-request": "7",
        "base-branch": "main",
    }
    assert pr.repo.git("-C", str(pr.worktree), "rev-parse", "HEAD") == pr.merge
    assert (pr.worktree / "fix.txt").read_text() == "the fix\n"
    gets = [path for method, path, _ in pr.api.calls() if method == "GET"]
    assert gets == [
        f"/repos/{REPOSITORY}/pulls?state=open&head=acme:fix&per_page=100&page=1",
        f"/repos/{REPOSITORY}/contents/.github/workflows/entropy-gate.yml?ref=main",
        f"/repos/{REPOSITORY}/issues/7/events?per_page=100&page=1",
    ]
    assert pr.api.violations == []


def test_a_manifest_elsewhere_in_the_tree_is_found_in_the_worktree(pr: Pr) -> None:
    done = resolve(pr, "--manifest", "sub/entropy.yaml")
    assert done.code == 0, done.err
    assert outputs(pr)["manifest"] == str(pr.worktree / "sub" / "entropy.yaml")


def test_hosts_that_ran_the_head_itself_are_refused(pr: Pr, tmp_path: Path) -> None:
    """GitHub runs a pull_request workflow on the merge, never on the head alone."""
    hosts(tmp_path, pr.head)
    refused(resolve(pr), pr, f"names commit {pr.head}, not a merge of the run's head")


def test_hosts_that_ran_another_commit_are_refused(pr: Pr, tmp_path: Path) -> None:
    hosts(tmp_path, pr.tip)  # a commit of the clone, not the PR's
    refused(resolve(pr), pr, f"names commit {pr.tip}, not a merge of the run's head")


@pytest.mark.parametrize("name", ["pull_request", "pull_request_target", "push", ""])
def test_an_event_that_is_not_workflow_run_is_refused(
    pr: Pr, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv("GITHUB_EVENT_NAME", name)
    refused(resolve(pr), pr, "not workflow_run")


@pytest.mark.parametrize("triggering", ["push", "pull_request_target", "workflow_dispatch", None])
def test_a_run_not_for_a_pull_request_is_refused(
    pr: Pr, monkeypatch: pytest.MonkeyPatch, triggering: str | None
) -> None:
    write_event(pr, monkeypatch, event=triggering)
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
    pr: Pr, monkeypatch: pytest.MonkeyPatch, path: object
) -> None:
    write_event(pr, monkeypatch, path=path)
    refused(resolve(pr), pr, "workflow_run.path", "not the caller workflow")


def test_the_caller_is_configurable(pr: Pr, monkeypatch: pytest.MonkeyPatch) -> None:
    other = ".github/workflows/hosts.yml"
    (pr.github / other).write_text("name: hosts\n", encoding="utf-8")
    pr_world.git(pr.github, "checkout", "-q", pr.tip)
    tip = _commit(pr.github, "the hosts workflow")
    merge = pr_world.merge(pr.github, tip, pr.head)
    pr_world.push(pr.github, pr.origin, {"refs/heads/main": tip, "refs/pull/7/merge": merge})
    pr.serve(pr.the_pull(base=tip, merge_commit=merge))
    hosts(pr.worktree.parent, merge)
    write_event(pr, monkeypatch, path=other)
    refused(resolve(pr), pr, "workflow_run.path")
    done = resolve(pr, "--caller", other)
    assert done.code == 0, done.err


@pytest.mark.parametrize("sha", [None, "", "HEAD", "main", "abc123", "A" * 40, "--all", 12])
def test_a_missing_or_invalid_head_sha_is_refused(
    pr: Pr, monkeypatch: pytest.MonkeyPatch, sha: object
) -> None:
    write_event(pr, monkeypatch, head_sha=sha)
    refused(resolve(pr), pr, "workflow_run.head_sha")


@pytest.mark.parametrize(
    ("field", "value"),
    [("id", None), ("id", "1"), ("head_branch", ""), ("created_at", None), ("head_repository", {})],
)
def test_a_run_that_cannot_be_bound_is_refused(
    pr: Pr, monkeypatch: pytest.MonkeyPatch, field: str, value: object
) -> None:
    write_event(pr, monkeypatch, **{field: value})
    refused(resolve(pr), pr, f"workflow_run.{field}")


@pytest.mark.parametrize(
    "text", ["", "[]", "{", '{"workflow_run": 1}', '{"action": "completed"}', "\xff"]
)
def test_a_damaged_event_file_is_refused(
    pr: Pr, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    path = write_event(pr, monkeypatch)
    path.write_bytes(text.encode("latin-1"))
    refused(resolve(pr), pr, str(path))


def test_no_event_file_is_refused(pr: Pr, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_EVENT_PATH")
    refused(resolve(pr), pr, "GITHUB_EVENT_PATH")


def test_a_symlinked_event_file_is_refused(pr: Pr, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_event(pr, monkeypatch)
    link = path.with_name("link.json")
    link.symlink_to(path)
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(link))
    refused(resolve(pr), pr, "symbolic link")


def test_host_b_on_another_commit_is_refused(pr: Pr, tmp_path: Path) -> None:
    hosts(tmp_path, pr.merge, pr.head)
    refused(resolve(pr), pr, "host B ran commit", pr.head)


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
    _list_hosts(tmp_path, {"p1": (pr.merge, pr.merge), "p2": (pr.merge, pr.merge)})
    done = resolve(pr)
    assert done.code == 0, done.err
    assert outputs(pr)["commit"] == pr.merge


def test_a_property_whose_leg_reported_nothing_is_left_to_the_verdict(
    pr: Pr, tmp_path: Path
) -> None:
    _list_hosts(tmp_path, {"p1": (pr.merge, pr.merge), "p2": (pr.merge, None)})
    done = resolve(pr)
    assert done.code == 0, done.err  # the verdict judges p2 invalid: no folder on host B


def test_one_leg_on_another_commit_is_refused(pr: Pr, tmp_path: Path) -> None:
    _list_hosts(tmp_path, {"p1": (pr.merge, pr.merge), "p2": (pr.merge, pr.head)})
    refused(resolve(pr), pr, "properties/p2/host.json", "host B ran commit", pr.head)


def test_a_host_with_no_propertys_report_is_refused(pr: Pr, tmp_path: Path) -> None:
    _list_hosts(tmp_path, {"p1": (pr.merge, None)})
    refused(resolve(pr), pr, "host-b/host.json", "no such file")  # no leg uploaded at all
    failed = tmp_path / "host-b" / "properties" / "p1"
    failed.mkdir(parents=True)
    (failed / "error.json").write_text('{"format": 1}', encoding="utf-8")  # a failed leg's
    refused(resolve(pr), pr, "host-b/properties", "no property's host.json")
