"""The bench scripts keep working: each runs in its smoke mode (small sizes, one pair).

Not a timing test: nothing here compares a number with a threshold. It checks that each
script runs to the end and prints its ratio line, so CI notices a script that broke.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
SCRIPTS = sorted(p.name for p in BENCH.glob("bench_*.py"))


def test_every_measure_of_the_issue_has_a_script():
    assert SCRIPTS == [
        "bench_compare.py",
        "bench_gate.py",
        "bench_run.py",
        "bench_scan.py",
        "bench_startup.py",
    ]


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_bench_script_runs_in_smoke_mode_and_prints_its_ratio(script, tmp_path):
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--smoke"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ratio over 1 alternating pairs: min" in done.stdout, done.stdout
    assert "load average" in done.stdout
