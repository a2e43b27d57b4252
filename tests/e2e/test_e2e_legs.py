"""End to end under act: a manifest of 20 properties fanned out over the host legs (issue 21).

One act run of tests/data/e2e_legs/legs.yml on the PR of tests/support/many_sample.py (a
skip added to p03's module): `many` (4 legs per host) posts one check run whose verdict is
the local `entropy-gate gate` verdict, naming p03; `lostleg` (2 legs per host, host B's leg
carrying p17 fails before it runs) is invalid for that leg's properties only, the others
still judged, in one check run. See tests/support/e2e_kit.py for the machinery.
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

from tests.support import e2e_kit, many_sample
from tests.support.e2e_kit import ActRun, ApiServer
from tests.support.many_sample import ManySample

pytestmark = pytest.mark.e2e
WORKFLOWS = Path(__file__).parent.parent / "data" / "e2e_legs"
ARTIFACTS = {"many": "p01-and-19-more", "lostleg": "q01-and-19-more"}  # validate's ids
P_IDS = many_sample.IDS
Q_IDS = tuple(f"q{pid[1:]}" for pid in P_IDS)  # lostleg.yaml's, over the same modules
LOST = Q_IDS[12:]  # lostleg's leg 2 (q13-q20): the three groups packed into 2 legs


@dataclass(frozen=True)
class World:
    sample: ManySample
    root: Path
    toolcache: Path
    run: ActRun
    requests: list[dict[str, Any]]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    e2e_kit.require_prerequisites()
    root = tmp_path_factory.mktemp("e2e-legs")
    started = time.monotonic()
    wheels = e2e_kit.wheelhouse(root / "wheelhouse")
    toolcache = root / "toolcache"
    e2e_kit.tool_cache(toolcache, wheels)
    project = e2e_kit.project_copy(root / "entropy-gate")
    sample = many_sample.sample(root / "sample", WORKFLOWS)
    print(f"e2e legs setup: {time.monotonic() - started:.1f} s")
    folder = root / "legs"
    folder.mkdir()
    api = ApiServer.start(folder, world=e2e_kit.pulls_of(sample.base, sample.head))
    try:
        run = e2e_kit.run_act(
            sample, "legs.yml", folder, kit=e2e_kit.kit_dir(), project=project, api=api,  # type: ignore[arg-type]
            toolcache=toolcache, wheels=wheels, cache_server=root / "cache-server",
            event_file=sample.event,
        )  # fmt: skip
    finally:
        api.stop()
    (folder / "act.log").write_text(run.log, encoding="utf-8")
    print(f"act legs.yml: exit {run.code} in {run.seconds:.1f} s (log: {folder / 'act.log'})")
    yield World(sample, root, toolcache, run, api.requests())
    if not os.environ.get("ENTROPY_GATE_E2E_KEEP"):
        shutil.rmtree(root, ignore_errors=True)


def _stored(world: World) -> Path:
    return world.root / "legs" / "artifacts" / "1"


def _verdict(world: World, job: str) -> dict[str, Any]:
    """The verdict artifact of caller `job`."""
    artifact = _stored(world) / f"entropy-gate-{ARTIFACTS[job]}-verdict"
    with zipfile.ZipFile(next(artifact.glob("*.zip"))) as archive:
        verdict: dict[str, Any] = json.loads(archive.read("verdict.json"))
    return verdict


def _by_id(verdict: dict[str, Any]) -> dict[str, str]:
    return {p["property_id"]: p["verdict"]["classification"] for p in verdict["properties"]}


def _posted(world: World, name: str) -> list[dict[str, Any]]:
    return [
        r["body"]
        for r in world.requests
        if r["method"] == "POST" and r["body"].get("name") == f"entropy-gate ({name})"
    ]


def _text(world: World, name: str) -> str:
    """Everything the check run `name` was sent (its POST and PATCHes)."""
    posted = _posted(world, name)
    return json.dumps(posted) + json.dumps(
        [r["body"] for r in world.requests if r["method"] == "PATCH"]
    )


def test_each_caller_gets_one_check_run_over_its_20_properties(world: World) -> None:
    assert [r for r in world.requests if r["violations"]] == [], "a body GitHub would reject"
    for name, conclusion in (("many", "failure"), ("lostleg", "failure")):
        posted = _posted(world, name)
        assert [b["conclusion"] for b in posted] == [conclusion], world.run.log[-6000:]
        summary = posted[0]["output"]["summary"] + posted[0]["output"].get("text", "")
        # every property in the table, a section for each one that is not a merge candidate
        ids, failing = (Q_IDS, ["q03", *LOST]) if name == "lostleg" else (P_IDS, ["p03"])
        assert "of 20 properties" in summary, summary[:3000]
        assert all(f"| {pid} |" in summary for pid in ids), summary[:3000]
        sections = re.findall(r"^### ❌ property `(\w+)`", summary, re.MULTILINE)
        assert sorted(sections) == sorted(failing), summary[:3000]


def test_the_legs_ran_as_planned_and_uploaded_one_artifact_each(world: World) -> None:
    stored = {p.name for p in _stored(world).iterdir()}
    for job, legs in (("many", "1234"), ("lostleg", "12")):
        prefix = f"entropy-gate-{ARTIFACTS[job]}-host-"
        hosts = {n for n in stored if n.startswith(prefix)}
        # every leg uploads, the failed one too (its error reports)
        assert hosts == {f"{prefix}{h}-{leg}" for h in "ab" for leg in legs}, sorted(stored)


def test_a_skip_in_one_property_rejects_and_names_it(world: World) -> None:
    verdict = _verdict(world, "many")
    assert verdict["classification"] == "entropy_silenced"
    assert _by_id(verdict) == {
        pid: "entropy_silenced" if pid == many_sample.SKIPPED else "merge_candidate"
        for pid in P_IDS
    }
    assert any(r.startswith("property p03: entropy silenced") for r in verdict["reasons"])
    annotated = [
        a["path"]
        for r in world.requests
        for a in (r["body"].get("output") or {}).get("annotations", [])
    ]
    assert "tests/test_p03.py" in annotated


def test_a_failed_leg_is_invalid_for_its_properties_only(world: World) -> None:
    verdict = _verdict(world, "lostleg")
    assert verdict["classification"] == "invalid"
    expected = dict.fromkeys(LOST, "invalid")
    expected.update(dict.fromkeys(Q_IDS[:12], "merge_candidate"))
    expected["q03"] = "entropy_silenced"  # the other leg's, still judged
    assert _by_id(verdict) == expected
    for pid in LOST:
        reasons = [r for r in verdict["reasons"] if r.startswith(f"property {pid}: ")]
        assert any("leg 2 of host b" in r and "install" in r for r in reasons), verdict["reasons"]
    assert "leg 2 of host b" in _text(world, "lostleg")


def test_the_workflow_reaches_the_local_gates_verdict(world: World) -> None:
    """`entropy-gate gate` on the same commits (host B on the workflow's host B interpreter):
    the same classification, per property, and the same findings."""
    host_b = next(
        p
        for p in (world.toolcache / "Python").glob("3.11.*/x64/bin/python")
        if p.parts[-4] != e2e_kit.BARE_VERSION
    )
    local_json = world.root / "local.json"
    clone = world.root / "local-clone"
    subprocess.run(["git", "clone", "-q", str(world.sample.path), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", world.sample.head], check=True)
    done = subprocess.run(
        [sys.executable, "-m", "entropy_action", "gate", "--base-ref", world.sample.base,
         "--python", str(host_b), "--json", str(local_json)],
        cwd=clone, capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-3000:]
    local, workflow = json.loads(local_json.read_text("utf-8")), _verdict(world, "many")
    assert local["classification"] == workflow["classification"] == "entropy_silenced"
    assert _by_id(local) == _by_id(workflow)
    assert _findings(local) == _findings(workflow)
    assert _outcomes(local) == _outcomes(workflow)


def _findings(verdict: dict[str, Any]) -> list[tuple[str, bool, str]]:
    return sorted({(f["kind"], f["introduced"], f.get("path") or "") for f in verdict["findings"]})


def _outcomes(verdict: dict[str, Any]) -> list[tuple[str, str, str]]:
    return sorted((t["id"], t["host_a"], t["host_b"]) for t in verdict["tests"])
