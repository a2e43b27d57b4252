"""The suite's host-run interpreter (tests/support/hostpython.py) is the test venv less one
entry point: the same distributions and versions, every other entry point, and the project
importable; only hypothesis's pytest plugin is not registered."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FULL_PYTHON
from tests.support import hostpython

SEEN = """\
import importlib.metadata as m, json, entropy_action, hypothesis
dists = sorted(f"{d.metadata['Name']}=={d.version}".lower() for d in m.distributions())
points = sorted(f"{e.group}:{e.name}={e.value}" for d in m.distributions() for e in d.entry_points)
print(json.dumps({"dists": dists, "points": points}))
"""


def _seen(python: str | Path) -> dict[str, list[str]]:
    done = subprocess.run([str(python), "-c", SEEN], capture_output=True, text=True, check=True)
    seen: dict[str, list[str]] = json.loads(done.stdout)
    return seen


@pytest.mark.skipif(not hostpython.wanted(), reason=f"{hostpython.FULL_ENV} is set")
def test_the_host_run_interpreter_hides_only_hypothesiss_pytest_plugin() -> None:
    built = hostpython.ensure()
    assert isinstance(built, Path), built
    assert sys.executable == str(built)  # what this test process, and its host runs, start
    full, overlay = _seen(FULL_PYTHON), _seen(built)
    assert overlay["dists"] == full["dists"]
    hidden = f"pytest11:{hostpython.HIDDEN_PLUGIN}=_hypothesis_pytestplugin"
    assert hidden in full["points"]
    assert overlay["points"] == [p for p in full["points"] if p != hidden]


def test_a_test_that_takes_full_python_runs_the_test_venv_itself(full_python: str) -> None:
    assert sys.executable == full_python == FULL_PYTHON
    assert any(p.startswith("pytest11:hypothesispytest=") for p in _seen(sys.executable)["points"])


def test_a_process_the_overlay_started_still_finds_the_test_venv() -> None:
    """A bench script or a CLI subprocess runs under the overlay; the console scripts and act
    it looks for are in the test venv's bin/."""
    code = "from tests.support import hostpython; print(hostpython.TEST_VENV_PYTHON)"
    root = Path(__file__).parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == FULL_PYTHON
    assert (Path(FULL_PYTHON).parent / "entropy-gate").exists()
