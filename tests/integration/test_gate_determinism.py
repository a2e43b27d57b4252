"""The same inputs give the same verdict: ten gate runs on one patch, one classification.

The property has a bug its strategy finds in about half of unseeded runs (measured: 9 of 20
hypothesis seeds), and the checkout keeps a `.hypothesis/` database holding the failing
example between runs, as a laptop does. Each gate run is two real host runs (`--no-base-run`
keeps the ten runs near 40 s on a shared machine; the base run adds nothing to determinism).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from entropy_action.evidence import inputs as verdict_inputs
from tests.support.helpers import Repo

pytest.importorskip("hypothesis")

MANIFEST = """\
version: 1
property_id: rare
module: tests/test_rare.py
pins:
  rng_seed: 9173
  tz: UTC
  temp_root: {temp_root}
"""

RARE = """\
from hypothesis import given, settings, strategies as st


@settings(max_examples=25)
@given(st.integers(0, 40))
def test_no_bad_value(x):
    assert x != 23


def test_plain():
    assert sum([1, 2]) == 3
"""


def _outside_ci() -> dict[str, str]:
    """The environment without CI: under CI=true hypothesis loads its "ci" profile, which keeps
    no example database, so nothing could be planted."""
    return {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS")}


def _plant_failing_example(repo: Repo) -> list[str]:
    """Run plain pytest (unseeded) until hypothesis finds the bug and saves it."""
    for _ in range(40):
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_rare.py"],
            cwd=repo.path, capture_output=True, check=False, env=_outside_ci(),
        )  # fmt: skip
        if proc.returncode == 1:
            database = repo.path / ".hypothesis"
            return sorted(str(p.relative_to(database)) for p in database.rglob("*"))
    raise AssertionError("hypothesis did not find the bug in 40 runs")


def test_ten_gate_runs_on_one_patch_give_one_classification(repo: Repo, tmp_path: Path) -> None:
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("tests/test_rare.py", RARE)
    base = repo.commit("base")
    planted = _plant_failing_example(repo)
    assert any(name.startswith("examples") for name in planted)
    repo.write("README.md", "docs only\n")
    verdicts = []
    for run in range(10):
        out = tmp_path / f"verdict-{run}.json"
        result = repo.cli(
            "gate", "--base-ref", base, "--no-base-run", "--json", str(out),
            "--out", str(tmp_path / f"reports-{run}"),
        )  # fmt: skip
        verdict = json.loads(out.read_text(encoding="utf-8"))
        assert result.code in (0, 1), result.out
        verdicts.append(verdict)
    assert len({v["classification"] for v in verdicts}) == 1
    assert len({_judged_inputs(v) for v in verdicts}) == 1
    for verdict in verdicts:
        assert verdict["host_a"] == verdict["host_b"]
        assert all(t["host_a"] == t["host_b"] for t in verdict["tests"])
        seeds = {(t["seed_a"]["seed"], t["seed_b"]["seed"]) for t in verdict["tests"]}
        assert all(a == b for a, b in seeds)
    database = repo.path / ".hypothesis"
    assert sorted(str(p.relative_to(database)) for p in database.rglob("*")) == planted
    inputs = verdicts[0]["inputs"]
    assert inputs["base_tree"] == repo.git("rev-parse", f"{base}^{{tree}}")
    assert set(inputs) == {
        "gate_version", "head_tree", "base_tree", "manifest_sha256",
        "interpreter_a", "distributions_a", "interpreter_b", "distributions_b",
        "reports_a", "reports_b",
    }  # fmt: skip
    assert "unknown" not in inputs.values()


def test_the_inputs_digest_changes_with_the_head_tree(repo: Repo, tmp_path: Path) -> None:
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("tests/test_rare.py", "def test_plain():\n    assert 1\n")
    base = repo.commit("base")
    digests = []
    for text in ("docs\n", "docs\n", "other docs\n"):
        repo.write("README.md", text)
        out = tmp_path / "verdict.json"
        repo.cli("gate", "--base-ref", base, "--no-base-run", "--json", str(out))
        digests.append(_judged_inputs(json.loads(out.read_text(encoding="utf-8"))))
    assert digests[0] == digests[1] != digests[2]


def _judged_inputs(verdict: dict[str, Any]) -> str:
    """The digest of what was judged: the inputs without the host reports' own bytes, which
    hold timings and so differ run to run (`publish` checks them against the folders)."""
    named = verdict["inputs"]
    assert verdict["inputs_sha256"] == verdict_inputs.digest(named)
    return verdict_inputs.digest({k: v for k, v in named.items() if not k.startswith("reports_")})
