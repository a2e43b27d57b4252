"""The test server itself: it must accept what GitHub accepts and refuse what GitHub refuses."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.support.github_api import (
    APP_TOKEN,
    FORBIDDEN_MESSAGE,
    VENDORED,
    App,
    GitHubAPI,
    Reply,
    load_schemas,
    serving,
    violations,
)

VALID: dict[str, Any] = {
    "name": "entropy-gate",
    "head_sha": "a" * 40,
    "status": "completed",
    "conclusion": "failure",
    "output": {
        "title": "Entropy silenced",
        "summary": "**failure**",
        "annotations": [
            {
                "path": "tests/test_x.py",
                "start_line": 3,
                "end_line": 3,
                "annotation_level": "failure",
                "message": "skip marker",
                "title": "skip_marker",
            }
        ],
    },
}


def send(
    api: GitHubAPI,
    method: str,
    path: str,
    body: Any,
    token: str | None = None,
    timeout: float = 5,
) -> tuple[int, dict[str, Any], dict[str, str]]:
    data = json.dumps(body).encode()
    request = urllib.request.Request(api.url + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {token or api.token}")
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read()), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), dict(exc.headers)


def test_a_valid_body_creates_a_check_run_and_a_patch_appends_annotations(github_api):
    status, answer, _ = send(github_api, "POST", "/repos/o/r/check-runs", VALID)
    assert status == 201
    assert answer["output"]["annotations_count"] == 1
    patch = {
        "output": {"title": "t", "summary": "s", "annotations": VALID["output"]["annotations"]}
    }
    status, answer, _ = send(github_api, "PATCH", f"/repos/o/r/check-runs/{answer['id']}", patch)
    assert status == 200
    assert answer["output"]["annotations_count"] == 2
    assert github_api.calls() == [
        ("POST", "/repos/o/r/check-runs", 201),
        ("PATCH", "/repos/o/r/check-runs/1", 200),
    ]
    assert github_api.violations == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"conclusion": "green"}, "conclusion: 'green' is not one of"),
        ({"head_sha": None}, "head_sha: None is not of type 'string'"),
        ({"status": "completed", "conclusion": None}, "conclusion: None is not of type"),
    ],
)
def test_an_invalid_body_gets_422_and_is_recorded_as_a_violation(github_api, change, expected):
    status, answer, _ = send(github_api, "POST", "/repos/o/r/check-runs", {**VALID, **change})
    assert status == 422
    assert answer["message"] == "Invalid request."
    assert len(github_api.violations) >= 1
    assert any(v.startswith(expected) for v in github_api.violations), github_api.violations
    assert github_api.check_runs == {}


def test_more_than_50_annotations_and_overlong_titles_are_violations(github_api):
    annotation = dict(VALID["output"]["annotations"][0], title="t" * 256)
    body = {**VALID, "output": {"title": "x", "summary": "y", "annotations": [annotation] * 51}}
    status, _, _ = send(github_api, "POST", "/repos/o/r/check-runs", body)
    assert status == 422
    assert any("too long" in v for v in github_api.violations)
    assert any(v.endswith("title: longer than 255 bytes") for v in github_api.violations)


def test_a_missing_required_annotation_field_is_a_violation():
    schema = load_schemas()["PATCH"]
    annotation = {"path": "a.py", "start_line": 1, "annotation_level": "notice", "message": "m"}
    found = violations(
        schema, {"output": {"title": "t", "summary": "s", "annotations": [annotation]}}
    )
    assert found == ["output/annotations/0: 'end_line' is a required property"]


def test_a_wrong_token_gets_401_and_no_token_is_recorded(github_api):
    status, answer, _ = send(github_api, "POST", "/repos/o/r/check-runs", VALID, token="nope")
    assert (status, answer["message"]) == (401, "Bad credentials")
    send(github_api, "POST", "/repos/o/r/check-runs", VALID)
    recorded = json.dumps([r.as_json() for r in github_api.requests])
    assert github_api.token not in recorded
    assert "nope" not in recorded
    assert github_api.requests[1].headers["authorization"] == "Bearer ***"


def test_an_unknown_check_run_id_is_404(github_api):
    status, _, _ = send(github_api, "PATCH", "/repos/o/r/check-runs/7", {"name": "x"})
    assert status == 404


def test_scripted_faults_come_in_order_then_normal_handling(github_api):
    github_api.script(502, Reply.forbidden(), Reply.retry_after(3), Reply.rate_limit_reset(99))
    answers = [send(github_api, "POST", "/repos/o/r/check-runs", VALID) for _ in range(5)]
    assert [a[0] for a in answers] == [502, 403, 403, 403, 201]
    assert answers[1][1]["message"] == FORBIDDEN_MESSAGE
    assert answers[2][2]["retry-after"] == "3"
    assert answers[3][2]["x-ratelimit-remaining"] == "0"
    assert answers[3][2]["x-ratelimit-reset"] == "99"


def test_a_slow_reply_outlasts_the_client_timeout(github_api):
    github_api.script(Reply.slow(30))
    with pytest.raises(TimeoutError):
        send(github_api, "POST", "/repos/o/r/check-runs", VALID, timeout=0.2)


def test_the_vendored_openapi_description_is_the_shared_one():
    shared = Path("/work/shared/github-api/check-runs.openapi.json")
    if not shared.exists():
        pytest.skip("the shared copy exists only on the development machines")
    assert VENDORED.read_bytes() == shared.read_bytes()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any) -> None:
        return None


def _get(url: str, token: str | None) -> tuple[int, bytes, dict[str, str]]:
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"token {token}")
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=5) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers)


def test_stored_artifacts_are_listed_by_run_and_name_and_served_through_a_redirect(tmp_path):
    """What actions/download-artifact v4 does with `run-id:` (its bundled dist): list the
    run's artifacts by name, GET .../artifacts/{id}/zip without following the redirect, then
    fetch the blob URL without a token."""
    for run, name in (("1", "host-a"), ("1", "host-b"), ("2", "host-a")):
        (tmp_path / run / name).mkdir(parents=True)
        (tmp_path / run / name / f"{name}.zip").write_bytes(f"zip {run} {name}".encode())
    with GitHubAPI(artifacts=tmp_path) as api:
        status, body, _ = _get(
            f"{api.url}/repos/o/r/actions/runs/1/artifacts?name=host-b", api.token
        )
        assert status == 200
        listed = json.loads(body)
        assert [(a["id"], a["name"]) for a in listed["artifacts"]] == [(2, "host-b")]
        status, body, _ = _get(f"{api.url}/repos/o/r/actions/runs/1/artifacts", api.token)
        assert [a["name"] for a in json.loads(body)["artifacts"]] == ["host-a", "host-b"]
        status, body, headers = _get(f"{api.url}/repos/o/r/actions/artifacts/2/zip", api.token)
        assert (status, body) == (302, b"")
        assert "content-type" not in {k.lower() for k in headers}
        location = headers["location"] if "location" in headers else headers["Location"]
        assert _get(location, None)[:2] == (200, b"zip 1 host-b")
        assert _get(f"{api.url}/repos/o/r/actions/artifacts/9/zip", api.token)[0] == 404
        assert _get(f"{api.url}/repos/o/r/actions/runs/1/artifacts", "wrong")[0] == 401
        none = _get(f"{api.url}/repos/o/r/actions/runs/3/artifacts", api.token)[1]
        assert json.loads(none) == {"total_count": 0, "artifacts": []}


def test_with_an_app_its_installation_token_is_accepted_and_recorded_as_the_apps():
    """The split with a GitHub App: the check run is written with the App's installation
    token, the job's reads with the workflow's; the record says which, never the value."""
    app = App(app_id="1", public_key_pem=b"unused here")
    with serving(app=app) as api:
        assert send(api, "POST", "/repos/o/r/check-runs", VALID, token=APP_TOKEN)[0] == 201
        assert send(api, "POST", "/repos/o/r/check-runs", VALID)[0] == 201
        assert send(api, "POST", "/repos/o/r/check-runs", VALID, token="nope")[0] == 401
    assert [r.credential for r in api.requests] == ["app", "workflow", ""]
    assert [r.as_json()["credential"] for r in api.requests] == ["app", "workflow", ""]
    assert APP_TOKEN not in json.dumps([r.as_json() for r in api.requests])


def test_without_an_app_an_installation_token_is_refused(github_api):
    status, _, _ = send(github_api, "POST", "/repos/o/r/check-runs", VALID, token=APP_TOKEN)
    assert status == 401
