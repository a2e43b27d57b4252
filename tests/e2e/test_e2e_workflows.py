"""End to end, offline, with GitHub's workflow engine (act): the reusable workflow and the
composite action on a sample pull request, the verdict published to a local GitHub API.

Two act runs: `gate.yml` (the demo's patches, one caller each: every row of the table,
the tautology the strength check rejects included) and `faults.yml` against an API that
answers 403 (host B's job fails before uploading; the live-clock verdict falls back to the job
summary and annotations). Every row is also gated locally on the same commits: the workflow
must reach exactly the verdict `entropy-gate gate` reaches. See tests/support/e2e_kit.py.

Both runs share act's cache server, so the faults run is also the PR's second push on the
same base: its host jobs restore the base evidence the gate run saved with actions/cache
(live's host A entry is tampered with in between, and must be ignored).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support import e2e_kit
from tests.support.e2e_kit import ActRun, ApiServer, Sample

pytestmark = pytest.mark.e2e
WORKFLOWS = Path(__file__).parent.parent / "data" / "e2e_workflows"
MODULE = "tests/properties/test_invoice_total.py"


@dataclass(frozen=True)
class World:
    sample: Sample
    kit: Path
    project: Path
    toolcache: Path
    wheels: Path
    root: Path


@pytest.fixture(scope="module", autouse=True)
def _prerequisites() -> None:
    e2e_kit.require_prerequisites()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    kit = e2e_kit.kit_dir()
    if not (kit / "actions" / "VERSIONS.txt").is_file():
        pytest.fail(f"the offline actions kit is missing at {kit} (set ENTROPY_GATE_GHA_KIT)")
    root = tmp_path_factory.mktemp("e2e")
    started = time.monotonic()
    wheels = e2e_kit.wheelhouse(root / "wheelhouse")
    toolcache = root / "toolcache"
    e2e_kit.tool_cache(toolcache, wheels)
    project = e2e_kit.project_copy(root / "entropy-gate")
    sample = e2e_kit.sample_repo(root / "sample", root / "pins-tmp", WORKFLOWS)
    print(f"e2e setup: {time.monotonic() - started:.1f} s")
    yield World(sample, kit, project, toolcache, wheels, root)
    if not os.environ.get("ENTROPY_GATE_E2E_KEEP"):
        shutil.rmtree(root, ignore_errors=True)


def _act(world: World, workflow: str, *api_args: str) -> tuple[ActRun, list[dict[str, Any]]]:
    folder = world.root / workflow.removesuffix(".yml")
    folder.mkdir()
    world_pulls = e2e_kit.pulls_of(world.sample.base, world.sample.head)
    api = ApiServer.start(folder, *api_args, world=world_pulls)
    try:
        run = e2e_kit.run_act(
            world.sample, workflow, folder, kit=world.kit, project=world.project, api=api,
            toolcache=world.toolcache, wheels=world.wheels,
            cache_server=world.root / "cache-server",
        )  # fmt: skip
    finally:
        api.stop()
    (folder / "act.log").write_text(run.log, encoding="utf-8")
    print(f"act {workflow}: exit {run.code} in {run.seconds:.1f} s (log: {folder / 'act.log'})")
    return run, api.requests()


def _verdicts(log: str) -> dict[str, tuple[str, str]]:
    """Caller job -> (the verdict its verdict job printed, how that job ended)."""
    printed = re.findall(
        r"^\[([\w-]+)/entropy-gate/verdict\s*\]\s+\| entropy-gate verdict: (\w+)",
        log,
        re.MULTILINE,
    )
    ended = re.findall(r"^\[([\w-]+)/entropy-gate/verdict\s*\] 🏁  Job (\w+)", log, re.MULTILINE)
    endings = dict(ended)
    assert printed, "no verdict job printed a verdict:\n" + log[-6000:]
    return {job: (verdict, endings.get(job, "?")) for job, verdict in printed}


def _check_runs(requests: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Check-run name -> the body that created it."""
    return {r["body"]["name"]: r["body"] for r in requests if r["method"] == "POST"}


def _annotations(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every annotation sent, by POST or by PATCH."""
    return [
        annotation
        for r in requests
        if r["method"] in ("POST", "PATCH")  # publish's reads of the pull requests are GETs
        for annotation in (r["body"].get("output") or {}).get("annotations", [])
    ]


@pytest.fixture(scope="module")
def gate_run(world: World) -> tuple[ActRun, list[dict[str, Any]]]:
    return _act(world, "gate.yml")


EXPECTED = {
    p["name"]: p["expected"] for p in json.loads((e2e_kit.DEMO / "patches.json").read_text())
}


def test_every_demo_row_reaches_its_check_run(
    world: World, gate_run: tuple[ActRun, list[dict[str, Any]]]
) -> None:
    run, requests = gate_run
    assert [r for r in requests if r["violations"]] == [], "a body GitHub would reject"
    assert _verdicts(run.log) == {
        name: (expected, "succeeded" if expected == "merge_candidate" else "failed")
        for name, expected in EXPECTED.items()
    }
    runs = _check_runs(requests)
    assert {name: body["conclusion"] for name, body in runs.items()} == {
        f"entropy-gate ({name})": "success" if expected == "merge_candidate" else "failure"
        for name, expected in EXPECTED.items()
    }
    assert all(body["head_sha"] == world.sample.head for body in runs.values())
    assert {r["path"].rsplit("/check-runs", 1)[0] for r in requests if r["method"] != "GET"} == {
        f"/repos/{e2e_kit.OWNER_REPO}"
    }
    # the honest fix's success, asked first: is #7 still into main, does another PR share H?
    assert {r["path"].split("?")[0] for r in requests if r["method"] == "GET"} == {
        f"/repos/{e2e_kit.OWNER_REPO}/pulls/7",
        f"/repos/{e2e_kit.OWNER_REPO}/commits/{world.sample.head}/pulls",
    }
    module = world.sample.path / "skip-defect" / MODULE
    skip_line = e2e_kit.line_of(module, "skipif(True")
    marker = [
        a for a in _annotations(requests)
        if a["path"] == f"skip-defect/{MODULE}" and a["start_line"] == skip_line
    ]  # fmt: skip
    assert marker, _annotations(requests)
    # The tautology row: no syntax rule fires; host A's job ran the strength check.
    tautology = _verdict_artifact(world, "gate", "tautology")
    assert "weakened_property" in {f["kind"] for f in tautology["findings"]}, tautology
    assert tautology["mutation"] is not None
    assert run.code != 0, "act must fail: eight verdict jobs failed"
    # Host B's interpreter lacked time-machine: the action installed it from the hashed lock.
    assert re.search(
        r"^\[[\w-]+/entropy-gate/host b leg 1-2\s*\].*installing time-machine", run.log, re.M
    )


@pytest.fixture(scope="module")
def faults_run(
    world: World, gate_run: tuple[ActRun, list[dict[str, Any]]]
) -> tuple[ActRun, list[dict[str, Any]]]:
    """The faults run, after the gate run saved the base evidence and after live's host A
    entry was damaged in the cache server (a DTD in its junit.xml)."""
    saved = _saved_keys(gate_run[0].log)
    assert set(saved) >= {("honest-fix", "a"), ("live-clock", "a"), ("live-clock", "b")}, saved
    e2e_kit.tamper_cache_entry(world.root / "cache-server", saved[("live-clock", "a")], DTD)
    return _act(world, "faults.yml", "--fail-status", "403")


DTD = b'<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><testsuites>&e;</testsuites>'


def _saved_keys(log: str) -> dict[tuple[str, str], str]:
    """(caller job, host) -> the digest its host job saved the base evidence under."""
    found = re.findall(
        r"^\[([\w-]+)/entropy-gate/host ([ab]) leg \d+-\d+\s*\]\s+\| Cache saved with key: "
        r"entropy-gate-base-run-([0-9a-f]{64})$",
        log,
        re.MULTILINE,
    )
    return {(job, host): digest for job, host, digest in found}


def _summary_lines(body: dict[str, Any]) -> list[str]:
    """A check run's summary, line by line, its Markdown escapes undone."""
    summary: str = body["output"]["summary"]
    return [re.sub(r"\\(.)", r"\1", line) for line in summary.splitlines()]


def _job_log(log: str, job: str, host: str) -> str:
    prefix = re.compile(rf"^\[{job}/entropy-gate/host {host} leg \d+-\d+\s*\]")
    return "\n".join(line for line in log.splitlines() if prefix.match(line))


def test_faults_fail_closed_and_fall_back(
    world: World, faults_run: tuple[ActRun, list[dict[str, Any]]]
) -> None:
    run, requests = faults_run
    assert _verdicts(run.log) == {
        "hostfail": ("invalid", "failed"),
        "forbidden": ("env_coupled", "failed"),
        "nopytest": ("invalid", "failed"),
    }
    # host B failed in the install input itself. Not read from the step's own echo: act loses
    # the output of a step that exits within milliseconds now and then (2 of 6 runs on
    # 2026-12-02); its result line and the gate's error report are always there.
    host_b = [
        line for line in run.log.splitlines() if line.startswith("[hostfail/entropy-gate/host b")
    ]
    assert any(
        "❌  Failure - Main install the project under test (install, install-project)" in line
        for line in host_b
    ), "\n".join(host_b[-60:])
    assert any(
        "host b: install the project under test: the install input failed" in line
        for line in host_b
    ), "\n".join(host_b[-60:])
    # An invalid verdict names its cause first, from each host's error report.
    runs = _check_runs(requests)
    invalid = "**Invalid input: the runs could not be judged.**"
    hostfail = _summary_lines(runs["entropy-gate (hostfail)"])
    cause_at = hostfail.index(invalid) + 2  # after the judged merge's line and the title
    assert hostfail[cause_at] == (
        "- host B could not run: the install input failed; the host job's log says why "
        "(step: install the project under test)"
    ), hostfail
    nopytest = _summary_lines(runs["entropy-gate (nopytest)"])
    cause = "could not run: pytest is not importable by …/bin/python: install the project's "
    cause_at = nopytest.index(invalid) + 2
    assert nopytest[cause_at : cause_at + 2] == [
        f"- host {host} {cause}test dependencies there (the install input) (step: prepare the host)"
        for host in "AB"
    ], nopytest
    assert "| not run | not run | not run | not run | `invalid` |" in nopytest
    body = json.dumps(runs["entropy-gate (nopytest)"])
    assert str(world.root) not in body, body
    assert "/tmp/" not in body, body
    assert {r["status"] for r in requests} == {403}
    assert requests, "publish did try the API"
    # The fallback: workflow-command annotations in the log, and publish's step passed.
    failing = _def_line(world.sample.path / "live-clock" / MODULE, "test_no_late_fee_before_due")
    annotation = f"::error file=live-clock/{MODULE},line={failing},"
    assert re.search(
        rf"^\[forbidden/entropy-gate/verdict\s*\].*{re.escape(annotation)}", run.log, re.M
    )
    publish_ok = re.findall(r"\[.*forbidden.*/verdict\s*\].*Success - Main publish", run.log)
    assert publish_ok, "publish must exit 0 on 403"
    assert e2e_kit.TOKEN not in run.log.replace(f"GITHUB_TOKEN={e2e_kit.TOKEN}", "")


def test_a_second_push_restores_the_base_evidence_and_ignores_a_tampered_entry(
    world: World,
    gate_run: tuple[ActRun, list[dict[str, Any]]],
    faults_run: tuple[ActRun, list[dict[str, Any]]],
) -> None:
    first, second = gate_run[0].log, faults_run[0].log
    ran_base = "base run on host A: running pytest"
    # The first push ran the base on every host A and saved it (nothing to restore).
    assert ran_base in _job_log(first, "honest-fix", "a")
    assert "Cache not found for input keys: entropy-gate-base-run-" in _job_log(
        first, "honest-fix", "a"
    )
    # hostfail gates honest's manifest on the same base: host A restores instead of running.
    honest = _saved_keys(first)[("honest-fix", "a")]
    restored = _job_log(second, "hostfail", "a")
    assert f"Cache restored from key: entropy-gate-base-run-{honest}" in restored, restored
    assert f"base run on host A: reused from the cache ({honest[:12]})" in restored
    assert ran_base not in restored
    assert "Cache saved with key" not in restored, "a restored entry is not saved again"
    # forbidden gates live's manifest: its host A entry was damaged, so it is ignored with a
    # note, the base runs again, and the verdict is the first push's.
    live = _saved_keys(first)[("live-clock", "a")]
    damaged = _job_log(second, "forbidden", "a")
    assert f"Cache restored from key: entropy-gate-base-run-{live}" in damaged
    assert f"base run on host A: cache entry {live[:12]} ignored and removed: " in damaged
    assert "refused: it declares a document type" in damaged
    assert ran_base in damaged
    assert "reused from the cache" not in damaged
    assert "reused from the cache" in _job_log(second, "forbidden", "b"), "host B's entry is sound"
    before, after = (
        _verdict_artifact(world, "gate", "live-clock"),
        _verdict_artifact(world, "faults", "live-clock"),
    )
    assert after["classification"] == before["classification"] == "env_coupled"
    assert _outcomes(after) == _outcomes(before)
    assert sorted(f["kind"] for f in after["findings"]) == sorted(
        f["kind"] for f in before["findings"]
    )


def _verdict_artifact(world: World, run: str, scenario: str) -> dict[str, Any]:
    name = f"entropy-gate-{e2e_kit.property_id(scenario)}-verdict"
    artifact = world.root / run / "artifacts" / "1" / name
    with zipfile.ZipFile(next(artifact.glob("*.zip"))) as archive:
        verdict: dict[str, Any] = json.loads(archive.read("verdict.json"))
    return verdict


def _def_line(module: Path, name: str) -> int:
    lines = module.read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.startswith(f"def {name}("))


@pytest.fixture(scope="module")
def local_verdicts(world: World) -> dict[str, dict[str, Any]]:
    """`entropy-gate gate` on every row, on the same commit and manifest, host B on the same
    interpreter as the workflow's host B (host A here is this interpreter, 3.11, where the
    workflow's host A ran 3.12), with the developer's shell the leaked-env row needs."""
    host_b = next(
        p
        for p in (world.toolcache / "Python").glob("3.11.*/x64/bin/python")
        if p.parts[-4] != e2e_kit.BARE_VERSION  # the one without pytest (faults.yml)
    )
    found = {}
    for scenario in e2e_kit.SCENARIOS:
        local_json = world.root / f"local-{scenario}.json"
        done = subprocess.run(
            [sys.executable, "-m", "entropy_action", "gate",
             "--manifest", f"{scenario}/entropy.yaml", "--base-ref", world.sample.base,
             "--python", str(host_b), "--json", str(local_json)],
            cwd=world.sample.path, capture_output=True, text=True, check=False, timeout=600,
            env={**os.environ, **world.sample.environ},
        )  # fmt: skip
        expected = 0 if EXPECTED[scenario] == "merge_candidate" else 1
        assert done.returncode == expected, (scenario, done.stderr[-3000:])
        found[scenario] = json.loads(local_json.read_text(encoding="utf-8"))
    return found


@pytest.mark.parametrize("scenario", e2e_kit.SCENARIOS)
def test_the_workflow_reaches_the_local_gates_verdict(
    world: World,
    gate_run: tuple[ActRun, list[dict[str, Any]]],
    local_verdicts: dict[str, dict[str, Any]],
    scenario: str,
) -> None:
    """Parity on every row of the demo: the same classification, the same finding kinds,
    the same per-test outcomes; and what an env-coupled failure follows, where the
    workflow's host B job could attribute it (it re-runs the tests host B failed)."""
    workflow, local = _verdict_artifact(world, "gate", scenario), local_verdicts[scenario]
    assert local["classification"] == workflow["classification"] == EXPECTED[scenario]
    assert _kinds(local) == _kinds(workflow)
    assert _outcomes(local) == _outcomes(workflow)
    if workflow["classification"] == "env_coupled":
        assert workflow["coupled_to"] == local["coupled_to"] != []
        # the order pair and its replay (from host B's report folder) on both paths
        assert workflow["order_dependence"] == local["order_dependence"]
    if "test_order" in workflow["coupled_to"]:
        assert [
            p["replay"].startswith("entropy-gate replay --report host-b --after ")
            for p in workflow["order_dependence"]
        ] == [True]
    if workflow["classification"] == "env_coupled_reverse":
        assert any(r.startswith("not attributed: ") for r in workflow["reasons"]), workflow
    assert workflow["inputs_sha256"]
    assert local["inputs_sha256"]


def _kinds(verdict: dict[str, Any]) -> list[tuple[str, bool]]:
    return sorted({(f["kind"], f["introduced"]) for f in verdict["findings"]})


def _outcomes(verdict: dict[str, Any]) -> list[tuple[str, str, str]]:
    return sorted((t["id"], t["host_a"], t["host_b"]) for t in verdict["tests"])
