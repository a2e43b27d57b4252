"""`entropy-gate publish` against the local GitHub API server, judged by what goes over the wire."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from entropy_action.cli.commands.verdict import publish_to_workflow
from entropy_action.cli.main import main
from entropy_action.evidence import inputs
from entropy_action.github import publish
from entropy_action.github.api import ApiSettings, Secret
from entropy_action.github.publish import FORK_HINT, pointer
from entropy_action.render import markdown
from entropy_action.render.summary import render_json
from entropy_action.verdict.classify import Evidence, classify
from entropy_action.verdict.model import Verdict
from tests.support.github_api import FORBIDDEN_MESSAGE, GitHubAPI, Reply
from tests.support.verdict_samples import EVIDENCE, FAILING_B, verdict_of, with_findings

HEAD = "feedfacefeedfacefeedfacefeedfacefeedface"
CHECKS = "/repos/octo/widgets/check-runs"


@pytest.fixture
def env(tmp_path: Path, github_api: GitHubAPI, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A GitHub Actions environment pointing at the local server; returns the summary file."""
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"head": {"sha": HEAD}}}), encoding="utf-8")
    summary = tmp_path / "step_summary.md"
    for key, value in {
        "GITHUB_API_URL": github_api.url,
        "GITHUB_REPOSITORY": "octo/widgets",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_SHA": "0" * 40,
        "GITHUB_TOKEN": github_api.token,
        "GITHUB_STEP_SUMMARY": str(summary),
    }.items():
        monkeypatch.setenv(key, value)
    return summary


def stamp(tmp_path: Path, verdict: Verdict) -> Verdict:
    """The verdict as `verdict` writes it beside host-a/ and host-b/: their digests in inputs."""
    for label in ("a", "b"):
        folder = tmp_path / f"host-{label}"
        folder.mkdir(exist_ok=True)
        (folder / "junit.xml").write_text(f"<testsuites name='{label}'/>", encoding="utf-8")
    named = inputs.with_reports(verdict.inputs, tmp_path / "host-a", tmp_path / "host-b")
    return verdict.model_copy(update={"inputs": named, "inputs_sha256": inputs.digest(named)})


def write_verdict(tmp_path: Path, verdict: Verdict, *, stamped: bool = True) -> str:
    path = tmp_path / "verdict.json"
    path.write_text(render_json(stamp(tmp_path, verdict) if stamped else verdict), "utf-8")
    return str(path)


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["publish", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def settings(
    api: GitHubAPI,
    verdict: Verdict,
    sleeps: list[float],
    *,
    attempts: int = 5,
    timeout: float = 5.0,
    environ: dict[str, str] | None = None,
) -> publish.PublishSettings:
    """Settings as `publish` builds them, with the sleep and the clock injected."""
    return publish.PublishSettings(
        verdict=verdict,
        head_sha=HEAD,
        check_name="entropy-gate",
        manifest_path="entropy.yaml",
        api=ApiSettings(
            api_url=api.url,
            repository="octo/widgets",
            token=Secret(api.token),
            timeout=timeout,
            attempts=attempts,
            sleep=sleeps.append,
            now=lambda: 1_000_000.0,
        ),
        environ=environ or {},
    )


def sizes(api: GitHubAPI) -> list[tuple[str, int, int]]:
    return [
        (r.method, r.status, len(r.body["output"].get("annotations", []))) for r in api.requests
    ]


def test_120_findings_go_as_one_post_of_50_and_patches_of_50_and_20(
    tmp_path, env, github_api, capsys
):
    code, out, _ = run_cli(capsys, "--verdict", write_verdict(tmp_path, with_findings(120)))
    assert code == 0
    assert sizes(github_api) == [("POST", 201, 50), ("PATCH", 200, 50), ("PATCH", 200, 20)]
    assert [r.path for r in github_api.requests] == [CHECKS, f"{CHECKS}/1", f"{CHECKS}/1"]
    assert github_api.violations == []
    run = github_api.check_runs[1]
    assert len(run.annotations) == 120
    assert (run.fields["head_sha"], run.fields["conclusion"]) == (HEAD, "failure")
    assert run.fields["output"]["title"].startswith("Entropy silenced")
    assert "with 120 annotation(s) in 3 request(s)" in out
    assert env.read_text(encoding="utf-8") == (  # the full summary came from `verdict`
        "entropy-gate: the verdict is in the check run `entropy-gate` (failure): "
        "<https://github.invalid/octo/widgets/runs/1>\n"
    )


def test_a_merge_candidate_is_a_success_with_one_post(tmp_path, env, github_api, capsys):
    code, _, _ = run_cli(
        capsys,
        "--verdict",
        write_verdict(tmp_path, verdict_of("merge_candidate")),
        "--check-name",
        "entropy gate / props",
    )
    assert code == 0
    assert sizes(github_api) == [("POST", 201, 0)]
    body = github_api.requests[0].body
    assert (body["name"], body["conclusion"], body["status"]) == (
        "entropy gate / props",
        "success",
        "completed",
    )
    headers = github_api.requests[0].headers
    assert headers["authorization"] == "Bearer ***"
    assert headers["accept"] == "application/vnd.github+json"
    assert headers["user-agent"].startswith("entropy-gate/")


def test_head_sha_falls_back_to_github_sha_outside_a_pull_request(
    tmp_path, env, github_api, capsys, monkeypatch
):
    monkeypatch.delenv("GITHUB_EVENT_PATH")
    monkeypatch.setenv("GITHUB_SHA", "a" * 40)
    run_cli(capsys, "--verdict", write_verdict(tmp_path, verdict_of("real_defect")))
    assert github_api.requests[0].body["head_sha"] == "a" * 40


def test_a_502_then_success_is_two_posts_after_one_backoff(github_api):
    github_api.script(502)
    sleeps: list[float] = []
    assert publish.publish(settings(github_api, verdict_of("env_coupled"), sleeps)) == 0
    assert github_api.calls() == [("POST", CHECKS, 502), ("POST", CHECKS, 201)]
    assert sleeps == [1.0]
    assert len(github_api.check_runs) == 1


def test_repeated_5xx_are_retried_a_bounded_number_of_times_then_fall_back(
    github_api, capsys, tmp_path
):
    github_api.persistent = Reply.error(503)
    sleeps: list[float] = []
    summary = tmp_path / "summary.md"
    environ = {"GITHUB_STEP_SUMMARY": str(summary)}
    s = settings(github_api, verdict_of("env_coupled"), sleeps, attempts=4, environ=environ)
    assert publish.publish(s) == 0
    assert [c[2] for c in github_api.calls()] == [503, 503, 503, 503]
    assert sleeps == [1.0, 2.0, 4.0]
    out, err = capsys.readouterr()
    assert "HTTP 503 'scripted 503' after 4 attempts" in err
    assert out.startswith("::error file=tests/properties/test_invoice_total.py,line=20,")
    assert "No check run was written" in summary.read_text(encoding="utf-8")


def test_a_timeout_is_retried(github_api, capsys):
    github_api.script(Reply.slow(30))
    sleeps: list[float] = []
    s = settings(
        github_api, verdict_of("env_coupled"), sleeps, timeout=2.0
    )  # the retry must get its answer in time, even on a busy machine
    assert publish.publish(s) == 0
    assert [c[2] for c in github_api.calls()][-1] == 201
    assert sleeps == [1.0]
    assert len(github_api.check_runs) == 1


def test_a_timeout_every_time_falls_back_and_says_so(github_api, capsys):
    github_api.persistent = Reply.slow(30)
    s = settings(github_api, verdict_of("env_coupled"), [], timeout=0.2, attempts=2)
    assert publish.publish(s) == 0
    _, err = capsys.readouterr()
    assert "POST check run: no answer within 0.2 s after 2 attempts" in err


def test_a_secondary_rate_limit_waits_as_told_by_retry_after(github_api):
    github_api.script(Reply.retry_after(7))
    sleeps: list[float] = []
    assert publish.publish(settings(github_api, verdict_of("env_coupled"), sleeps)) == 0
    assert sleeps == [7.0]
    assert [c[2] for c in github_api.calls()] == [403, 201]


def test_an_exhausted_rate_limit_waits_until_its_reset(github_api):
    github_api.script(Reply.rate_limit_reset(1_000_030, status=429))
    sleeps: list[float] = []
    assert publish.publish(settings(github_api, verdict_of("env_coupled"), sleeps)) == 0
    assert sleeps == [31.0]  # until the reset, plus a second


def test_a_far_rate_limit_reset_does_not_hang_the_job(github_api, capsys):
    github_api.script(Reply.rate_limit_reset(1_000_000 + 3600))
    sleeps: list[float] = []
    assert publish.publish(settings(github_api, verdict_of("env_coupled"), sleeps)) == 0
    assert sleeps == []
    assert len(github_api.requests) == 1
    err = capsys.readouterr().err
    assert "POST check run: rate limited (HTTP 403 'API rate limit exceeded') for longer" in err


def test_rate_limits_that_persist_end_after_the_bounded_attempts(github_api, capsys):
    github_api.persistent = Reply.retry_after(2, status=429)
    sleeps: list[float] = []
    s = settings(github_api, verdict_of("env_coupled"), sleeps, attempts=3)
    assert publish.publish(s) == 0
    assert sleeps == [2.0, 2.0]
    assert "HTTP 429 'You have exceeded a secondary rate limit.' after 3 attempts" in (
        capsys.readouterr().err
    )


def test_a_403_falls_back_to_annotations_and_the_job_summary(tmp_path, env, github_api, capsys):
    github_api.persistent = Reply.forbidden()
    code, out, err = run_cli(
        capsys, "--verdict", write_verdict(tmp_path, verdict_of("entropy_silenced"))
    )
    assert code == 0
    assert len(github_api.requests) == 1  # a 403 is not retried
    assert f"HTTP 403 '{FORBIDDEN_MESSAGE}'" in err
    lines = out.splitlines()
    assert lines[0] == (
        "::error file=tests/properties/test_invoice_total.py,line=14,endLine=14,"
        "title=entropy-gate%3A skip_marker::what to do: remove the marker: a property that "
        "fails under the pins is fixed in the code, not skipped%0Askip marker 'flaky' on "
        "property test_total (forbid_skip_markers lists it)"
    )  # the pre-existing finding at line 30 stays in the summary: the patch did not touch it
    assert lines[1].startswith("::notice title=entropy-gate%3A no check run::To get the full")
    assert "workflow_run" in lines[1]
    written = env.read_text(encoding="utf-8")
    assert written.startswith("## ❌ entropy-gate: `entropy_silenced`")
    assert "**No check run was written**" in written


def test_a_404_of_a_forks_token_falls_back_too(tmp_path, env, github_api, capsys):
    github_api.persistent = Reply.error(404)
    code, out, _ = run_cli(capsys, "--verdict", write_verdict(tmp_path, verdict_of("env_coupled")))
    assert code == 0
    assert out.startswith("::error file=")


def test_no_token_goes_straight_to_the_fallback(tmp_path, env, github_api, capsys, monkeypatch):
    monkeypatch.delenv("GITHUB_TOKEN")
    code, _, err = run_cli(capsys, "--verdict", write_verdict(tmp_path, verdict_of("env_coupled")))
    assert code == 0
    assert github_api.requests == []
    assert "no token" in err


def test_token_env_names_the_variable(tmp_path, env, github_api, capsys, monkeypatch):
    monkeypatch.delenv("GITHUB_TOKEN")
    monkeypatch.setenv("CHECKS_TOKEN", github_api.token)
    code, _, _ = run_cli(
        capsys,
        "--verdict",
        write_verdict(tmp_path, verdict_of("env_coupled")),
        "--token-env",
        "CHECKS_TOKEN",
    )
    assert (code, github_api.calls()[0][2]) == (0, 201)


@pytest.mark.parametrize(
    "fault",
    [None, Reply.forbidden(), Reply.error(401), Reply.error(422)],
    ids=["ok", "403", "401", "422"],
)
def test_the_token_is_in_no_output(tmp_path, env, github_api, capsys, fault):
    if fault is not None:
        github_api.persistent = fault
    code, out, err = run_cli(capsys, "--verdict", write_verdict(tmp_path, with_findings(3)))
    assert code == 0
    for text in (out, err, env.read_text(encoding="utf-8")):
        assert github_api.token not in text
    recorded = json.dumps([r.as_json() for r in github_api.requests])
    assert github_api.token not in recorded


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{", "verdict.json:1: not valid JSON (Expecting property name enclosed in double quotes)"),
        ("[]", "verdict.json: must be a JSON object"),
        (
            '{"classification": "merge_candidate"}',
            "verdict.json: not a verdict: missing required field 'merge'",
        ),
        ("\udcff", "verdict.json: not UTF-8 text"),
    ],
)
def test_a_bad_verdict_file_is_one_line_and_exit_2(
    tmp_path, env, github_api, capsys, content, expected
):
    path = tmp_path / "verdict.json"
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    code, _, err = run_cli(capsys, "--verdict", str(path))
    assert code == 2
    assert err.startswith(str(tmp_path / expected))
    assert len(err.strip().splitlines()) == 1
    assert github_api.requests == []


def test_a_missing_verdict_file_is_exit_2(tmp_path, env, capsys):
    code, _, err = run_cli(capsys, "--verdict", str(tmp_path / "nope.json"))
    assert code == 2
    assert "nope.json: no such file" in err


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("GITHUB_API_URL", "file:///etc/passwd", "GITHUB_API_URL must be an http(s) URL"),
        ("GITHUB_REPOSITORY", "just-a-name", "GITHUB_REPOSITORY must be OWNER/NAME"),
    ],
)
def test_settings_that_cannot_work_are_exit_2(
    tmp_path, env, github_api, capsys, monkeypatch, variable, value, expected
):
    monkeypatch.setenv(variable, value)
    code, _, err = run_cli(capsys, "--verdict", write_verdict(tmp_path, verdict_of("env_coupled")))
    assert (code, github_api.requests) == (2, [])
    assert expected in err


@pytest.mark.parametrize("classification", sorted(EVIDENCE))
def test_each_classification_goes_over_the_wire_with_its_conclusion(
    tmp_path, env, github_api, capsys, classification
):
    verdict = stamp(tmp_path, verdict_of(classification))
    code, _, _ = run_cli(capsys, "--verdict", write_verdict(tmp_path, verdict))
    assert code == 0
    body = github_api.requests[0].body
    assert body["conclusion"] == ("success" if verdict.merge else "failure")
    assert body["output"]["summary"] == markdown.render(verdict)
    assert github_api.violations == []


def test_a_patch_that_fails_after_the_post_falls_back_and_names_the_check_run(github_api, capsys):
    github_api.script(201, Reply.forbidden())
    s = settings(github_api, with_findings(60), [])
    assert publish.publish(s) == 0
    assert github_api.calls() == [("POST", CHECKS, 201), ("PATCH", f"{CHECKS}/1", 403)]
    err = capsys.readouterr().err
    assert "(check run 1 was created; its later annotations are missing)" in err


def test_an_answer_without_an_id_falls_back(github_api, capsys):
    github_api.script(Reply(201, {"message": "created?"}))
    assert publish.publish(settings(github_api, with_findings(60), [])) == 0
    assert len(github_api.requests) == 1
    assert "the answer carried no check run id" in capsys.readouterr().err


def test_a_workflow_run_event_publishes_on_its_head_sha(tmp_path, env, github_api, capsys):
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"workflow_run": {"head_sha": "b" * 40}}), encoding="utf-8")
    run_cli(capsys, "--verdict", write_verdict(tmp_path, verdict_of("real_defect")))
    assert github_api.requests[0].body["head_sha"] == "b" * 40


def test_a_merge_group_event_publishes_on_the_groups_head(tmp_path, env, github_api, capsys):
    group = {
        "head_sha": "d" * 40,
        "base_sha": "e" * 40,
        "head_ref": "refs/heads/gh-readonly-queue/main/pr-7",
    }
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"action": "checks_requested", "merge_group": group}), "utf-8")
    run_cli(capsys, "--verdict", write_verdict(tmp_path, verdict_of("real_defect")))
    assert github_api.requests[0].body["head_sha"] == "d" * 40


def test_head_sha_overrides_the_event(tmp_path, env, github_api, capsys):
    run_cli(
        capsys,
        "--verdict",
        write_verdict(tmp_path, verdict_of("real_defect")),
        "--head-sha",
        "c" * 40,
    )
    assert github_api.requests[0].body["head_sha"] == "c" * 40


def test_no_head_commit_is_exit_2(tmp_path, env, github_api, capsys, monkeypatch):
    monkeypatch.delenv("GITHUB_EVENT_PATH")
    monkeypatch.delenv("GITHUB_SHA")
    code, _, err = run_cli(capsys, "--verdict", write_verdict(tmp_path, verdict_of("real_defect")))
    assert code == 2
    assert "no head commit" in err
    assert github_api.requests == []


def test_without_a_step_summary_the_fallback_prints_the_summary(
    tmp_path, env, github_api, capsys, monkeypatch
):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    github_api.persistent = Reply.forbidden()
    code, out, err = run_cli(
        capsys, "--verdict", write_verdict(tmp_path, verdict_of("env_coupled"))
    )
    assert code == 0
    assert "GITHUB_STEP_SUMMARY is unset; the summary follows" in err
    assert "## ❌ entropy-gate: `env_coupled` (do not merge)" in out


def test_an_absolute_manifest_is_not_an_annotation_path(tmp_path, env, github_api, capsys):
    failing = dataclasses.replace(FAILING_B, path=None)
    verdict = classify(Evidence("pass", "fail", tests=(failing,)))
    path = write_verdict(tmp_path, verdict)
    run_cli(capsys, "--verdict", path, "--manifest", "./ci/entropy.yaml")
    (annotation,) = github_api.requests[0].body["output"]["annotations"]
    assert (annotation["path"], annotation["start_line"]) == ("ci/entropy.yaml", 1)
    github_api.requests.clear()
    run_cli(capsys, "--verdict", path, "--manifest", str(tmp_path / "entropy.yaml"))
    assert "annotations" not in github_api.requests[0].body["output"]


def _verdict_step_then_publish(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], verdict: Verdict
) -> str:
    """The Action's verdict job: `entropy-gate verdict` appends the summary, then `publish`."""
    path = write_verdict(tmp_path, verdict)
    publish_to_workflow(stamp(tmp_path, verdict), Path(path), os.environ)
    code, _, _ = run_cli(capsys, "--verdict", path)
    assert code == 0
    return (tmp_path / "step_summary.md").read_text(encoding="utf-8")


def test_after_a_check_run_the_job_summary_holds_the_verdict_once_and_a_pointer(
    tmp_path, env, github_api, capsys
):
    verdict = verdict_of("env_coupled")
    written = _verdict_step_then_publish(tmp_path, capsys, verdict)
    assert written == markdown.render(stamp(tmp_path, verdict)) + (
        "entropy-gate: the verdict is in the check run `entropy-gate` (failure): "
        "<https://github.invalid/octo/widgets/runs/1>\n"
    )
    assert written.count("## ❌ entropy-gate") == 1


def test_in_the_fallback_the_job_summary_holds_the_verdict_and_why_no_check_run(
    tmp_path, env, github_api, capsys
):
    github_api.persistent = Reply.forbidden()
    verdict = verdict_of("env_coupled")
    written = _verdict_step_then_publish(tmp_path, capsys, verdict)
    first, second = written.split("## ❌ entropy-gate")[1:]  # no check run shows it: repeated
    assert first == second.split("\n> **No check run was written**")[0]
    assert written.endswith(f"{FORK_HINT}\n")


@pytest.mark.parametrize(
    ("url", "line"),
    [
        ("https://github.com/o/r/runs/7", "`c` (success): <https://github.com/o/r/runs/7>\n"),
        ("", "`c` (success)\n"),
        ("javascript:alert(1)", "`c` (success)\n"),
        ("https://x/a b>", "`c` (success)\n"),
    ],
)
def test_the_pointer_links_only_an_https_url(url, line):
    assert pointer("c", "success", url) == f"entropy-gate: the verdict is in the check run {line}"
