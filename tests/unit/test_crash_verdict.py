"""A host whose pytest died of a signal: faulthandler's file read into frames, the one line
that says whether it is the patch or the environment, and the page that leads with it and
keeps what the pin check and the scan saw in front of the cause."""

from __future__ import annotations

import textwrap

import pytest

from entropy_action.core.findings import Finding
from entropy_action.core.hostinfo import Crash, CrashFrame
from entropy_action.core.signals import killed_reason
from entropy_action.hosts import crashlog
from entropy_action.render import checkrun, markdown, summary
from entropy_action.verdict import crash, remediation
from entropy_action.verdict.classify import Evidence, classify
from entropy_action.verdict.model import CrashCause

ROOT = "/work/checkout"
GATE = "/tmp/entropy-gate-a-x1/plugin"
DUMP = f"""\
Fatal Python error: Segmentation fault

Thread 0x00007f0000000001 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 320 in wait
  File "{ROOT}/billing/poller.py", line 9 in run

Current thread 0x00007f8a5267cb80 (most recent call first):
  File "/usr/lib/python3.11/ctypes/__init__.py", line 519 in string_at
  File "{ROOT}/billing/fees.py", line ??? in quote\x1b[2J
  File "{ROOT}/tests/test_fees.py", line 7 in test_quote
  File "{ROOT}/.venv/lib/python3.11/site-packages/_pytest/python.py", line 187 in pytest_pyfunc_call
  File "{ROOT}/.venv/lib/python3.11/site-packages/time_machine/__init__.py", line 431 in wrapper
  File "{GATE}/entropy_gate_audit.py", line 282 in audited
  File "<frozen runpy>", line 88 in _run_code

Extension modules: _time_machine (total: 1)
"""


def test_faulthandlers_file_gives_the_crashing_threads_frames_placed():
    fatal, frames = crashlog.parse(DUMP, ROOT, GATE)
    assert fatal == "Segmentation fault"
    assert [(f.place, f.path, f.line, f.function) for f in frames] == [
        ("other", "/usr/lib/python3.11/ctypes/__init__.py", 519, "string_at"),
        ("repository", "billing/fees.py", None, "quote?[2J"),  # a control character, masked
        ("repository", "tests/test_fees.py", 7, "test_quote"),
        ("pytest", "_pytest/python.py", 187, "pytest_pyfunc_call"),  # a venv in the checkout
        ("site-packages", "time_machine/__init__.py", 431, "wrapper"),
        ("gate", "entropy_gate_audit.py", 282, "audited"),
        ("other", "<frozen runpy>", 88, "_run_code"),
    ]
    crashed = Crash(signal="SIGSEGV", fatal=fatal, frames=frames)
    assert crashed.words() == "SIGSEGV (Segmentation fault) at billing/fees.py:? in quote?[2J"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "garbage\n",
        "Fatal Python error: Aborted\n\nStack (most recent call first):\n  <no Python frame>\n",
    ],
)
def test_a_file_without_frames_gives_none(text):
    assert crashlog.parse(text, ROOT, GATE)[1] == []


def _frame(place, path, line=3, function="f"):
    return CrashFrame(place=place, path=path, line=line, function=function)


SEGV = Crash(signal="SIGSEGV", fatal="Segmentation fault", frames=[_frame("repository", "t.py")])
IN_GATE = Crash(
    signal="SIGSEGV",
    frames=[
        _frame("site-packages", "x/y.py"),
        _frame("gate", "entropy_gate_audit.py", 282, "audited"),
    ],
)


@pytest.mark.parametrize(
    ("crashes", "changed", "blame", "line"),
    [
        (
            [crash.Crashed("A", IN_GATE, "finished")],
            {"t.py"},
            "environment",
            "The environment, not the patch: host A: pytest died of SIGSEGV at "
            "entropy_gate_audit.py:282 in audited, in entropy-gate's own code (a bug of the "
            "gate: report it with the host's faulthandler.log).",
        ),
        (
            [crash.Crashed("A", SEGV, "crashed")],
            {"t.py"},
            "environment",
            "The environment, not the patch: host A: pytest died of SIGSEGV (Segmentation "
            "fault) at t.py:3 in f; the base ref's run died of a signal there too.",
        ),
        (
            [crash.Crashed("B", SEGV, "none")],
            {"t.py"},
            "patch",
            "The patch: host B: pytest died of SIGSEGV (Segmentation fault) at t.py:3 in f; "
            "t.py is a file the patch changes.",
        ),
        (
            [crash.Crashed("A", SEGV, "finished")],
            set(),
            "patch",
            "The patch: host A: pytest died of SIGSEGV (Segmentation fault) at t.py:3 in f; the "
            "base ref's run of its module finished on that host.",
        ),
        (
            [crash.Crashed("A", Crash(signal="SIGKILL"), "none")],
            None,
            "unknown",
            "Cannot tell the patch from the environment: host A: pytest was killed by SIGKILL; "
            "no base run finished on that host to compare with.",
        ),
        (
            [crash.Crashed("A", SEGV, "none"), crash.Crashed("B", SEGV, "none")],
            {"t.py"},
            "patch",
            "The patch: host A and host B: pytest died of SIGSEGV (Segmentation fault) at "
            "t.py:3 in f; t.py is a file the patch changes.",
        ),
    ],
)
def test_the_patch_or_the_environment_row_by_row(crashes, changed, blame, line):
    found = crash.cause(crashes, changed)
    assert found is not None
    assert (found.blame, found.line) == (blame, line)


def test_no_crash_no_line():
    assert crash.cause([], {"t.py"}) is None


@pytest.mark.parametrize(
    ("returncode", "found", "expected"),
    [
        (
            -11,
            SEGV,
            "pytest died of SIGSEGV (Segmentation fault) at t.py:3 in f; the run did not finish "
            "and its report is not trusted",
        ),
        (
            -11,
            None,
            "pytest was killed by SIGSEGV; the run did not finish and its report is not trusted",
        ),
        (
            -9,
            Crash(signal="SIGKILL"),
            "pytest was killed by SIGKILL (a timeout, the temp root's cap, or from outside); the "
            "run did not finish and its report is not trusted",
        ),
        (
            -15,
            None,
            "pytest was killed by SIGTERM (from outside); the run did not finish and its report "
            "is not trusted",
        ),
    ],
)
def test_a_signal_death_is_named_never_a_timeout_when_it_was_sigsegv(returncode, found, expected):
    assert killed_reason(returncode, found) == expected


CAUSE = CrashCause(
    blame="patch",
    line="The patch: host A: pytest died of SIGSEGV (Segmentation fault) at tests/test_p.py:7 "
    "in test_p; tests/test_p.py is a file the patch changes.",
    title="Invalid: the patch crashed host A (SIGSEGV)",
)
FREEZE = Finding(
    kind="entropy_patched",
    path="tests/test_p.py",
    line=5,
    message="time_machine.travel(2000) patched with time_machine in property test_p",
    introduced=True,
)
CRASHED = classify(
    Evidence(
        host_a="missing",
        host_b="missing",
        findings=(FREEZE,),
        invalid=("host A: pytest died of SIGSEGV (Segmentation fault) at tests/test_p.py:7",),
        crash=CAUSE,
    )
)


def test_the_crashed_verdict_stays_invalid_and_its_reasons_lead_with_what_the_patch_does():
    assert CRASHED.classification == "invalid"
    assert CRASHED.crash == CAUSE
    assert CRASHED.reasons == [
        "entropy silenced: 1 finding(s) introduced by the patch (1 entropy_patched)",
        "invalid input: host A: pytest died of SIGSEGV (Segmentation fault) at tests/test_p.py:7",
    ]


def test_the_page_leads_with_the_line_then_the_pins_and_findings_then_the_cause():
    """What to do follows the findings, before the cause (the judge advises every verdict)."""
    assert markdown.render(remediation.advise(CRASHED)) == textwrap.dedent(
        r"""        ## ❌ entropy-gate: `invalid` (do not merge)

        **The patch\: host A\: pytest died of SIGSEGV \(Segmentation fault\) at tests\/test\_p\.py\:7 in test\_p\; tests\/test\_p\.py is a file the patch changes\.**

        **Pins:** intact against the base ref.

        ### Findings

        - `tests/test_p.py:5` **entropy_patched**: time\_machine\.travel\(2000\) patched with time\_machine in property test\_p

        ### What to do

        1. **Let the gate pin the source \(entropy\.yaml\) instead of patching it inside the test\, or take the source as a parameter of the code \(a clock\, an RNG\)\.** — `tests/test_p.py:5`\
           time\_machine\.travel\(2000\) patched with time\_machine in property test\_p
        2. **Fix the run and try again\: nothing was judged\.**\
           host A\: pytest died of SIGSEGV \(Segmentation fault\) at tests\/test\_p\.py\:7

        **Why the runs cannot be judged:**

        - host A\: pytest died of SIGSEGV \(Segmentation fault\) at tests\/test\_p\.py\:7

        | host A | host B | pins intact | silencing | classification |
        |---|---|---|---|---|
        | not run | not run | yes | introduced | `invalid` |

        ### Tests

        No test was reported.

        ### Reasons

        - entropy silenced\: 1 finding\(s\) introduced by the patch \(1 entropy\_patched\)
        """  # noqa: E501 - the page's lines, as GitHub gets them
    )


def test_the_terminal_summary_and_the_check_run_lead_with_it_too():
    text = summary.render_text(CRASHED).splitlines()
    assert text[:2] == [
        "entropy-gate verdict: invalid (invalid input; nothing was judged)",
        f"  {CAUSE.line}",
    ]
    assert text.index("findings:") < text.index("reasons:")
    run = checkrun.plan(CRASHED, head_sha="a" * 40)
    assert run.title == "Invalid: the patch crashed host A (SIGSEGV)"
    assert run.summary.startswith("## ❌ entropy-gate: `invalid` (do not merge)\n\n**The patch")
