"""Reachability through classes: construction, `with`, `async with`, inherited methods."""

from __future__ import annotations

from tests.integration.test_scan_helpers import PROPERTY, base, scan, write
from tests.support.helpers import Repo

SUPPORT = "tests/support.py"

TZ_CONTEXTS = """\
import os

import pytest


class TZContextBase:
    def __init__(self, tzval):
        self.tzval = tzval

    def __enter__(self):
        if os.environ.get("MAY_NOT_CHANGE_TZ"):
            pytest.skip("changing the time zone is not allowed")
        self.set_current_tz(self.tzval)

    def __exit__(self, *exc):
        return False

    def set_current_tz(self, tzval):
        raise NotImplementedError


class TZEnvContext(TZContextBase):
    def set_current_tz(self, tzval):
        os.environ["TZ"] = tzval
"""


def test_with_a_context_class_follows_inherited_enter_and_the_subclass_override(
    repo: Repo,
) -> None:
    base(repo)
    write(
        repo,
        tests__support_dot_py=TZ_CONTEXTS,
        tests__properties__test_invoice_dot_py="""\
        from tests.support import TZEnvContext


        def test_total():
            with TZEnvContext("EST+5"):
                assert 1 < 2
        """,
    )
    scanned = scan(repo)
    assert scanned.code == 1
    assert scanned.located == [
        ("skip_call", SUPPORT, 12, True),
        ("env_write", SUPPORT, 24, True),
    ]
    assert scanned.findings[0]["message"].startswith(
        "pytest.skip in helper TZContextBase.__enter__, reached from property test_total: "
    )
    assert scanned.findings[1]["message"].startswith(
        "TZ written in helper TZEnvContext.set_current_tz, reached from property test_total: "
    )


def test_a_known_flaky_context_whose_enter_skips(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import pytest


        class KnownFlaky:
            def __init__(self, text):
                self.text = text

            def __enter__(self):
                pytest.skip(f"known flaky: {self.text}")

            def __exit__(self, *exc):
                return False


        def test_total():
            with KnownFlaky("76"):
                assert 1 < 2
        """,
    )
    scanned = scan(repo)
    assert scanned.located == [("skip_call", PROPERTY, 9, True)]
    assert (
        "helper KnownFlaky.__enter__, reached from property test_total"
        in (scanned.findings[0]["message"])
    )


def test_construction_async_with_and_super_calls(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__support_dot_py="""\
        import os
        import unittest


        class Env:
            def __init__(self):
                os.environ["LANG"] = "C"


        class Session:
            async def __aenter__(self):
                raise unittest.SkipTest("no server")

            async def __aexit__(self, *exc):
                return False


        class BaseCase(unittest.TestCase):
            def setUp(self):
                self.skipTest("slow machine")
        """,
        tests__properties__test_invoice_dot_py="""\
        import asyncio

        from tests.support import BaseCase, Env, Session


        class TestInvoice(BaseCase):
            def setUp(self):
                super().setUp()

            def test_case(self):
                Env()

                async def run():
                    async with Session():
                        pass

                asyncio.run(run())


        def test_total():
            assert 1 < 2
        """,
    )
    scanned = scan(repo)
    assert scanned.located == [
        ("env_write", SUPPORT, 7, True),
        ("skip_call", SUPPORT, 12, True),
        ("skip_call", SUPPORT, 20, True),
    ]
    assert "helper BaseCase.setUp" in scanned.findings[2]["message"]


def test_classes_that_do_not_skip_or_patch_stay_quiet(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__support_dot_py="""\
        import os

        import pytest


        class Recorder:
            def __init__(self):
                self.calls = []

            def __enter__(self):
                self.calls.append(os.environ.get("TZ"))
                return self

            def __exit__(self, *exc):
                return False


        class NeverUsed:
            def __enter__(self):
                pytest.skip("nobody enters me")
        """,
        tests__properties__test_invoice_dot_py="""\
        from tests.support import Recorder


        def test_total(tmp_path):
            with Recorder() as recorder, open(tmp_path / "x", "w") as handle:
                handle.write("1")
            assert recorder.calls
        """,
    )
    scanned = scan(repo)
    assert (scanned.code, scanned.findings) == (0, [])
