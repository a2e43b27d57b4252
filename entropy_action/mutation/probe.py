"""Inside the test process of a mutation run: each test's outcome, and (when asked) which
functions of the watched production files each test called. Standard library only.

Loaded with `-p entropy_gate_probe` from a private directory; configured by the JSON file
named in ENTROPY_GATE_PROBE: {"report": PATH, "root": DIR, "watch": [FILE, ...]}. An empty
`watch` records outcomes only. Function calls are seen through `sys.monitoring` (PY_START,
Python >= 3.12, other code disabled after its first event) or, before 3.12, a `sys.settrace`
function that answers call events only and never traces lines — both far cheaper than line
coverage. The report is data for the gate, which reads it with limits.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any

CONFIG_ENV = "ENTROPY_GATE_PROBE"
RANK = {"passed": 0, "skipped": 1, "error": 2, "failed": 3}
TOOL_ID = 4  # sys.monitoring's tool ids 0-5; 4 is unassigned by the standard library

_config: dict[str, Any] = {}
_watch: dict[str, str] = {}  # absolute file -> repository-relative path
_current = [""]  # the running test's node id ("" while collecting)
_reached: dict[str, set[tuple[str, int]]] = {}
_outcomes: dict[str, str] = {}


def _seen(filename: str, line: int) -> None:
    relative = _watch.get(filename)
    if relative is not None:
        _reached.setdefault(_current[0], set()).add((relative, line))


def _tracer(frame: Any, event: str, arg: Any) -> None:
    if event == "call":
        code = frame.f_code
        _seen(code.co_filename, code.co_firstlineno)


def _start_tracing() -> None:
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:
        try:
            monitoring.use_tool_id(TOOL_ID, "entropy-gate-probe")
        except ValueError:
            monitoring = None
    if monitoring is not None:
        disable = monitoring.DISABLE

        def started(code: Any, offset: int) -> Any:
            if code.co_filename not in _watch:
                return disable
            _seen(code.co_filename, code.co_firstlineno)
            return None

        monitoring.register_callback(TOOL_ID, monitoring.events.PY_START, started)
        monitoring.set_events(TOOL_ID, monitoring.events.PY_START)
        return
    sys.settrace(_tracer)
    threading.settrace(_tracer)


def pytest_configure(config: Any) -> None:
    path = os.environ.get(CONFIG_ENV)
    if not path:
        return
    with open(path, encoding="utf-8") as handle:
        _config.update(json.load(handle))
    root = _config.get("root", "")
    for relative in _config.get("watch", []):
        _watch[os.path.realpath(os.path.join(root, relative))] = relative
        _watch[os.path.join(root, relative)] = relative
    if _watch:
        _start_tracing()


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    _current[0] = nodeid


def pytest_runtest_logreport(report: Any) -> None:
    outcome = report.outcome
    if report.when != "call" and outcome == "failed":
        outcome = "error"
    elif report.when != "call" and outcome == "passed":
        return
    known = _outcomes.get(report.nodeid)
    if known is None or RANK.get(outcome, 3) > RANK.get(known, 3):
        _outcomes[report.nodeid] = outcome


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    _current[0] = ""


def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    report = _config.get("report")
    if not report:
        return
    reached = {test: sorted(found) for test, found in _reached.items()}
    with open(report, "w", encoding="utf-8") as handle:
        json.dump({"outcomes": _outcomes, "reached": reached}, handle)
