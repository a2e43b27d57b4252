"""Counting the assertions each test executed, inside the test process (assertcount.py)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from entropy_action.evidence import junitcases
from entropy_action.hosts import testfiles

pytest_plugins = ["pytester"]

HOOK_ON = ("-o", "enable_assertion_pass_hook=true")

COUNTED = """
import pytest


@pytest.fixture
def checked():
    assert True  # setup
    yield 2
    assert True  # teardown


def test_three():
    value = 3
    assert value == 3
    assert value > 0
    assert value < 10


def test_loop():
    for item in range(5):
        assert item >= 0


def test_returns_early():
    if 1 + 1 == 2:
        return
    assert False


def test_fixture(checked):
    assert checked == 2


def test_helper_in_conftest():
    from conftest import check_positive

    check_positive(4)


@pytest.mark.parametrize("n", [0, 3])
def test_cases(n):
    for item in range(n):
        assert item < n
"""

CONFTEST = """
def check_positive(value):
    assert value > 0
    assert isinstance(value, int)
"""


def counts(junit: Path) -> dict[str, tuple[str | None, str | None]]:
    """testcase name -> (entropy_assertions, entropy_assertion_sites)."""
    found = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        props = {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
        name = case.get("name", "")
        found[name] = (props.get("entropy_assertions"), props.get("entropy_assertion_sites"))
    return found


def run(pytester: pytest.Pytester, *extra: str) -> tuple[pytest.RunResult, Path]:
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest_subprocess(
        "-p",
        "entropy_action.testproc.assertcount",
        "-p",
        "no:cacheprovider",
        f"--junitxml={junit}",
        *extra,
    )
    return result, junit


def test_each_test_records_the_assertions_it_executed_and_their_statements(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_counted=COUNTED)
    pytester.makeconftest(CONFTEST)
    result, junit = run(pytester, *HOOK_ON)
    result.assert_outcomes(passed=7)
    assert counts(junit) == {
        "test_three": ("3", "3"),
        "test_loop": ("5", "1"),  # one statement, five times
        "test_returns_early": ("0", "0"),
        "test_fixture": ("3", "3"),  # setup, call and teardown all count
        "test_helper_in_conftest": ("2", "2"),  # conftests are rewritten too
        "test_cases[0]": ("0", "0"),
        "test_cases[3]": ("3", "1"),
    }


def test_without_the_hook_nothing_is_recorded(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_counted=COUNTED)
    pytester.makeconftest(CONFTEST)
    result, junit = run(pytester)
    result.assert_outcomes(passed=7)
    assert set(counts(junit).values()) == {(None, None)}


def test_plain_assertions_count_none(pytester: pytest.Pytester) -> None:
    """--assert=plain rewrites nothing: every count is 0, which the gate compares as such."""
    pytester.makepyfile(test_counted=COUNTED)
    pytester.makeconftest(CONFTEST)
    result, junit = run(pytester, *HOOK_ON, "--assert=plain")
    result.assert_outcomes(passed=7)
    assert set(counts(junit).values()) == {("0", "0")}


def test_a_project_that_implements_the_hook_itself_keeps_it(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nenable_assertion_pass_hook = true\n")
    pytester.makeconftest(
        """
SEEN = []

def pytest_assertion_pass(item, lineno, orig, expl):
    SEEN.append(orig)

def pytest_sessionfinish(session):
    with open("seen.txt", "w") as handle:
        handle.write("\\n".join(SEEN))
"""
    )
    pytester.makepyfile(test_two="def test_two():\n    assert 1 == 1\n    assert 2 == 2\n")
    result, junit = run(pytester, *HOOK_ON)
    result.assert_outcomes(passed=1)
    assert counts(junit) == {"test_two": ("2", "2")}
    assert (pytester.path / "seen.txt").read_text() == "1 == 1\n2 == 2"


def test_a_failing_assertion_is_not_counted(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_fail="def test_fail():\n    assert 1 == 1\n    assert 1 == 2\n")
    result, junit = run(pytester, *HOOK_ON)
    result.assert_outcomes(failed=1)
    assert counts(junit) == {"test_fail": ("1", "1")}


def test_the_reader_takes_the_counts_from_the_report(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_counted=COUNTED)
    pytester.makeconftest(CONFTEST)
    _, junit = run(pytester, *HOOK_ON, "-o", "junit_family=xunit1")
    tests, errors = junitcases.parse_junit(junit.read_bytes(), "junit.xml")
    assert errors == ()
    by_id = {test.id: (test.assertions, test.assertion_sites) for test in tests}
    assert by_id["test_counted.py::test_loop"] == (5, 1)
    assert by_id["test_counted.py::test_cases[0]"] == (0, 0)


@pytest.mark.parametrize("value", ["-1", "1e3", "²", "12345678901", "", "0x10"], ids=repr)
def test_the_reader_ignores_counts_that_are_not_small_integers(value: str) -> None:
    xml = (
        '<testsuite><testcase classname="t" name="test_a" file="t.py">'
        f'<properties><property name="entropy_assertions" value="{value}"/>'
        '<property name="entropy_assertion_sites" value="1"/></properties>'
        "</testcase></testsuite>"
    ).encode()
    (test,), _ = junitcases.parse_junit(xml, "junit.xml")
    assert test.assertions is None
    assert test.assertion_sites == 1


def test_a_stale_rewrite_without_the_hook_is_dropped_before_a_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pytest reuses a cached rewrite made without the hook: its assertions count as none,
    unless the runner drops the property module's and conftests' cached rewrites first."""
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    pytester.makepyfile(test_counted=COUNTED)
    pytester.makeconftest(CONFTEST)
    result, _ = run(pytester)  # a developer's own run, caching rewrites without the hook
    result.assert_outcomes(passed=7)
    cached = sorted(p.name for p in (pytester.path / "__pycache__").glob("*-pytest-*.pyc"))
    assert [name.split(".")[0] for name in cached] == ["conftest", "test_counted"]
    _, junit = run(pytester, *HOOK_ON)
    assert counts(junit)["test_three"] == ("0", "0")  # the stale rewrite fires no hook
    testfiles.drop_rewritten_pycs(pytester.path, "test_counted.py")
    assert list((pytester.path / "__pycache__").glob("*-pytest-*.pyc")) == []
    _, junit = run(pytester, *HOOK_ON)
    assert counts(junit)["test_three"] == ("3", "3")


def test_passing_assertions_are_counted_without_building_their_explanation(
    pytester: pytest.Pytester,
) -> None:
    """The hook made pytest repr every operand of every passing assert; counting must not."""
    pytester.makepyfile(
        test_reprs="""
REPRS = []


class Loud:
    def __eq__(self, other):
        return True

    def __repr__(self):
        REPRS.append(1)
        return "Loud()"


def test_compare():
    assert Loud() == Loud()
    assert [Loud()] == [Loud()]


def test_nothing_was_repr_ed():
    assert REPRS == []
"""
    )
    result, junit = run(pytester, *HOOK_ON)
    result.assert_outcomes(passed=2)
    assert counts(junit)["test_compare"] == ("2", "2")


def test_a_pytest_without_the_known_check_counts_through_the_public_hook(
    pytester: pytest.Pytester,
) -> None:
    """A pass check of another shape (here wrapped in a partial) leaves the fast path off:
    the plugin registers the hook, and the counts are the same."""
    pytester.makeconftest(
        CONFTEST
        + """
import functools

import _pytest.assertion.rewrite as rewrite

rewrite._check_if_assertion_pass_impl = functools.partial(rewrite._check_if_assertion_pass_impl)
"""
    )
    pytester.makepyfile(test_counted=COUNTED)
    result, junit = run(pytester, *HOOK_ON)
    result.assert_outcomes(passed=7)
    assert counts(junit)["test_three"] == ("3", "3")
    assert counts(junit)["test_loop"] == ("5", "1")
    assert counts(junit)["test_helper_in_conftest"] == ("2", "2")


UNITTEST = """
import unittest


def _enabled():
    return False


class FeeTest(unittest.TestCase):
    def setUp(self):
        self.assertTrue(True)

    def test_equal(self):
        self.assertEqual([1, 2], [1, 2])  # assertEqual calls assertListEqual: one
        self.assertIn(2, [1, 2])

    def test_loop(self):
        for item in range(4):
            self.assertGreaterEqual(item, 0)

    def test_raises(self):
        with self.assertRaises(ZeroDivisionError):
            1 / 0

    def test_broad_raises(self):  # any defect that raises satisfies it: not counted
        with self.assertRaises(Exception):
            1 / 0
        with self.assertRaises((KeyError, BaseException)):
            {}["x"]
        self.assertRaises(Exception, int, "x")

    def test_returns_early(self):
        if not _enabled():
            return
        self.assertEqual(1, 1)

    def test_subtests(self):
        for item in range(2):
            with self.subTest(item=item):
                self.assertLess(item, 2)

    def test_mixed(self):
        assert 1 == 1
        self.assertAlmostEqual(0.1 + 0.2, 0.3)
"""


def test_unittest_assert_methods_are_counted_once_per_call(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_unit=UNITTEST)
    result, junit = run(pytester, *HOOK_ON)
    result.assert_outcomes(passed=7)
    assert counts(junit) == {
        "test_equal": ("3", "3"),  # setUp's assertTrue counts too
        "test_loop": ("5", "2"),
        "test_raises": ("2", "2"),
        "test_broad_raises": ("1", "1"),  # setUp's only
        "test_returns_early": ("1", "1"),  # setUp's only
        "test_subtests": ("3", "2"),
        "test_mixed": ("3", "3"),  # a rewritten assert and a method
    }


def test_a_failing_unittest_assertion_is_not_counted_and_its_traceback_is_the_tests(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_unit_fail="""
import unittest


class FailTest(unittest.TestCase):
    def test_fail(self):
        self.assertEqual(1, 1)
        self.assertEqual([1, 2], [1, 3])
"""
    )
    result, junit = run(pytester, *HOOK_ON)
    result.assert_outcomes(failed=1)
    assert counts(junit) == {"test_fail": ("1", "1")}
    result.stdout.fnmatch_lines(["*self.assertEqual([[]1, 2], [[]1, 3])*", "E*AssertionError*"])
    assert "assertcount" not in result.stdout.str()


def test_unittest_methods_are_left_alone_without_the_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_unit=UNITTEST)
    pytester.makeconftest(
        """
import unittest

def pytest_sessionfinish(session):
    with open("wrapped.txt", "w") as handle:
        handle.write(str(hasattr(unittest.TestCase.assertEqual, "__wrapped__")))
"""
    )
    result, junit = run(pytester)
    result.assert_outcomes(passed=7)
    assert set(counts(junit).values()) == {(None, None)}
    assert (pytester.path / "wrapped.txt").read_text() == "False"
