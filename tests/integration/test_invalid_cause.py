"""An invalid verdict names its cause: a host that fails before it reports leaves error.json
(evidence.hosterror), the judge leads with it and says a missing folder once, and what a
reviewer reads (the summary, the check run, its annotations) holds no absolute temp path."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from entropy_action.core.errors import GateError
from entropy_action.core.layout import ERROR_JSON, HOST_JSON
from entropy_action.evidence import hosterror
from entropy_action.gate import judge
from entropy_action.render import checkrun, markdown, paths, summary
from entropy_action.verdict import pairing
from entropy_action.verdict.model import TestResult, Verdict
from tests.support.helpers import Repo

PYTEST_MISSING = "pytest is not importable by /opt/hostedtoolcache/Python/3.12.1/x64/bin/python"
UNREPORTED = "(the host job failed before it uploaded its report, was cancelled or was skipped)"


def _error(folder: Path, host: str = "a", step: str = "prepare the host") -> Path:
    return hosterror.write(folder, hosterror.make(host, step, PYTEST_MISSING))  # type: ignore[arg-type]


def test_the_error_report_holds_the_format_the_host_the_step_and_one_line(tmp_path: Path) -> None:
    path = hosterror.write(
        tmp_path / "host-a", hosterror.make("a", "prepare\nthe host", "first\n  second\tline")
    )
    assert path == tmp_path / "host-a" / ERROR_JSON
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "format": 1,
        "host": "a",
        "step": "prepare the host",
        "message": "first second line",
    }
    assert hosterror.read(tmp_path / "host-a") == hosterror.make(
        "a", "prepare the host", "first second line"
    )
    assert hosterror.read(tmp_path) is None  # no error.json: no error report


def test_a_long_message_is_cut_to_its_limit() -> None:
    error = hosterror.make("b", "s" * 500, "m" * 5000)
    assert len(error.step) == hosterror.MAX_STEP
    assert error.step.endswith("…")
    assert len(error.message) == hosterror.MAX_MESSAGE
    assert error.message.endswith("…")


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (
            '{"format": 1, "host": "a", "step": "x", "message": "y", "extra": 1}',
            "unknown field 'extra'",
        ),
        ('{"format": 2, "host": "a", "step": "x", "message": "y"}', "field 'format'"),
        ('{"format": 1, "host": "c", "step": "x", "message": "y"}', "field 'host'"),
        ('{"format": 1, "host": "a", "step": "x", "message": "a\\nb"}', "field 'message'"),
        ('{"format": 1, "host": "a", "step": "x"}', "missing required field 'message'"),
        ('{"format": 1, "host": "a", "step": "x", "message": ""}', "field 'message'"),
        ("[1]", "must be a JSON object"),
        ("{" * 10, "not valid JSON"),
        (" " * (hosterror.MAX_ERROR_JSON + 1), "larger than the limit"),
    ],
)
def test_a_damaged_error_report_is_refused_naming_the_file(
    tmp_path: Path, content: str, why: str
) -> None:
    (tmp_path / ERROR_JSON).write_text(content, encoding="utf-8")
    with pytest.raises(GateError) as raised:
        hosterror.read(tmp_path)
    assert raised.value.message.startswith(f"{tmp_path / ERROR_JSON}:")
    assert why in raised.value.message


def test_the_judge_leads_with_each_hosts_cause_once(tmp_path: Path) -> None:
    _error(tmp_path / "host-a")
    verdict = judge.judge(judge.Dossier(host_a=tmp_path / "host-a", host_b=tmp_path / "host-b"))
    assert verdict.classification == "invalid"
    assert verdict.reasons == [
        f"invalid input: host A could not run: {PYTEST_MISSING} (step: prepare the host)",
        f"invalid input: host B: no report folder host-b {UNREPORTED}",
        pairing.NO_PIN_CHECK,
    ]


@pytest.mark.parametrize("state", ["empty", "symlink", "file"])
def test_a_folder_that_cannot_be_a_report_is_one_reason(tmp_path: Path, state: str) -> None:
    _error(tmp_path / "host-a")
    host_b = tmp_path / "host-b"
    {"empty": host_b.mkdir, "symlink": lambda: host_b.symlink_to(tmp_path / "host-a"),
     "file": lambda: host_b.write_text("x")}[state]()  # fmt: skip
    said = {"empty": "is empty", "symlink": "is a symbolic link", "file": "is not a folder"}
    verdict = judge.judge(judge.Dossier(host_a=tmp_path / "host-a", host_b=host_b))
    assert [r for r in verdict.reasons if "host B" in r] == [
        f"invalid input: host B: report folder host-b {said[state]} {UNREPORTED}"
    ]


def test_an_error_report_beside_a_host_json_still_makes_the_host_invalid(tmp_path: Path) -> None:
    """Fail closed: a folder with error.json is never judged as a report, whatever else it holds."""
    _error(tmp_path / "host-a", step="entropy-gate run")
    (tmp_path / "host-a" / HOST_JSON).write_text("{}", encoding="utf-8")
    verdict = judge.judge(judge.Dossier(host_a=tmp_path / "host-a", host_b=None))
    assert verdict.classification == "invalid"
    assert verdict.reasons[0] == (
        f"invalid input: host A could not run: {PYTEST_MISSING} (step: entropy-gate run)"
    )


def test_an_error_report_of_the_other_host_or_damaged_is_invalid(tmp_path: Path) -> None:
    _error(tmp_path / "host-a", host="b")
    (tmp_path / "host-b").mkdir()
    (tmp_path / "host-b" / ERROR_JSON).write_text('{"format": 1}', encoding="utf-8")
    verdict = judge.judge(judge.Dossier(host_a=tmp_path / "host-a", host_b=tmp_path / "host-b"))
    assert verdict.reasons[:2] == [
        "invalid input: host A: error.json is host B's error report",
        f"invalid input: host B: {tmp_path}/host-b/error.json: missing required field 'host' "
        "(and 2 more)",
    ]


def _invalid_verdict(tmp_path: Path) -> Verdict:
    _error(tmp_path / "host-a")
    return pairing.evaluate(tmp_path / "host-a", tmp_path / "host-b", loaded=None, pin_diff=None)


CAUSE_A = (
    "host A could not run\\: pytest is not importable by …\\/bin\\/python "
    "\\(step\\: prepare the host\\)"
)
CAUSE_B = (
    "host B\\: no report folder host\\-b \\(the host job failed before it uploaded its "
    "report\\, was cancelled or was skipped\\)"
)


def test_the_summary_leads_with_the_cause_and_says_not_run(tmp_path: Path) -> None:
    verdict = _invalid_verdict(tmp_path)
    assert markdown.render(verdict) == textwrap.dedent(
        f"""\
        ## ❌ entropy-gate: `invalid` (do not merge)

        **Invalid input: the runs could not be judged.**

        - {CAUSE_A}
        - {CAUSE_B}

        | host A | host B | pins intact | silencing | classification |
        |---|---|---|---|---|
        | not run | not run | not run | not run | `invalid` |

        ### Tests

        No test was reported.

        ### Reasons

        - {markdown.text(pairing.NO_PIN_CHECK)}
        """
    )
    assert summary.render_text(verdict).splitlines()[:5] == [
        "entropy-gate verdict: invalid (invalid input; nothing was judged)",
        "  table row: the inputs cannot be judged → invalid; fix the run and try again",
        "  host A, host B: not run",
        "tests: none reported",
        "reasons:",
    ]


def test_no_absolute_temp_path_reaches_the_summary_the_check_run_or_its_annotations(
    tmp_path: Path,
) -> None:
    verdict = _invalid_verdict(tmp_path)
    # A reason that names a report file under the temp folder (a damaged host.json).
    host_b = tmp_path / "host-b"
    host_b.mkdir()
    (host_b / HOST_JSON).write_text("{", encoding="utf-8")
    (host_b / "junit.xml").write_text("", encoding="utf-8")
    verdict = pairing.evaluate(tmp_path / "host-a", host_b, loaded=None, pin_diff=None)
    assert any(str(tmp_path) in reason for reason in verdict.reasons)  # the JSON keeps it
    verdict = verdict.model_copy(update={"tests": [_failing(tmp_path)]})
    plan = checkrun.plan(verdict, head_sha="0" * 40)
    shown = json.dumps([plan.create_body(), *plan.update_bodies()])
    assert plan.annotations[0].raw_details.startswith("host A:\n…/src/x.py:3: AssertionError")
    assert str(tmp_path) not in shown
    assert str(tmp_path) not in markdown.render(verdict)
    assert "- host B\\: …\\/host\\-b\\/host\\.json\\:1\\: not valid JSON" in markdown.render(
        verdict
    )


def _failing(tmp_path: Path) -> TestResult:
    """A failing test whose message quotes a path under the temp folder (host B's copy)."""
    return TestResult(
        id="tests/test_p.py::test_p",
        host_a="failed",
        host_b="passed",
        message_a=f"{tmp_path}/copy/src/x.py:3: AssertionError",
        path="tests/test_p.py",
        line=1,
    )


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("--python /tmp/x/venv/bin/python: no pytest", "--python …/bin/python: no pytest"),
        (
            "host A: /home/runner/work/_temp/entropy-gate/host-a/host.json: bad",
            "host A: …/host-a/host.json: bad",
        ),
        ("(/a/b/c.py:12)", "(…/b/c.py:12)"),
        ("tests/test_x.py:3 and /dev/null", "tests/test_x.py:3 and /dev/null"),
        ("see https://example.com/a/b/c/d", "see https://example.com/a/b/c/d"),
        ("…/.venv/…/_pytest/__init__.py", "…/.venv/…/_pytest/__init__.py"),
        ("'/tmp/a/b/'", "'…/a/b/'"),
    ],
)
def test_absolute_paths_keep_their_last_two_parts(given: str, shown: str) -> None:
    assert paths.shorten(given) == shown


def test_a_run_without_pytest_leaves_its_cause_and_the_verdict_leads_with_it(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write(
        "entropy.yaml", "version: 1\nproperty_id: p\nmodule: tests/test_p.py\npins:\n  tz: UTC\n"
    )
    repo.write("tests/test_p.py", "def test_p():\n    assert True\n")
    base = repo.commit("base")
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    python = bare / "bin" / "python"
    for host in "ab":
        result = repo.cli(
            "run", "--host", host, "--out", f"../host-{host}", "--python", str(python)
        )
        assert result.code == 2, result.err
        assert "pytest is not installed for that interpreter" in result.err
    error = hosterror.read(repo.path.parent / "host-a")
    assert error is not None
    assert (error.host, error.step) == ("a", "entropy-gate run")
    assert error.message.startswith(f"--python {python}: pytest is not installed")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "output"))
    result = repo.cli(
        "verdict", "--host-a", "../host-a", "--host-b", "../host-b", "--base-ref", base,
        "--json", str(tmp_path / "verdict.json"),
    )  # fmt: skip
    assert result.code == 2
    verdict = json.loads((tmp_path / "verdict.json").read_text(encoding="utf-8"))
    assert [r.split(": pytest")[0] for r in verdict["reasons"][:2]] == [
        f"invalid input: host {host} could not run: --python {python}" for host in "AB"
    ]
    lines = (tmp_path / "summary.md").read_text(encoding="utf-8").splitlines()
    assert lines[4].startswith(
        "- host A could not run\\: \\-\\-python …\\/bin\\/python\\: pytest is not installed"
    ), lines[:8]
    assert str(tmp_path) not in "\n".join(lines)
    # host-error leaves the run's own report as it is, and writes one where there is none.
    assert repo.cli("host-error", "--host", "a", "--out", "../host-a", "--step", "x").code == 0
    assert hosterror.read(repo.path.parent / "host-a") == error
    assert repo.cli("host-error", "--host", "b", "--out", "../fresh", "--step", "install").code == 0
    fresh = hosterror.read(repo.path.parent / "fresh")
    assert fresh == hosterror.make("b", "install", "the step failed; the host job's log says why")


def test_the_local_gate_says_why_a_host_could_not_start_once(repo: Repo, tmp_path: Path) -> None:
    repo.write(
        "entropy.yaml", "version: 1\nproperty_id: p\nmodule: tests/test_p.py\npins:\n  tz: UTC\n"
    )
    repo.write("tests/test_p.py", "def test_p():\n    assert True\n")
    base = repo.commit("base")
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    result = repo.cli(
        "gate", "--base-ref", base, "--python", str(bare / "bin" / "python"), "--no-base-run",
        "--json", str(tmp_path / "verdict.json"),
    )  # fmt: skip
    assert result.code == 2
    reasons = json.loads((tmp_path / "verdict.json").read_text(encoding="utf-8"))["reasons"]
    about_b = [r for r in reasons if r.startswith("invalid input: host B")]
    assert len(about_b) == 1, reasons
    assert "pytest is not installed for that interpreter" in about_b[0]
