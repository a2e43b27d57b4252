"""A maintainer's override (#36): `entropy-gate accept` against the GitHub API stand-in (real
HTTP, request bodies validated against GitHub's OpenAPI description). A person with write
permission who is not the pull request's author accepts the gate's rejected check run on the
pull request's current head: a success (or neutral) check run on that head only, naming who
accepted what. Everything else — a forged requested_action payload, the author, a label added
by someone without the permission, a bot, an event a pull request's own workflow sends — is
one line, exit 2, nothing posted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from entropy_action.cli.commands import accept as command
from entropy_action.cli.main import main
from entropy_action.github import acceptance
from entropy_action.render import checkrun
from entropy_action.verdict.classify import Evidence, classify
from tests.support import pr_world
from tests.support.github_api import APP_TOKEN, App, GitHubAPI, serving
from tests.support.github_checks import APP_SLUG, stored_run
from tests.support.github_reads import World
from tests.support.openapi import load_schemas, violations

pytestmark = pytest.mark.integration

REPO = "acme/invoices"
HEAD, OLD, BASE = "a" * 40, "b" * 40, "c" * 40
APP_ID = "4711"
PEOPLE = {"maria": "maintain", "walt": "write", "alice": "write", "tina": "triage", "rita": "read"}
GATE, GATE_OLD, OTHER_CHECK, IMPOSTOR = 2, 1, 3, 4
IMPOSTOR_APP = {"id": 999, "slug": "impostor", "name": "An App"}


def world(check_runs: list[dict[str, Any]] | None = None) -> World:
    """#7 by alice, head HEAD (a push after OLD); the gate rejected both heads; a check of
    another name and one of the gate's name by another App sit on HEAD too."""
    pull = pr_world.pull_request(
        REPO, 7, head=HEAD, head_ref="fix", base=BASE, merge_commit="d" * 40, author="alice"
    )
    runs = [
        stored_run(GATE_OLD, REPO, OLD, head_branch="fix"),
        stored_run(GATE, REPO, HEAD, head_branch="fix"),
        stored_run(OTHER_CHECK, REPO, HEAD, name="tests"),
        stored_run(IMPOSTOR, REPO, HEAD, app=IMPOSTOR_APP),
    ]
    return World(
        pulls=[pull], permissions=PEOPLE, check_runs=runs if check_runs is None else check_runs
    )


def run_accept(
    api: GitHubAPI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    event_name: str,
    payload: dict[str, Any],
    *flags: str,
) -> tuple[int, str, str]:
    event = tmp_path / f"event-{len(list(tmp_path.glob('event-*')))}.json"
    event.write_text(json.dumps(payload), encoding="utf-8")
    for name, value in {
        "GITHUB_EVENT_NAME": event_name, "GITHUB_EVENT_PATH": str(event),
        "GITHUB_API_URL": api.url, "GITHUB_REPOSITORY": REPO, "GITHUB_TOKEN": api.token,
        "APP_TOKEN": APP_TOKEN,
    }.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    capsys.readouterr()
    code = main(["accept", *flags])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def posted(api: GitHubAPI) -> list[dict[str, Any]]:
    assert api.violations == []
    return [r.body for r in api.requests if r.method == "POST" and r.path.endswith("/check-runs")]


def pressed(sender: str, check_run: int = GATE, **more: Any) -> dict[str, Any]:
    return pr_world.requested_action(REPO, check_run=check_run, head=HEAD, sender=sender, **more)


def labeled(sender: str, **more: Any) -> dict[str, Any]:
    return pr_world.labeled(REPO, number=7, head=HEAD, sender=sender, author="alice", **more)


@pytest.fixture
def api() -> Any:
    with serving(pulls=world()) as server:
        yield server


def test_a_maintainers_accept_after_review_turns_the_current_head_green(
    api: GitHubAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    code, out, err = run_accept(api, tmp_path, monkeypatch, capsys, "check_run", pressed("walt"))
    assert code == 0, err
    assert out.startswith(f"entropy-gate accept: @walt (write) accepted check run {GATE} ")
    [body] = posted(api)
    assert (body["name"], body["head_sha"], body["conclusion"]) == ("entropy-gate", HEAD, "success")
    assert body["output"]["title"] == (
        "Accepted after review by @walt (was: Environment-coupled: passes on host A, fails on "
        "host B)"
    )
    summary = body["output"]["summary"]
    assert "**\\@walt** (permission `write`, role `write`) accepted" in summary
    assert "**Accept after review** action" in summary
    assert f"check run {GATE}" in summary
    assert f"`{HEAD}` of pull request \\#7" in summary
    assert "the next push is judged again" in summary
    # the permission was read through the API, for the sender the event named
    gets = [r.path for r in api.requests if r.method == "GET"]
    assert f"/repos/{REPO}/collaborators/walt/permission" in gets
    assert f"/repos/{REPO}/check-runs/{GATE}" in gets

    # pressed again: the head's latest gate run is the acceptance, nothing left to accept
    again, _, err = run_accept(api, tmp_path, monkeypatch, capsys, "check_run", pressed("maria"))
    assert again == 2
    assert "is success, not a rejection: nothing to accept" in err
    assert len(posted(api)) == 1


def test_the_conclusion_can_be_neutral(
    api: GitHubAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    code, _, err = run_accept(
        api, tmp_path, monkeypatch, capsys, "check_run", pressed("walt"), "--conclusion", "neutral"
    )
    assert code == 0, err
    assert [b["conclusion"] for b in posted(api)] == ["neutral"]


@pytest.mark.parametrize(
    ("event_name", "payload", "flags", "said"),
    [
        pytest.param("pull_request", pressed("maria"), (),
                     "accept: runs on a check_run (requested_action) or pull_request_target",
                     id="a-pull-requests-own-workflow-sends-it"),
        pytest.param("check_run", pressed("maria", OTHER_CHECK), (),
                     f"accept refused: check run {OTHER_CHECK} ('tests', posted by github-actions) "
                     "is not the gate's 'entropy-gate' check run", id="another-check"),
        pytest.param("check_run", pressed("maria", IMPOSTOR), (),
                     f"accept refused: check run {IMPOSTOR} ('entropy-gate', posted by impostor) "
                     "is not the gate's", id="the-gates-name-posted-by-another-app"),
        pytest.param("check_run", pressed("maria", GATE_OLD), (),
                     f"accept refused: check run {GATE_OLD} judged bbbbbbbbbbbb, not the head of "
                     "pull request #7 (aaaaaaaaaaaa): a later push is judged again",
                     id="a-payload-naming-the-current-head-for-an-older-heads-run"),
        pytest.param("check_run", pressed("alice"), (),
                     "accept refused: @alice opened pull request #7: its author cannot accept",
                     id="the-author-with-write-permission"),
        pytest.param("check_run", pressed("rita"), (),
                     "accept refused: @rita has read permission on the repository; accepting "
                     "needs write", id="read-permission"),
        pytest.param("check_run", pressed("mallory"), (),
                     "accept refused: @mallory is no collaborator of the repository",
                     id="no-collaborator"),
        pytest.param("check_run", pressed("dependabot[bot]", sender_type="Bot"), (),
                     "accept refused: @dependabot[bot] is a Bot, not a person", id="a-bot"),
        pytest.param("check_run", pressed("walt"), ("--permission", "maintain"),
                     "accept refused: @walt has write permission on the repository; accepting "
                     "needs maintain", id="write-where-maintain-is-asked"),
        pytest.param("pull_request_target", labeled("alice"), (),
                     "accept refused: @alice opened pull request #7", id="the-author-labels-it"),
        pytest.param("pull_request_target", labeled("tina"), (),
                     "accept refused: @tina has read permission on the repository",
                     id="a-triager-labels-it"),
        pytest.param("check_run", {**pressed("maria"), "sender": {"login": "x y"}}, (),
                     "accept refused: the event names no sender GitHub could have sent",
                     id="a-sender-github-never-sends"),
    ],
)  # fmt: skip
def test_what_cannot_accept_is_one_line_exit_2_and_posts_nothing(
    api: GitHubAPI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
    event_name: str,
    payload: dict[str, Any],
    flags: tuple[str, ...],
    said: str,
) -> None:
    code, out, err = run_accept(api, tmp_path, monkeypatch, capsys, event_name, payload, *flags)
    assert code == 2
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert err.startswith(said), err
    assert posted(api) == []


def test_a_label_a_maintainer_adds_accepts_and_another_label_does_nothing(
    api: GitHubAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    other, out, _ = run_accept(
        api, tmp_path, monkeypatch, capsys, "pull_request_target", labeled("maria", label="bug")
    )
    assert (other, posted(api)) == (0, [])
    assert out.startswith("entropy-gate accept: nothing to do: pull_request_target 'labeled'")
    code, out, err = run_accept(
        api, tmp_path, monkeypatch, capsys, "pull_request_target", labeled("maria"),
        "--permission", "maintain",
    )  # fmt: skip
    assert code == 0, err
    [body] = posted(api)
    assert body["head_sha"] == HEAD
    assert "through the label `entropy-gate: accept`" in body["output"]["summary"]
    assert "(permission `maintain`, role `maintain`)" in body["output"]["summary"]


def test_a_closed_pull_request_or_a_head_shared_with_another_base_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    closed = world()
    closed.pulls[0]["state"] = "closed"
    with serving(pulls=closed) as server:
        code, _, err = run_accept(
            server, tmp_path, monkeypatch, capsys, "pull_request_target", labeled("maria")
        )
        assert (code, posted(server)) == (2, [])
        assert "pull request #7 is closed" in err
    shared = world()
    shared.pulls.append(
        pr_world.pull_request(
            REPO, 8, head=HEAD, head_ref="fix", base=OLD, base_ref="release", merge_commit=None
        )
    )
    with serving(pulls=shared) as server:
        code, _, err = run_accept(
            server, tmp_path, monkeypatch, capsys, "check_run", pressed("maria")
        )
        assert (code, posted(server)) == (2, [])
        assert "is also the head of pull request #8 into release" in err


def test_with_an_app_only_the_apps_check_run_is_the_gates_and_the_app_posts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    app_run = stored_run(5, REPO, HEAD, app={"id": int(APP_ID), "slug": APP_SLUG})
    app = App(app_id=APP_ID, public_key_pem=b"", installed=frozenset({REPO}))
    with serving(pulls=world(), app=app) as server:
        flags = ("--app-id", APP_ID, "--token-env", "APP_TOKEN")
        token, _, err = run_accept(
            server, tmp_path, monkeypatch, capsys, "check_run", pressed("maria"), *flags
        )
        assert token == 2  # the Actions token's run of that name is not the App's
        assert "posted by github-actions) is not the gate's" in err
    with serving(pulls=world(check_runs=[app_run]), app=app) as server:
        code, _, err = run_accept(
            server, tmp_path, monkeypatch, capsys, "check_run", pressed("maria", 5), *flags
        )
        assert code == 0, err
        [body] = posted(server)
        assert body["conclusion"] == "success"
        [post] = [r for r in server.requests if r.method == "POST"]
        assert post.credential == "app"  # a required check bound to the App is satisfied


def test_a_rejected_check_run_offers_accept_after_review_within_githubs_limits(
    api: GitHubAPI,
) -> None:
    rejected = classify(Evidence("pass", "fail"))
    body = checkrun.plan(rejected, head_sha=HEAD, accept_action=True).create_body()
    assert body["actions"] == [
        {"label": "Accept after review", "description": "A maintainer accepts this head as is",
         "identifier": "entropy-gate-accept"}
    ]  # fmt: skip
    assert violations(load_schemas()["POST"], body) == []  # label, identifier <= 20; desc <= 40
    green = checkrun.plan(classify(Evidence("pass", "pass")), head_sha=HEAD, accept_action=True)
    assert "actions" not in green.create_body()  # nothing to accept on a success
    assert "actions" not in checkrun.plan(rejected, head_sha=HEAD).create_body()
    assert body["actions"][0]["identifier"] == acceptance.IDENTIFIER


def test_the_commands_spelling_of_the_defaults_is_the_modules() -> None:
    assert command.DEFAULT_LABEL == acceptance.DEFAULT_LABEL
    assert command.MINIMUMS == acceptance.MINIMUMS
