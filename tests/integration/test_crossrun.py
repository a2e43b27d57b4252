"""The base's property module against the head's code: tests made to pass by changing them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from entropy_action.evidence.junitcases import TestCase
from entropy_action.scan.runtime import DefinedTest
from entropy_action.strength.base_on_head import judge
from entropy_action.strength.unmeasured import Patched
from entropy_action.verdict import remediation
from tests.support.helpers import Repo

MODULE = "tests/test_fees.py"
MANIFEST = """\
version: 1
property_id: fees
module: tests/test_fees.py
pins:
  rng_seed: 3
  tz: UTC
  temp_root: {temp_root}
"""

# A late fee is due after 30 days, not on the 30th: the base's code is wrong (>=), so the
# base's property fails on both hosts — the defect a patch must fix, not hide.
FEES_DEFECT = """\
def late_fee(amount, days_late):
    if days_late >= 30:
        return amount // 10
    return 0
"""
FEES_FIXED = FEES_DEFECT.replace(">= 30", "> 30")

PROPERTY = """\
import os
import sys

from fees import late_fee


def test_no_fee_on_the_due_day():
    fee = late_fee(1000, 30)
    assert fee == 0


def test_fee_after_the_due_day():
    assert late_fee(1000, 31) == 100
"""

# The three weakening patches, each a rewrite of the failing property.
TAUTOLOGY = PROPERTY.replace("assert fee == 0", "assert len(str(fee)) == len(str(fee))")
OWN_COPY = PROPERTY.replace(
    "def test_no_fee_on_the_due_day():\n",
    "def test_no_fee_on_the_due_day(monkeypatch):\n"
    "    monkeypatch.setattr(sys.modules[__name__], 'late_fee', lambda a, d: 0)\n",
)
EARLY_EXIT = PROPERTY.replace(
    "    fee = late_fee(1000, 30)\n",
    "    if not os.environ.get('CHECK_DUE_DAY'):\n        return\n    fee = late_fee(1000, 30)\n",
)


@pytest.fixture
def fees(repo: Repo, tmp_path: Path) -> Repo:
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("fees.py", FEES_DEFECT)
    repo.write(MODULE, PROPERTY)
    repo.commit("base")
    return repo


def gate(repo: Repo) -> tuple[int, dict[str, Any], str]:
    out = repo.path.parent / "verdict.json"
    reports = repo.path.parent / "reports"
    result = repo.cli("gate", "--base-ref", "main", "--json", str(out), "--out", str(reports))
    return result.code, json.loads(out.read_text(encoding="utf-8")), result.out


def changed_to_pass(verdict: dict[str, Any]) -> list[tuple[str | None, int]]:
    return [
        (f["test"], f["line"]) for f in verdict["findings"] if f["kind"] == "test_changed_to_pass"
    ]


@pytest.mark.parametrize(
    ("patch", "static"),
    [
        (TAUTOLOGY, "assertions_dropped"),
        (OWN_COPY, "unit_patched"),
        (EARLY_EXIT, "conditional_exit"),
    ],
    ids=["tautology", "own-copy", "early-exit"],
)
def test_a_failing_property_rewritten_to_pass_is_rejected_by_the_cross_run(
    fees: Repo, patch: str, static: str
) -> None:
    fees.write(MODULE, patch)
    code, verdict, out = gate(fees)
    assert (code, verdict["classification"]) == (1, "entropy_silenced"), out
    assert changed_to_pass(verdict) == [("test_no_fee_on_the_due_day", 7)]
    (finding,) = [f for f in verdict["findings"] if f["kind"] == "test_changed_to_pass"]
    assert finding["path"] == MODULE
    assert finding["introduced"] is True
    assert finding["message"].startswith(
        "property test_no_fee_on_the_due_day fails with the base's module on the head's code "
        "(assert 100 == 0) and passes with the head's module: the patch made it pass by "
        "changing the test, not the code — a property that really was wrong is changed in a "
        "reviewed change of its own"
    )
    assert static in {f["kind"] for f in verdict["findings"]}


def test_a_failing_property_skipped_at_the_head_shows_the_bases_failure(fees: Repo) -> None:
    """The skip patch: the marker is the scan's finding, and the base's test on the head's
    code is the evidence a reviewer reads (it fails: the code is still wrong)."""
    fees.write(
        MODULE,
        PROPERTY.replace(
            "def test_no_fee_on_the_due_day():\n",
            "import pytest\n\n\n@pytest.mark.skip(reason='flaky')\n"
            "def test_no_fee_on_the_due_day():\n",
        ),
    )
    code, verdict, out = gate(fees)
    assert (code, verdict["classification"]) == (1, "entropy_silenced"), out
    (finding,) = [f for f in verdict["findings"] if f["kind"] == "test_changed_to_pass"]
    assert finding["test"] == "test_no_fee_on_the_due_day"
    assert finding["message"].startswith(
        "property test_no_fee_on_the_due_day fails with the base's module on the head's code "
        "(assert 100 == 0) and is skipped with the head's module: the patch made it go quiet "
        "by changing the test, not the code"
    )
    assert "skip_marker" in {f["kind"] for f in verdict["findings"]}


def test_a_real_fix_leaves_the_module_alone_and_nothing_runs_twice(fees: Repo) -> None:
    fees.write("fees.py", FEES_FIXED)
    code, verdict, out = gate(fees)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), out
    assert not (fees.path.parent / "reports" / "base-on-head").exists()


def test_a_signature_change_with_its_calls_updated_fails_by_type_error_and_is_honest(
    fees: Repo,
) -> None:
    fees.write("fees.py", FEES_FIXED.replace("(amount, days_late)", "(amount, *, days_late)"))
    fees.write(
        MODULE,
        PROPERTY.replace("late_fee(1000, 30)", "late_fee(1000, days_late=30)").replace(
            "late_fee(1000, 31)", "late_fee(1000, days_late=31)"
        ),
    )
    code, verdict, out = gate(fees)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), out
    base_on_head = (fees.path.parent / "reports" / "base-on-head" / "junit.xml").read_text()
    assert "TypeError" in base_on_head
    assert changed_to_pass(verdict) == []


def test_a_fix_with_a_refactored_and_an_added_test_is_honest(fees: Repo) -> None:
    fees.write("fees.py", FEES_FIXED)
    fees.write(
        MODULE,
        PROPERTY.replace(
            "    fee = late_fee(1000, 30)\n    assert fee == 0\n",
            "    assert late_fee(1000, 30) == 0\n",
        )
        + "\n\ndef test_no_fee_when_early():\n    assert late_fee(1000, 0) == 0\n",
    )
    code, verdict, out = gate(fees)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), out
    assert (fees.path.parent / "reports" / "base-on-head" / "junit.xml").exists()


# --- the judgement alone ------------------------------------------------------------------


def report(*cases: tuple[str, str, str | None]) -> list[TestCase]:
    return [TestCase(id=i, raw_id=i, outcome=o, message=m) for i, o, m in cases]  # type: ignore[arg-type]


DEFINED = (DefinedTest("test_a", MODULE, 3), DefinedTest("TestB::test_b", MODULE, 9))
A = f"{MODULE}::test_a"
B = f"{MODULE}::TestB::test_b"


PATCHED = Patched(
    gone=frozenset({"late_fee"}),
    resigned=frozenset({"late_fee"}),
    recalled=frozenset({("test_a", "late_fee")}),
)


@pytest.mark.parametrize(
    ("head", "base", "expected"),
    [
        ("passed", ("failed", "assert 1 == 2"), [("test_a", 3)]),
        ("passed", ("failed", "AssertionError: 1 != 2"), [("test_a", 3)]),
        ("passed", ("failed", "Failed: totals differ"), [("test_a", 3)]),
        # any failure counts: the base's test says the head's code is wrong
        ("passed", ("failed", "ValueError: invoice overdue"), [("test_a", 3)]),
        ("passed", ("error", "assert 1 == 2"), [("test_a", 3)]),
        # a TypeError of a function the patch did not re-sign, a name it did not rename
        ("passed", ("failed", "TypeError: total() takes 1 positional argument"), [("test_a", 3)]),
        ("passed", ("failed", "ImportError: cannot import name 'total'"), [("test_a", 3)]),
        (
            "passed",
            ("failed", "AttributeError: module 'fees' has no attribute 'x'"),
            [("test_a", 3)],
        ),
        # re-signed and called differently by the head's test: excused (a note)
        ("passed", ("failed", "TypeError: late_fee() takes 1 positional argument"), []),
        # renamed: cannot measure (never clean, never a finding)
        ("passed", ("failed", "ImportError: cannot import name 'late_fee'"), []),
        ("passed", ("failed", "AttributeError: module 'fees' has no attribute 'late_fee'"), []),
        ("passed", ("passed", None), []),
        ("failed", ("failed", "assert 1 == 2"), []),
        # a skip is green too: the base's test says the code is wrong, the head's stopped asking
        ("skipped", ("failed", "assert 1 == 2"), [("test_a", 3)]),
        ("skipped", ("skipped", None), []),
        ("skipped", ("failed", "TypeError: late_fee() takes 1 positional argument"), []),
    ],
)
def test_any_failure_at_the_base_and_a_pass_at_the_head_is_a_finding(
    head: str, base: tuple[str, str | None], expected: list[tuple[str, int]]
) -> None:
    found = judge(report((A, head, None)), report((A, *base)), DEFINED, (), PATCHED).findings
    assert [(f.test, f.line) for f in found] == expected


def test_a_failure_of_the_base_s_test_side_names_the_files_the_patch_changed() -> None:
    side = ("tests/conftest.py", "tests/data/rows.json", "tests/support/a.py", "tests/b.py")
    base = report((A, "failed", "assert 1 == 2"))
    (found,) = judge(report((A, "passed", None)), base, DEFINED, (), PATCHED, side).findings
    assert found.message.startswith(
        "property test_a fails with the base's test side on the head's code (assert 1 == 2) "
        "and passes with the head's (the patch changed tests/conftest.py, "
        "tests/data/rows.json, tests/support/a.py and 1 more): the patch made it pass by "
        "changing what the test reads, not the code — "
    )
    assert remediation.shown_by_base(found.message) == "assert 1 == 2"


def test_a_resigned_function_the_head_calls_differently_is_a_note_naming_it() -> None:
    base = report((A, "failed", "TypeError: late_fee() takes 1 positional argument but 2"))
    judged = judge(report((A, "passed", None)), base, DEFINED, (), PATCHED)
    assert (judged.findings, judged.unmeasured) == ((), ())
    (note,) = judged.notes
    assert "the patch changed the parameters of late_fee()" in note
    assert "the head's test_a calls it differently" in note


def test_a_resigned_function_the_head_calls_alike_is_still_a_finding() -> None:
    """The head's test calls it as the base's does: it could not pass with that call either,
    so the head's test changed something else to pass."""
    patched = Patched(resigned=frozenset({"late_fee"}))
    base = report((A, "failed", "TypeError: late_fee() takes 1 positional argument but 2"))
    found = judge(report((A, "passed", None)), base, DEFINED, (), patched).findings
    assert [(f.test, f.kind) for f in found] == [("test_a", "test_changed_to_pass")]
    assert "(TypeError: late_fee() takes 1 positional argument but 2)" in found[0].message


def test_a_renamed_name_and_a_module_that_does_not_collect_cannot_be_measured() -> None:
    base = report((A, "failed", "ImportError: cannot import name 'late_fee' from 'fees'"))
    error = (
        "collection failure in tests/test_fees.py:\nTraceback:\n"
        "E   ImportError: cannot import name 'late_fee' from 'fees' (/tmp/x/tree/fees.py)"
    )
    judged = judge(report((A, "passed", None)), base, DEFINED, (error,), PATCHED)
    assert judged.findings == ()
    assert judged.unmeasured == (
        "the base's module cannot be collected against the head's code (ImportError: cannot "
        "import name 'late_fee' from 'fees'): none of its tests could be measured",
        "the base's test_a cannot run on the head's code (ImportError: cannot import name "
        "'late_fee' from 'fees'): the patch renamed or removed late_fee, which it uses",
    )


def test_parametrized_cases_make_one_finding_per_test_and_classes_keep_their_name() -> None:
    head = report((f"{A}[1]", "passed", None), (f"{A}[2]", "passed", None), (B, "passed", None))
    base = report(
        (f"{A}[1]", "failed", "assert 1 == 2"),
        (f"{A}[2]", "failed", "assert 2 == 3"),
        (B, "failed", "assert 'x' == 'y'\n  - y\n  + x"),
    )
    found = judge(head, base, DEFINED).findings
    assert [(f.test, f.line) for f in found] == [("test_a", 3), ("TestB::test_b", 9)]
    assert "(assert 'x' == 'y')" in found[1].message


def test_a_property_rewritten_to_pass_beside_one_still_failing_is_a_masked_defect(
    fees: Repo,
) -> None:
    fees.write("fees.py", FEES_DEFECT.replace("amount // 10", "amount // 11"))
    fees.write(MODULE, TAUTOLOGY)
    code, verdict, out = gate(fees)
    assert (code, verdict["classification"]) == (1, "masked_defect"), out
    assert (verdict["host_a"], verdict["host_b"]) == ("fail", "fail")
    assert changed_to_pass(verdict) == [("test_no_fee_on_the_due_day", 7)]
    (finding,) = [f for f in verdict["findings"] if f["kind"] == "test_changed_to_pass"]
    assert "(assert 90 == 0)" in finding["message"]
