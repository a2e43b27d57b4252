"""End to end under act: the ruleset's required workflow, verbatim from workflow-templates/
(only `@v1` mapped to this checkout, as e2e_kit does), in a merge queue.

Two act runs (under a minute each here): a `merge_group` event whose head is a real merge
commit of the fix into main (`gh-readonly-queue/main/pr-7`) and whose base is main: the check
run goes on the merge group's head, and the pin check, the scan and the base run use its base;
then a `pull_request` event of the same fix.
"""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests import e2e_kit
from tests.e2e_kit import ActRun, ApiServer, QueueSample

pytestmark = pytest.mark.e2e
TEMPLATES = e2e_kit.ROOT / "workflow-templates"
Run = tuple[QueueSample, ActRun, list[dict[str, Any]], Path]


@pytest.fixture(scope="module", autouse=True)
def _prerequisites() -> None:
    missing = e2e_kit.missing_prerequisites()
    if missing and os.environ.get(e2e_kit.REQUIRE_ENV):
        pytest.fail(f"end-to-end test cannot run: missing {'; '.join(missing)}")
    if missing:
        pytest.skip(f"end-to-end test needs {'; '.join(missing)}")


@dataclass(frozen=True)
class World:
    sample: QueueSample
    root: Path
    project: Path
    toolcache: Path
    wheels: Path


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("e2e-trusted")
    wheels = e2e_kit.wheelhouse(root / "wheelhouse")
    toolcache = root / "toolcache"
    e2e_kit.tool_cache(toolcache, wheels)
    project = e2e_kit.project_copy(root / "entropy-gate")
    sample = e2e_kit.queue_sample(
        root / "sample", root / "pins-tmp", [TEMPLATES / "entropy-gate-required.yml"]
    )
    yield World(sample, root, project, toolcache, wheels)
    if not os.environ.get("ENTROPY_GATE_E2E_KEEP"):
        shutil.rmtree(root, ignore_errors=True)


def _act(world: World, event: str, event_file: Path) -> Run:
    folder = world.root / event
    folder.mkdir()
    api = ApiServer.start(folder)
    try:
        run = e2e_kit.run_act(
            world.sample, "entropy-gate-required.yml", folder, kit=e2e_kit.kit_dir(),
            project=world.project, api=api, toolcache=world.toolcache, wheels=world.wheels,
            cache_server=world.root / "cache-server", event=event, event_file=event_file,
        )  # fmt: skip
    finally:
        api.stop()
    (folder / "act.log").write_text(run.log, encoding="utf-8")
    print(f"act {event}: exit {run.code} in {run.seconds:.1f} s (log: {folder / 'act.log'})")
    return world.sample, run, api.requests(), folder


@pytest.fixture(scope="module")
def merge_queue_run(world: World) -> Run:
    return _act(world, "merge_group", world.sample.merge_group_event)


@pytest.fixture(scope="module")
def pull_request_run(world: World) -> Run:
    return _act(world, "pull_request", world.sample.pull_request_event)


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
