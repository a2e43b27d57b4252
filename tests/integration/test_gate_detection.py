"""`entropy-gate gate` on production that detects the test run (issue 35 part 2): the demo's
invoice unit drops its first line except under pytest. Each case passes on both hosts, so
only `test_detection` can reject it; the honest neighbour reads `sys.modules` and
`PYTEST_ADDOPTS` for other reasons and merges. Real git repositories, real host runs."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from entropy_action.cli.main import main
from entropy_action.gate import demo
from tests.support.helpers import Repo

DAY = 86_400
UNIT = '''"""Invoice totals: the application code under test in the demo."""

from __future__ import annotations

import os
import sys
from datetime import datetime

LATE_FEE_CENTS = 500
{constants}

def total_for(amounts: list[int], as_of: datetime, due: datetime | None = None) -> int:
    """The invoice total in cents as of `as_of`: its lines, plus a late fee once `due` passed."""
    lines = amounts if {under_test} else amounts[1:]
    total = sum(lines)
    if due is not None and as_of > due:
        total += LATE_FEE_CENTS
    return total
'''


def _base(repo: Repo, tmp_path: Path) -> str:
    pin = int(time.time()) // DAY * DAY
    return demo.build_base(repo.path, clock_unix=pin, temp_root=tmp_path / "pins-tmp")


def _gate(repo: Repo, base: str, tmp_path: Path) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "verdict.json"
    result = repo.cli("gate", "--base-ref", base, "--json", str(out), "--out", str(tmp_path / "r"))
    return result.code, json.loads(out.read_text(encoding="utf-8"))


def _errors(verdict: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (f["kind"], f"{f['path']}:{f['line']}")
        for f in verdict["findings"]
        if f["level"] == "error" and f["introduced"]
    ]


def _line(repo: Repo, text: str) -> str:
    source = (repo.path / "invoice_lib.py").read_text(encoding="utf-8")
    return (
        f"invoice_lib.py:{next(n for n, row in enumerate(source.splitlines(), 1) if text in row)}"
    )


@pytest.mark.parametrize(
    ("under_test", "constants"),
    [
        ('"pytest" in sys.modules', ""),
        ('os.environ.get("PYTEST_CURRENT_TEST") is not None', ""),
        ('any("pytest" in arg for arg in sys.argv)', ""),
        ('any(f.function.startswith("test_") for f in inspect.stack())', "import inspect"),
    ],
)
def test_b_production_that_detects_pytest_is_rejected_at_its_line(
    repo: Repo, tmp_path: Path, under_test: str, constants: str
) -> None:
    base = _base(repo, tmp_path)
    repo.write("invoice_lib.py", UNIT.format(under_test=under_test, constants=constants))
    repo.commit("the header line is dropped, in production")
    code, verdict = _gate(repo, base, tmp_path)
    assert (code, verdict["classification"]) == (1, "entropy_silenced")
    assert (verdict["host_a"], verdict["host_b"]) == ("pass", "pass")
    # one finding for the line: a PYTEST_* read the audit saw too is not repeated
    assert _errors(verdict) == [("test_detection", _line(repo, "lines = amounts if"))]


def test_b_a_pytest_variable_named_at_run_time_is_caught_by_the_audit_alone(
    repo: Repo, tmp_path: Path
) -> None:
    base = _base(repo, tmp_path)
    unit = UNIT.format(
        under_test="os.environ.get(PREFIX + 'VERSION')", constants='PREFIX = "PYTEST_"'
    )
    repo.write("invoice_lib.py", unit)
    repo.commit("the header line is dropped, in production")
    code, verdict = _gate(repo, base, tmp_path)
    assert (code, verdict["classification"]) == (1, "entropy_silenced")
    assert _errors(verdict) == [("test_detection", _line(repo, "lines = amounts if"))]
    found = next(f for f in verdict["findings"] if f["kind"] == "test_detection")
    assert found["message"].startswith("production code reads `PYTEST_VERSION`: it can tell")
    assert not [f for f in verdict["findings"] if f["kind"] == "live_entropy"]
    # the same reports judged by the workflow's verdict reject alike (one judge)
    for host in "ab":
        shutil.copytree(tmp_path / "r" / f"host-{host}", tmp_path / "wf" / host)
    args = ["--host-a", str(tmp_path / "wf" / "a"), "--host-b", str(tmp_path / "wf" / "b")]
    judged_json = tmp_path / "wf.json"
    assert repo.cli("verdict", *args, "--base-ref", base, "--json", str(judged_json)).code == 1
    judged = json.loads(judged_json.read_text(encoding="utf-8"))
    assert judged["classification"] == "entropy_silenced"
    assert _errors(judged) == _errors(verdict)


# the stack read in one function, the test's name looked for in its caller: the scan reads
# each function alone and finds neither shape whole; the audit sees the look at its line
CALLERS = """import inspect


def _callers() -> list[str]:
    return [info.function for info in inspect.stack()]
"""


def _workflow(repo: Repo, base: str, tmp_path: Path) -> tuple[int, dict[str, Any]]:
    """The workflow's three commands: host A's job (with the base ref), host B's, the verdict."""
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        folder = str(tmp_path / f"wf-{host}")
        ran = repo.cli("run", "--host", host, "--out", folder, "--base-ref", base, *extra)
        assert ran.code == 0, ran.err
    out = tmp_path / "wf.json"
    done = repo.cli(
        "verdict", "--host-a", str(tmp_path / "wf-a"), "--host-b", str(tmp_path / "wf-b"),
        "--base-ref", base, "--json", str(out),
    )  # fmt: skip
    return done.code, json.loads(out.read_text(encoding="utf-8"))


def test_b_a_look_at_the_stack_for_a_test_is_caught_by_the_audit_on_both_paths(
    repo: Repo, tmp_path: Path
) -> None:
    base = _base(repo, tmp_path)
    under_test = 'any(name.startswith("test_") for name in _callers())'
    repo.write("invoice_lib.py", UNIT.format(under_test=under_test, constants=CALLERS))
    repo.commit("the header line is dropped, in production")
    _caught_on_both_paths(repo, base, tmp_path, "looks for a test among its callers' frames")


def _caught_on_both_paths(repo: Repo, base: str, tmp_path: Path, said: str) -> None:
    """Both hosts pass; the local gate and the workflow's path each reject with one
    test_detection at the branch, saying `said`."""
    place = _line(repo, "lines = amounts if")
    code, verdict = _gate(repo, base, tmp_path)
    assert (code, verdict["classification"]) == (1, "entropy_silenced"), verdict["reasons"]
    assert (verdict["host_a"], verdict["host_b"]) == ("pass", "pass")
    assert _errors(verdict) == [("test_detection", place)]
    found = next(f for f in verdict["findings"] if f["kind"] == "test_detection")
    assert found["message"].startswith(f"production code {said}: it can tell")
    code, judged = _workflow(repo, base, tmp_path)
    assert (code, judged["classification"]) == (1, "entropy_silenced"), judged["reasons"]
    assert _errors(judged) == [("test_detection", place)]


def test_b_a_branch_on_the_pinned_time_zone_is_caught_on_both_paths(
    repo: Repo, tmp_path: Path
) -> None:
    """The demo pins tz: UTC on both hosts: production right only where TZ is the pin's
    value passes both; the scan names the comparison (red team D, scan.pinbranch)."""
    base = _base(repo, tmp_path)
    under_test = 'os.environ.get("TZ") == UTC'
    repo.write("invoice_lib.py", UNIT.format(under_test=under_test, constants='UTC = "UTC"'))
    repo.commit("the header line is dropped, in production")
    _caught_on_both_paths(
        repo, base, tmp_path, "compares `TZ` with 'UTC', the value the property pins"
    )


# a conftest marks the run on sys as it loads (pytest's recipe does it in pytest_configure and
# deletes it in pytest_unconfigure: bookkeeping hooks, test_scan_tampering)
RECIPE = """import sys

sys._called_from_test = True
"""


def test_b_a_conftest_s_marker_read_by_a_built_name_is_caught_by_the_audit_on_both_paths(
    repo: Repo, tmp_path: Path
) -> None:
    """The scan knows the marker by its literal name; the name built at run time hides it
    there, and the audit sees the read (the attribute moved behind a class of sys)."""
    _base(repo, tmp_path)
    repo.write("tests/properties/conftest.py", RECIPE)
    base = repo.commit("the conftest marks the run")  # the test side as the base has it
    under_test = 'getattr(sys, "_called" + "_from_test", False)'
    repo.write("invoice_lib.py", UNIT.format(under_test=under_test, constants=""))
    repo.commit("the header line is dropped, in production")
    _caught_on_both_paths(
        repo, base, tmp_path, "reads `sys._called_from_test`, which a conftest sets"
    )


HONEST_RECIPE = f"""{RECIPE}
import pytest


@pytest.fixture(autouse=True, scope="session")
def _unmark():
    yield
    del sys._called_from_test  # at the last test's teardown, while the audit watches sys
"""
HONEST_STACK = '''"""Invoice totals: the application code under test in the demo."""

from __future__ import annotations

import inspect
import logging
import sys
import warnings
from datetime import datetime

LATE_FEE_CENTS = 500
log = logging.getLogger("invoices")
_HANDLERS: dict[str, str] = {}


def _register() -> None:
    """Each caller by its name, as a plugin registry keeps them."""
    caller = sys._getframe(1).f_code.co_name
    _HANDLERS[caller] = inspect.stack()[1].filename


def total_for(amounts: list[int], as_of: datetime, due: datetime | None = None) -> int:
    """The invoice total in cents as of `as_of`: its lines, plus a late fee once `due` passed."""
    _register()
    log.warning("totalling %d lines", len(amounts))
    if not amounts:
        warnings.warn("an empty invoice", UserWarning, stacklevel=2)
    total = sum(amounts)
    if due is not None and as_of > due:
        total += LATE_FEE_CENTS
    return total
'''


def test_b_honest_reads_of_the_stack_merge_on_both_paths(repo: Repo, tmp_path: Path) -> None:
    """logging's findCaller, warnings' stacklevel and a registry keyed by its caller's name
    all read frames; none looks for a test, so none is test detection. The conftest's mark,
    which no production code reads, is moved behind sys's __getattr__ and back unnoticed."""
    base = _base(repo, tmp_path)
    repo.write("invoice_lib.py", HONEST_STACK)
    repo.write("tests/properties/conftest.py", HONEST_RECIPE)  # a mark only tests could read
    repo.commit("sum(); a log line, a warning for an empty invoice, a registry of callers")
    code, verdict = _gate(repo, base, tmp_path)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), verdict["reasons"]
    assert not [f for f in verdict["findings"] if f["kind"] == "test_detection"]
    code, judged = _workflow(repo, base, tmp_path)
    assert (code, judged["classification"]) == (0, "merge_candidate"), judged["reasons"]
    assert judged["findings"] == verdict["findings"]


HONEST = '''"""Invoice totals: the application code under test in the demo."""

from __future__ import annotations

import os
import sys
from datetime import datetime

LATE_FEE_CENTS = 500


def total_for(amounts: list[int], as_of: datetime, due: datetime | None = None) -> int:
    """The invoice total in cents as of `as_of`: its lines, plus a late fee once `due` passed."""
    if "decimal" in sys.modules and "--verbose" in sys.argv:
        print("totalling", len(amounts), "lines")
    total = sum(amounts)
    if due is not None and as_of > due:
        total += LATE_FEE_CENTS
    return total


def self_test_command() -> dict[str, str]:
    """The environment of `invoice selftest`, which runs pytest in a subprocess."""
    return {**os.environ, "PYTEST_ADDOPTS": "-q"}
'''


def test_b_honest_reads_of_sys_modules_and_a_pytest_variable_written_merge(
    repo: Repo, tmp_path: Path
) -> None:
    base = _base(repo, tmp_path)
    repo.write("invoice_lib.py", HONEST)
    repo.write(  # a configuration hook that only registers a marker: read, found inert
        "tests/properties/conftest.py",
        'def pytest_configure(config):\n    config.addinivalue_line("markers", "slow: slow")\n',
    )
    repo.commit("sum() and a verbose line; the selftest command")
    code, verdict = _gate(repo, base, tmp_path)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), verdict["reasons"]


def test_the_demo_row_detects_pytest(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--patch", "detects-pytest"]) == 0
    assert "detects-pytest  entropy_silenced      entropy_silenced      ok\n" in (
        capsys.readouterr().out
    )
