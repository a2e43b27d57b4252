"""time-machine comes with the gate (host B's clock shift), and its own pytest plugin loads
in every pytest run of the environment it is installed in: what it does at start-up must not
change the project's run.

Found replaying python-dateutil's history (2022 commits, Python 3.12): time-machine's plugin
imports dateutil.parser when pytest starts, dateutil 2.8 warns at import on Python 3.12
(`utcfromtimestamp`), and dateutil's own `filterwarnings = error` stopped pytest before any
test: `init` could not draft and the gate said `invalid`, where plain pytest without
time-machine passes. And on host B, time-machine was imported with dateutil held back (its
parser caches the year it imports in), so a test travelling to a date string only dateutil
parses failed on host B alone: a false `env_coupled`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.helpers import Repo

MANIFEST = """\
version: 1
property_id: travel
module: tests/test_travel.py
pins:
  clock_unix: 1700000000
  rng_seed: 1
  tz: UTC
run:
  pytest_args: ["-p", "no:cacheprovider"]
"""

# a stand-in for an old dateutil in the checkout, first on sys.path: it warns at import as
# dateutil 2.8 does on Python 3.12, and parses one date string
WARNING_DATEUTIL = """\
import datetime
import warnings

warnings.warn("utcfromtimestamp() is deprecated", DeprecationWarning, stacklevel=2)


def parse(text, *args, **kwargs):
    assert text == "5 Jan 2020 noon", text
    return datetime.datetime(2020, 1, 5, 12, 0)
"""

PLAIN = """\
def test_sum():
    assert sum([1, 2, 3]) == 6
"""

TRAVEL = """\
import datetime

import time_machine


def test_sum():
    assert sum([1, 2, 3]) == 6


def test_travel_to_a_date_string_only_dateutil_parses():
    with time_machine.travel("5 Jan 2020 noon", tick=False):
        assert datetime.datetime.now().year == 2020
"""


def _gate(
    repo: Repo, tmp_path: Path, module: str, *, warns: bool = True
) -> tuple[int, dict[str, Any]]:
    repo.monkeypatch.setenv("PYTHONWARNINGS", "default::ResourceWarning")
    repo.write("entropy.yaml", MANIFEST)
    repo.write("pytest.ini", "[pytest]\nfilterwarnings =\n    error\n")
    repo.write("dateutil/__init__.py", "")
    quiet = WARNING_DATEUTIL.replace("warnings.warn(", "# warnings.warn(")
    repo.write("dateutil/parser.py", WARNING_DATEUTIL if warns else quiet)
    repo.write("tests/test_travel.py", module)
    # a suite that shows ResourceWarning to the end of the process, as python-dateutil's does
    repo.write(
        "conftest.py", "import warnings\n\nwarnings.simplefilter('default', ResourceWarning)\n"
    )
    base = repo.commit("base")
    repo.write("README.md", "docs\n")
    repo.commit("docs")
    out = tmp_path / "verdict.json"
    result = repo.cli("gate", "--base-ref", base, "--json", str(out), "--out", str(tmp_path / "o"))
    assert "internal error" not in result.err, result.err
    # the gate's crash log is closed at exit, not left to the collector: a process that shows
    # ResourceWarning (PYTHONWARNINGS passes to host A; python-dateutil's suite shows it)
    # would say 'unclosed file …/faulthandler.log' in the project's pytest log
    log = (tmp_path / "o" / "host-a" / "pytest.log").read_text(encoding="utf-8")
    assert "faulthandler.log" not in log, log
    return result.code, json.loads(out.read_text(encoding="utf-8"))


def test_time_machines_plugin_does_not_import_the_projects_dateutil_at_start_up(
    repo: Repo, tmp_path: Path
) -> None:
    code, verdict = _gate(repo, tmp_path, PLAIN)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), verdict["reasons"]
    tests = [(t["id"], t["host_a"], t["host_b"]) for t in verdict["tests"]]
    assert tests == [("tests/test_travel.py::test_sum", "passed", "passed")]


def test_a_date_string_only_dateutil_parses_travels_on_both_hosts(
    repo: Repo, tmp_path: Path
) -> None:
    code, verdict = _gate(repo, tmp_path, TRAVEL, warns=False)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), verdict["reasons"]
    tests = {(t["id"].split("::")[1], t["host_a"], t["host_b"]) for t in verdict["tests"]}
    assert tests == {
        ("test_sum", "passed", "passed"),
        ("test_travel_to_a_date_string_only_dateutil_parses", "passed", "passed"),
    }
