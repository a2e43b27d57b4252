"""Runtime assertion counts through the gate: a test made to return before its assertions by a
guard no static rule reads is rejected by the counts alone; honest patches are not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

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
constraints:
  mutation: "off"
"""

FEES = """\
def late_fee(amount, days_late):
    if days_late > 30:
        return amount // 10
    return 0
"""

PROPERTY = """\
from pathlib import Path

from fees import late_fee


def test_no_fee_until_the_due_day():
    for days in range(0, 31):
        assert late_fee(1000, days) == 0


def test_fee_after_the_due_day():
    fee = late_fee(1000, 31)
    assert fee == 100
    assert fee < 1000
"""

# The guard reads a file the checkout does not have: no environment, platform or clock
# read for the static rules to see, and the assertions stay in the source.
GUARDED = PROPERTY.replace(
    "def test_fee_after_the_due_day():\n",
    "def _should_check():\n"
    "    return Path(__file__).with_name('fees.enabled').exists()\n\n\n"
    "def test_fee_after_the_due_day():\n"
    "    if not _should_check():\n"
    "        return\n",
)

HONEST = {
    "refactor-inline": PROPERTY.replace(
        "    fee = late_fee(1000, 31)\n    assert fee == 100\n    assert fee < 1000\n",
        "    assert late_fee(1000, 31) == 100\n    assert late_fee(1000, 31) < 1000\n",
    ),
    "refactor-into-a-loop": PROPERTY.replace(
        "    assert fee == 100\n    assert fee < 1000\n",
        "    for check in (fee == 100, fee < 1000):\n        assert check\n",
    ),
    "added-test": PROPERTY + "\n\ndef test_fee_is_a_tenth():\n    assert late_fee(50, 40) == 5\n",
    "signature-change": PROPERTY.replace(
        "late_fee(1000, days)", "late_fee(1000, days, 30)"
    ).replace("late_fee(1000, 31)", "late_fee(1000, 31, 30)"),
    "fewer-days-in-the-loop": PROPERTY.replace("range(0, 31)", "range(25, 31)"),
}
# The static rule counts statements in the source: it sees two asserts become one.
STATIC = {"refactor-into-a-loop": ["assertions_dropped"]}
SIGNATURE = FEES.replace("(amount, days_late)", "(amount, days_late, grace)").replace(
    "> 30", "> grace"
)


@pytest.fixture
def fees(repo: Repo, tmp_path: Path) -> Repo:
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("fees.py", FEES)
    repo.write(MODULE, PROPERTY)
    repo.commit("base")
    return repo


def gate(repo: Repo) -> tuple[int, dict[str, Any]]:
    out = repo.path.parent / "verdict.json"
    reports = repo.path.parent / "reports"
    result = repo.cli("gate", "--base-ref", "main", "--json", str(out), "--out", str(reports))
    return result.code, json.loads(out.read_text(encoding="utf-8"))


def test_a_guard_that_skips_the_assertions_is_rejected_by_the_counts(fees: Repo) -> None:
    fees.git("checkout", "-q", "-b", "patch")
    fees.write(MODULE, GUARDED)
    fees.commit("only check when enabled")
    code, verdict = gate(fees)
    assert (code, verdict["classification"]) == (1, "entropy_silenced")
    # the counts alone: no static rule and no other runtime rule saw it
    assert [f["kind"] for f in verdict["findings"]] == ["assertions_skipped_at_runtime"]
    (finding,) = verdict["findings"]
    assert finding["test"] == "test_fee_after_the_due_day"
    assert finding["path"] == MODULE
    assert (
        "host A ran 0 assertions at 0 statement(s), the base 2 assertions" in (finding["message"])
    )
    (test,) = [t for t in verdict["tests"] if t["id"].endswith("test_fee_after_the_due_day")]
    assert test["host_a"] == test["host_b"] == test["base_a"] == "passed"
    assert test["assertions_a"] == {"executed": 0, "sites": 0}
    assert test["base_assertions_a"] == {"executed": 2, "sites": 2}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_patches_keep_their_counts_or_lose_none_of_their_statements(
    fees: Repo, name: str
) -> None:
    fees.git("checkout", "-q", "-b", "patch")
    fees.write(MODULE, HONEST[name])
    if name == "signature-change":
        fees.write("fees.py", SIGNATURE)
    fees.commit(name)
    code, verdict = gate(fees)
    assert [f["kind"] for f in verdict["findings"]] == STATIC.get(name, [])
    if name not in STATIC:
        assert (code, verdict["classification"]) == (0, "merge_candidate")
    counted = [t for t in verdict["tests"] if t["assertions_a"] is not None]
    assert len(counted) == len(verdict["tests"])


def test_a_real_fix_of_a_failing_base_is_not_compared(repo: Repo, tmp_path: Path) -> None:
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("fees.py", FEES.replace("> 30", ">= 30"))  # the defect: a fee on the due day
    repo.write(MODULE, PROPERTY)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "fix")
    repo.write("fees.py", FEES)
    repo.commit("no fee on the due day")
    code, verdict = gate(repo)
    assert verdict["findings"] == []
    assert (code, verdict["classification"]) == (0, "merge_candidate")
    (test,) = [t for t in verdict["tests"] if t["id"].endswith("test_no_fee_until_the_due_day")]
    assert test["base_a"] == "failed"
    assert test["assertions_a"] == {"executed": 31, "sites": 1}


UNITTEST_PROPERTY = """\
import unittest
from pathlib import Path

from fees import late_fee


class FeeTest(unittest.TestCase):
    def test_no_fee_until_the_due_day(self):
        for days in range(0, 31):
            self.assertEqual(late_fee(1000, days), 0)

    def test_fee_after_the_due_day(self):
        fee = late_fee(1000, 31)
        self.assertEqual(fee, 100)
        self.assertLess(fee, 1000)
"""
UNITTEST_GUARDED = UNITTEST_PROPERTY.replace(
    "    def test_fee_after_the_due_day(self):\n",
    "    def test_fee_after_the_due_day(self):\n"
    "        if not Path(__file__).with_name('fees.enabled').exists():\n"
    "            return\n",
)


def test_a_unittest_suite_that_skips_its_assert_methods_is_rejected_by_the_counts(
    repo: Repo, tmp_path: Path
) -> None:
    """self.assert* calls count like `assert` statements: the same guard in a TestCase."""
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("fees.py", FEES)
    repo.write(MODULE, UNITTEST_PROPERTY)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "patch")
    repo.write(MODULE, UNITTEST_GUARDED)
    repo.commit("only check when enabled")
    code, verdict = gate(repo)
    assert (code, verdict["classification"]) == (1, "entropy_silenced")
    assert [f["kind"] for f in verdict["findings"]] == ["assertions_skipped_at_runtime"]
    (finding,) = verdict["findings"]
    assert finding["test"] == "FeeTest::test_fee_after_the_due_day"
    tests = {t["id"].rsplit("::", 1)[-1]: t for t in verdict["tests"]}
    assert tests["test_fee_after_the_due_day"]["assertions_a"] == {"executed": 0, "sites": 0}
    assert tests["test_fee_after_the_due_day"]["base_assertions_a"] == {"executed": 2, "sites": 2}
    assert tests["test_no_fee_until_the_due_day"]["assertions_a"] == {"executed": 31, "sites": 1}
