"""The bench scripts keep working: each runs in its smoke mode (small sizes, one pair).

Not a timing test: nothing here compares a number with a threshold. It checks that each
script runs to the end and prints its ratio line, so CI notices a script that broke.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
SCRIPTS = sorted(p.name for p in BENCH.glob("bench_*.py"))


# issue 10's measures and issue 21's many properties, each alternating with its floor
# through bench/benchlib.py
MEASURES = [
    "bench_compare.py",
    "bench_gate.py",
    "bench_precommit.py",
    "bench_project_install.py",
    "bench_properties.py",
    "bench_run.py",
    "bench_scan.py",
    "bench_startup.py",
]
# the cost of one feature against the same run without it (issues 12, 13 and 22)
FEATURES = [
    "bench_assertions.py",
    "bench_audit.py",
    "bench_orderprobes.py",
    "bench_probe.py",
    "bench_strength.py",
    "bench_testside.py",
    "bench_variations.py",
]
# a host run's cost layer by layer, per run and per test, and each hook's own time (issue 38)
LAYERS = ["bench_layers.py"]
# the workflow under act against a plain pytest workflow (issue 19): needs the e2e kit
WORKFLOWS = ["bench_workflow.py"]
# two checkouts of the gate side by side against bare pytest (a change's cost, issue 38)
VERSIONS = ["bench_versions.py"]


def test_every_measure_of_the_issue_has_a_script():
    assert sorted(MEASURES + FEATURES + LAYERS + WORKFLOWS + VERSIONS) == SCRIPTS


def test_the_versions_bench_runs_two_checkouts_side_by_side(tmp_path):
    checkout = BENCH.parent
    done = subprocess.run(
        [sys.executable, str(BENCH / "bench_versions.py"), "--smoke", "--before", str(checkout)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for measure in ("one property of 10 cases", "3 properties of 5 tests (0 own tz)",
                    "3 properties of 5 tests (1 own tz)"):  # fmt: skip
        assert f"-- gate, {measure}: medians of 1 round(s)" in done.stdout, done.stdout
    for side in ("before", "after"):
        assert re.search(rf"  {side} +wall +\d+ ms  cpu +\d+ ms  wall min", done.stdout)
    missing = subprocess.run(
        [sys.executable, str(BENCH / "bench_versions.py"), "--smoke", "--before", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == 1
    assert missing.stderr.strip() == f"{tmp_path}: not a checkout of the gate (no entropy_action/)"


@pytest.mark.e2e
@pytest.mark.parametrize("script", WORKFLOWS)
def test_the_workflow_bench_runs_one_pair_under_act(script, tmp_path):
    from tests.support import e2e_kit  # noqa: PLC0415

    e2e_kit.require_prerequisites()
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--smoke"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=1200,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "ratio over 1 alternating pairs: min" in done.stdout, done.stdout
    assert "(critical path)" in done.stdout, done.stdout
    assert "-- on GitHub (modelled): 2 jobs in series against 1" in done.stdout, done.stdout


def _smoke(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`script --smoke` with its own TMPDIR: what it made there under its own name (`bench-`)
    must be gone when it exits (the gate's scratch folders go in the background)."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--smoke"],
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(temp)},
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in temp.iterdir() if p.name.startswith("bench")) == []
    return done


@pytest.mark.parametrize("script", MEASURES)
def test_a_bench_script_runs_in_smoke_mode_and_prints_its_ratio(script, tmp_path):
    done = _smoke(script, tmp_path)
    assert "ratio over 1 alternating pairs: min" in done.stdout, done.stdout
    assert "load average" in done.stdout


@pytest.mark.parametrize("script", FEATURES)
def test_a_feature_bench_runs_in_smoke_mode_and_prints_a_ratio(script, tmp_path):
    done = _smoke(script, tmp_path)
    # "ratio 1.47x" (strength, probe) or "x1.127" (audit): a ratio against the run without it
    assert re.search(r"(ratio \d+\.\d+x|x\d+\.\d+)", done.stdout), done.stdout


def test_the_layers_bench_prints_each_layer_and_the_hooks_timed_inside_a_run(tmp_path):
    done = _smoke("bench_layers.py", tmp_path)
    rows = [
        "bare pytest",
        "+ JUnit XML",
        "+ the gate's run, plain",
        "+ namespaces",
        "+ audit",
        "+ assertion counting",
        "the `run` command",
    ]
    number = r" +-?\d+"
    layer = r" +-?\d+\.\d+× +[+-]\d+ ms +[+-]\d+\.\d µs"
    assert re.search(rf"^bare pytest{number}{number} +1\.00×$", done.stdout, re.M), done.stdout
    for row in rows[1:]:
        assert re.search(rf"^{re.escape(row)}{number}{number}{layer}$", done.stdout, re.M), row
    assert re.search(r"^-- the gate's imports for `run`: \d+ ms of CPU", done.stdout, re.M)
    for plugin in ("_pytest.junitxml", "entropy_gate_plugin"):  # timed inside the test process
        timed = rf"^{re.escape(plugin)} +pytest_runtest_logreport +\d+\.\d ms +60 calls +\d"
        assert re.search(timed, done.stdout, re.M), done.stdout


def test_the_compare_bench_reads_reports_with_the_plugins_properties(tmp_path):
    """--seeded: every testcase carries the four properties the gate's plugin records."""
    done = subprocess.run(
        [sys.executable, str(BENCH / "bench_compare.py"), "--smoke", "--seeded"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "each with the plugin's four properties" in done.stdout
    assert "ratio over 1 alternating pairs: min" in done.stdout


def test_the_compare_bench_profiles_the_whole_command_step_by_step(tmp_path):
    """--profile: each step of the command timed where it runs (a step that moved or was
    renamed stops the script), then cProfile's top functions."""
    done = subprocess.run(
        [sys.executable, str(BENCH / "bench_compare.py"), "--smoke", "--seeded", "--profile"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "-- the whole command: entropy-gate compare on " in done.stdout
    steps = re.search(r"-- the command's steps .*?\n   peak RSS", done.stdout, re.DOTALL)
    assert steps, done.stdout
    for step in (
        "junit.xml (streamed parse, cases)",
        "pairing the tests",
        "the verdict JSON (written)",
    ):
        assert re.search(re.escape(step) + r" +x[12] ", steps.group(0)), steps.group(0)
    assert "-- cProfile of the command" in done.stdout
