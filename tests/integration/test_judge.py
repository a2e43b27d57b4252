"""The one judging pipeline (judge.py) and the evidence the host steps leave for it.

Real host runs in a real git repository: host A's job (`run --host a --base-ref`) writes
strength.json beside its report, host B's job (`run --host b --isolate`) writes
attribution.json when it failed tests, and `verdict` reads them as untrusted data. A strength
report that is missing, damaged or belongs to another run is `invalid`, never a pass.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from entropy_action.core import layout
from entropy_action.gate import attribution
from entropy_action.gate.attribution import Trial
from entropy_action.verdict.classify import Evidence, classify
from entropy_action.verdict.model import TestResult, Verdict
from tests.support.helpers import Repo, build_repo, copy_world, run_cli

MANIFEST = """\
version: 1
property_id: fees
module: tests/test_fees.py
pins:
  clock_unix: 1768003200
  tz: UTC
  temp_root: {temp_root}
constraints:
  max_mutants: 8
run:
  pytest_args: ["-o", "addopts=", "-q"]
"""

FEES = """\
def late_fee(amount, days_late):
    if days_late > 30:
        return amount // 10
    return 0
"""

BASE = """\
from fees import late_fee


def test_no_fee_on_the_due_day():
    assert late_fee(1000, 30) == 0


def test_fee_after_a_month():
    assert late_fee(1000, 31) == 100
"""

# The tautology: the expected value now comes from the unit itself.
TAUTOLOGY = BASE.replace("late_fee(1000, 31) == 100", "late_fee(1000, 31) == late_fee(1000, 31)")


@pytest.fixture
def fees(repo: Repo, tmp_path: Path) -> tuple[Repo, str]:
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("fees.py", FEES)
    repo.write("conftest.py", "")
    repo.write("tests/test_fees.py", BASE)
    return repo, repo.commit("base")


@pytest.fixture(scope="module")
def tautology_world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fees repository with the tautology in its working tree, both host jobs run into
    `host-a` (strength.json beside the report) and `host-b`: once for the tests that read or
    damage what they left."""
    root = tmp_path_factory.mktemp("tautology")
    files = {"entropy.yaml": MANIFEST.format(temp_root=root / "pins-tmp"), "fees.py": FEES}
    base = build_repo(root / "repo", {**files, "conftest.py": "", "tests/test_fees.py": BASE})
    (root / "repo" / "tests" / "test_fees.py").write_text(TAUTOLOGY, encoding="utf-8")
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        ran = run_cli(root / "repo", "run", "--host", host, "--out", f"../host-{host}",
                      "--base-ref", base, *extra)  # fmt: skip
        assert ran.returncode in (0, 1), ran.stderr
    return root


@pytest.fixture
def tautology(
    tautology_world: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Repo, str, Path, Path]:
    """This test's copy: the repository, its base commit and the two host folders."""
    repo = copy_world(tautology_world, tmp_path, capsys, monkeypatch)
    base = repo.git("rev-parse", "HEAD")
    return repo, base, repo.path.parent / "host-a", repo.path.parent / "host-b"


def _host_jobs(repo: Repo, base: str) -> tuple[Path, Path]:
    """Both hosts as the workflow's two host jobs run them."""
    folders = []
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        out = repo.path.parent / f"host-{host}"
        result = repo.cli("run", "--host", host, "--out", str(out), "--base-ref", base, *extra)
        assert result.code in (0, 1), result.err
        folders.append(out)
    return folders[0], folders[1]


def _verdict(repo: Repo, base: str, a: Path, b: Path) -> tuple[int, dict[str, Any]]:
    out = repo.path.parent / "verdict.json"
    result = repo.cli(
        "verdict", "--host-a", str(a), "--host-b", str(b), "--base-ref", base, "--json", str(out)
    )
    return result.code, json.loads(out.read_text(encoding="utf-8"))


def _reasons(verdict: dict[str, Any]) -> str:
    return "\n".join(verdict["reasons"])


def test_the_workflow_rejects_a_tautology_through_host_as_strength_step(
    tautology: tuple[Repo, str, Path, Path],
) -> None:
    repo, base, a, b = tautology
    written = json.loads((a / layout.STRENGTH_JSON).read_text(encoding="utf-8"))
    assert written["measured"] is True
    assert written["base_commit"] == repo.git("rev-parse", base)
    code, verdict = _verdict(repo, base, a, b)
    assert (code, verdict["classification"]) == (1, "entropy_silenced"), _reasons(verdict)
    assert "weakened_property" in {f["kind"] for f in verdict["findings"]}
    assert verdict["mutation"]["base_killed"] > verdict["mutation"]["head_killed"]
    assert verdict["inputs_sha256"]


@pytest.mark.parametrize(
    ("tamper", "why"),
    [
        ("delete", "strength.json is missing: the patch changed the property's test side"),
        ("other base", "measured against 000000000000"),
        ("unchanged", "says the property's test side is unchanged at the head"),
        ("other commit", "commit is not the one its host.json names"),
        ("foreign kind", "'skip_marker' is not a strength finding"),
        ("not json", "strength.json:1: not valid JSON"),
    ],
)
def test_a_strength_report_that_is_missing_or_not_this_runs_is_invalid(
    tautology: tuple[Repo, str, Path, Path], tamper: str, why: str
) -> None:
    repo, base, a, _ = tautology
    path = a / layout.STRENGTH_JSON
    data = json.loads(path.read_text(encoding="utf-8"))
    if tamper == "delete":
        path.unlink()
    elif tamper == "not json":
        path.write_text("{not json", encoding="utf-8")
    else:
        data.update(
            {
                "other base": {"base_commit": "0" * 40},
                "unchanged": {"measured": False, "findings": [], "mutation": None},
                "other commit": {"commit": "1" * 40},
                "foreign kind": {
                    "findings": [
                        {**data["findings"][0], "kind": "skip_marker"},
                    ]
                },
            }[tamper]
        )
        path.write_text(json.dumps(data), encoding="utf-8")
    code, verdict = _verdict(repo, base, a, repo.path.parent / "host-b")
    assert (code, verdict["classification"], verdict["merge"]) == (2, "invalid", False)
    assert why in _reasons(verdict), _reasons(verdict)


def test_a_patch_that_leaves_the_module_alone_needs_no_strength_report(
    fees: tuple[Repo, str],
) -> None:
    repo, base = fees
    repo.write("fees.py", FEES.replace("return 0", "return 0  # no fee"))
    a, b = _host_jobs(repo, base)
    assert json.loads((a / layout.STRENGTH_JSON).read_text())["measured"] is False
    (a / layout.STRENGTH_JSON).unlink()  # a host job of an older gate, say
    code, verdict = _verdict(repo, base, a, b)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), _reasons(verdict)


def test_host_bs_job_attributes_its_failures_and_the_verdict_replays_them(
    fees: tuple[Repo, str],
) -> None:
    """A production read of the live clock: host B's job re-runs the test it failed with one
    perturbation left out at a time; the verdict job says what the failure follows."""
    repo, base = fees
    repo.write(
        "fees.py",
        "import time\n\n\n"
        + FEES.replace("if days_late > 30:", "if time.time() > 1893456000 or days_late > 30:"),
    )
    a, b = _host_jobs(repo, base)
    recorded = json.loads((b / layout.ATTRIBUTION_JSON).read_text(encoding="utf-8"))
    assert recorded["tests"] == ["tests/test_fees.py::test_no_fee_on_the_due_day"]
    assert "python" not in recorded["dimensions"]
    code, verdict = _verdict(repo, base, a, b)
    assert (code, verdict["classification"]) == (1, "env_coupled"), _reasons(verdict)
    assert verdict["coupled_to"] == ["clock"]


def test_host_bs_attribution_leaves_out_what_host_b_held_at_host_as_value(
    repo: Repo, tmp_path: Path
) -> None:
    """A pinned hash seed and a manifest's host_b_off held host A's value on host B
    (host.json variations): re-running without them would only repeat host B's run, so the
    attribution step tries the rest, and the verdict still finds the clock."""
    held = (
        MANIFEST.format(temp_root=tmp_path / "pins-tmp")
        .replace("  tz: UTC\n", "  tz: UTC\n  hash_seed: 0\n")
        .replace("  max_mutants: 8\n", '  max_mutants: 8\n  host_b_off:\n    cpu_count: "sized"\n')
    )
    repo.write("entropy.yaml", held)
    repo.write("fees.py", FEES)
    repo.write("conftest.py", "")
    repo.write("tests/test_fees.py", BASE)
    base = repo.commit("base")
    repo.write(
        "fees.py",
        "import time\n\n\n"
        + FEES.replace("if days_late > 30:", "if time.time() > 1893456000 or days_late > 30:"),
    )
    a, b = _host_jobs(repo, base)
    info = json.loads((b / layout.HOST_JSON).read_text(encoding="utf-8"))
    varied = {v["dimension"]: v["varied"] for v in info["variations"]}
    assert (varied["hash_seed"], varied["cpu_count"], varied["clock"]) == (False, False, True)
    recorded = json.loads((b / layout.ATTRIBUTION_JSON).read_text(encoding="utf-8"))
    assert {"hash_seed", "cpu_count", "python"}.isdisjoint(recorded["dimensions"])
    assert {"clock", "env", "file_order"} <= set(recorded["dimensions"])
    reverted = [set(t["revert"]) for t in recorded["trials"]]
    assert {"hash_seed"} not in reverted
    assert {"cpu_count"} not in reverted
    code, verdict = _verdict(repo, base, a, b)
    assert (code, verdict["classification"]) == (1, "env_coupled"), _reasons(verdict)
    assert verdict["coupled_to"] == ["clock"]


ORDERED = (
    BASE
    + """

_SEEN = {}


class TestOrder:
    def test_records_the_fee(self):
        _SEEN["fee"] = late_fee(1000, 31)
        assert _SEEN["fee"] == 100

    def test_fee_recorded(self):
        assert _SEEN["fee"] == 100
"""
)


def test_host_bs_job_names_the_state_setter_and_the_verdict_and_compare_agree(
    fees: tuple[Repo, str],
) -> None:
    """Two tests that pass in collection order only: host B's job runs them swapped, its
    attribution step finds the state-setter; `verdict` and `compare` replay the same pair."""
    repo, base = fees
    repo.write("tests/test_fees.py", ORDERED)
    a, b = _host_jobs(repo, base)
    recorded = json.loads((b / layout.ATTRIBUTION_JSON).read_text(encoding="utf-8"))
    pair_in = [[n for n in recorded[k] if "TestOrder" in n] for k in ("order_a", "order_b")]
    assert pair_in[1] == pair_in[0][::-1]  # host B ran the class's two tests swapped
    code, verdict = _verdict(repo, base, a, b)
    assert (code, verdict["classification"]) == (1, "env_coupled"), _reasons(verdict)
    assert verdict["coupled_to"] == ["test_order"]
    victim, setter = (
        f"tests/test_fees.py::TestOrder::{n}" for n in ("test_fee_recorded", "test_records_the_fee")
    )
    [pair] = verdict["order_dependence"]
    assert (pair["victim"], pair["other"], pair["kind"]) == (victim, setter, "state_setter")
    assert pair["replay"] == f"entropy-gate replay --report host-b --after {setter} {victim}"
    out = repo.path.parent / "compare.json"
    result = repo.cli("compare", "--host-a", str(a), "--host-b", str(b), "--json", str(out))
    assert result.code == 1, result.err
    compared = json.loads(out.read_text(encoding="utf-8"))
    assert compared["order_dependence"] == verdict["order_dependence"]


def test_replay_answers_only_trials_that_were_made() -> None:
    made = [(Trial(revert=frozenset({"clock"})), {"t": "passed"})]
    rerun = attribution.replay(made)
    assert rerun(Trial(revert=frozenset({"clock"}))) == {"t": "passed"}
    assert rerun(Trial(revert=frozenset({"env"}))) == {}


def test_record_bisects_the_environment_over_the_tests_it_flipped() -> None:
    """The trials recorded where host B runs are the ones `attribute` replays in the judge."""
    names = [f"VAR_{i}" for i in range(8)]

    def live(trial: Trial) -> dict[str, str]:
        passes = "env" in trial.revert or "VAR_5" in trial.keep_env
        return {"t": "passed" if passes else "failed", "u": "failed"}

    made = attribution.record(live, {"t": "passed"}, names, ["clock", "env"])
    assert len(made) == 2 + 1 + 4  # one per dimension, env's repeat, log2(8) + the last check
    verdict = _coupled_verdict()
    assert attribution.attribute(verdict, attribution.replay(made), names, ["clock", "env"]) == [
        "env:VAR_5"
    ]


def _coupled_verdict() -> Verdict:
    return classify(
        Evidence(
            host_a="pass",
            host_b="fail",
            tests=(TestResult(id="t", host_a="passed", host_b="failed"),),
        )
    )


def test_the_evidence_file_names_are_one_list_on_every_side() -> None:
    """The runner clears them, the report reader admits them, the host steps write them."""
    names = (layout.STRENGTH_JSON, layout.ATTRIBUTION_JSON, layout.PROBES_JSON)
    assert names == layout.EVIDENCE_FILES
