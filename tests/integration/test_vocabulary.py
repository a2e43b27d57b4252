"""One vocabulary of assertions (testproc/vocabulary.py): the static rules and the run-time
counter read the same table, and every unittest assertion method of the running Python (and
of the other interpreters here) is in it."""

from __future__ import annotations

import json
import subprocess
import textwrap
import unittest
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from entropy_action.hosts import testfiles
from entropy_action.testproc import protocol, vocabulary
from tests.integration.test_scan_helpers import PROPERTY, base, scan, write
from tests.support.helpers import Repo

pytest_plugins = ["pytester"]

PYENV = Path("/root/.pyenv/versions")
OTHER_PYTHONS = ("3.10.13", "3.12.1", "3.13.0")
LISTING = (
    "import json, unittest\n"
    "print(json.dumps(sorted(n for n in dir(unittest.TestCase)"
    " if n.startswith({prefixes!r}) and callable(getattr(unittest.TestCase, n)))))\n"
)


def _assertion_methods(case: Any = unittest.TestCase) -> set[str]:
    return {
        name
        for name in dir(case)
        if name.startswith(vocabulary.UNITTEST_PREFIXES) and callable(getattr(case, name))
    }


# --- the table --------------------------------------------------------------------------


def test_every_unittest_assertion_method_of_this_python_is_classified() -> None:
    unclassified = _assertion_methods() - vocabulary.UNITTEST_ASSERTIONS
    assert unclassified == set()


@pytest.mark.parametrize("version", OTHER_PYTHONS)
def test_every_unittest_assertion_method_of_another_python_is_classified(version: str) -> None:
    python = PYENV / version / "bin" / "python"
    if not python.exists():
        pytest.skip(f"no Python {version} at {python}")
    script = LISTING.format(prefixes=vocabulary.UNITTEST_PREFIXES)
    listed = subprocess.run(
        [str(python), "-I", "-c", script], capture_output=True, text=True, check=True
    )
    names = set(json.loads(listed.stdout))
    assert "assertEqual" in names
    assert names - vocabulary.UNITTEST_ASSERTIONS == set()


def test_the_classes_are_apart_and_the_counter_counts_every_assertion_method() -> None:
    assert vocabulary.UNITTEST_SAME_SIDES.isdisjoint(vocabulary.UNITTEST_OTHER)
    assert vocabulary.UNITTEST_TRUE | vocabulary.UNITTEST_FALSE <= vocabulary.UNITTEST_OTHER
    assert vocabulary.COUNTED == vocabulary.UNITTEST_ASSERTIONS
    assert all(name.startswith(vocabulary.UNITTEST_PREFIXES) for name in vocabulary.COUNTED)


# A value for each same-sides method that its type checks accept.
SAME_VALUE: dict[str, object] = {
    "assertDictEqual": {1: 2},
    "assertDictContainsSubset": {1: 2},
    "assertMultiLineEqual": "a\nb",
    "assertSetEqual": {1},
    "assertTupleEqual": (1,),
}


@pytest.mark.parametrize("method", sorted(vocabulary.UNITTEST_SAME_SIDES))
def test_a_same_sides_method_passes_on_one_value_whatever_it_is(method: str) -> None:
    """What makes a method same-sides: given one value twice, it cannot fail."""
    case = unittest.TestCase()
    if not hasattr(case, method):
        pytest.skip(f"{method} is not a method of this Python's TestCase")
    value = SAME_VALUE.get(method, [3, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the < 3.12 aliases
        getattr(case, method)(value, value)


@pytest.mark.parametrize(
    ("name", "dotted", "expected"),
    [
        ("assertEqual", None, True),
        ("failUnlessEqual", None, True),  # an alias before 3.12, not named assert*
        ("failIf", None, True),
        ("assert_called_once", None, True),  # mocks': a static assertion, not counted
        ("check_total", None, False),
        ("raises", "pytest.raises", True),
        ("approx", "pytest.approx", True),
        ("skip", "pytest.skip", False),
        (None, None, False),
        ("fail", None, False),  # unittest's self.fail(): it fails, never passes
    ],
)
def test_what_the_scan_calls_an_assertion(
    name: str | None, dotted: str | None, expected: bool
) -> None:
    assert vocabulary.asserting_call(name, dotted) is expected


# --- the scan: every same-sides method is caught as assertEqual is ---------------------

UNITTEST_BASE = """\
import unittest

from invoice_lib import total_for


class TestTotal(unittest.TestCase):
    def test_total(self):
        amounts = [1, 2, 3]
        self.assertEqual(total_for(amounts), 6)
        self.assertTrue(total_for([]) == 0)
"""


@pytest.mark.parametrize("method", sorted(vocabulary.UNITTEST_SAME_SIDES))
def test_a_same_sides_method_on_one_value_is_caught_like_assert_equal(
    repo: Repo, method: str
) -> None:
    """`self.assertSetEqual(s, s)` passed weakening's rule while `self.assertEqual(s, s)` was
    a tautology: every same-sides method is judged as assertEqual is. Identity and order
    (assertIs, assertGreaterEqual, …) on one value are a tautology, and over a call a
    self_comparison (hollow); equality calls `__eq__` and is neither, but checks none of the
    value: in place of a value assertion, the test checks one fewer."""
    base(repo, UNITTEST_BASE)
    write(
        repo,
        tests__properties__test_invoice_dot_py=UNITTEST_BASE.replace(
            "        self.assertEqual(total_for(amounts), 6)\n",
            f"        self.{method}(amounts, amounts)\n"
            f"        self.{method}(total_for(amounts), total_for(amounts))\n",
        ),
    )
    scanned = scan(repo)
    assert scanned.code == 1
    if method in vocabulary.UNITTEST_EQUALITY:  # `==` calls __eq__: neither is an assertion
        assert scanned.introduced == [("assertions_dropped", PROPERTY, 7)]
        return
    assert scanned.introduced == [("tautology", PROPERTY, 9), ("self_comparison", PROPERTY, 10)]
    tautology, self_comparison = scanned.findings
    assert tautology["message"] == (
        f"assertion in property TestTotal::test_total cannot fail: "
        f"self.{method}(amounts, amounts) — it checks nothing"
    )
    assert f"self.{method}(total_for(amounts), total_for(amounts))" in self_comparison["message"]


def test_a_dropped_alias_assertion_counts_as_a_dropped_assertion(repo: Repo) -> None:
    """`failUnless` (an assertTrue alias before 3.12) is an assertion to the static count."""
    base(repo, UNITTEST_BASE.replace("self.assertTrue(", "self.failUnless("))
    write(
        repo,
        tests__properties__test_invoice_dot_py=UNITTEST_BASE.replace(
            "        self.assertTrue(total_for([]) == 0)\n", ""
        ),
    )
    scanned = scan(repo)
    assert [f["kind"] for f in scanned.findings if f["introduced"]] == ["assertions_dropped"]
    assert "checks 1 assertion(s), 2 at the base" in scanned.findings[0]["message"]


# --- the counter: exactly the vocabulary's methods --------------------------------------

# One passing call of each counted method (a table test: a method added to the vocabulary
# without a call here fails below).
CALLS = {
    "assertEqual": "self.assertEqual(1, 1)",
    "assertEquals": "self.assertEquals(1, 1)",
    "failUnlessEqual": "self.failUnlessEqual(1, 1)",
    "assertAlmostEqual": "self.assertAlmostEqual(1.0, 1.0)",
    "assertAlmostEquals": "self.assertAlmostEquals(1.0, 1.0)",
    "failUnlessAlmostEqual": "self.failUnlessAlmostEqual(1.0, 1.0)",
    "assertCountEqual": "self.assertCountEqual([1, 2], [2, 1])",
    "assertDictEqual": "self.assertDictEqual({1: 2}, {1: 2})",
    "assertListEqual": "self.assertListEqual([1], [1])",
    "assertMultiLineEqual": "self.assertMultiLineEqual('a', 'a')",
    "assertSequenceEqual": "self.assertSequenceEqual([1], [1])",
    "assertSetEqual": "self.assertSetEqual({1}, {1})",
    "assertTupleEqual": "self.assertTupleEqual((1,), (1,))",
    "assertDictContainsSubset": "self.assertDictContainsSubset({}, {1: 2})",
    "assertIs": "self.assertIs(None, None)",
    "assertGreaterEqual": "self.assertGreaterEqual(2, 1)",
    "assertLessEqual": "self.assertLessEqual(1, 2)",
    "assertTrue": "self.assertTrue(True)",
    "assert_": "self.assert_(True)",
    "failUnless": "self.failUnless(True)",
    "assertFalse": "self.assertFalse(False)",
    "failIf": "self.failIf(False)",
    "assertNotEqual": "self.assertNotEqual(1, 2)",
    "assertNotEquals": "self.assertNotEquals(1, 2)",
    "failIfEqual": "self.failIfEqual(1, 2)",
    "assertNotAlmostEqual": "self.assertNotAlmostEqual(1.0, 2.0)",
    "assertNotAlmostEquals": "self.assertNotAlmostEquals(1.0, 2.0)",
    "failIfAlmostEqual": "self.failIfAlmostEqual(1.0, 2.0)",
    "assertIsNot": "self.assertIsNot(1, None)",
    "assertGreater": "self.assertGreater(2, 1)",
    "assertLess": "self.assertLess(1, 2)",
    "assertIn": "self.assertIn(1, [1])",
    "assertNotIn": "self.assertNotIn(2, [1])",
    "assertIsNone": "self.assertIsNone(None)",
    "assertIsNotNone": "self.assertIsNotNone(1)",
    "assertIsInstance": "self.assertIsInstance(1, int)",
    "assertNotIsInstance": "self.assertNotIsInstance(1, str)",
    "assertRegex": "self.assertRegex('abc', 'b')",
    "assertNotRegex": "self.assertNotRegex('abc', 'x')",
    "assertRegexpMatches": "self.assertRegexpMatches('abc', 'b')",
    "assertNotRegexpMatches": "self.assertNotRegexpMatches('abc', 'x')",
    "assertRaises": "self.assertRaises(ValueError, int, 'x')",
    "assertRaisesRegex": "self.assertRaisesRegex(ValueError, 'invalid', int, 'x')",
    "assertRaisesRegexp": "self.assertRaisesRegexp(ValueError, 'invalid', int, 'x')",
    "failUnlessRaises": "self.failUnlessRaises(ValueError, int, 'x')",
    "assertWarns": "self.assertWarns(UserWarning, warnings.warn, 'w')",
    "assertWarnsRegex": "self.assertWarnsRegex(UserWarning, 'w', warnings.warn, 'w')",
    "assertLogs": "with self.assertLogs('x'):\n            logging.getLogger('x').warning('w')",
    "assertNoLogs": "with self.assertNoLogs('y'):\n            pass",
    "assertStartsWith": "self.assertStartsWith('ab', 'a')",
    "assertNotStartsWith": "self.assertNotStartsWith('ab', 'b')",
    "assertEndsWith": "self.assertEndsWith('ab', 'b')",
    "assertNotEndsWith": "self.assertNotEndsWith('ab', 'a')",
    "assertHasAttr": "self.assertHasAttr(1, 'real')",
    "assertNotHasAttr": "self.assertNotHasAttr(1, 'nothing')",
    "assertIsSubclass": "self.assertIsSubclass(bool, int)",
    "assertNotIsSubclass": "self.assertNotIsSubclass(int, str)",
}


def test_every_counted_method_has_a_call_in_the_table() -> None:
    assert set(CALLS) == set(vocabulary.COUNTED)


def _unittest_module(names: list[str]) -> str:
    body = "\n".join(f"        {CALLS[name]}" for name in names)
    return textwrap.dedent(
        """\
        import logging
        import unittest
        import warnings


        class TestEach(unittest.TestCase):
            def test_each(self):
                warnings.simplefilter("ignore", DeprecationWarning)
        """
    ) + (body + "\n")


def test_the_counter_counts_each_counted_method_once(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A real run of the copied counter (with its copied vocabulary) over a TestCase calling
    each counted method of this Python once: the count is the number of methods."""
    present = sorted(name for name in vocabulary.COUNTED if hasattr(unittest.TestCase, name))
    assert _assertion_methods() <= set(present)
    pytester.makepyfile(test_each=_unittest_module(present))
    folder = testfiles.install_plugin(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(folder))
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest_subprocess(
        "-p", protocol.ASSERTCOUNT_MODULE, "-o", f"{protocol.ASSERTION_HOOK_INI}=true",
        "-p", "no:cacheprovider", f"--junitxml={junit}",
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    (case,) = ET.parse(junit).getroot().iter("testcase")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props == {
        "entropy_assertions": str(len(present)),
        "entropy_assertion_sites": str(len(present)),
    }
