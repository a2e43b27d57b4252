"""Rule 2: skip calls reachable from a property test, through helpers and fixtures."""

from __future__ import annotations

from tests.integration.test_scan_helpers import PROPERTY, base, scan, write
from tests.support.helpers import Repo


def test_a_skip_behind_a_helper_named_maybe_run(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import pytest

        from invoice_lib import total_for


        def maybe_run(flag):
            if not flag:
                pytest.skip("resolver flaky")


        def test_total():
            maybe_run(False)
            assert total_for([1, 2]) == 3
        """,
    )
    scanned = scan(repo)
    assert scanned.code == 1
    assert scanned.located == [("skip_call", PROPERTY, 8, True)]
    assert scanned.findings[0]["message"] == (
        "pytest.skip in helper maybe_run, reached from property test_total: "
        "pytest.skip('resolver flaky') — the property stops and reports skipped instead of "
        "running to a verdict"
    )


def test_skips_in_helpers_and_fixtures_of_other_repository_modules(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__support__net_dot_py="""\
        from unittest import SkipTest


        def resolve_or_skip(host):
            raise SkipTest(f"cannot resolve {host}")
        """,
        tests__conftest_dot_py="""\
        import pytest


        @pytest.fixture
        def numpy_or_skip():
            return pytest.importorskip("numpy")


        @pytest.fixture(autouse=True)
        def _dns():
            from tests.support import net

            net.resolve_or_skip("example.com")
        """,
        tests__properties__test_invoice_dot_py="""\
        from invoice_lib import total_for


        def test_total(numpy_or_skip):
            assert total_for([1, 2]) == 3
        """,
    )
    scanned = scan(repo)
    assert scanned.located == [
        ("skip_call", "tests/conftest.py", 6, True),
        ("skip_call", "tests/support/net.py", 5, True),
    ]
    assert "pytest.importorskip in fixture 'numpy_or_skip'" in scanned.findings[0]["message"]
    assert "a missing or broken import reads as a skip" in scanned.findings[0]["message"]
    assert "raise SkipTest in helper resolve_or_skip" in scanned.findings[1]["message"]


def test_skiptest_in_setup_and_a_marker_added_at_run_time(repo: Repo) -> None:
    text = """\
    import unittest

    import pytest


    class TestInvoice(unittest.TestCase):
        def setUp(self):
            self.amounts = [1, 2]

        def test_total(self):
            self.assertEqual(sum(self.amounts), 3)


    def test_rounding(request):
        assert round(2.5) == 2
    """
    base(repo, text)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import unittest

        import pytest


        class TestInvoice(unittest.TestCase):
            def setUp(self):
                self.skipTest("locale varies")

            def test_total(self):
                self.assertEqual(sum(self.amounts), 3)


        def test_rounding(request):
            request.applymarker(pytest.mark.xfail)
            assert round(2.5) == 2
        """,
    )
    scanned = scan(repo)
    assert scanned.located == [
        ("skip_call", PROPERTY, 8, True),
        ("skip_call", PROPERTY, 15, True),
    ]
    assert scanned.findings[0]["test"] == "TestInvoice::test_total"
    assert scanned.findings[1]["message"].startswith("run-time marker 'xfail' (applymarker)")


def test_a_module_level_importorskip_concerns_every_property(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import pytest

        babel = pytest.importorskip("babel")


        def test_total():
            assert babel is not None
        """,
    )
    scanned = scan(repo)
    assert scanned.located == [("skip_call", PROPERTY, 3, True)]
    assert scanned.findings[0]["test"] is None
    assert "module-level code, reached from every property" in scanned.findings[0]["message"]


def test_helpers_that_never_skip_and_skips_nobody_reaches_stay_quiet(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__conftest_dot_py="""\
        import pytest


        @pytest.fixture
        def only_for_other_tests():
            pytest.skip("not used by the property")
        """,
        tests__test_other_dot_py="""\
        import pytest


        def test_other():
            pytest.skip("another module")
        """,
        tests__properties__test_invoice_dot_py="""\
        import pytest

        from invoice_lib import total_for


        def maybe_run(flag):
            return bool(flag)


        def unused_helper():
            pytest.skip("never called by a property")


        def test_total():
            if maybe_run(True):
                with pytest.raises(TypeError):
                    total_for(None)
            assert total_for([2]) == 2
        """,
    )
    scanned = scan(repo)
    assert (scanned.code, scanned.findings) == (0, [])
