"""A host whose pytest dies of SIGSEGV, through real runs: the signal and the frame on the page,
the static findings in front of the cause, and one line that says whether it is the patch or
the environment — the same on the local gate and on the workflow's path (run, then verdict)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from entropy_action.core.layout import CRASH_LOG, HOST_JSON
from entropy_action.render import markdown
from entropy_action.verdict.model import Verdict
from tests.support.helpers import build_repo, run_cli

MANIFEST = """\
version: 1
property_id: p
module: tests/test_p.py
pins: {clock_unix: 1768003200, rng_seed: 9173, tz: UTC}
"""
LIB = """\
import datetime


def late(due):
    return datetime.datetime.now(datetime.timezone.utc) > due
"""
BASE = """\
import datetime

import lib


def test_not_late():
    assert not lib.late(datetime.datetime(2100, 1, 1, tzinfo=datetime.timezone.utc))
"""
# The agent's head: the clock frozen in the test, and a call that kills the process.
HEAD = """\
import ctypes
import datetime

import time_machine

import lib


@time_machine.travel(datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc), tick=False)
def test_not_late():
    ctypes.string_at(0)
    assert not lib.late(datetime.datetime(2100, 1, 1, tzinfo=datetime.timezone.utc))
"""
CRASHING = """\
import ctypes


def test_native():
    ctypes.string_at(0)
"""
DIED = "pytest died of SIGSEGV (Segmentation fault) at tests/test_p.py:{line} in {name}"


def _repo(path: Path, module: str) -> Path:
    files = {
        "entropy.yaml": MANIFEST,
        "lib.py": LIB,
        "README.md": "# x\n",
        "tests/test_p.py": module,
    }
    build_repo(path, files)
    return path


@pytest.fixture(scope="module")
def patched(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The freeze-and-crash head, gated locally and on the workflow's path."""
    world = tmp_path_factory.mktemp("crash")
    repo = _repo(world / "repo", BASE)
    (repo / "tests/test_p.py").write_text(HEAD, encoding="utf-8")
    gate = run_cli(repo, "gate", "--base-ref", "HEAD", "--json", str(world / "gate.json"),
                   "--out", str(world / "gate"))  # fmt: skip
    (world / "gate.out").write_text(f"{gate.returncode}\n{gate.stdout}", encoding="utf-8")
    (world / "gate.err").write_text(gate.stderr, encoding="utf-8")  # what an exit 3 said
    for host, more in (("a", ()), ("b", ("--isolate",))):
        run_cli(
            repo, "run", "--host", host, "--out", str(world / host), "--base-ref", "HEAD", *more
        )
    verdict = run_cli(repo, "verdict", "--host-a", str(world / "a"), "--host-b", str(world / "b"),
                      "--base-ref", "HEAD", "--json", str(world / "workflow.json"))  # fmt: skip
    (world / "workflow.out").write_text(f"{verdict.returncode}\n{verdict.stdout}", encoding="utf-8")
    return world


def _verdict(path: Path) -> Verdict:
    return Verdict.model_validate_json(path.read_text(encoding="utf-8"))


def test_the_local_gate_names_the_signal_the_frame_and_the_freeze(patched: Path) -> None:
    code, *lines = (patched / "gate.out").read_text(encoding="utf-8").splitlines()
    assert code == "2", (patched / "gate.err").read_text(encoding="utf-8")
    died = DIED.format(line=11, name="test_not_late")
    assert lines[:2] == [
        "entropy-gate verdict: invalid (invalid input; nothing was judged)",
        f"  The patch: host A and host B: {died}; tests/test_p.py is a file the patch changes.",
    ]
    text = "\n".join(lines)
    assert "a timeout" not in text
    assert "from outside" not in text
    reasons = lines[lines.index("reasons:") + 1 :]
    assert reasons[0] == (
        "  - entropy silenced: 1 finding(s) introduced by the patch (1 entropy_patched)"
    )
    # host A's cause is quoted by what to do (and not repeated), host B's stays a reason
    steps = lines[lines.index("what to do:") + 1 : lines.index("reasons:")]
    cause = f"{died}; the run did not finish and its report is not trusted"
    assert any(s.startswith("     host A: ") and s.endswith(cause) for s in steps), steps
    assert reasons[1].startswith("  - invalid input: host B: ")
    assert reasons[1].endswith(cause)
    verdict = _verdict(patched / "gate.json")
    assert verdict.classification == "invalid"
    assert verdict.crash is not None
    assert verdict.crash.blame == "patch"
    assert [f.kind for f in verdict.findings if f.introduced] == ["entropy_patched"]


def test_the_host_folder_keeps_faulthandlers_traceback_and_host_json_the_frames(
    patched: Path,
) -> None:
    folder = patched / "gate" / "host-a"
    log = (folder / CRASH_LOG).read_text(encoding="utf-8")
    assert log.startswith("Fatal Python error: Segmentation fault")
    assert 'tests/test_p.py", line 11 in test_not_late' in log
    crash = json.loads((folder / HOST_JSON).read_text(encoding="utf-8"))["crash"]
    assert crash["signal"] == "SIGSEGV"
    assert {"place": "repository", "path": "tests/test_p.py", "line": 11,
            "function": "test_not_late"} in crash["frames"]  # fmt: skip


def test_the_page_leads_with_the_line_then_the_freeze_then_the_cause(patched: Path) -> None:
    page = markdown.render(_verdict(patched / "gate.json")).splitlines()
    assert page[2].startswith(r"**The patch\: host A and host B\: pytest died of SIGSEGV")
    findings, cause = page.index("### Findings"), page.index("**Why the runs cannot be judged:**")
    assert page.index("**Pins:** intact against the base ref.") < findings < cause
    assert "**entropy_patched**" in page[findings + 2]


def test_the_workflows_path_gives_the_same_verdict_and_line(patched: Path) -> None:
    gate, workflow = _verdict(patched / "gate.json"), _verdict(patched / "workflow.json")
    assert (patched / "workflow.out").read_text(encoding="utf-8").startswith("2\n")
    assert workflow.classification == gate.classification == "invalid"
    assert workflow.crash is not None
    assert gate.crash is not None
    assert workflow.crash.blame == gate.crash.blame == "patch"
    assert [f.kind for f in workflow.findings] == [f.kind for f in gate.findings]
    for host in "ab":  # `run --base-ref` ran the base beside each crashed head
        assert json.loads((patched / host / "base" / HOST_JSON).read_text())["returncode"] == 0


def test_a_crash_the_base_has_too_is_the_environment(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", CRASHING)
    with (repo / "README.md").open("a", encoding="utf-8") as handle:
        handle.write("One more line of docs.\n")
    done = run_cli(repo, "gate", "--base-ref", "HEAD", "--json", str(tmp_path / "v.json"))
    assert done.returncode == 2, done.stdout + done.stderr
    died = DIED.format(line=5, name="test_native")
    assert done.stdout.splitlines()[1] == (
        f"  The environment, not the patch: host A and host B: {died}; the base ref's run died "
        "of a signal there too."
    )
    assert "base run needed: host A and host B died of a signal" in done.stderr
    verdict = _verdict(tmp_path / "v.json")
    assert verdict.crash is not None
    assert verdict.crash.blame == "environment"


MANY = """\
version: 1
pins: {clock_unix: 1768003200, rng_seed: 9173, tz: UTC}
properties:
  - {property_id: p, module: tests/test_p.py}
  - {property_id: q, module: tests/test_q.py}
"""


def test_a_shared_session_that_dies_says_it_once_per_host_for_each_property(
    tmp_path: Path,
) -> None:
    """Properties with the same pins share a pytest session: one that dies takes the other
    with it, and each property's verdict names the signal and the frame once per host."""
    files = {"entropy.yaml": MANY, "lib.py": LIB, "README.md": "# x\n", "tests/test_p.py": BASE}
    repo = tmp_path / "repo"
    build_repo(repo, {**files, "tests/test_q.py": "def test_q():\n    assert True\n"})
    (repo / "tests/test_p.py").write_text(HEAD, encoding="utf-8")
    done = run_cli(repo, "gate", "--base-ref", "HEAD", "--json", str(tmp_path / "v.json"))
    assert done.returncode == 2, done.stdout + done.stderr
    verdict = _verdict(tmp_path / "v.json")
    assert verdict.properties is not None
    died = DIED.format(line=11, name="test_not_late")
    for prop in verdict.properties:
        causes = [r for r in prop.verdict.reasons if r.startswith("invalid input: host")]
        assert [c.split(": ")[1] for c in causes] == ["host A", "host B"], prop.verdict.reasons
        assert all(c.endswith(f"{died}; the run did not finish and its report is not trusted")
                   for c in causes)  # fmt: skip
        assert prop.verdict.crash is not None
        assert prop.verdict.crash.blame == "patch"
