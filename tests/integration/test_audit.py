"""The live-entropy audit: real pytest runs of a small production package that reads each live
source once, on host A, on the isolated host B and under Python 3.12's sys.monitoring."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from entropy_action.core import layout
from entropy_action.core.errors import GateError
from entropy_action.core.layout import HOST_JSON, JUNIT_XML
from entropy_action.evidence import hostreport
from entropy_action.hosts import hostjson, launch, testfiles
from entropy_action.testproc import protocol
from tests.integration.test_run_host_a import MODULE, make_repo, manifest_yaml, settings
from tests.integration.test_run_python import venv312  # noqa: F401 - a fixture
from tests.support.helpers import run_cli

SECRET = "eu-west-secret-value-7f3a"
FEES = """\
import datetime
import os
import random
import secrets
import socket
import tempfile
import time
import uuid


def quote():
    return datetime.datetime.now()


def every_source(tmp):
    time.time()
    time.time_ns()
    time.localtime()
    datetime.date.today()
    random.random()
    random.choice("abc")
    os.urandom(4)
    secrets.token_hex(4)
    uuid.uuid4()
    os.environ.get("BILLING_REGION")
    os.getenv("API_URL")
    tempfile.mkdtemp()
    tempfile.mkdtemp(dir=tmp)
    try:
        socket.getaddrinfo("192.0.2.17", 443)
    except OSError:
        pass
    socket.gethostname()
    random.Random(7).random()
    return datetime.datetime.now(datetime.timezone.utc), os.environ["PYTEST_CURRENT_TEST"]
"""
PROPERTY = """\
import os
import time

from billing import fees


def test_quote():
    time.time()
    os.environ.get("BILLING_REGION")
    assert fees.quote()


def test_every_source():
    outside = os.path.join(os.getcwd(), "scratch")  # not below the pinned temp_root
    os.makedirs(outside)
    fees.every_source(outside)


def test_home(monkeypatch):
    monkeypatch.setenv("BILLING_MODE", "strict")  # pytest reads it to restore it: not a read
    assert os.path.expanduser("~") == os.environ["HOME"]
    assert "test_home" in os.environ["PYTEST_CURRENT_TEST"]  # a test asking: not recorded
"""
F = "billing/fees.py"
EXPECTED = {
    ("datetime.now()", None, F, 12, "test_quote", 1),
    ("time.time()", None, F, 16, "test_every_source", 1),
    ("time.time_ns()", None, F, 17, "test_every_source", 1),
    ("time.localtime()", None, F, 18, "test_every_source", 1),
    ("date.today()", None, F, 19, "test_every_source", 1),
    ("random.random()", None, F, 20, "test_every_source", 1),
    ("random.choice()", None, F, 21, "test_every_source", 1),
    ("os.urandom()", None, F, 22, "test_every_source", 1),
    ("secrets.token_hex()", None, F, 23, "test_every_source", 1),
    ("uuid.uuid4()", None, F, 24, "test_every_source", 1),
    ("os.environ", "BILLING_REGION", F, 25, "test_every_source", 1),
    ("tempfile.mkdtemp()", None, F, 28, "test_every_source", 1),
    ("socket.getaddrinfo()", "192.0.2.17", F, 30, "test_every_source", 1),
    ("socket.gethostname()", None, F, 33, "test_every_source", 1),
    ("datetime.now()", None, F, 35, "test_every_source", 1),
    # pytest's own variable, read by code under test: recorded by name (test_detection)
    ("os.environ", "PYTEST_CURRENT_TEST", F, 35, "test_every_source", 1),
}


def _repo(tmp_path: Path) -> Path:
    return make_repo(
        tmp_path / "repo",
        {
            "entropy.yaml": manifest_yaml(tmp_path / "pinned-tmp", env={"API_URL": "x"}),
            "billing/__init__.py": "",
            "billing/fees.py": FEES,
            MODULE: PROPERTY,
        },
    )


def _records(data: dict[str, Any]) -> set[tuple[Any, ...]]:
    return {
        (r["api"], r["name"], r["path"], r["line"], r["test"].split("::")[-1], r["count"])
        for r in data["audit"]["records"]
    }


def _run(
    tmp_path: Path, name: str, environ: dict[str, str] | None = None, **options: Any
) -> dict[str, Any]:
    root = _repo(tmp_path / name)
    out = tmp_path / name / "out"
    environ = {**os.environ, **(environ or {}), "BILLING_REGION": SECRET}
    launch.run_host(settings(root, out, environ, **options))
    text = "".join((out / f).read_text() for f in (HOST_JSON, JUNIT_XML, layout.PYTEST_LOG))
    assert SECRET not in text  # a variable's value never leaves the test process
    data: dict[str, Any] = json.loads((out / HOST_JSON).read_text())
    assert data["returncode"] == 0, (out / layout.PYTEST_LOG).read_text()
    return data


def test_each_live_read_of_code_under_test_is_recorded_with_its_line(tmp_path: Path) -> None:
    data = _run(tmp_path, "a")
    # Not recorded: the test module's own reads, the pinned API_URL, the temp dir made inside
    # the pinned temp_root (line 27), a seeded Random of its own, uuid4's own os.urandom,
    # pytest reading its own PYTEST_CURRENT_TEST back after every phase (only code under
    # test's read of it at line 35 is).
    assert _records(data) == EXPECTED
    assert data["audit"]["mechanism"] == "wrappers + sys.addaudithook"
    assert data["audit"]["unseen"] == [  # what this interpreter's audit cannot see
        "a read through a reference taken before the audit loaded (a module imported before "
        "pytest's plugins)",
        "a read while freezegun's freeze_time is active (its fakes stand in for the functions)",
    ]
    assert data["audit"]["dropped"] == 0
    assert {r["test"] for r in data["audit"]["records"]} == {
        f"{MODULE}::test_quote",
        f"{MODULE}::test_every_source",
    }


def test_host_b_audits_its_own_copy_of_the_tree(tmp_path: Path) -> None:
    data = _run(tmp_path, "b", isolate=True)
    # host B scrubs the environment: BILLING_REGION is read but absent, and still recorded
    assert _records(data) == EXPECTED


def _line(text: str) -> int:
    return next(n for n, line in enumerate(PROPERTY.splitlines(), 1) if text in line)


TEST_READS = {
    ("time.time()", None, _line("    time.time()"), "test_quote"),
    ("os.environ", "BILLING_REGION", _line("BILLING_REGION"), "test_quote"),
    # through posixpath (stdlib frames only), and directly on the same line: one record
    ("os.environ", "HOME", _line("expanduser"), "test_home"),
}


def _test_reads(data: dict[str, Any]) -> dict[tuple[str, str | None, int, str], str | None]:
    return {
        (r["api"], r["name"], r["line"], r["test"].split("::")[-1]): r["seen"]
        for r in data["audit"]["test_records"]
    }


def test_the_tests_own_reads_are_recorded_apart_with_what_they_saw(tmp_path: Path) -> None:
    home = tmp_path / "alice"
    home.mkdir()
    a = _test_reads(_run(tmp_path, "a", environ={"HOME": str(home)}))
    b = _test_reads(_run(tmp_path, "b", isolate=True, environ={"HOME": str(home)}))
    expanduser = _line("expanduser")
    assert set(a) == set(b) == TEST_READS, "pytest's own read for monkeypatch is not the test's"
    # the secret's value never leaves the test process: only whether it was set
    assert a[("os.environ", "BILLING_REGION", _line("BILLING_REGION"), "test_quote")] == (
        "set (value not recorded)"
    )
    assert b[("os.environ", "BILLING_REGION", _line("BILLING_REGION"), "test_quote")] == "unset"
    assert a[("os.environ", "HOME", expanduser, "test_home")] == repr(str(home))
    assert b[("os.environ", "HOME", expanduser, "test_home")] != repr(str(home))
    clock = ("time.time()", None, _line("    time.time()"), "test_quote")
    year_a, year_b = int(str(a[clock])[:4]), int(str(b[clock])[:4])
    assert year_b - year_a in (5, 6), "host B's read saw its shifted clock"
    assert str(a[clock]).endswith("Z")


def test_python_312_audits_with_sys_monitoring(tmp_path: Path, venv312: Path) -> None:  # noqa: F811
    data = _run(tmp_path, "py312", python=str(venv312))
    assert data["audit"]["mechanism"] == "sys.monitoring + sys.addaudithook"
    assert data["audit"]["unseen"][:2] == [
        "a call made from C code (a callable passed to map() or sorted(key=), a C extension's "
        "callback)",
        "a call at a site whose first call was to something else (a callable held in a variable)",
    ]
    assert _records(data) == EXPECTED
    assert set(_test_reads(data)) == TEST_READS


COPIES = """\
import os


def copies():
    merged = {}
    merged.update(os.environ)  # python-dotenv's interpolation
    return dict(os.environ), {**os.environ}, os.environ.copy(), list(os.environ.items())


def looks():
    list(os.environ)  # a listing alone is no copy: the read after it is the look
    return os.environ["PYTEST_CURRENT_TEST"]
"""
COPYING = """\
from billing import env


def test_copies():
    assert env.copies()


def test_looks():
    assert env.looks()
"""


@pytest.mark.parametrize("interpreter", ["this", "3.12"])
def test_a_copy_of_the_environment_is_no_look_at_pytests_variables(
    tmp_path: Path, interpreter: str, request: pytest.FixtureRequest
) -> None:
    """environs 1df53870b6e4 calls python-dotenv, whose interpolation copies os.environ: every
    variable read, PYTEST_CURRENT_TEST among them, and the copy was `test_detection`."""
    python = str(request.getfixturevalue("venv312")) if interpreter == "3.12" else sys.executable
    root = make_repo(
        tmp_path / "repo",
        {
            "entropy.yaml": manifest_yaml(tmp_path / "pinned-tmp"),
            "billing/__init__.py": "",
            "billing/env.py": COPIES,
            MODULE: COPYING,
        },
    )
    out = tmp_path / "out"
    launch.run_host(settings(root, out, dict(os.environ), python=python))
    data = json.loads((out / HOST_JSON).read_text())
    assert data["returncode"] == 0, (out / layout.PYTEST_LOG).read_text()
    pytests = {
        (r["name"], r["line"], r["test"].split("::")[-1])
        for r in data["audit"]["records"]
        if str(r["name"]).startswith("PYTEST_")
    }
    assert pytests == {("PYTEST_CURRENT_TEST", 12, "test_looks")}
    copied = {r["name"] for r in data["audit"]["records"] if r["line"] == 7}
    assert "PATH" in copied, "the copy's other variables are still live reads"


def test_without_the_audit_host_json_says_it_did_not_run(tmp_path: Path) -> None:
    data = _run(tmp_path, "off", audit=False)
    assert data["audit"] is None
    assert "entropy_gate_audit" not in data["pytest_args"]
    assert protocol.AUDIT_MODULE not in testfiles.plugin_modules(audit=False, count=True)


def _host_json_with(tmp_path: Path, audit: object) -> Path:
    data = _run(tmp_path, "hostile")
    data["audit"] = audit
    folder = tmp_path / "hostile" / "out"
    (folder / HOST_JSON).write_text(json.dumps(data))
    return folder / HOST_JSON


RECORD = {"api": "time.time()", "name": None, "path": F, "line": 3, "test": "t", "count": 1}


@pytest.mark.parametrize(
    ("record", "field"),
    [
        ({**RECORD, "path": "/etc/passwd"}, "audit.records.0.path"),
        ({**RECORD, "path": "billing/../../x.py"}, "audit.records.0.path"),
        ({**RECORD, "name": "A\x1b[2J"}, "audit.records.0.name"),
        ({**RECORD, "api": "rm -rf /"}, "audit.records.0.api"),
        ({**RECORD, "count": 0}, "audit.records.0.count"),
        ({**RECORD, "line": -1}, "audit.records.0.line"),
        ({**RECORD, "value": SECRET}, "audit.records.0.value"),
    ],
)
def test_an_audit_record_in_host_json_is_untrusted_and_validated(
    tmp_path: Path, record: dict[str, Any], field: str
) -> None:
    path = _host_json_with(tmp_path, {"mechanism": "m", "records": [record], "dropped": 0})
    with pytest.raises(GateError) as caught:
        hostreport.read_info(path)
    assert caught.value.message.startswith(f"{path}: ")
    assert repr(field) in caught.value.message
    assert SECRET not in caught.value.message


def test_more_audit_records_than_the_cap_are_refused(tmp_path: Path) -> None:
    path = _host_json_with(tmp_path, {"mechanism": "m", "records": [RECORD] * 1001})
    with pytest.raises(GateError, match=r"field 'audit\.records'"):
        hostreport.read_info(path)


def test_an_audit_report_the_test_process_spoiled_becomes_a_note(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    out = tmp_path / "out"
    info = launch.run_host(settings(root, out))
    spoiled = tmp_path / "audit.json"
    spoiled.write_text(json.dumps({"mechanism": "m", "records": [{**RECORD, "count": -5}]}))
    bare = info.model_copy(update={"audit": None})
    again = hostjson.with_audit(bare, settings(root, out), spoiled)
    assert again.audit is None
    assert again.notes[-1] == (
        "live-entropy audit: report refused "
        "(field 'records.0.count': Input should be greater than or equal to 1)"
    )
    missing = hostjson.with_audit(bare, settings(root, out), tmp_path / "none.json")
    assert missing.notes[-1] == "live-entropy audit: the test process wrote no usable report"


def _import_audit(tmp_path: Path, config: dict[str, Any] | None, script: str) -> None:
    folder = tmp_path / "plugin"
    folder.mkdir()
    for source, module in (
        ("audit.py", protocol.AUDIT_MODULE),
        ("wrappers.py", protocol.WRAPPERS_MODULE),
        ("protocol.py", protocol.PROTOCOL_MODULE),
    ):
        (folder / f"{module}.py").write_bytes((testfiles.TESTPROC / source).read_bytes())
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(folder)}
    if config is not None:
        (tmp_path / "config.json").write_text(json.dumps(config))
        env[protocol.AUDIT_ENV] = str(tmp_path / "config.json")
    proc = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


def test_the_audit_does_nothing_without_the_runners_variable(tmp_path: Path) -> None:
    script = (
        "import datetime, os, time\n"
        "before = (time.time, type(os.environ), datetime.datetime.__dict__['now'])\n"
        "import entropy_gate_audit as audit\n"
        "assert (time.time, type(os.environ), datetime.datetime.__dict__['now']) == before\n"
        "assert audit._auditor is None\n"
        "audit.pytest_runtest_logstart('t'); audit.pytest_sessionfinish()\n"
    )
    _import_audit(tmp_path, None, script)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plugin"]


def test_the_wrapped_sources_behave_as_before(tmp_path: Path) -> None:
    script = (
        "import datetime, inspect, os, pickle, random, time\n"
        "import entropy_gate_audit as audit\n"
        "assert audit._auditor is not None and 'ENTROPY_GATE_AUDIT' not in os.environ\n"
        "assert pickle.loads(pickle.dumps(time.time)) is time.time\n"
        "assert time.time.__name__ == 'time' and inspect.unwrap(time.time) is not time.time\n"
        "assert type(datetime.datetime.now()) is datetime.datetime\n"
        "class Sub(datetime.datetime): pass\n"
        "assert type(Sub.now(datetime.timezone.utc)) is Sub\n"
        "assert type(datetime.datetime.today()) is datetime.datetime\n"
        "assert type(datetime.date.today()) is datetime.date\n"
        "random.seed(5); first = random.random(); random.seed(5); assert random.random() == first\n"
        "os.environ['X_SET'] = '1'; assert os.environ['X_SET'] == os.getenv('X_SET') == '1'\n"
        "assert dict(os.environ)['X_SET'] == '1' and 'X_SET' in os.environ\n"
    )
    _import_audit(tmp_path, {"root": str(tmp_path), "out": str(tmp_path / "a.json")}, script)


def test_time_machines_c_extension_imported_after_the_audit_gets_the_builtins(
    tmp_path: Path,
) -> None:
    # _time_machine casts what it finds at import to builtin functions and rewrites their C
    # function pointers on every travel: handed the audit's wrappers, it wrote into them and
    # the next call died with SIGSEGV (3.10-3.11).
    script = (
        "import datetime, inspect, sys, time\n"
        "import entropy_gate_audit as audit\n"
        "wrapped = time.time, datetime.datetime.__dict__['now']\n"
        "assert inspect.unwrap(time.time) is not time.time or sys.version_info >= (3, 12)\n"
        "import time_machine\n"
        "with time_machine.travel(200, tick=False):\n"
        "    assert time.time() == 200 and time.time_ns() == 200 * 10**9\n"
        "    assert datetime.datetime.now(datetime.timezone.utc).timestamp() == 200\n"
        "    assert datetime.date.today() == datetime.date(1970, 1, 1)\n"
        "assert time.time() > 1e9\n"
        "assert (time.time, datetime.datetime.__dict__['now']) == wrapped\n"
        "assert type(sys.modules['_time_machine'].__loader__).__name__ != '_AsideLoader'\n"
    )
    config = {"root": str(tmp_path), "out": str(tmp_path / "a.json"), "pinned_env": ["TZ"]}
    _import_audit(tmp_path, config, script)


TRAVEL_LIB = """\
import datetime
import time


def stamp():
    return time.time()


def now():
    return datetime.datetime.now(datetime.timezone.utc)
"""
TRAVEL_PROPERTY = """\
import datetime
import time

import time_machine

from clock import lib

UTC = datetime.timezone.utc


def test_four_lines():
    with time_machine.travel(200, tick=False):
        assert time.time() == 200


def test_context_manager_reaches_the_code_under_test():
    with time_machine.travel(200, tick=False):
        assert lib.stamp() == 200


@time_machine.travel(datetime.datetime(2030, 1, 1, tzinfo=UTC), tick=False)
def test_decorator():
    assert lib.now().year == 2030


def test_shift_and_move_to():
    with time_machine.travel(1000, tick=False) as traveller:
        traveller.shift(60)
        assert lib.stamp() == 1060
        traveller.move_to(5000)
        assert time.time() == 5000
        assert datetime.date.today() == datetime.date(1970, 1, 1)


def test_ticking():
    with time_machine.travel(datetime.datetime(2001, 1, 1, tzinfo=UTC)):
        assert lib.now().year == 2001


def test_fixture(time_machine):
    time_machine.move_to(datetime.datetime(2031, 6, 1, tzinfo=UTC), tick=False)
    assert lib.now().year == 2031
"""
TRAVEL_EXPECTED = {
    ("time.time()", None, "clock/lib.py", 6, "test_context_manager_reaches_the_code_under_test", 1),
    ("datetime.now()", None, "clock/lib.py", 10, "test_decorator", 1),
    ("time.time()", None, "clock/lib.py", 6, "test_shift_and_move_to", 1),
    ("datetime.now()", None, "clock/lib.py", 10, "test_ticking", 1),
    ("datetime.now()", None, "clock/lib.py", 10, "test_fixture", 1),
}


@pytest.mark.parametrize("where", ["host-a", "host-b", "base-run"])
def test_time_machine_travels_under_the_audit_and_its_reads_are_recorded(
    tmp_path: Path, where: str
) -> None:
    # host B imports time-machine before the audit loads; a base run's worktree has the
    # plugin's own meta path finder (the head checkout's code stays out) beside the audit's
    root = make_repo(
        tmp_path / "repo",
        {
            "entropy.yaml": manifest_yaml(tmp_path / "pinned-tmp"),
            "clock/__init__.py": "",
            "clock/lib.py": TRAVEL_LIB,
            MODULE: TRAVEL_PROPERTY,
        },
    )
    out = tmp_path / "out"
    if where == "base-run":
        done = run_cli(root, "run", "--host", "a", "--out", str(out), "--base-ref", "HEAD")
        assert done.returncode == 0, done.stdout + done.stderr
        out = out / "base"
    else:
        launch.run_host(settings(root, out, isolate=where == "host-b"))
    data = json.loads((out / HOST_JSON).read_text())
    assert data["returncode"] == 0, (out / layout.PYTEST_LOG).read_text()
    assert _records(data) == TRAVEL_EXPECTED
