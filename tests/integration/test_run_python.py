"""Another interpreter: the plugin copied alone, `--python` with a venv of another Python,
and the clock fallback when time-machine is missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from entropy_action.core.layout import JUNIT_XML
from entropy_action.hosts import isolate, launch, testfiles
from tests.integration.test_run_host_a import MODULE, make_repo, manifest_yaml, outcomes, settings

PYENV = Path("/root/.pyenv/versions")


def _other_python(version: str) -> Path:
    python = PYENV / version / "bin" / "python"
    if not python.exists():
        pytest.skip(f"no Python {version} at {python}")
    return python


def test_the_plugin_works_copied_alone_under_another_interpreter(tmp_path: Path) -> None:
    python = _other_python("3.10.13")
    folder = testfiles.install_plugin(tmp_path)  # the plugin folder, as the runner fills it
    config = {
        "host": "b",
        "report": str(tmp_path / "report.json"),
        "env_names": ["TZ"],
        "clock_shift_seconds": isolate.SHIFT_SECONDS,
        "block_network": True,
        "hostname": "entropy-gate-b-abc123",
        "check_loopback": True,
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    script = (
        "import importlib.util, os, socket\n"
        "import entropy_gate_plugin as plugin\n"
        "assert importlib.util.find_spec('entropy_action') is None\n"
        "assert 'ENTROPY_GATE_PLUGIN' not in os.environ\n"
        "assert socket.gethostname() == 'entropy-gate-b-abc123' == os.uname().nodename\n"
        "plugin.pytest_collection_finish(__import__('types').SimpleNamespace(config=None))\n"
    )
    env = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(folder),
        "ENTROPY_GATE_PLUGIN": str(tmp_path / "config.json"),
        "TZ": "UTC",
    }
    proc = subprocess.run(
        [str(python), "-c", script],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["env"] == {"TZ": "UTC"}
    assert report["fingerprint"]["python_version"] == "3.10.13"
    assert report["clock_error"].startswith("time_machine is not importable")
    assert report["network_blocked_in_process"] is True
    assert report["hostname_patched_in_process"] is True
    assert report["loopback_works"] is True


def test_the_plugin_does_nothing_without_the_runners_variable(tmp_path: Path) -> None:
    script = (
        "import socket, time\n"
        "before = (socket.getaddrinfo, socket.gethostname, socket.socket.connect)\n"
        "start = time.time()\n"
        "import entropy_action.plugin as plugin\n"
        "assert (socket.getaddrinfo, socket.gethostname, socket.socket.connect) == before\n"
        "assert abs(time.time() - start) < 60\n"
        "plugin.pytest_collection_finish(__import__('types').SimpleNamespace(config=None))\n"
        "assert plugin.pytest_report_header() == []\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "ENTROPY_GATE_PLUGIN"}
    proc = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_libfaketime_that_breaks_the_probe_is_not_used(tmp_path: Path) -> None:
    fake = tmp_path / "libfaketime.so.1"
    fake.write_text("not a shared library")
    interpreter = isolate.Interpreter(sys.executable, "3.11", "CPython", True, False)
    plan = isolate.plan_clock(interpreter, dict(os.environ), libraries=(str(fake),))
    assert plan.plugin_shift is None
    assert plan.environ == {}
    assert plan.note == (
        f"live clock not shifted: time_machine is not importable by {sys.executable} "
        f"(pip install time-machine); libfaketime {fake} fails timed waits: "
        "the clock did not move under it"
    )
    missing = isolate.plan_clock(interpreter, dict(os.environ), libraries=())
    assert missing.note == (
        f"live clock not shifted: time_machine is not importable by {sys.executable} "
        "(pip install time-machine); libfaketime is not installed"
    )


@pytest.fixture(scope="module")
def venv312(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv of Python 3.12 with pytest only (no time-machine, no pydantic)."""
    base = _other_python("3.12.1")
    folder = tmp_path_factory.mktemp("venv312")
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "pytest"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot install pytest into a 3.12 venv: {proc.stderr.strip()[-200:]}")
    return python


VERSION_PROPERTY = """\
import importlib.util
import sys


def test_runs_on_python_3_12_without_the_gates_packages():
    assert sys.version_info[:2] == (3, 12)
    assert importlib.util.find_spec("pydantic") is None
"""


@pytest.mark.parametrize("isolated", [False, True], ids=["host-a", "host-b"])
def test_another_interpreter_runs_pytest(tmp_path: Path, venv312: Path, isolated: bool) -> None:
    root = make_repo(
        tmp_path / "repo",
        {"entropy.yaml": manifest_yaml(tmp_path / "tmp"), MODULE: VERSION_PROPERTY},
    )
    out = tmp_path / "out"
    info = launch.run_host(settings(root, out, python=str(venv312), isolate=isolated))
    assert outcomes(out / JUNIT_XML) == {
        "test_runs_on_python_3_12_without_the_gates_packages": "passed"
    }
    assert info.pins_mismatch == []
    assert info.python == str(venv312)
    assert info.fingerprint.python_version == "3.12.1"
    if isolated:
        assert f"interpreter {venv312} (Python 3.12.1)" in info.isolation
        (note,) = info.notes  # libfaketime is tried only after time-machine, and proved first
        assert note.startswith(
            f"live clock not shifted: time_machine is not importable by {venv312} "
            "(pip install time-machine); libfaketime "
        )
