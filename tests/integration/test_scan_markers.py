"""Rule 1: skip markers on a property test, its class or its module, whatever their condition."""

from __future__ import annotations

from tests.integration.test_scan_helpers import CLEAN, PROPERTY, base, scan, write
from tests.support.helpers import Repo


def test_skipif_true_on_a_property_is_found_at_its_decorator(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import pytest


        @pytest.mark.skipif(True, reason="stable")
        def test_total():
            assert 1 + 1 == 2
        """,
    )
    scanned = scan(repo)
    assert scanned.code == 1
    assert scanned.located == [("skip_marker", PROPERTY, 4, True)]
    assert scanned.result.out == (
        f"{PROPERTY}:4: skip marker 'skipif' on property test_total: "
        "pytest.mark.skipif(True, reason='stable') — it skips the property when True "
        "(counted whatever the condition is under the pins)\n"
        "scan: 1 finding(s) introduced by the patch, 0 pre-existing (notices)\n"
    )


def test_a_condition_that_is_false_under_the_pins_still_counts(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import os

        import pytest as pt

        needs_utc = pt.mark.skipif(os.environ.get("TZ") != "UTC", reason="tz")


        @needs_utc
        def test_total():
            assert True is not False
        """,
    )
    scanned = scan(repo)
    assert scanned.located == [("skip_marker", PROPERTY, 8, True)]
    assert "pytest.mark.skipif(os.environ.get('TZ') != 'UTC'" in scanned.findings[0]["message"]


def test_a_forbidden_marker_names_the_constraint(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import pytest


        @pytest.mark.flaky(reruns=3)
        def test_total():
            assert 2 > 1
        """,
    )
    scanned = scan(repo)
    assert scanned.code == 1
    assert scanned.findings[0]["message"] == (
        "skip marker 'flaky' on property test_total — constraints.forbid_skip_markers lists it"
    )
    assert scanned.findings[0]["test"] == "test_total"


def test_xfail_and_unittest_skips_on_a_testcase(repo: Repo) -> None:
    base(
        repo,
        """\
        import unittest


        class TestInvoice(unittest.TestCase):
            def test_total(self):
                self.assertEqual(sum([1]), 1)

            def test_rounding(self):
                self.assertEqual(sum([2]), 2)

            def test_currency(self):
                self.assertEqual(sum([3]), 3)
        """,
    )
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import unittest
        from unittest import skipIf

        import pytest


        class TestInvoice(unittest.TestCase):
            @skipIf(False, "never")
            def test_total(self):
                self.assertEqual(sum([1]), 1)

            @pytest.mark.xfail(strict=False)
            def test_rounding(self):
                self.assertEqual(sum([2]), 2)

            @unittest.expectedFailure
            def test_currency(self):
                self.assertEqual(sum([3]), 3)
        """,
    )
    scanned = scan(repo)
    assert scanned.located == [
        ("skip_marker", PROPERTY, 8, True),
        ("skip_marker", PROPERTY, 12, True),
        ("skip_marker", PROPERTY, 16, True),
    ]
    assert [f["test"] for f in scanned.findings] == [
        "TestInvoice::test_total",
        "TestInvoice::test_rounding",
        "TestInvoice::test_currency",
    ]


def test_an_alias_from_another_module_and_class_and_module_marks(repo: Repo) -> None:
    base(
        repo,
        """\
        class TestInvoice:
            def test_total(self):
                assert 1 < 2
        """,
    )
    write(
        repo,
        tests__properties__marks_dot_py="""\
        import pytest

        requires_network = pytest.mark.network
        """,
        tests__properties__test_invoice_dot_py="""\
        import pytest

        from tests.properties.marks import requires_network

        pytestmark = [pytest.mark.slow, pytest.mark.skipif("sys.platform == 'win32'")]


        @pytest.mark.xfail
        class TestInvoice:
            @requires_network
            def test_total(self):
                assert 1 < 2
        """,
    )
    scanned = scan(repo)
    assert scanned.located == [
        ("skip_marker", PROPERTY, 5, True),
        ("skip_marker", PROPERTY, 8, True),
        ("skip_marker", PROPERTY, 10, True),
    ]
    assert [f["test"] for f in scanned.findings] == [None, "TestInvoice", "TestInvoice::test_total"]
    assert "pytestmark" in scanned.findings[0]["message"]
    assert "constraints.forbid_skip_markers" in scanned.findings[2]["message"]


def test_a_skip_inside_a_parameter_case(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import pytest

        CASES = [1, pytest.param(2, marks=pytest.mark.skip(reason="slow"))]


        @pytest.mark.parametrize("n", CASES)
        def test_total(n):
            assert n > 0
        """,
    )
    scanned = scan(repo)
    assert scanned.located == [("skip_marker", PROPERTY, 3, True)]
    assert "a parameter case of property test_total" in scanned.findings[0]["message"]


def test_ordinary_markers_stay_quiet(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import pytest

        pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


        @pytest.fixture
        def amounts():
            return [1, 2, 3]


        @pytest.mark.slow
        @pytest.mark.usefixtures("amounts")
        @pytest.mark.parametrize("n", [1, pytest.param(2, id="two")])
        def test_total(n, amounts):
            with pytest.raises(ZeroDivisionError):
                n / 0
            assert sum(amounts) == 6
        """,
    )
    scanned = scan(repo)
    assert (scanned.code, scanned.findings) == (0, [])
    assert scanned.result.out == "scan: no silenced entropy found\n"


def test_a_skip_in_another_test_module_is_not_the_propertys(repo: Repo) -> None:
    base(repo, CLEAN)
    write(
        repo,
        tests__test_other_dot_py="""\
        import pytest


        @pytest.mark.skip(reason="not a property")
        def test_other():
            pytest.skip("elsewhere")
        """,
    )
    scanned = scan(repo)
    assert (scanned.code, scanned.findings) == (0, [])


def test_marker_messages_say_what_the_marker_does_not_that_tests_did_not_run(
    repo: Repo,
) -> None:
    base(repo, "import sys\n")
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import sys
        import unittest

        import pytest

        IS_WIN = sys.platform.startswith("win")


        @pytest.mark.skipif(IS_WIN, reason="Windows does not use TZ var")
        class TestTZVar:
            def test_total(self):
                assert 1 < 2


        class TestCase(unittest.TestCase):
            @unittest.skipUnless(sys.platform == "linux", "linux only")
            def test_linux(self):
                self.assertEqual(sum([1]), 1)

            @unittest.skip("later")
            def test_later(self):
                self.assertEqual(sum([2]), 2)


        @pytest.mark.parametrize("n", [1, pytest.param(2, marks=pytest.mark.skip)])
        def test_cases(n):
            assert n > 0
        """,
    )
    scanned = scan(repo)
    assert [f["message"] for f in scanned.findings] == [
        "skip marker 'skipif' on class TestTZVar (every property in it): "
        "pytest.mark.skipif(IS_WIN, reason='Windows does not use TZ var') — it skips every "
        "property in it when IS_WIN (counted whatever the condition is under the pins)",
        "skip marker 'unittest.skipUnless' on property TestCase::test_linux: "
        "unittest.skipUnless(sys.platform == 'linux', 'linux only') — it skips the property "
        "unless sys.platform == 'linux' (counted whatever the condition is under the pins)",
        "skip marker 'unittest.skip' on property TestCase::test_later: "
        "unittest.skip('later') — it skips the property unconditionally",
        "skip marker 'skip' on a parameter case of property test_cases: pytest.mark.skip — it "
        "skips that case unconditionally",
    ]
    assert [f["line"] for f in scanned.findings] == [9, 16, 20, 25]
