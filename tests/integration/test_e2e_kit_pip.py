"""The act kit's tool cache: one pip at a time in a venv every job shares (e2e_kit.serialize_pip).

Under act both host jobs of one Python version install into the same venv, where GitHub
gives each its own machine; a host job once found pytest half-written by the other job's pip.
"""

from __future__ import annotations

import fcntl
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import e2e_kit


def test_every_pip_of_the_tool_cache_waits_for_the_one_running(tmp_path: Path) -> None:
    venv = tmp_path / "Python" / "3.12.1" / "x64"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True, capture_output=True)
    e2e_kit.serialize_pip(tmp_path)
    python, script = venv / "bin" / "python", venv / "bin" / "pip"
    pips: tuple[list[str | Path], ...] = ([python, "-m", "pip", "--version"], [script, "--version"])
    with (tmp_path / "pip.lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another job's pip, mid-install
        waiting = [subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) for argv in pips]
        for each in waiting:
            with pytest.raises(subprocess.TimeoutExpired):
                each.wait(timeout=1)
        fcntl.flock(held, fcntl.LOCK_UN)
        outputs = [each.communicate(timeout=60)[0] for each in waiting]
    assert [each.returncode for each in waiting] == [0, 0]
    assert all(out.startswith("pip ") for out in outputs), outputs


def test_a_pip_that_pip_starts_runs_under_its_parents_lock(tmp_path: Path) -> None:
    """pip installs a project's build dependencies with a pip of its own (build isolation):
    that one must not wait for the lock its parent holds."""
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:", "-d", wheels,
         "setuptools"],
        check=True, capture_output=True,
    )  # fmt: skip
    venv = tmp_path / "Python" / "3.12.1" / "x64"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True, capture_output=True)
    e2e_kit.serialize_pip(tmp_path)
    project = tmp_path / "lib"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "lockedlib"\nversion = "0"\n'
        '[tool.setuptools]\npy-modules = ["lockedlib"]\n'
    )
    (project / "lockedlib.py").write_text("VALUE = 1\n")
    done = subprocess.run(
        [venv / "bin" / "python", "-m", "pip", "install", "--no-index", "--find-links", wheels,
         "-e", project],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
