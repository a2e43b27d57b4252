"""Evidence the tests cannot rewrite afterwards: the gate's channel and the PID namespace.

Real host runs (runner.run_host) in tmp dirs, then the report read back through
reports.read_host as every path reads it.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

import pytest

from entropy_action.core import layout
from entropy_action.core.errors import GateError
from entropy_action.core.layout import HOST_JSON, JUNIT_XML
from entropy_action.evidence import hostreport, ids, terminal
from entropy_action.hosts import channel, isolate, launch
from tests.integration.test_faults import cli
from tests.integration.test_run_host_a import MODULE, make_repo, manifest_yaml, settings

PROPERTY = """\
def test_ok():
    assert 1 + 1 == 2


def test_fails():
    assert 1 + 1 == 3


def test_also_ok():
    pass
"""

# (a) a session-finish hook that turns the failed test into a passed one, and pytest's exit
# status into 0, after pytest's junitxml wrote its report
REWRITES_AT_SESSION_END = """\
import re, sys

import pytest


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    session.exitstatus = 0


def pytest_unconfigure(config):
    path = config.option.xmlpath
    with open(path) as handle:
        text = handle.read()
    text = re.sub(r"<failure[^>]*>.*?</failure>", "", text, flags=re.S)
    text = text.replace('failures="1"', 'failures="0"')
    with open(path, "w") as handle:
        handle.write(text)
"""

# (b) a child with an empty environment in a new session that rewrites the report folder
# after pytest exited
LEFT_OVER_REWRITER = """\
import os, subprocess, sys

SCRIPT = '''
import os, sys, time
while os.path.exists("/proc/" + sys.argv[3]):  # until pytest has exited
    time.sleep(0.05)
time.sleep(0.5)
out = sys.argv[1]
open(out + "/junit.xml", "w").write("<testsuites><testsuite name='pytest' tests='1'>"
    "<testcase classname='tests.properties.test_prop' name='test_forged'/></testsuite>"
    "</testsuites>")
open(out + "/host.json", "w").write("{{}}")
open(sys.argv[2], "w").write("rewritten")
'''


def test_starts_a_rewriter():
    out = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--junitxml="))
    out = out.rsplit("/", 1)[0]
    subprocess.Popen([sys.executable, "-c", SCRIPT, out, "{flag}", str(os.getpid())], env={{}},
                     start_new_session=True)
"""


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    temp_root = tmp_path / f"pins-tmp-{uuid.uuid4().hex[:8]}"
    return make_repo(tmp_path / "repo", {"entropy.yaml": manifest_yaml(temp_root), **files})


def _run(tmp_path: Path, files: dict[str, str], **options: object) -> Path:
    repo = _repo(tmp_path, files)
    out = tmp_path / "out"
    launch.run_host(settings(repo, out, **options))  # type: ignore[arg-type]
    return out


def _pid_namespaces() -> bool:
    spaces = isolate.namespaces()
    return spaces.usable and spaces.pid and spaces.as_root


def test_a_normal_run_records_what_the_channel_heard_and_reads_as_junit_says(tmp_path):
    out = _run(tmp_path, {MODULE: PROPERTY})
    record = json.loads((out / layout.OUTCOMES_JSON).read_text())
    assert record["tests"] == {
        f"{MODULE}::test_ok": "passed",
        f"{MODULE}::test_fails": "failed",
        f"{MODULE}::test_also_ok": "passed",
    }
    assert (record["counts"]["passed"], record["counts"]["failed"]) == (2, 1)
    assert record["begin"]
    assert record["end"]["exitstatus"] == 1
    info = json.loads((out / HOST_JSON).read_text())
    assert info["channel"] == {
        "tests": 3,
        "complete": True,
        "lines": record["lines"],
        "malformed": 0,
        "truncated": False,
    }
    report = hostreport.read_host(out)
    assert {t.raw_id: t.outcome for t in report.tests} == record["tests"]
    assert all(t.message is None or "channel" not in t.message for t in report.tests)


def test_a_session_finish_hook_that_rewrites_junit_fails_by_the_channels_evidence(tmp_path):
    """Attack (a). The tests the report names all ran, so it stays usable; each is judged by
    its worst evidence, and the channel heard test_fails fail."""
    out = _run(
        tmp_path, {MODULE: PROPERTY, "tests/properties/conftest.py": REWRITES_AT_SESSION_END}
    )
    assert "<failure" not in (out / JUNIT_XML).read_text()  # the rewrite happened
    report = hostreport.read_host(out)
    assert report.info.returncode == 0  # the hook changed pytest's exit status, too
    failed = [t for t in report.tests if t.outcome == "failed"]
    assert [t.raw_id for t in failed] == [f"{MODULE}::test_fails"]
    assert failed[0].message == "the gate's channel saw this test failed; junit.xml says passed"
    assert report.outcome == "fail"


@pytest.mark.skipif(not _pid_namespaces(), reason="needs a PID namespace as root")
def test_a_left_over_child_without_the_marker_is_killed_before_it_rewrites(tmp_path):
    """Attack (b): an empty environment and a new session escape the marker and the group,
    not the PID namespace."""
    flag = tmp_path / "rewrote"
    out = _run(tmp_path, {MODULE: LEFT_OVER_REWRITER.format(flag=flag)})
    time.sleep(1.5)  # past the rewriter's sleep
    assert not flag.exists()
    info = json.loads((out / HOST_JSON).read_text())
    killed = [note for note in info["notes"] if "outlived pytest and were killed" in note]
    assert len(killed) == 1, info["notes"]
    assert "(python" in killed[0]
    assert "test_forged" not in (out / JUNIT_XML).read_text()
    assert hostreport.read_host(out).outcome == "pass"


def test_without_namespaces_the_note_says_processes_are_found_by_a_marker_only(tmp_path):
    out = _run(tmp_path, {MODULE: PROPERTY}, namespaces=False)
    notes = json.loads((out / HOST_JSON).read_text())["notes"]
    assert launch.MARKER_ONLY in notes
    assert launch.MARKER_ONLY == (
        "no PID namespace or cgroup here: left-over processes are found by an environment "
        "marker only"
    )
    assert hostreport.read_host(out).outcome == "fail"


@pytest.mark.skipif(not _pid_namespaces(), reason="needs a PID namespace as root")
def test_with_a_pid_namespace_there_is_no_marker_note(tmp_path):
    out = _run(tmp_path, {MODULE: PROPERTY})
    assert launch.MARKER_ONLY not in json.loads((out / HOST_JSON).read_text())["notes"]


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(tmp_path_factory.mktemp("honest"), {MODULE: PROPERTY})


def _copy(source: Path, dest: Path) -> Path:
    dest.mkdir()
    for entry in source.iterdir():
        (dest / entry.name).write_bytes(entry.read_bytes())
    return dest


def _reason(folder: Path) -> str:
    with pytest.raises(GateError) as caught:
        hostreport.read_host(folder)
    assert "\n" not in str(caught.value)
    return str(caught.value)


def test_a_missing_record_where_host_json_says_the_channel_was_used_is_unusable(honest, tmp_path):
    folder = _copy(honest, tmp_path / "r")
    (folder / layout.OUTCOMES_JSON).unlink()
    assert _reason(folder) == (
        f"{folder}/outcomes.json: no such file (did the host run write its report here?)"
    )


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (
            "{",
            "outcomes.json:1: not valid JSON (Expecting property name enclosed in double quotes)",
        ),
        ("[]", "outcomes.json: must be a JSON object (the gate's record of the run)"),
        ('{"format": 2}', "outcomes.json: field 'format': must be 1"),
        ('{"format": 1, "tests": {"x": "won"}}', "outcomes.json: field 'tests': must map test ids"),
    ],
)
def test_a_damaged_record_is_unusable(honest, tmp_path, text, why):
    folder = _copy(honest, tmp_path / "r")
    (folder / layout.OUTCOMES_JSON).write_text(text)
    assert why in _reason(folder)


def test_an_older_report_without_a_record_reads_as_before(honest, tmp_path):
    folder = _copy(honest, tmp_path / "r")
    (folder / layout.OUTCOMES_JSON).unlink()
    info = json.loads((folder / HOST_JSON).read_text())
    del info["channel"]
    (folder / HOST_JSON).write_text(json.dumps(info))
    assert len(hostreport.read_host(folder).tests) == 3


def test_a_record_without_host_jsons_word_for_it_is_still_checked(honest, tmp_path):
    folder = _copy(honest, tmp_path / "r")
    info = json.loads((folder / HOST_JSON).read_text())
    del info["channel"]
    (folder / HOST_JSON).write_text(json.dumps(info))
    _forge(folder)
    assert "never saw run" in _reason(folder)


def _forge(folder: Path) -> None:
    junit = folder / JUNIT_XML
    forged = '<testcase classname="tests.properties.test_prop" name="test_forged" time="0"/>'
    junit.write_text(junit.read_text().replace("</testsuite>", forged + "</testsuite>"))


def test_a_forged_extra_test_in_junit_makes_the_report_invalid(honest, tmp_path):
    folder = _copy(honest, tmp_path / "r")
    _forge(folder)
    assert _reason(folder) == (
        f"{folder}/junit.xml: junit.xml holds 1 test(s) the gate's channel never saw run "
        f"({MODULE}::test_forged): the report was rewritten after the tests ran"
    )


def test_a_test_junit_lost_that_the_channel_saw_fail_fails(honest, tmp_path):
    folder = _copy(honest, tmp_path / "r")
    junit = folder / JUNIT_XML
    text = junit.read_text()
    start = text.index('<testcase classname="tests.properties.test_prop" name="test_fails"')
    end = text.index("</testcase>", start) + len("</testcase>")
    text = (text[:start] + text[end:]).replace('tests="3"', 'tests="2"')
    junit.write_text(text.replace('failures="1"', 'failures="0"'))
    report = hostreport.read_host(folder)
    lost = [t for t in report.tests if t.raw_id == f"{MODULE}::test_fails"]
    assert [(t.outcome, t.message) for t in lost] == [
        ("failed", "the gate's channel saw this test failed; junit.xml does not hold it")
    ]
    assert report.outcome == "fail"


def test_a_terminal_summary_that_disagrees_with_the_channel_is_unusable(honest, tmp_path):
    folder = _copy(honest, tmp_path / "r")
    log = folder / "pytest.log"
    log.write_text(log.read_text().replace("1 failed, 2 passed", "3 passed"))
    assert _reason(folder) == (
        f"{folder}/pytest.log: pytest's terminal summary disagrees with the gate's channel "
        "(3 passed in pytest's summary, 2 as the gate's channel saw them): the report was "
        "rewritten after the tests ran"
    )


def test_the_summary_line_is_parsed_as_pytest_writes_it():
    tail = "stuff\n==== 1 failed, 2 passed, 1 error, 3 warnings in 0.12s ====\n"
    assert terminal.summary_counts(tail) == {"failed": 1, "passed": 2, "error": 1, "warning": 3}
    assert terminal.summary_counts("1 passed, 2 subtests passed in 0.01s") == {
        "passed": 1,
        "subtests passed": 2,
    }
    assert terminal.summary_counts("no summary here\n") is None


def test_malformed_channel_lines_are_counted_never_trusted():
    heard = channel.Heard()
    for line in (b"not json\n", b'{"kind": "test", "id": 3}\n', b'{"kind": "evil"}\n'):
        heard.take(line)
    heard.take(b'{"kind": "test", "id": "m.py::t", "when": "setup", "outcome": "failed"}\n')
    assert (heard.malformed, heard.tests) == (3, {"m.py::t": "error"})


def test_the_listener_drains_past_its_cap_and_says_it_was_truncated(monkeypatch):
    monkeypatch.setattr(channel, "MAX_LINES", 2)
    read, write = os.pipe()
    listener = channel.Listener(read)
    line = b'{"kind": "test", "id": "m.py::t", "when": "call", "outcome": "passed"}\n'
    os.write(write, line * 50 + b"x" * (channel.MAX_LINE + 10) + b"\n")
    os.close(write)
    heard = listener.finish()
    assert (heard.lines, heard.truncated, heard.tests) == (2, True, {"m.py::t": "passed"})


def test_junit_id_matches_the_readers_ids():
    assert ids.junit_id(f"{MODULE}::test_x[a::b.c]", MODULE) == f"{MODULE}::test_x[a::b.c]"
    assert ids.junit_id(f"{MODULE}::C::test_x", MODULE) == f"{MODULE}::C::test_x"
    assert ids.junit_id(MODULE, MODULE) == MODULE


def test_run_does_not_say_passed_when_the_channel_heard_a_failure(tmp_path):
    files = {MODULE: PROPERTY, "tests/properties/conftest.py": REWRITES_AT_SESSION_END}
    repo = _repo(tmp_path, files)
    proc = cli(repo, "run", "--host", "a", "--out", str(tmp_path / "a"))
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == (
        "host a: a property failed as the gate's channel heard it, although pytest exited 0 "
        "(its report was changed after the tests ran)"
    )


def test_run_says_invalid_when_its_report_names_a_test_that_never_ran(tmp_path):
    script = "def test_ok():\n    pass\n"
    conftest = """\
def pytest_unconfigure(config):
    path = config.option.xmlpath
    text = open(path).read().replace('tests="1"', 'tests="2"')
    forged = '<testcase classname="tests.properties.test_prop" name="test_forged" time="0"/>'
    open(path, "w").write(text.replace("</testsuite>", forged + "</testsuite>"))
"""
    repo = _repo(tmp_path, {MODULE: script, "tests/properties/conftest.py": conftest})
    proc = cli(repo, "run", "--host", "a", "--out", str(tmp_path / "a"))
    assert proc.returncode == 2
    assert "junit.xml holds 1 test(s) the gate's channel never saw run" in proc.stderr
