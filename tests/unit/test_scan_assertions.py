"""The runtime assertion-count rule, over paired results (pure)."""

from __future__ import annotations

import pytest

from entropy_action.scan.assertions import assertions_skipped, skipped
from entropy_action.verdict.model import TEST_RESULT, Assertions, TestResult


def counts(executed: int, sites: int) -> Assertions:
    return Assertions(executed=executed, sites=sites)


@pytest.mark.parametrize(
    ("base", "head", "fires"),
    [
        ((3, 3), (0, 0), True),  # returned before every assertion
        ((1, 1), (0, 0), True),
        ((6, 6), (2, 2), True),  # a guard skipped most of them
        ((10, 1), (4, 1), False),  # a loop over data the patch shrank: same statement
        ((10, 1), (0, 0), True),  # ... down to nothing: the test checks nothing
        ((4, 4), (4, 1), False),  # four asserts refactored into a loop over a table of four
        ((4, 4), (2, 2), True),  # half of the checks and half of the statements gone
        ((2, 2), (1, 1), True),  # the boundary: one of two asserts replaced (a broad raises)
        ((4, 2), (2, 1), True),  # half of each measure
        ((4, 4), (3, 3), False),  # more than half kept
        ((4, 1), (2, 1), False),  # a loop run half as often: the statement is still there
        ((2, 2), (1, 2), False),  # both statements still ran
        ((3, 3), (2, 2), False),  # one conditional assertion fewer
        ((0, 0), (0, 0), False),  # asserted nothing at the base either (pytest.raises only)
        ((2, 2), (5, 5), False),  # stronger
    ],
)
def test_the_rule_row_by_row(base: tuple[int, int], head: tuple[int, int], fires: bool) -> None:
    assert skipped(counts(*base), counts(*head)) is fires


def result(**changes: object) -> TestResult:
    fields: dict[str, object] = {
        "id": "tests/test_fees.py::test_total[2]",
        "host_a": "passed",
        "host_b": "passed",
        "path": "tests/test_fees.py",
        "line": 7,
        "base_a": "passed",
        "assertions_a": counts(0, 0),
        "assertions_b": counts(0, 0),
        "base_assertions_a": counts(3, 2),
    }
    fields.update(changes)
    return TEST_RESULT.validate_python(fields)


def test_a_case_that_ran_none_of_its_base_assertions_is_a_finding() -> None:
    (finding,) = assertions_skipped([result()])
    assert finding.kind == "assertions_skipped_at_runtime"
    assert finding.introduced
    assert finding.location() == "tests/test_fees.py:7"
    assert finding.test == "test_total"
    assert finding.message == (
        "property test_total[2] passed without running its assertions: host A ran 0 "
        "assertions at 0 statement(s), the base 3 assertions at 2 statement(s) — a test that "
        "returns before its checks proves nothing (counted: the `assert` statements pytest "
        "rewrites and unittest's `self.assert*` calls)"
    )


def test_host_b_is_compared_with_the_base_on_host_b_only() -> None:
    both = result(base_b="passed", base_assertions_b=counts(1, 1))
    (finding,) = assertions_skipped([both])
    assert "host A ran 0 assertions" in finding.message
    assert "host B ran 0 assertions at 0 statement(s), the base 1 assertion" in finding.message
    only_b = result(assertions_a=counts(3, 2), base_b="passed", base_assertions_b=counts(1, 1))
    (finding,) = assertions_skipped([only_b])
    assert "host A" not in finding.message


@pytest.mark.parametrize(
    "changes",
    [
        {"host_a": "failed"},  # failing at the head: its outcome judges it
        {"base_a": "failed"},  # failed at the base: nothing to lose
        {"base_a": "skipped"},
        {"base_a": None, "base_assertions_a": None},  # no base run
        {"base_assertions_a": None},  # a case new at the head (or counts not recorded)
        {"assertions_a": None},  # the head's counts are missing: not compared
        {"assertions_a": counts(3, 2)},
    ],
    ids=repr,
)
def test_no_finding_without_two_passing_counted_runs(changes: dict[str, object]) -> None:
    assert assertions_skipped([result(**changes)]) == []


def test_a_class_test_is_named_with_its_class() -> None:
    (finding,) = assertions_skipped(
        [result(id="tests/test_fees.py::TestFees::test_total", path=None, line=None)]
    )
    assert finding.test == "TestFees::test_total"
    assert finding.location() == "tests/test_fees.py:1"
