"""The audit's look at the stack and at a conftest's marker on sys (issue 35): production
code that looks among its callers' frames for a test, or reads a marker the test side set on
sys, is recorded at its line, under every supported Python (3.10-3.13 all pass
`sys._getframe`'s audit event the frame; `sys._current_frames` passes none and is placed by
the hook's own caller); honest reads of the stack (logging's findCaller, warnings' stacklevel,
a helper taking its caller's name) are not. The audit runs in a real interpreter of each
version, standard library only, as it does copied into the test process."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support import compat

ROOT = Path(__file__).resolve().parent.parent.parent
UNIT = """\
import inspect
import logging
import sys
import traceback
import warnings

TEST_PREFIX = "test_"
log = logging.getLogger("app")


def by_stack():
    return any(f.function.startswith("test_") for f in inspect.stack())


def by_frame():
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name.startswith(TEST_PREFIX):
            return True
        frame = frame.f_back
    return False


def _callers():
    return [info.function for info in inspect.stack()]


def by_helper():
    return "pytest" in " ".join(_callers())


def by_walk():
    return any("pytest" in f.f_code.co_filename for f, _ in traceback.walk_stack(None))


def by_threads():
    return any("_pytest" in f.f_code.co_filename for f in sys._current_frames().values())


def logged():
    log.warning("totalling %d lines", 3)


def warned():
    warnings.warn("total_for(lines) is deprecated", DeprecationWarning, stacklevel=2)


def caller_name():
    return sys._getframe(1).f_code.co_name


def by_marker():
    return getattr(sys, "_called" + "_from_test", False) and hasattr(sys, "_called_from_test")


def registered():
    return {"name": caller_name(), "depth": len(inspect.stack()), "here": inspect.currentframe()}
"""
SCRIPT = """\
import json, sys, warnings
sys.path[:0] = [{root!r}, {repo!r}]
from entropy_action.testproc import audit
auditor = audit.Auditor({{"root": {repo!r}, "out": "unused", "modules": ["tests/test_x.py"]}})
sys.addaudithook(auditor.audit_event)
from app import unit
warnings.simplefilter("ignore")
sys._called_from_test = True  # a conftest's pytest_configure, after the audit loaded
auditor.move_markers()
assert sys._called_from_test is True  # test code reads it as before: not recorded
unit.by_stack()  # no test running: nothing recorded
auditor.test = "tests/test_x.py::test_total"
for name in ("by_stack", "by_frame", "by_helper", "by_walk", "by_threads",
             "logged", "warned", "registered", "by_marker"):
    getattr(unit, name)()
sys._gate_test_flag = 1  # another marker, after the move: a plain attribute
auditor.test = None
del sys._gate_test_flag, sys._called_from_test  # a session fixture's teardown, while moved
assert not hasattr(sys, "_called_from_test") and type(sys).__name__ == "WatchedSys"
sys._called_from_test = "again"  # set again before the session's end: kept as set
auditor.restore_markers()
assert type(sys) is type(json) and sys._called_from_test == "again"
del sys._called_from_test  # the conftest's pytest_unconfigure
print(json.dumps(auditor.report()["records"]))
"""


def _line(text: str) -> int:
    return next(n for n, row in enumerate(UNIT.splitlines(), 1) if text in row)


EXPECTED = {
    ("sys._getframe()", "test_", _line("for f in inspect.stack())")),
    ("sys._getframe()", "test_", _line("frame = sys._getframe(1)")),
    ("sys._getframe()", "pytest", _line('return "pytest" in')),
    ("sys._getframe()", "pytest", _line("traceback.walk_stack(None)")),
    ("sys._current_frames()", "_pytest", _line("sys._current_frames()")),
    # a marker the test side set on sys, read twice at one line: one record, counted twice
    ("sys", "_called_from_test", _line('getattr(sys, "_called"')),
}


@pytest.mark.parametrize("version", ["3.10", "3.11", "3.12", "3.13"])
def test_a_look_at_the_stack_for_a_test_is_recorded_and_an_honest_one_is_not(
    tmp_path: Path, version: str
) -> None:
    found = {i.version: i for i in compat.interpreters().have}
    if version not in found:
        pytest.skip(f"no Python {version} here")
    repo = tmp_path / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "app" / "__init__.py").write_text("")
    (repo / "app" / "unit.py").write_text(UNIT)
    script = SCRIPT.format(root=str(ROOT), repo=str(repo))
    done = subprocess.run(
        [str(found[version].path), "-I", "-c", script],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = json.loads(done.stdout)
    assert {(r["api"], r["name"], r["line"]) for r in records} == EXPECTED
    assert {(r["path"], r["test"]) for r in records} == {
        ("app/unit.py", "tests/test_x.py::test_total")
    }
    assert {r["api"]: r["count"] for r in records}["sys"] == 2  # getattr, then hasattr
    assert {r["count"] for r in records if r["api"] != "sys"} == {1}
