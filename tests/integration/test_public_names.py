"""The public names survive the layout: the pytest11 entry point, `from entropy_action.seams
import Clock`, the replay command the summary prints (`-p entropy_action.plugin`),
`python -m entropy_action`, and the console script. Each is called here as a user calls it."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest

import entropy_action.plugin
import entropy_action.seams
from entropy_action.render.phrases import REPLAY
from entropy_action.testproc import plugin as testproc_plugin
from entropy_action.testproc import seams as testproc_seams
from tests.conftest import FULL_PYTHON  # the test venv (its bin/ has the console script)

pytest_plugins = ["pytester"]


def test_the_public_modules_are_the_testproc_modules() -> None:
    """One module object under two names: pytest registers its hooks once."""
    assert entropy_action.seams is testproc_seams
    assert entropy_action.plugin is testproc_plugin


def test_clock_imports_from_its_public_name() -> None:
    from entropy_action.seams import Clock, PinnedClock, SystemClock  # noqa: PLC0415

    clock: Clock = PinnedClock(1_700_000_000)  # the port production code takes
    assert clock.now().timestamp() == clock.timestamp() == 1_700_000_000
    live: Clock = SystemClock()
    assert live.now().tzinfo is not None


def test_the_pytest11_entry_point_loads_the_seams_plugin() -> None:
    points = importlib.metadata.entry_points(group="pytest11")
    ours = [point for point in points if point.name == "entropy_gate"]
    assert [point.value for point in ours] == ["entropy_action.seams"]
    assert ours[0].load() is testproc_seams


def test_a_user_suite_gets_the_fixtures_through_the_entry_point(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Installed, the plugin is active in any pytest run: its fixtures resolve."""
    pytester.makepyfile(
        "from entropy_action.seams import PinnedClock\n"
        "def test_clock(entropy_clock):\n"
        "    assert entropy_clock == PinnedClock(1700000000)\n"
    )
    monkeypatch.setenv("ENTROPY_CLOCK_UNIX", "1700000000")  # as the gate sets it
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_the_printed_replay_command_runs(pytester: pytest.Pytester) -> None:
    """The summary's replay line, as printed, loads the plugin and runs the test."""
    pytester.makepyfile(test_replay="def test_one():\n    assert 1 + 1 == 2\n")
    argv = [*REPLAY.split()[3:-1], f"{REPLAY.split()[-1]}9173", "test_replay.py::test_one"]
    assert argv[:2] == ["-p", "entropy_action.plugin"]
    result = pytester.runpytest_subprocess(*argv, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_python_dash_m_entropy_action_is_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "entropy_action", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("entropy-gate ")


def test_the_console_script_is_installed() -> None:
    script = Path(FULL_PYTHON).with_name("entropy-gate")
    done = subprocess.run(
        [str(script), "--help"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "COLUMNS": "100"},
    )
    assert done.returncode == 0, done.stderr
    assert "validate" in done.stdout
