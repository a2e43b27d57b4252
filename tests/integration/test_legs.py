"""The host legs on real repositories: `matrix` plans them from the head manifest, a leg's
`run --property`, its error reports (`host-error --property`), its cache key, and the verdict
over merged legs, where a lost leg makes its properties invalid, named with the leg."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from entropy_action.cli.commands.cache_key import LEG_PREFIX, PREFIX
from tests.integration.test_verdict_command import _outputs
from tests.support import many_sample
from tests.support.helpers import Repo, build_repo, commit_files, copy_world, run_cli

MANIFEST = """\
version: 1
pins:
  clock_unix: 1700000000
  rng_seed: 11
  tz: UTC
properties:
  - property_id: alpha
    module: tests/test_a.py
  - property_id: beta
    module: tests/test_b.py
  - property_id: gamma
    module: tests/test_c.py
    pins:
      tz: Europe/Paris
"""
MODULE = "from calc import add\n\n\ndef test_one_{0}():\n    assert add(1, 2) == 3\n"
FILES = {
    "entropy.yaml": MANIFEST,
    "calc.py": "def add(a, b):\n    return a + b\n",
    "conftest.py": "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parent))\n",
    "tests/test_a.py": MODULE.format("a"),
    "tests/test_b.py": MODULE.format("b") + "\n\ndef test_two_b():\n    assert add(2, 2) == 4\n",
    "tests/test_c.py": MODULE.format("c"),
}
# legs-per-host 2: the two session groups, one leg each
LEGS = [("1", "alpha beta"), ("2", "gamma")]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Base and head (a README only) of the 3-property repository; each host's legs run
    into legs/HOST-LEG, then merged into host-HOST as the verdict job downloads them, except
    host B's leg 2, which uploaded nothing."""
    place = tmp_path_factory.mktemp("legs")
    repo = place / "repo"
    build_repo(repo, FILES)
    commit_files(repo, {"README.md": "the head\n"}, "head")
    for host in "ab":
        for leg, ids in LEGS:
            chosen = [arg for pid in ids.split() for arg in ("--property", pid)]
            out = place / "legs" / f"{host}-{leg}"
            isolate = ["--isolate"] if host == "b" else []
            done = run_cli(
                repo, "run", "--host", host, "--out", str(out), "--base-ref", "HEAD~1",
                *isolate, *chosen,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr[-3000:]
            if (host, leg) != ("b", "2"):
                shutil.copytree(out, place / f"host-{host}", dirs_exist_ok=True)
    return place


@pytest.fixture
def repo(
    world: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Repo:
    return copy_world(world, tmp_path, capsys, monkeypatch)


def _matrix(repo: Repo, *args: str) -> dict[str, list[dict[str, str]]]:
    done = repo.cli("matrix", *args)
    assert done.code == 0, done.err
    loaded: dict[str, list[dict[str, str]]] = json.loads(done.out)
    return loaded


def test_matrix_plans_one_leg_per_session_group_the_same_on_both_hosts(repo: Repo) -> None:
    include = _matrix(repo, "--legs-per-host", "2")["include"]
    assert [(e["host"], e["leg"], e["properties"]) for e in include] == [
        (h, leg, ids) for h in "ab" for leg, ids in LEGS
    ]
    assert _matrix(repo, "--legs-per-host", "1")["include"] == [
        {"host": h, "leg": "1", "properties": "alpha beta gamma"} for h in "ab"
    ]
    # the default (4): a spare leg splits the heavier group (beta has two tests)
    assert [e["properties"] for e in _matrix(repo)["include"][:3]] == ["alpha", "beta", "gamma"]


def test_matrix_sets_its_step_outputs(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    output = repo.path.parent / "github_output"
    output.write_text("", encoding="utf-8")
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    assert repo.cli("matrix", "--legs-per-host", "2", "--github-output").code == 0
    outputs = _outputs(output.read_text(encoding="utf-8"))
    assert json.loads(outputs["matrix"]) == _matrix(repo, "--legs-per-host", "2")
    assert outputs["legs"] == "2"
    # the legs after the first (the workflow's hosts-more job; leg 1 plans itself)
    assert json.loads(outputs["more"]) == {
        "include": [{"host": h, "leg": "2", "properties": "gamma"} for h in "ab"]
    }


def test_a_host_job_plans_its_own_leg_as_the_check_job_does(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workflow's leg-1 jobs start beside the check job: each takes its share with the
    same planning, before any of the PR's code runs in it."""
    output = repo.path.parent / "github_output"
    output.write_text("", encoding="utf-8")
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    done = repo.cli("matrix", "--legs-per-host", "2", "--leg", "1", "--github-output")
    assert done.code == 0, done.err
    assert "this job's leg: 1 (alpha beta)" in done.err
    assert _outputs(output.read_text(encoding="utf-8"))["properties"] == "alpha beta"
    output.write_text("", encoding="utf-8")
    assert repo.cli("matrix", "--legs-per-host", "1", "--github-output").code == 0
    assert _outputs(output.read_text(encoding="utf-8"))["more"] == ""  # one leg: no more job
    done = repo.cli("matrix", "--legs-per-host", "2", "--leg", "3")
    assert (done.code, done.out) == (2, "")
    assert "--leg 3: the manifest plans 2 leg(s) per host" in done.err


def test_a_one_property_manifest_gives_todays_two_legs(repo: Repo) -> None:
    repo.write(
        "entropy.yaml",
        "version: 1\nproperty_id: solo\nmodule: tests/test_a.py\npins:\n  rng_seed: 1\n",
    )
    assert _matrix(repo)["include"] == [
        {"host": "a", "leg": "1", "properties": ""},
        {"host": "b", "leg": "1", "properties": ""},
    ]
    done = repo.cli("matrix", "--leg", "1")
    assert done.code == 0, done.err
    assert "this job's leg: 1 (the manifest's one property)" in done.err


def test_twenty_properties_are_spread_by_their_tests(tmp_path: Path) -> None:
    build_repo(tmp_path / "many", many_sample.files())
    done = run_cli(tmp_path / "many", "matrix", "--legs-per-host", "4")
    assert done.returncode == 0, done.stderr
    legs = [e["properties"] for e in json.loads(done.stdout)["include"] if e["host"] == "a"]
    assert legs == [
        "p01 p02 p03 p04 p05 p06",
        "p07 p08 p09 p10 p11 p12",
        "p13 p14 p15 p16",
        "p17 p18 p19 p20",
    ]
    assert "leg 1 (weight 14)" in done.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--legs-per-host", "0"], "argument --legs-per-host: '0': give at least 1"),
        (["--legs-per-host", "two"], "argument --legs-per-host: 'two' is not a whole number"),
        (["--manifest", "nowhere.yaml"], "nowhere.yaml: no such file"),
    ],
)
def test_bad_matrix_input_is_one_line_and_exit_2(repo: Repo, args: list[str], said: str) -> None:
    done = repo.cli("matrix", *args)
    assert done.code == 2
    assert said in done.err
    assert done.out == ""


def test_a_broken_manifest_gives_no_matrix(repo: Repo) -> None:
    repo.write("entropy.yaml", "version: 1\nproperties: []\n")
    done = repo.cli("matrix")
    assert (done.code, done.out) == (2, "")
    assert "entropy.yaml" in done.err


def _verdict(repo: Repo, *extra: str) -> dict[str, Any]:
    place = repo.path.parent
    out = place / "verdict.json"
    done = repo.cli(
        "verdict", "--host-a", str(place / "host-a"), "--host-b", str(place / "host-b"),
        "--base-ref", "HEAD~1", "--json", str(out), *extra,
    )  # fmt: skip
    verdict: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    assert done.code == (0 if verdict["classification"] == "merge_candidate" else 2), done.err
    return verdict


def _by_id(verdict: dict[str, Any]) -> dict[str, str]:
    listed = verdict["properties"]
    assert isinstance(listed, list)
    return {p["property_id"]: p["verdict"]["classification"] for p in listed}


def test_the_merged_legs_are_judged_and_the_lost_leg_is_named(repo: Repo) -> None:
    matrix = json.dumps(_matrix(repo, "--legs-per-host", "2"))
    verdict = _verdict(repo, "--matrix", matrix)
    assert _by_id(verdict) == {
        "alpha": "merge_candidate",
        "beta": "merge_candidate",
        "gamma": "invalid",
    }
    reasons = [r for r in verdict["reasons"] if r.startswith("property gamma: ")]
    assert reasons[0] == (
        "property gamma: invalid input: host B: no report folder gamma: leg 2 of host b carried "
        "property gamma and uploaded no report for it (the leg failed before its upload, was "
        "cancelled or was skipped)"
    )
    assert not any("the host job failed" in r for r in reasons)  # said once, with the leg


def test_a_leg_that_planned_otherwise_than_the_check_is_invalid_never_a_pass(repo: Repo) -> None:
    """Host A's leg 1 plans its own share (beside the check job); one that took another
    share (a tampered or different plan: alpha alone, where the check's matrix gives leg 1
    alpha and beta) leaves beta without a report on host A: invalid, named with the leg."""
    place = repo.path.parent
    shutil.rmtree(place / "host-a")
    shutil.copytree(place / "legs" / "a-1", place / "host-a")
    shutil.rmtree(place / "host-a" / "properties" / "beta")
    shutil.copytree(place / "legs" / "a-2", place / "host-a", dirs_exist_ok=True)
    shutil.copytree(place / "legs" / "b-2", place / "host-b", dirs_exist_ok=True)
    matrix = json.dumps(_matrix(repo, "--legs-per-host", "2"))
    verdict = _verdict(repo, "--matrix", matrix)
    assert verdict["classification"] == "invalid"
    assert _by_id(verdict) == {
        "alpha": "merge_candidate",
        "beta": "invalid",
        "gamma": "merge_candidate",
    }
    assert any(
        r.startswith("property beta: invalid input: host A: no report folder beta: leg 1 of host a")
        for r in verdict["reasons"]
    ), verdict["reasons"]


def test_without_the_matrix_the_lost_property_is_named_by_host(repo: Repo) -> None:
    verdict = _verdict(repo)
    assert _by_id(verdict)["gamma"] == "invalid"
    reasons = " ".join(r for r in verdict["reasons"] if r.startswith("property gamma: "))
    assert "host B: no report folder gamma" in reasons
    assert "leg" not in reasons


def test_every_leg_back_and_the_verdict_is_a_merge_candidate(repo: Repo) -> None:
    place = repo.path.parent
    shutil.copytree(place / "legs" / "b-2", place / "host-b", dirs_exist_ok=True)
    matrix = json.dumps(_matrix(repo, "--legs-per-host", "2"))
    assert _verdict(repo, "--matrix", matrix)["classification"] == "merge_candidate"


@pytest.mark.parametrize(
    ("matrix", "said"),
    [
        ("not json", "--matrix: not JSON"),
        ('{"include": 3}', "--matrix: not a matrix"),
        ('{"include": [{"host": "c", "leg": "1", "properties": ""}]}', "include[0]: needs host a"),
        (
            '{"include": [{"host": "a", "leg": "1", "properties": 7}]}',
            "properties must be a string",
        ),
    ],
)
def test_a_bad_matrix_is_refused_with_exit_2(repo: Repo, matrix: str, said: str) -> None:
    place = repo.path.parent
    done = repo.cli(
        "verdict", "--host-a", str(place / "host-a"), "--host-b", str(place / "host-b"),
        "--base-ref", "HEAD~1", "--json", str(place / "v.json"), "--matrix", matrix,
    )  # fmt: skip
    assert done.code == 2
    assert said in done.err
    assert not (place / "v.json").exists()


def test_a_failed_legs_error_report_lands_in_each_of_its_properties(repo: Repo) -> None:
    place = repo.path.parent
    out = place / "host-b"
    shutil.rmtree(out / "properties" / "alpha")
    done = repo.cli(
        "host-error", "--host", "b", "--out", str(out), "--step", "install the project",
        "--message", "leg 1 of host b: the install input failed",
        "--property", "alpha", "--property", "beta",
    )  # fmt: skip
    assert done.code == 0, done.err
    error = json.loads((out / "properties" / "alpha" / "error.json").read_text("utf-8"))
    assert error["message"] == "leg 1 of host b: the install input failed"
    assert not (out / "properties" / "beta" / "error.json").exists()  # its own report stands
    assert "left as it is" in done.out
    verdict = _verdict(repo)
    reasons = [r for r in verdict["reasons"] if r.startswith("property alpha: ")]
    assert any("leg 1 of host b: the install input failed" in r for r in reasons), reasons
    assert _by_id(verdict)["beta"] == "merge_candidate"


@pytest.mark.parametrize("bad", ["../escape", "a/b", ".hidden", ""])
def test_host_error_refuses_a_property_id_that_is_no_id(repo: Repo, bad: str) -> None:
    out = repo.path.parent / "host-x"
    done = repo.cli(
        "host-error", "--host", "a", "--out", str(out), "--step", "s", "--property", bad
    )
    assert done.code == 2
    assert "not a property id" in done.err
    assert not out.exists()


def test_a_leg_of_several_properties_has_one_cache_key_over_theirs(repo: Repo) -> None:
    def key(*ids: str) -> str:
        chosen = [arg for pid in ids for arg in ("--property", pid)]
        done = repo.cli("cache-key", "--base-ref", "HEAD~1", "--host", "a", *chosen)
        assert done.code == 0, done.err
        return done.out.strip()

    alpha, beta = key("alpha"), key("beta")
    assert alpha.startswith(PREFIX)
    assert alpha != beta
    digests = sorted(k.removeprefix(PREFIX) for k in (alpha, beta))
    combined = hashlib.sha256("".join(f"{d}\n" for d in digests).encode()).hexdigest()
    assert key("alpha", "beta") == key("beta", "alpha") == LEG_PREFIX + combined


def _script(
    repo: Repo, name: str, **env: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """scripts/NAME as the action's step runs it (inputs in the environment only)."""
    place = repo.path.parent
    gate = place / "gate"
    gate.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m entropy_action "$@"\n', "utf-8")
    gate.chmod(0o755)
    output = place / f"{name}.output"
    output.write_text("", encoding="utf-8")
    environ = {
        "PATH": os.environ["PATH"], "GATE": str(gate), "GITHUB_OUTPUT": str(output),
        "RUNNER_TEMP": str(place / "runner-temp"), "MANIFEST": "entropy.yaml", **env,
    }  # fmt: skip
    script = Path(__file__).resolve().parents[2] / "scripts" / name
    done = subprocess.run(
        ["bash", str(script)], cwd=repo.path, env=environ, capture_output=True, text=True,
        check=False, timeout=300,
    )  # fmt: skip
    text = output.read_text(encoding="utf-8")
    simple = dict(
        line.split("=", 1) for line in text.splitlines() if "=" in line and "<<" not in line
    )
    return done, {**simple, **_outputs(text)}


def test_a_legs_run_files_its_base_runs_under_the_legs_cache_key(repo: Repo) -> None:
    key = repo.cli("cache-key", "--base-ref", "HEAD~1", "--host", "a", "--python", sys.executable,
                   "--property", "alpha", "--property", "beta").out.strip()  # fmt: skip
    assert key.startswith(LEG_PREFIX)
    out = repo.path.parent / "leg-1"
    done, outputs = _script(
        repo, "run-host.sh", HOST="a", BASE_REF="HEAD~1", PYTHON_IN=sys.executable,
        REPORT_DIR=str(out), CACHE_KEY=key, EVIDENCE_DIR=".ev", PROPERTIES="alpha beta",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(p.name for p in (out / "properties").iterdir()) == ["alpha", "beta"]
    assert outputs["cached"] == "true"
    assert outputs["key"] == key  # the save files the entry the next push restores


def test_a_failed_legs_step_names_the_leg_in_each_of_its_properties(repo: Repo) -> None:
    out = repo.path.parent / "failed-leg"
    done, outputs = _script(
        repo, "host-error.sh", HOST="b", REPORT_DIR=str(out), STEP="install the project",
        LEG="2", PROPERTIES="gamma",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert outputs["report-dir"] == str(out)
    error = json.loads((out / "properties" / "gamma" / "error.json").read_text("utf-8"))
    assert error["message"] == "leg 2 of host b: the step failed; the log of the host job says why"
    assert not (out / "error.json").exists()
    # a one-property manifest's leg: the folder itself, no leg in the message
    done, _ = _script(repo, "host-error.sh", HOST="b", REPORT_DIR=str(out), STEP="s", LEG="1")
    assert done.returncode == 0, done.stderr
    assert "leg" not in json.loads((out / "error.json").read_text("utf-8"))["message"]
