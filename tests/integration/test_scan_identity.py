"""A finding keeps its identity across the patch by what it is, not by how it is worded: a
helper's finding stays pre-existing when a new test reaches it, unless the helper changed."""

from __future__ import annotations

from tests.integration.test_scan_helpers import PROPERTY, base, scan, write
from tests.support.helpers import Repo

FROZEN = """\
import pytest
from freezegun import freeze_time


class FreezeMixin:
    @pytest.fixture(autouse=True)
    def freeze(self):
        with freeze_time("2026-01-01") as frozen:
            yield frozen


class TestSigner(FreezeMixin):
    def test_sign(self):
        assert 1 + 1 == 2

    def test_unsign(self):
        assert 2 + 2 == 4
"""

NEW_TEST = """
    def test_sign_is_bytes(self):
        assert isinstance(b"x", bytes)
"""

LOCALE = """\
import locale

import pytest


def needs_locale():
    if locale.getlocale()[0] is None:
        pytest.skip("no locale")


def test_total():
    needs_locale()
    assert 1 < 2
"""


def test_a_new_test_reaching_an_old_fixture_leaves_its_finding_pre_existing(repo: Repo) -> None:
    base(repo, FROZEN)
    write(repo, tests__properties__test_invoice_dot_py=FROZEN + NEW_TEST)
    scanned = scan(repo)
    assert scanned.code == 0
    assert scanned.result.out == (
        f"{PROPERTY}:8: notice: pre-existing — freeze_time('2026-01-01') patched with freezegun "
        "in fixture 'FreezeMixin.freeze', reached from 3 properties (TestSigner::test_sign, "
        "TestSigner::test_unsign, TestSigner::test_sign_is_bytes): freeze_time('2026-01-01') — "
        "the clock is faked inside the test process, so code that reads the live one goes "
        "unchecked (consider removing it from the property module)\n"
        "scan: 0 finding(s) introduced by the patch, 1 pre-existing (notices)\n"
    )


def test_a_changed_freeze_in_the_old_fixture_counts(repo: Repo) -> None:
    base(repo, FROZEN)
    write(
        repo,
        tests__properties__test_invoice_dot_py=FROZEN.replace('"2026-01-01"', '"2031-06-01"'),
    )
    scanned = scan(repo)
    assert scanned.code == 1
    assert scanned.located == [("entropy_patched", PROPERTY, 8, True)]


def test_a_second_test_reaching_a_skipping_helper_is_not_a_new_skip(repo: Repo) -> None:
    base(repo, LOCALE)
    write(
        repo,
        tests__properties__test_invoice_dot_py=LOCALE.replace(
            "import pytest\n", 'import pytest\n\nLOCALE_NOTE = "helpers below"\n'
        )
        + "\n\ndef test_other():\n    needs_locale()\n    assert 2 < 3\n",
    )
    scanned = scan(repo)
    assert scanned.code == 0
    assert scanned.located == [("skip_call", PROPERTY, 10, False)]
    assert scanned.findings[0]["test"] is None  # two properties reach it now
    assert "reached from 2 properties (test_total, test_other)" in scanned.findings[0]["message"]


def test_an_unrelated_edit_to_the_skipping_helper_keeps_it_pre_existing(repo: Repo) -> None:
    base(repo, LOCALE)
    write(
        repo,
        tests__properties__test_invoice_dot_py=LOCALE.replace(
            "def needs_locale():\n", 'def needs_locale():\n    """Skip without a locale."""\n'
        ),
    )
    scanned = scan(repo)
    assert scanned.located == [("skip_call", PROPERTY, 9, False)]


def test_a_changed_condition_around_an_old_skip_counts(repo: Repo) -> None:
    base(repo, LOCALE)
    write(
        repo,
        tests__properties__test_invoice_dot_py=LOCALE.replace(
            "if locale.getlocale()[0] is None:", "if True:"
        ),
    )
    scanned = scan(repo)
    assert scanned.code == 1
    assert scanned.located == [("skip_call", PROPERTY, 8, True)]
