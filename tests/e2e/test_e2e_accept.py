"""End to end under act: a maintainer's override (#36) — the accept template of
workflow-templates/ on the default branch, calling the reusable entropy-gate-accept.yml and
the action's `command: accept`, with the GitHub API stand-in as GitHub.

The repository is GitHub's side: main holds the template (act runs the default branch's
workflow, as GitHub does for check_run and pull_request_target), the pull request #7 (alice's)
has pushed twice, and the gate rejected both heads. Four runs (about a minute each here):

- a maintainer presses the rejected check run's "Accept after review", the gate posting as a
  GitHub App (the button's case: the template with `app-id`): one `success` check run on the
  pull request's head, posted with the App's token;
- a forged requested_action: it names the older head's check run while claiming the current
  head — refused, nothing posted, the job fails;
- the label, added by the author (write permission) — refused; added by a maintainer, the
  template verbatim (GitHub Actions' token) — accepted.

What act cannot show, and how the code handles it: who GitHub lets press the button, and
whether GitHub delivers the requested_action of an App's check run to a workflow (the docs
list requested_action among check_run's activity types for workflows, except for check suites
GitHub Actions created, and say only the App whose action was requested receives the
webhook; act runs whatever event file it is given) — the code never relies on either: it reads
the sender's permission, the check run and the pull request through the API every time, and
the label works in every mode; that `pull_request_target` and `check_run` run the default
branch's file (act runs the working copy's: here the default branch's); GitHub binding the
required check to the App (the stand-in records which token created each check run).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support import e2e_kit, pr_world
from tests.support.e2e_kit import OWNER_REPO, ActRun, ApiServer, Sample
from tests.support.github_checks import ACTIONS_APP, APP_SLUG, stored_run
from tests.support.github_reads import World

pytestmark = pytest.mark.e2e
TEMPLATE = e2e_kit.ROOT / "workflow-templates" / "entropy-gate-accept.yml"
APP_ID = "24680"
APP_SECRET = "ENTROPY_GATE_APP_PRIVATE_KEY"
PEOPLE = {"maria": "maintain", "alice": "write"}
GATE_OLD, GATE = 1, 2


@pytest.fixture(scope="module", autouse=True)
def _prerequisites() -> None:
    e2e_kit.require_prerequisites()


@dataclass
class Kit:
    root: Path
    project: Path
    toolcache: Path
    wheels: Path


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kit]:
    root = tmp_path_factory.mktemp("e2e-accept")
    toolcache = root / "toolcache"
    toolcache.mkdir()  # no setup-python here: the accept job runs the action alone
    yield Kit(
        root,
        e2e_kit.project_copy(root / "entropy-gate"),
        toolcache,
        e2e_kit.wheelhouse(root / "wheelhouse"),
    )
    if not os.environ.get("ENTROPY_GATE_E2E_KEEP"):
        shutil.rmtree(root, ignore_errors=True)


@dataclass
class Repo:
    path: Path
    base: str
    old: str  # #7's first head, rejected
    head: str  # its head now, rejected
    public_key: Path
    private_key: str


def _app_caller() -> str:
    """The template as docs/ci.md has it for an App: `app-id` and the secret."""
    text = TEMPLATE.read_text(encoding="utf-8")
    last = "      permission: write # or maintain, admin\n"
    assert text.endswith(last), "the template's last line moved: update this test"
    return text.replace("name: entropy-gate accept\n", "name: entropy-gate accept (App)\n") + (
        f'      app-id: "{APP_ID}"\n'
        "    secrets:\n"
        f"      app-private-key: ${{{{ secrets.{APP_SECRET} }}}}\n"
    )


@pytest.fixture(scope="module")
def repo(kit: Kit) -> Repo:
    from tests.e2e.test_e2e_trust import _key_pair  # noqa: PLC0415 - one key maker

    github = kit.root / "github"
    (github / ".github" / "workflows").mkdir(parents=True)
    (github / "README.md").write_text("# invoices\n", encoding="utf-8")
    workflows = github / ".github" / "workflows"
    shutil.copy(TEMPLATE, workflows / "entropy-gate-accept.yml")
    (workflows / "entropy-gate-accept-app.yml").write_text(_app_caller(), encoding="utf-8")
    pr_world.git(github, "init", "-q", "-b", "main")
    pr_world.git(github, "add", "-A")
    pr_world.git(github, "commit", "-q", "-m", "base: the accept workflow")
    base = pr_world.git(github, "rev-parse", "HEAD")
    pr_world.git(github, "checkout", "-q", "-b", "fix")
    heads = []
    for text in ("a first try\n", "a second try\n"):
        (github / "CHANGES.md").write_text(text, encoding="utf-8")
        pr_world.git(github, "add", "-A")
        pr_world.git(github, "commit", "-q", "-m", text.strip())
        heads.append(pr_world.git(github, "rev-parse", "HEAD"))
    pr_world.git(github, "checkout", "-q", "main")  # GitHub runs the default branch's file
    # act takes the repository (GITHUB_REPOSITORY) from origin's URL: GitHub's
    pr_world.git(github, "remote", "add", "origin", f"https://github.com/{OWNER_REPO}.git")
    private, public = _key_pair()
    (kit.root / "app-public.pem").write_bytes(public)
    return Repo(github, base, heads[0], heads[1], kit.root / "app-public.pem", private)


def _world(repo: Repo, *, app: bool) -> World:
    poster: dict[str, Any] = {"id": int(APP_ID), "slug": APP_SLUG} if app else ACTIONS_APP
    runs = [
        stored_run(GATE_OLD, OWNER_REPO, repo.old, head_branch="fix", app=poster),
        stored_run(GATE, OWNER_REPO, repo.head, head_branch="fix", app=poster),
    ]
    pull = pr_world.pull_request(OWNER_REPO, 7, head=repo.head, head_ref="fix", base=repo.base,
                                 merge_commit=None, author="alice")  # fmt: skip
    return World(pulls=[pull], permissions=PEOPLE, check_runs=runs)


@dataclass
class Done:
    run: ActRun
    requests: list[dict[str, Any]]

    def created(self) -> list[tuple[str, str, str, int]]:
        """(head, conclusion, whose token, status) of each check run created."""
        return [
            (r["body"]["head_sha"], r["body"]["conclusion"], r["credential"], r["status"])
            for r in self.requests
            if r["method"] == "POST" and r["path"].endswith("/check-runs")
        ]


def _act(kit: Kit, repo: Repo, name: str, event: str, payload: dict[str, Any], *,
         app: bool) -> Done:  # fmt: skip
    folder = kit.root / name
    folder.mkdir()
    event_file = folder / "event.json"
    event_file.write_text(json.dumps(payload), encoding="utf-8")
    api_args: tuple[str, ...] = ()
    act_args: tuple[str, ...] = ()
    if app:
        api_args = ("--app-id", APP_ID, "--app-public-key", str(repo.public_key),
                    "--app-installed", OWNER_REPO)  # fmt: skip
        act_args = ("-s", f"{APP_SECRET}={repo.private_key}")
    workflow = "entropy-gate-accept-app.yml" if app else "entropy-gate-accept.yml"
    api = ApiServer.start(folder, *api_args, world=_world(repo, app=app))
    try:
        run = e2e_kit.run_act(
            Sample(repo.path, repo.base, repo.head, event_file, {}), workflow, folder,
            kit=e2e_kit.kit_dir(), project=kit.project, api=api, toolcache=kit.toolcache,
            wheels=kit.wheels, cache_server=kit.root / "cache-server", event=event,
            event_file=event_file, extra=act_args,
        )  # fmt: skip
    finally:
        api.stop()
    (folder / "act.log").write_text(run.log, encoding="utf-8")
    print(f"act {name}: exit {run.code} in {run.seconds:.1f} s (log: {folder / 'act.log'})")
    done = Done(run, api.requests())
    assert [r for r in done.requests if r["violations"]] == []
    return done


def _pressed(repo: Repo, check_run: int, sender: str) -> dict[str, Any]:
    return pr_world.requested_action(OWNER_REPO, check_run=check_run, head=repo.head, sender=sender)


def test_a_maintainers_accept_after_review_turns_one_head_green(kit: Kit, repo: Repo) -> None:
    done = _act(kit, repo, "pressed", "check_run", _pressed(repo, GATE, "maria"), app=True)
    assert done.run.code == 0, done.run.log[-8000:]
    assert done.created() == [(repo.head, "success", "app", 201)], done.run.log[-8000:]
    body = next(r["body"] for r in done.requests if r["path"].endswith("/check-runs"))
    assert body["output"]["title"].startswith("Accepted after review by @maria (was: ")
    assert "**Accept after review** action" in body["output"]["summary"]
    permission = [r for r in done.requests if r["path"].endswith("/collaborators/maria/permission")]
    assert [(r["method"], r["credential"]) for r in permission] == [("GET", "workflow")]
    assert repo.private_key.splitlines()[1] not in done.run.log


def test_a_forged_requested_action_turns_nothing_green(kit: Kit, repo: Repo) -> None:
    """The payload names the older head's check run while claiming the current head: the
    check run is read through the API, and it judged another commit."""
    forged = _pressed(repo, GATE_OLD, "maria")
    assert forged["check_run"]["head_sha"] == repo.head  # what the payload claims
    done = _act(kit, repo, "forged", "check_run", forged, app=True)
    assert done.run.code != 0
    assert done.created() == []
    assert f"accept refused: check run {GATE_OLD} judged {repo.old[:12]}, not the head" in (
        done.run.log
    )


def test_a_label_counts_by_who_added_it(kit: Kit, repo: Repo) -> None:
    def labeled(sender: str) -> dict[str, Any]:
        return pr_world.labeled(OWNER_REPO, number=7, head=repo.head, sender=sender, author="alice")

    author = _act(kit, repo, "label-author", "pull_request_target", labeled("alice"), app=False)
    assert author.run.code != 0
    assert author.created() == []
    assert "accept refused: @alice opened pull request #7" in author.run.log
    maintainer = _act(kit, repo, "label-maria", "pull_request_target", labeled("maria"), app=False)
    assert maintainer.run.code == 0, maintainer.run.log[-8000:]
    assert maintainer.created() == [(repo.head, "success", "workflow", 201)]
