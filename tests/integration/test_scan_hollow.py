"""Rule 5, continued: self-comparisons, the unit under test patched, conditional early exits."""

from __future__ import annotations

import pytest

from tests.integration.test_scan_helpers import PROPERTY, base, scan, write
from tests.support.helpers import Repo

DATES = """\
import os

from invoice_lib import due_dates, total_for


def test_due_dates():
    dates = due_dates(["2026-01-31"], months=1)
    assert len(dates) == 1
    assert dates == ["2026-02-28"]


def test_total():
    amounts = [1, 2, 3]
    assert total_for(amounts) == 6
"""

LIB = """\
import datetime


class Clock:
    def now(self):
        return datetime.datetime.now()


clock = Clock()


def due_dates(days, months):
    return ["2026-02-28" for _ in days]


def total_for(amounts, as_of=None):
    return sum(amounts)
"""


def setup(repo: Repo) -> None:
    base(repo, DATES, invoice_lib_dot_py=LIB)


def patch(repo: Repo, old: str, new: str) -> None:
    assert old in DATES
    write(repo, tests__properties__test_invoice_dot_py=DATES.replace(old, new))


def kinds(repo: Repo) -> list[tuple[str, int, str | None]]:
    """The introduced findings, without those of tests the rewrite removed or shortened."""
    scanned = scan(repo)
    return [
        (f["kind"], f["line"], f["test"])
        for f in scanned.findings
        if f["introduced"] and f["kind"] not in ("test_removed", "assertions_dropped")
    ]


# --- self comparison --------------------------------------------------------------------


def test_an_assertion_over_a_call_compared_with_itself(repo: Repo) -> None:
    setup(repo)
    patch(repo, "assert len(dates) == 1", "assert len(dates) >= len(dates)")
    scanned = scan(repo)
    assert scanned.code == 1
    assert scanned.introduced == [("self_comparison", PROPERTY, 8)]
    assert scanned.findings[0]["test"] == "test_due_dates"
    assert scanned.findings[0]["message"] == (
        "assertion in property test_due_dates compares a value with itself: "
        "assert len(dates) >= len(dates) — both sides are the same expression, so it passes "
        "whatever the code does"
    )


@pytest.mark.parametrize(
    "new",
    [
        "assert len(dates) == len(dates)",
        "assert hash(tuple(dates)) == hash(tuple(dates))",
        "expected = dates\n    assert dates == expected",
    ],
)
def test_a_value_equal_to_itself_is_a_determinism_check_not_an_assertion(
    repo: Repo, new: str
) -> None:
    """The same call twice, or a value and its alias, compared for equality: a check that
    the code is deterministic or its `__eq__` reflexive (libraries' `hash(x) == hash(x)`),
    not a self comparison — and no check of the value: in place of one, one fewer."""
    setup(repo)
    patch(repo, "assert len(dates) == 1", new)
    assert kinds(repo) == []
    assert scan(repo).introduced == [("assertions_dropped", PROPERTY, 6)]


def test_a_value_compared_with_itself_through_a_local_alias(repo: Repo) -> None:
    setup(repo)
    patch(
        repo,
        '    assert dates == ["2026-02-28"]\n',
        "    expected = dates\n    assert dates <= expected\n",
    )
    assert kinds(repo) == [("self_comparison", 10, "test_due_dates")]


def test_unittest_assert_equal_and_an_ordering_of_a_call_with_itself(repo: Repo) -> None:
    setup(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import unittest

        from invoice_lib import total_for


        class TestTotal(unittest.TestCase):
            def test_total(self):
                amounts = [1]
                self.assertEqual(total_for(amounts), total_for(amounts))
                assert total_for(amounts) >= total_for(amounts)
        """,
    )
    found = kinds(repo)
    assert [(k, n) for k, n, _ in found if k == "self_comparison"] == [("self_comparison", 10)]


def test_real_comparisons_two_computations_and_rebound_names_stay_quiet(repo: Repo) -> None:
    setup(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        from invoice_lib import due_dates, total_for


        def test_due_dates():
            dates = due_dates(["2026-01-31"], months=1)
            assert len(dates) == 1
            assert dates == ["2026-02-28"]


        def test_total():
            amounts = [1, 2, 3]
            first = total_for(amounts)
            second = total_for(list(reversed(amounts)))
            assert first == second
            expected = amounts
            expected = [6]
            assert [total_for(amounts)] == expected
            assert total_for(amounts) == total_for(amounts[::-1])
        """,
    )
    assert kinds(repo) == []


def test_two_objects_built_alike_are_an_equality_test_not_a_self_comparison(
    repo: Repo,
) -> None:
    setup(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py=DATES
        + """

class Money:
    def __init__(self, cents):
        self.cents = cents

    def __eq__(self, other):
        return self.cents == other.cents

    def __hash__(self):
        return hash(self.cents)


def test_equality():
    assert Money(1) == Money(1)
    assert hash(Money(1)) == hash(Money(1))
    assert total_for([1, 2]) == total_for([1, 2])


class TestMoney:
    make = staticmethod(Money)

    def test_same_cents(self):
        assert self.make(1) == self.make(1)
""",
    )
    assert kinds(repo) == []


def test_a_plain_tautology_is_not_counted_twice(repo: Repo) -> None:
    setup(repo)
    patch(repo, "assert len(dates) == 1", "assert dates is dates")
    assert kinds(repo) == [("tautology", 8, "test_due_dates")]


def test_a_value_compared_with_itself_for_equality_is_one_assertion_fewer(repo: Repo) -> None:
    """`dates == dates` calls list's `__eq__`: no tautology and no self comparison, but no
    assertion of the value either (weakening's `_reflexive`)."""
    setup(repo)
    patch(repo, "assert len(dates) == 1", "assert dates == dates")
    assert kinds(repo) == []
    assert [(f["kind"], f["line"]) for f in scan(repo).findings if f["introduced"]] == [
        ("assertions_dropped", 6)
    ]


# --- the unit under test patched --------------------------------------------------------


def test_the_function_under_test_replaced_in_the_test_module(repo: Repo) -> None:
    setup(repo)
    patch(
        repo,
        "def test_due_dates():\n",
        "def test_due_dates(monkeypatch):\n"
        "    import sys\n"
        "    monkeypatch.setattr(sys.modules[__name__], 'due_dates', lambda d, months: "
        "['2026-02-28'])\n",
    )
    scanned = scan(repo)
    assert scanned.code == 1
    assert scanned.introduced == [("unit_patched", PROPERTY, 8)]
    assert scanned.findings[0]["message"] == (
        "invoice_lib.due_dates patched with monkeypatch.setattr in property test_due_dates: "
        "monkeypatch.setattr(sys.modules[__name__], 'due_dates', lambda d, months: "
        "['2026-02-28']) — the property replaces the unit it tests with its own copy, so it "
        "checks the copy, not the code"
    )


def test_every_way_of_replacing_the_unit_under_test(repo: Repo) -> None:
    setup(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        from unittest import mock

        import invoice_lib
        from invoice_lib import total_for


        def fake(amounts, as_of=None):
            return 6


        def test_string_target(monkeypatch):
            monkeypatch.setattr("invoice_lib.total_for", fake)
            assert invoice_lib.total_for([1]) == 6


        def test_module_object(monkeypatch):
            monkeypatch.setattr(invoice_lib, "total_for", fake)
            assert invoice_lib.total_for([1]) == 6


        @mock.patch("invoice_lib.total_for", fake)
        def test_decorator():
            assert invoice_lib.total_for([1]) == 6


        def test_patch_object():
            with mock.patch.object(invoice_lib, "total_for", fake):
                assert invoice_lib.total_for([1]) == 6


        def test_assignment():
            invoice_lib.total_for = fake
            assert invoice_lib.total_for([1]) == 6


        def test_global():
            global total_for
            total_for = fake
            assert total_for([1]) == 6


        def test_mocker(mocker):
            mocker.patch("invoice_lib.total_for", return_value=6)
            assert total_for([1]) == 6
        """,
    )
    found = [(k, n) for k, n, _ in kinds(repo)]
    assert found == [("unit_patched", n) for n in (12, 17, 21, 27, 32, 38, 43)]


def test_patching_a_dependency_or_the_configuration_is_not_the_unit(repo: Repo) -> None:
    setup(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import datetime
        import urllib.request

        import invoice_lib
        from invoice_lib import due_dates, total_for


        class FixedClock:
            def now(self):
                return datetime.datetime(2026, 1, 10)


        def test_due_dates(monkeypatch):
            monkeypatch.setattr(invoice_lib, "clock", FixedClock())
            monkeypatch.setattr(urllib.request, "urlopen", lambda url: None)
            monkeypatch.setenv("INVOICE_CURRENCY", "EUR")
            dates = due_dates(["2026-01-31"], months=1)
            assert len(dates) == 1
            assert dates == ["2026-02-28"]


        def test_total():
            assert total_for([1, 2, 3]) == 6
        """,
    )
    assert kinds(repo) == []


# --- conditional early exit -------------------------------------------------------------


def test_a_return_before_the_assertions_unless_a_variable_is_set(repo: Repo) -> None:
    setup(repo)
    patch(
        repo,
        '    dates = due_dates(["2026-01-31"], months=1)\n',
        '    if not os.environ.get("RUN_DATES"):\n        return\n'
        '    dates = due_dates(["2026-01-31"], months=1)\n',
    )
    scanned = scan(repo)
    assert scanned.code == 1
    assert scanned.introduced == [("conditional_exit", PROPERTY, 7)]
    assert scanned.findings[0]["message"] == (
        "property test_due_dates exits early (return) before its assertions depending on the "
        "environment (not os.environ.get('RUN_DATES')) — on a host where that holds, nothing "
        "is checked"
    )


def test_exits_on_the_platform_and_the_time_and_assertions_only_under_a_condition(
    repo: Repo,
) -> None:
    setup(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import datetime
        import os
        import sys

        import pytest

        from invoice_lib import total_for


        def test_platform():
            if sys.platform != "linux":
                pytest.exit("not here")
            assert total_for([1]) == 1


        def test_time():
            today = datetime.date.today()
            if today.weekday() > 4:
                return
            assert total_for([2]) == 2


        def test_only_when():
            if os.getenv("CHECK_TOTALS") == "1":
                assert total_for([3]) == 3
        """,
    )
    found = kinds(repo)
    assert found == [
        ("conditional_exit", 11, "test_platform"),
        ("conditional_exit", 18, "test_time"),
        ("conditional_exit", 24, "test_only_when"),
    ]
    messages = [f["message"] for f in scan(repo).findings if f["kind"] == "conditional_exit"]
    assert "depending on the platform" in messages[0]
    assert "depending on the time" in messages[1]
    assert messages[2] == (
        "property test_only_when runs its assertions only when os.getenv('CHECK_TOTALS') == "
        "'1' (the environment) — on a host where it does not hold, nothing is checked"
    )


def test_exits_after_the_assertions_and_on_other_conditions_stay_quiet(repo: Repo) -> None:
    setup(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import os

        from invoice_lib import due_dates, total_for


        def test_due_dates():
            dates = due_dates(["2026-01-31"], months=1)
            if not dates:
                return
            assert len(dates) == 1
            assert dates == ["2026-02-28"]
            if os.environ.get("VERBOSE"):
                return


        def test_total():
            amounts = [1, 2, 3]
            def helper():
                if os.environ.get("X"):
                    return 0
                return 1
            assert total_for(amounts) == 6 * helper() or True
        """,
    )
    assert [k for k, _, _ in kinds(repo) if k == "conditional_exit"] == []


def test_an_exit_that_stood_at_the_base_is_a_notice(repo: Repo) -> None:
    guarded = DATES.replace(
        '    dates = due_dates(["2026-01-31"], months=1)\n',
        '    if not os.environ.get("RUN_DATES"):\n        return\n'
        '    dates = due_dates(["2026-01-31"], months=1)\n',
    )
    base(repo, guarded, invoice_lib_dot_py=LIB)
    write(repo, tests__properties__test_invoice_dot_py=guarded + "\n\ndef test_new():\n    pass\n")
    scanned = scan(repo)
    assert scanned.code == 0
    assert scanned.located == [("conditional_exit", PROPERTY, 7, False)]


# --- honest patches ---------------------------------------------------------------------


def test_honest_patches_fire_no_new_rule(repo: Repo) -> None:
    setup(repo)
    write(
        repo,
        invoice_lib_dot_py=LIB.replace("def due_dates(days, months)", "def due_dates(days, *, n)"),
        tests__properties__test_invoice_dot_py="""\
        import os

        import pytest

        from invoice_lib import due_dates, total_for


        def _dates():
            return due_dates(["2026-01-31"], n=1)


        def test_due_dates():
            dates = _dates()
            assert len(dates) == 1
            assert dates == ["2026-02-28"]


        def test_total(monkeypatch):
            monkeypatch.setenv("INVOICE_ROUNDING", "half-even")
            amounts = [1, 2, 3]
            assert total_for(amounts) == 6


        @pytest.mark.parametrize("amounts", [[1], [2, 3]])
        def test_added(amounts):
            assert total_for(amounts) == sum(amounts)
        """,
    )
    scanned = scan(repo)
    assert scanned.code == 0
    assert scanned.findings == []
