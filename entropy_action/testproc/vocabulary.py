"""What counts as an assertion: one vocabulary for the static rules and the run-time counter.

Read by scan/weakening.py (tautologies, dropped assertions, swallowed ones), scan/hollow.py
(self-comparisons, exits before the assertions), scan/assertions.py (its message) and, inside
the test process, assertcount.py (copied there beside it as `entropy_gate_vocabulary`, see
hosts.testfiles). Standard library only, and nothing is imported here: names, not behaviour.

unittest's `TestCase` assertion methods fall in two classes, and together they are every
method of `TestCase` named with UNITTEST_PREFIXES on Python 3.10 to 3.14 (tests/
test_vocabulary.py checks the running Python's against them, so a new one cannot slip by):

- UNITTEST_SAME_SIDES: methods that pass whenever their first two arguments are one value
  (`self.assertSetEqual(s, s)` cannot fail);
- UNITTEST_OTHER: every other assertion method (one argument, a difference, a containment,
  an exception, a warning or a log expected).

Statically, an assertion is an `assert` statement, a call of a function whose name starts with
STATIC_PREFIX in any case (a project's `assert_valid()`, mocks' `assert_called_once()`) or is
a unittest method, and a call of one of PYTEST_ASSERTIONS.

At run time the counter counts the rewritten `assert` statements that passed and each call
of a COUNTED method of `TestCase` that returned (made from outside unittest). pytest's
helpers and mocks' `assert_called_*` are not counted there: a patch that drops one is still
seen by the static count (weakening's `assertions_dropped`).
"""

from __future__ import annotations

UNITTEST_PREFIXES = ("assert", "failUnless", "failIf")  # the last two: aliases before 3.12

UNITTEST_SAME_SIDES = frozenset(
    {
        "assertEqual",
        "assertEquals",  # < 3.12
        "failUnlessEqual",  # < 3.12
        "assertAlmostEqual",
        "assertAlmostEquals",  # < 3.12
        "failUnlessAlmostEqual",  # < 3.12
        "assertCountEqual",
        "assertDictEqual",
        "assertListEqual",
        "assertMultiLineEqual",
        "assertSequenceEqual",
        "assertSetEqual",
        "assertTupleEqual",
        "assertDictContainsSubset",  # < 3.12: a dict contains itself
        "assertIs",
        "assertGreaterEqual",
        "assertLessEqual",
    }
)

# the same-sides methods that compare their two arguments with `==` (what the scan calls a
# value compared with itself for equality: scan/hollow.py)
UNITTEST_EQUALITY = UNITTEST_SAME_SIDES - {
    "assertIs",
    "assertGreaterEqual",
    "assertLessEqual",
    "assertDictContainsSubset",
}

UNITTEST_TRUE = frozenset({"assertTrue", "assert_", "failUnless"})  # pass on a true argument
UNITTEST_FALSE = frozenset({"assertFalse", "failIf"})  # pass on a false argument

UNITTEST_OTHER = (
    UNITTEST_TRUE
    | UNITTEST_FALSE
    | frozenset(
        {
            "assertNotEqual",
            "assertNotEquals",  # < 3.12
            "failIfEqual",  # < 3.12
            "assertNotAlmostEqual",
            "assertNotAlmostEquals",  # < 3.12
            "failIfAlmostEqual",  # < 3.12
            "assertIsNot",
            "assertGreater",
            "assertLess",
            "assertIn",
            "assertNotIn",
            "assertIsNone",
            "assertIsNotNone",
            "assertIsInstance",
            "assertNotIsInstance",
            "assertRegex",
            "assertNotRegex",
            "assertRegexpMatches",  # < 3.12
            "assertNotRegexpMatches",  # < 3.12
            "assertRaises",
            "assertRaisesRegex",
            "assertRaisesRegexp",  # < 3.12
            "failUnlessRaises",  # < 3.12
            "assertWarns",
            "assertWarnsRegex",
            "assertLogs",
            "assertNoLogs",
            "assertStartsWith",  # 3.14
            "assertNotStartsWith",  # 3.14
            "assertEndsWith",  # 3.14
            "assertNotEndsWith",  # 3.14
            "assertHasAttr",  # 3.14
            "assertNotHasAttr",  # 3.14
            "assertIsSubclass",  # 3.14
            "assertNotIsSubclass",  # 3.14
        }
    )
)

UNITTEST_ASSERTIONS = UNITTEST_SAME_SIDES | UNITTEST_OTHER
COUNTED = UNITTEST_ASSERTIONS  # the TestCase methods the run-time counter counts

# pytest's context managers and helpers that check something (dotted, as the scan resolves).
PYTEST_ASSERTIONS = frozenset(
    {"pytest.raises", "pytest.warns", "pytest.deprecated_call", "pytest.approx", "pytest.fail"}
)

STATIC_PREFIX = "assert"  # compared case-insensitively with a callee's name
ASSERTION_ERROR = "AssertionError"
BROAD_EXCEPTIONS = frozenset({"Exception", "BaseException"})  # an except that catches it too
# unittest's methods that expect an exception: with a broad one (BROAD_EXCEPTIONS, alone or
# in a tuple) any defect that raises satisfies them, so they are no precise assertion (the
# scan's broad.py; the run-time counter does not count them either)
UNITTEST_RAISES = frozenset(
    {"assertRaises", "assertRaisesRegex", "assertRaisesRegexp", "failUnlessRaises"}
)

# What the count of executed assertions is made of, for the messages that report it.
COUNTED_TEXT = "the `assert` statements pytest rewrites and unittest's `self.assert*` calls"


def asserting_call(name: str | None, dotted: str | None = None) -> bool:
    """Whether a call is an assertion, statically: `name` is the callee's last name
    (`assertEqual` in `self.assertEqual`), `dotted` what the scan resolved it to."""
    if dotted in PYTEST_ASSERTIONS:
        return True
    return bool(name) and (
        str(name).lower().startswith(STATIC_PREFIX) or name in UNITTEST_ASSERTIONS
    )
