"""The plugin's channel lines: as json.dumps writes them, one write per test, failures at once."""

from __future__ import annotations

import json
import os
from types import SimpleNamespace
from typing import Any

import pytest

from entropy_action.testproc import plugin


class _Impl:
    def __init__(self, module: str) -> None:
        self.function = SimpleNamespace(__module__=module)


class _StatusHook:
    """pytest_report_teststatus: pytest's own implementations, or another plugin's too."""

    def __init__(self, *modules: str) -> None:
        self.impls = [_Impl(m) for m in modules]
        self.asked = 0

    def get_hookimpls(self) -> list[_Impl]:
        return list(self.impls)

    def __call__(self, report: Any, config: Any) -> tuple[str, str, str]:
        self.asked += 1
        return ("rerun", "R", "RERUN") if report.outcome == "failed" else ("custom", "c", "C")


def _report(when: str, outcome: str = "passed", nodeid: str = 't.py::t["é"]') -> Any:
    return SimpleNamespace(nodeid=nodeid, when=when, outcome=outcome)


@pytest.fixture
def channel(monkeypatch: pytest.MonkeyPatch) -> Any:
    read, write = os.pipe()
    hook = _StatusHook("_pytest.terminal", "_pytest.runner", "_pytest.skipping")
    config = SimpleNamespace(hook=SimpleNamespace(pytest_report_teststatus=hook))
    monkeypatch.setattr(plugin, "_channel", {"fd": write, "config": config})
    monkeypatch.setattr(plugin, "_pending", [])
    monkeypatch.setattr(plugin, "_status_impls", {})
    monkeypatch.setattr(plugin, "_subtest_failed", set())
    os.set_blocking(read, False)

    def lines() -> list[bytes]:
        try:
            return os.read(read, 1 << 16).splitlines(keepends=True)
        except BlockingIOError:
            return []

    yield SimpleNamespace(lines=lines, hook=hook)
    os.close(read)
    os.close(write)


def test_a_passing_test_is_one_write_at_its_teardown_in_json_dumps_form(channel: Any) -> None:
    plugin._send_test(_report("setup"))
    plugin._send_test(_report("call"))
    assert channel.lines() == []  # held until the test's teardown
    plugin._send_test(_report("teardown"))
    lines = channel.lines()
    expected = [
        {"kind": "test", "id": 't.py::t["é"]', "when": when, "outcome": "passed", "cat": cat}
        for when, cat in (("setup", ""), ("call", "passed"), ("teardown", ""))
    ]
    assert lines == [
        (json.dumps(r, separators=(",", ":")) + "\n").encode("utf-8") for r in expected
    ]
    assert channel.hook.asked == 0  # pytest's own hooks alone: their answer is known


def test_a_failure_is_written_at_once_with_what_waited(channel: Any) -> None:
    plugin._send_test(_report("setup"))
    plugin._send_test(_report("call", "failed"))
    assert [json.loads(line)["when"] for line in channel.lines()] == ["setup", "call"]


def test_another_plugins_status_hook_is_asked(channel: Any) -> None:
    channel.hook.impls.append(_Impl("pytest_rerunfailures"))
    plugin._send_test(_report("setup"))
    plugin._send_test(_report("call"))
    plugin._send_test(_report("teardown"))
    assert [json.loads(line)["cat"] for line in channel.lines()] == ["custom"] * 3
    assert channel.hook.asked == 3


def test_an_xfail_or_a_failed_subtests_parent_is_asked(channel: Any) -> None:
    xpassed = _report("call")
    xpassed.wasxfail = "reason"
    plugin._send_test(xpassed)
    plugin._subtest_failed.add("t.py::parent")
    plugin._send_test(_report("call", nodeid="t.py::parent"))
    assert channel.hook.asked == 2


def test_the_end_record_flushes_what_waited(channel: Any) -> None:
    plugin._send_test(_report("setup"))
    plugin._send({"kind": "end", "exitstatus": 0})
    assert [json.loads(line)["kind"] for line in channel.lines()] == ["test", "end"]
