"""A check run sits on a commit, a verdict on a pair (the pull request's head merged into its
base): `publish` names the pair in the check run and posts a success only when no other open
pull request with that head targets another branch and the judged one still targets the
judged base (github.sharing) — issue 34, case 5. Against the local GitHub API, by what goes
over the wire."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from entropy_action.github import sharing
from entropy_action.github.pulls import parse
from entropy_action.render import checkrun, markdown
from entropy_action.render.checkrun import JudgedMerge
from tests.support.github_api import GitHubAPI, Reply, World, pull_object
from tests.support.verdict_samples import verdict_of
from tests.unit.test_publish import run_cli, write_verdict

REPO = "octo/widgets"
HEAD, BASE, FIXED, MERGE = "1" * 40, "2" * 40, "3" * 40, "4" * 40
PULLS = f"/repos/{REPO}/pulls"


def pull(number: int, base_ref: str, **changes: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "head_sha": HEAD, "head_ref": "fix", "base_sha": BASE, "base_ref": base_ref,
        "merge_commit_sha": MERGE,
    }  # fmt: skip
    fields.update(changes)
    return pull_object(REPO, number, **fields)


@pytest.fixture
def event(tmp_path: Path, github_api: GitHubAPI, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A pull_request run of #8: the head into `fixed`, the branch that holds the fix."""
    path = tmp_path / "event.json"
    payload = {"number": 8, "pull_request": {"number": 8, "head": {"ref": "fix", "sha": HEAD},
               "base": {"ref": "fixed", "sha": FIXED}}}  # fmt: skip
    path.write_text(json.dumps(payload), encoding="utf-8")
    for key, value in {
        "GITHUB_API_URL": github_api.url, "GITHUB_REPOSITORY": REPO,
        "GITHUB_EVENT_PATH": str(path), "GITHUB_SHA": MERGE, "GITHUB_TOKEN": github_api.token,
    }.items():  # fmt: skip
        monkeypatch.setenv(key, value)
    return path


def posted(api: GitHubAPI) -> dict[str, Any]:
    (body,) = [r.body for r in api.requests if r.method == "POST"]
    assert isinstance(body, dict)
    return body


def test_a_success_is_withheld_when_another_pull_request_with_the_head_targets_another_base(
    tmp_path: Path, event: Path, github_api: GitHubAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    """#8 (head into `fixed`) is honestly a merge candidate; #7 (the same head into main,
    where the defect is) shares the commit: a success on it would pass #7's required check."""
    github_api.world = World([pull(7, "main", base_sha=BASE), pull(8, "fixed", base_sha=FIXED)])
    code, out, _ = run_cli(
        capsys, "--verdict", write_verdict(tmp_path, verdict_of("merge_candidate"))
    )
    assert code == 1
    body = posted(github_api)
    assert (body["head_sha"], body["conclusion"]) == (HEAD, "failure")
    assert body["output"]["title"].endswith(", but not a success on this commit")
    lead = body["output"]["summary"].split("\n\n")[:2]
    reason = (
        f"{HEAD[:12]} is also the head of pull request #7 into main, whose merge this verdict "
        "did not judge: a success on the commit would stand for it too"
    )
    assert lead == [
        f"> **Not a success on this commit:** {markdown.text(reason)}",
        f"**Judged:** pull request #8, `fix` (`{HEAD[:12]}`) merged into `fixed` at "
        f"`{FIXED[:12]}`, merge commit `{MERGE[:12]}`.",
    ]
    assert "not a success on this commit" in out
    gets = [path for method, path, _ in github_api.calls() if method == "GET"]
    assert gets == [f"{PULLS}/8", f"/repos/{REPO}/commits/{HEAD}/pulls?per_page=100&page=1"]


def test_a_pull_request_alone_on_its_head_gets_its_success_and_names_the_merge(
    tmp_path: Path, event: Path, github_api: GitHubAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    github_api.world = World([pull(8, "fixed", base_sha=FIXED), pull(7, "main", state="closed")])
    code, _, _ = run_cli(
        capsys, "--verdict", write_verdict(tmp_path, verdict_of("merge_candidate"))
    )
    assert code == 0
    body = posted(github_api)
    assert body["conclusion"] == "success"
    assert body["output"]["summary"].startswith(
        f"**Judged:** pull request #8, `fix` (`{HEAD[:12]}`)"
    )


def test_a_rejection_names_the_merge_and_asks_nothing(
    tmp_path: Path, event: Path, github_api: GitHubAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, _ = run_cli(capsys, "--verdict", write_verdict(tmp_path, verdict_of("real_defect")))
    assert code == 0
    assert posted(github_api)["output"]["summary"].startswith("**Judged:** pull request #8")
    assert [m for m, _, _ in github_api.calls()] == ["POST"]


def test_a_success_is_withheld_when_the_pulls_cannot_be_read(
    tmp_path: Path, event: Path, github_api: GitHubAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    """A token without pull-requests: read: the success cannot be confirmed, so it is not
    given (the check run itself still goes out)."""
    github_api.script(Reply.forbidden())
    code, _, _ = run_cli(
        capsys, "--verdict", write_verdict(tmp_path, verdict_of("merge_candidate"))
    )
    assert code == 1
    summary = posted(github_api)["output"]["summary"]
    assert markdown.text("grant the job pull-requests: read") in summary.splitlines()[0]


def test_the_trusted_workflow_names_the_merge_it_resolved(
    tmp_path: Path, github_api: GitHubAPI, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """A workflow_run event carries no base: --pull-request, --base-branch, --base-sha."""
    path = tmp_path / "event.json"
    path.write_text(json.dumps({"workflow_run": {"head_sha": HEAD}}), encoding="utf-8")
    for key, value in {
        "GITHUB_API_URL": github_api.url,
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_EVENT_PATH": str(path),
        "GITHUB_TOKEN": github_api.token,
    }.items():
        monkeypatch.setenv(key, value)  # fmt: skip
    github_api.world = World([pull(7, "main")])
    code, _, _ = run_cli(
        capsys, "--verdict", write_verdict(tmp_path, verdict_of("merge_candidate")),
        "--pull-request", "7", "--base-branch", "main", "--base-sha", BASE,
        "--merge-commit", MERGE,
    )  # fmt: skip
    assert code == 0
    body = posted(github_api)
    assert body["conclusion"] == "success"
    assert body["output"]["summary"].startswith(
        f"**Judged:** pull request #7, (`{HEAD[:12]}`) merged into `main` at `{BASE[:12]}`, "
        f"merge commit `{MERGE[:12]}`."
    )


JUDGED = JudgedMerge(base_ref="main", base_sha=BASE, head_sha=HEAD, pull_request=7)


@pytest.mark.parametrize(
    ("current", "sharing_pulls", "reason"),
    [
        (pull(7, "main"), [pull(7, "main")], None),
        (pull(7, "main"), [pull(7, "main"), pull(9, "main", head_ref="copy")], None),
        (pull(7, "main"), [pull(9, "release", state="closed")], None),
        (pull(7, "main"), [pull(9, "release", head_sha=FIXED)], None),
        (pull(7, "main"), [pull(9, "release")], "is also the head of pull request #9 into release"),
        (pull(7, "release"), [], "pull request #7 now targets release, not main"),
        (pull(7, "main", state="closed"), [], "pull request #7 is closed"),
    ],
)
def test_the_decision_row_by_row(
    current: dict[str, Any], sharing_pulls: list[dict[str, Any]], reason: str | None
) -> None:
    found = sharing.decide(JUDGED, parse(current), [parse(p) for p in sharing_pulls])
    assert (found is None) if reason is None else (found is not None and reason in found)


def test_a_merge_group_is_its_own_commit() -> None:
    group = JudgedMerge(base_ref="main", base_sha=BASE, head_sha=HEAD)
    assert group.line() == f"**Judged:** merge group `{HEAD[:12]}` against `main` at `{BASE[:12]}`."
    plan = checkrun.plan(verdict_of("merge_candidate"), head_sha=HEAD, judged=group)
    assert plan.conclusion == "success"


def test_a_withheld_reason_never_turns_a_rejection_into_anything_else() -> None:
    plan = checkrun.plan(verdict_of("real_defect"), head_sha=HEAD, withheld="shared")
    assert plan.conclusion == "failure"
    assert "Not a success" not in plan.summary
