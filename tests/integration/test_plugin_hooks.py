"""The hook inventory inside the test process (hookinventory.py through the plugin), with
pytester: plugins by `-p`, hooks by spec name, internals replaced and restored."""

from __future__ import annotations

import json
from typing import Any

import pytest

from entropy_action.testproc.protocol import PLUGIN_ENV

pytest_plugins = ["pytester"]

STEADY = """
import pytest


@pytest.hookimpl(hookwrapper=True, specname="pytest_runtest_makereport")
def pytest_steady(item, call):
    yield
"""

SWAP = """
import pytest
from _pytest.runner import CallInfo

_real = CallInfo.from_call.__func__


def _steady(cls, func, when, reraise=None):
    return _real(cls, func, when, reraise)


@pytest.fixture(autouse=True)
def _swap(monkeypatch):
    monkeypatch.setattr(CallInfo, "from_call", classmethod(_steady))


def test_one():
    assert True
"""


def inventory(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    config = pytester.path / "plugin.json"
    hooks = pytester.path / "hooks.json"
    settings = {"report": str(pytester.path / "report.json"), "host": "a"}
    settings.update(tree=str(pytester.path), hooks_report=str(hooks))
    config.write_text(json.dumps(settings))
    monkeypatch.setenv(PLUGIN_ENV, str(config))
    result = pytester.runpytest_subprocess("-p", "entropy_action.testproc.plugin", *args)
    assert result.ret == 0, result.stdout.str()
    return json.loads(hooks.read_text())


def test_a_plugin_loaded_with_p_is_listed_with_its_hooks_by_spec_name(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(steady_plugin=STEADY, test_one="def test_one():\n    assert True\n")
    monkeypatch.setenv("PYTHONPATH", str(pytester.path))
    found = inventory(pytester, monkeypatch, "-p", "steady_plugin")
    plugin = [p for p in found["plugins"] if p["name"] == "steady_plugin"]
    assert plugin == [
        {"name": "steady_plugin", "place": "repository", "path": "steady_plugin.py",
         "entry_point": None}
    ]  # fmt: skip
    mine = [h for h in found["hooks"] if h["place"] == "repository"]
    assert mine == [
        {"plugin": "steady_plugin", "spec": "pytest_runtest_makereport",
         "function": "pytest_steady", "place": "repository", "path": "steady_plugin.py",
         "line": 4, "wrapper": False, "hookwrapper": True}
    ]  # fmt: skip
    assert found["replaced"] == []
    assert all(h["place"] not in ("pytest", "gate") for h in found["hooks"])
    assert {p["place"] for p in found["plugins"]} >= {"pytest", "gate", "repository"}


def test_an_internal_replaced_in_a_fixture_is_recorded_though_teardown_restores_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_swap=SWAP)
    found = inventory(pytester, monkeypatch)
    assert found["replaced"] == [
        {"target": "_pytest.runner.CallInfo.from_call", "place": "repository",
         "path": "test_swap.py", "line": 7}
    ]  # fmt: skip


def test_without_the_gates_config_nothing_is_written(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_one="def test_one():\n    assert True\n")
    result = pytester.runpytest_subprocess("-p", "entropy_action.testproc.plugin")
    assert result.ret == 0
    assert not (pytester.path / "hooks.json").exists()
