"""End to end under act: the trusted modes' templates, verbatim from workflow-templates/
(only `@v1` mapped to this checkout, as e2e_kit does).

Six act runs, 10-30 s each here:
- the ruleset's required workflow on a `merge_group` event whose head is a real merge commit
  of the fix into main (`gh-readonly-queue/main/pr-7`): the check run goes on the merge
  group's head, and the pin check, the scan and the base run use `merge_group.base_sha`;
  then on `pull_request` (the checkout is that merge commit, as `refs/pull/N/merge` is);
- the split: the hosts template on `pull_request` with the merge commit checked out as
  `refs/pull/7/merge` (no check run), a forged verdict planted among its stored artifacts,
  then the trusted template on a `workflow_run` event naming that run: `download-artifact`
  (`run-id:`) reads the artifacts through tests/support/github_api.py, which serves what
  act's artifact server stored, and `resolve-run` fetches `refs/pull/7/merge` from the
  sample's origin (a bare clone its `origin` URL points at); and a `workflow_run` of
  `.github/workflows/evil.yml`;
- the reusable workflow on a `workflow_dispatch` (no base): invalid, no success check run.

What act cannot show: GitHub's own computation of the merge ref (git's merge here), the
ruleset itself, and a GitHub App's token (the template runs with the workflow token).
tests/e2e/test_e2e_trust.py holds issue 34's cases.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support import e2e_kit, pr_world
from tests.support.e2e_kit import ActRun, ApiServer, QueueSample

pytestmark = pytest.mark.e2e
TEMPLATES = e2e_kit.ROOT / "workflow-templates"
TEMPLATE_FILES = sorted(TEMPLATES.glob("*.yml"))
NO_BASE = e2e_kit.ROOT / "tests" / "data" / "e2e_workflows" / "nobase.yml"  # workflow_dispatch
Run = tuple[QueueSample, ActRun, list[dict[str, Any]], Path]
PROPERTY = "invoice_total_idempotent"
HOSTS_WORKFLOW = ".github/workflows/entropy-gate-split-hosts.yml"


@pytest.fixture(scope="module", autouse=True)
def _prerequisites() -> None:
    e2e_kit.require_prerequisites()


@dataclass(frozen=True)
class World:
    sample: QueueSample
    root: Path
    project: Path
    toolcache: Path
    wheels: Path
    origin: Path  # the bare origin GitHub holds: its branches and refs/pull/7/*


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("e2e-trusted")
    wheels = e2e_kit.wheelhouse(root / "wheelhouse")
    toolcache = root / "toolcache"
    e2e_kit.tool_cache(toolcache, wheels)
    project = e2e_kit.project_copy(root / "entropy-gate")
    sample = e2e_kit.queue_sample(root / "sample", root / "pins-tmp", [*TEMPLATE_FILES, NO_BASE])
    # The merge queue's commit is the fix merged into main: GitHub's refs/pull/7/merge too.
    origin = pr_world.bare(sample.path, root / "origin.git")
    pr_world.push(sample.path, origin, {"refs/pull/7/head": sample.head,
                                        "refs/pull/7/merge": sample.group})  # fmt: skip
    yield World(sample, root, project, toolcache, wheels, origin)
    if not os.environ.get("ENTROPY_GATE_E2E_KEEP"):
        shutil.rmtree(root, ignore_errors=True)


def _act(
    world: World, event: str, event_file: Path, *, checkout: str, name: str = "",
    workflow: str = "entropy-gate-required.yml", api_args: tuple[str, ...] = (),
) -> Run:  # fmt: skip
    """One act run of `workflow` with the sample's `checkout` as HEAD (act copies the work
    tree: that is the commit the jobs see)."""
    subprocess.run(["git", "-C", str(world.sample.path), "checkout", "-q", checkout], check=True)
    folder = world.root / (name or event)
    folder.mkdir()
    pulls = e2e_kit.pulls_of(world.sample.base, world.sample.head, world.sample.group)
    api = ApiServer.start(folder, *api_args, world=pulls, git=world.origin)
    jobs_git = pr_world.gitconfig(folder, world.origin, e2e_kit.OWNER_REPO)
    try:
        run = e2e_kit.run_act(
            world.sample, workflow, folder, kit=e2e_kit.kit_dir(),
            project=world.project, api=api, toolcache=world.toolcache, wheels=world.wheels,
            cache_server=world.root / "cache-server", event=event, event_file=event_file,
            extra=("--env", f"GIT_CONFIG_GLOBAL={jobs_git}"),
        )  # fmt: skip
    finally:
        api.stop()
    (folder / "act.log").write_text(run.log, encoding="utf-8")
    print(f"act {event}: exit {run.code} in {run.seconds:.1f} s (log: {folder / 'act.log'})")
    return world.sample, run, api.requests(), folder


@pytest.fixture(scope="module")
def merge_queue_run(world: World) -> Run:
    return _act(world, "merge_group", world.sample.merge_group_event, checkout=world.sample.group)


@pytest.fixture(scope="module")
def pull_request_run(world: World) -> Run:
    return _act(world, "pull_request", world.sample.pull_request_event, checkout=world.sample.group)


@pytest.fixture(scope="module")
def hosts_run(world: World) -> Run:
    """The split's PR side (host jobs only), then a hand-written verdict planted among its
    artifacts, as a PR's workflow could upload one."""
    done = _act(
        world, "pull_request", world.sample.pull_request_event, checkout=world.sample.group,
        name="split-hosts", workflow="entropy-gate-split-hosts.yml",
    )  # fmt: skip
    forged = done[3] / "artifacts" / "1" / f"entropy-gate-{PROPERTY}-verdict"
    forged.mkdir(parents=True)
    with zipfile.ZipFile(forged / "verdict.zip", "w") as archive:
        archive.writestr("verdict.json", json.dumps(FORGED))
    return done


FORGED = {"classification": "real_defect", "merge": False, "reasons": ["forged"], "tests": []}


def _trusted(world: World, hosts: Run, name: str, path: str) -> Run:
    """The split's trusted side on a workflow_run event naming the hosts run (act's run id
    is 1), from main; the API serves the hosts run's artifacts."""
    event = world.root / f"{name}.json"
    payload = pr_world.workflow_run(
        e2e_kit.OWNER_REPO, head=world.sample.head, head_branch="fix", path=path
    )
    event.write_text(json.dumps(payload), encoding="utf-8")
    return _act(
        world, "workflow_run", event, checkout="main", name=name,
        workflow="entropy-gate-split-trusted.yml",
        api_args=("--artifacts", str(hosts[3] / "artifacts")),
    )  # fmt: skip


@pytest.fixture(scope="module")
def trusted_run(world: World, hosts_run: Run) -> Run:
    return _trusted(world, hosts_run, "split-trusted", HOSTS_WORKFLOW)


@pytest.fixture(scope="module")
def evil_run(world: World, hosts_run: Run) -> Run:
    return _trusted(world, hosts_run, "split-evil", ".github/workflows/evil.yml")


def test_the_hosts_workflow_posts_no_check_run(hosts_run: Run) -> None:
    _, run, requests, folder = hosts_run
    assert run.code == 0, run.log[-8000:]
    assert requests == []
    stored = sorted(p.name for p in (folder / "artifacts" / "1").iterdir())
    assert stored == [f"entropy-gate-{PROPERTY}-host-{h}-1" for h in "ab"] + [
        f"entropy-gate-{PROPERTY}-verdict"  # the forged one, planted by the fixture
    ]


def test_the_trusted_workflow_judges_the_hosts_and_ignores_a_planted_verdict(
    trusted_run: Run,
) -> None:
    sample, run, requests, _ = trusted_run
    assert run.code == 0, run.log[-8000:]
    gets = [r["path"] for r in requests if r["method"] == "GET"]
    # every leg of each host: the run's artifacts listed, filtered by pattern in the action
    wanted = ["/repos/acme/invoices/actions/runs/1/artifacts?per_page=100&page=1"] * 2
    assert [g for g in gets if "/runs/1/artifacts" in g] == wanted
    assert not any("verdict" in g for g in gets)
    posted = [r["body"] for r in requests if r["method"] == "POST"]
    assert [(b["name"], b["head_sha"], b["conclusion"]) for b in posted] == [
        ("entropy-gate", sample.head, "success")
    ], run.log[-8000:]
    assert "forged" not in json.dumps(posted)


def test_a_run_of_another_workflow_posts_no_check_run(evil_run: Run) -> None:
    _, run, requests, _ = evil_run
    assert run.code != 0
    assert [r for r in requests if r["method"] == "POST"] == []
    assert "workflow_run.path is '.github/workflows/evil.yml'" in run.log


def _verdict(folder: Path) -> dict[str, Any]:
    artifact = folder / "artifacts" / "1" / "entropy-gate-invoice_total_idempotent-verdict"
    with zipfile.ZipFile(next(artifact.glob("*.zip"))) as archive:
        verdict: dict[str, Any] = json.loads(archive.read("verdict.json"))
    return verdict


def test_a_merge_group_gets_its_check_run_on_its_head_judged_against_its_base(
    merge_queue_run: Run,
) -> None:
    _passes(merge_queue_run, merge_queue_run[0].group)


def test_a_pull_request_gets_its_check_run_on_the_prs_head(pull_request_run: Run) -> None:
    """The checkout is the merge commit, as GitHub's refs/pull/N/merge is; the check run
    goes on pull_request.head.sha."""
    _passes(pull_request_run, pull_request_run[0].head)


@pytest.fixture(scope="module")
def no_base_run(world: World) -> Run:
    event = world.root / "workflow_dispatch.json"
    event.write_text(json.dumps({"inputs": {}, "ref": "refs/heads/fix"}), encoding="utf-8")
    return _act(
        world, "workflow_dispatch", event, checkout="fix", name="nobase", workflow=NO_BASE.name
    )


def test_a_run_with_no_base_posts_no_success(no_base_run: Run) -> None:
    """A manual run gives the workflow no base: the hosts still report, the verdict is
    invalid with the line that names the base-ref input, and no check run says success."""
    _, run, requests, folder = no_base_run
    assert run.code != 0
    conclusions = [r["body"]["conclusion"] for r in requests if r["method"] == "POST"]
    assert "success" not in conclusions, conclusions
    assert conclusions == ["failure"], run.log[-6000:]
    verdict = _verdict(folder)
    assert verdict["classification"] == "invalid"
    assert any("set the base-ref input" in reason for reason in verdict["reasons"])


def _passes(done: Run, on: str) -> None:
    _, run, requests, folder = done
    assert run.code == 0, run.log[-8000:]
    posted = [r["body"] for r in requests if r["method"] == "POST"]
    assert [r for r in requests if r["violations"]] == []
    assert [(b["name"], b["head_sha"], b["conclusion"]) for b in posted] == [
        ("entropy-gate", on, "success")
    ], run.log[-8000:]
    verdict = _verdict(folder)
    assert verdict["classification"] == "merge_candidate"
    # the pin check and the scan ran against merge_group.base_sha (no "no --base-ref" reason)
    assert "--base-ref" not in json.dumps(verdict["reasons"])
    assert verdict["tests"]
    assert all(test["base_a"] is not None for test in verdict["tests"])  # the base ran
