"""Rule 4: clock, RNG, environment, hostname, resolver and tempfile patched inside the test."""

from __future__ import annotations

from tests.integration.test_scan_helpers import PROPERTY, base, scan, write
from tests.support.helpers import Repo


def test_clock_patches_in_every_spelling(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import time
        from unittest import mock

        import freezegun

        import invoice_lib
        from invoice_lib import total_for


        class FakeDatetime:
            pass


        @mock.patch("invoice_lib.datetime")
        def test_total(fake, monkeypatch):
            monkeypatch.setattr(time, "time", lambda: 0.0)
            monkeypatch.setattr("socket.gethostname", lambda: "ci")
            monkeypatch.setattr(invoice_lib, "datetime", FakeDatetime)
            with freezegun.freeze_time("2026-01-01"):
                assert total_for([1]) == 1


        def test_rounding(freezer):
            assert round(2.5) == 2
        """,
    )
    scanned = scan(repo)
    assert scanned.code == 1
    assert [(k, n) for k, _, n in scanned.introduced] == [
        ("entropy_patched", 14),
        ("entropy_patched", 16),
        ("entropy_patched", 17),
        ("entropy_patched", 18),
        ("entropy_patched", 19),
        ("entropy_patched", 23),
    ]
    messages = [f["message"] for f in scanned.findings]
    assert messages[0].startswith(
        "invoice_lib.datetime patched with mock.patch in property test_total"
    )
    assert messages[1].startswith("time.time patched with monkeypatch.setattr")
    assert "the hostname is faked" in messages[2]
    assert messages[3].startswith("invoice_lib.datetime patched with monkeypatch.setattr")
    assert "clock fixture 'freezer' requested by test_rounding" in messages[5]


def test_reseeding_with_anything_but_the_pinned_seed(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import random

        import numpy as np

        from invoice_lib import total_for


        def test_total():
            random.seed(42)
            rng = random.Random(1234)
            np.random.seed(7)
            assert total_for([rng.randint(1, 9)]) > 0
        """,
    )
    scanned = scan(repo)
    assert scanned.introduced == [
        ("reseeded", PROPERTY, 9),
        ("reseeded", PROPERTY, 10),
        ("reseeded", PROPERTY, 11),
    ]
    assert scanned.findings[0]["message"] == (
        "random.seed(42) in property test_total seeds the RNG with something other than the "
        "pinned seed (ENTROPY_RNG_SEED=9173) — reseeding until green hides the property's "
        "dependence on randomness"
    )


def test_writes_to_pinned_variables_in_a_conftest_and_the_module(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__conftest_dot_py="""\
        import os

        import pytest


        @pytest.fixture(autouse=True)
        def utc():
            os.environ["TZ"] = "UTC"
        """,
        tests__properties__test_invoice_dot_py="""\
        import os
        from unittest import mock

        from invoice_lib import total_for


        @mock.patch.dict(os.environ, {"LANG": "C"})
        def test_total(monkeypatch):
            monkeypatch.setenv("ENTROPY_RNG_SEED", "1")
            assert total_for([1]) == 1
        """,
    )
    scanned = scan(repo)
    assert scanned.introduced == [
        ("env_write", "tests/conftest.py", 8),
        ("env_write", PROPERTY, 7),
        ("env_write", PROPERTY, 9),
    ]
    assert scanned.findings[0]["message"] == (
        "TZ written in fixture 'utc', reached from property test_total: os.environ['TZ'] = "
        "'UTC' — the gate pins it; changing it inside the test process hides what the pin guards"
    )


def test_ordinary_patching_and_the_pinned_seed_stay_quiet(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        invoice_lib_dot_py="""\
        import random
        import time

        random.seed(0)
        _RNG = random.Random(99)


        def total_for(amounts, as_of=None):
            return sum(amounts)
        """,
        tests__conftest_dot_py="""\
        import time

        import pytest


        @pytest.fixture
        def frozen(monkeypatch):
            monkeypatch.setattr(time, "time", lambda: 0.0)
        """,
        tests__properties__test_invoice_dot_py="""\
        import os
        import random
        import time
        from unittest import mock

        import invoice_lib
        from invoice_lib import total_for

        SEED = int(os.environ.get("ENTROPY_RNG_SEED", "9173"))


        class Config:
            DEBUG = False


        @mock.patch("time.sleep")
        def test_total(sleep, monkeypatch):
            monkeypatch.setattr("time.sleep", lambda seconds: None)  # a wait, not a clock read
            monkeypatch.setattr(time, "sleep", lambda seconds: None)
            monkeypatch.setattr(Config, "DEBUG", True)
            monkeypatch.setattr(invoice_lib, "ROUNDING", 2, raising=False)
            monkeypatch.setenv("INVOICE_CURRENCY", "EUR")
            random.seed(SEED)
            random.seed(9173)
            rng = random.Random(int(os.environ["ENTROPY_RNG_SEED"]))
            assert total_for([rng.randint(1, 9)]) > 0
        """,
    )
    scanned = scan(repo)
    assert (scanned.code, scanned.findings) == (0, [])


def test_pytest_mock_patching_a_clock_method_of_a_repository_class(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        billing_dot_py="class Clock:\n    def now(self):\n        return 0\n",
        tests__properties__test_invoice_dot_py="""\
        from billing import Clock
        from invoice_lib import total_for


        def test_total(mocker):
            mocker.patch.object(Clock, "now", return_value=0)
            mocker.patch("invoice_lib.uuid4")
            assert total_for([1]) == 1
        """,
    )
    scanned = scan(repo)
    assert scanned.introduced == [
        ("entropy_patched", PROPERTY, 6),
        ("entropy_patched", PROPERTY, 7),
    ]
    assert scanned.findings[0]["message"].startswith(
        "billing.Clock.now patched with mock.patch.object in property test_total"
    )


def test_a_seed_hypothesis_draws_is_not_a_reseed(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import random

        from hypothesis import given, strategies as st

        from invoice_lib import total_for


        @given(st.integers())
        def test_total(seed):
            rng = random.Random(seed)
            assert total_for([rng.randint(1, 9)]) > 0
        """,
    )
    scanned = scan(repo)
    assert (scanned.code, scanned.findings) == (0, [])


def test_a_conftest_hook_that_sets_a_pinned_variable(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        conftest_dot_py="""\
        import os


        def pytest_configure(config):
            os.environ.setdefault("LANG", "en_US.UTF-8")
        """,
    )
    scanned = scan(repo)
    assert scanned.introduced == [("env_write", "conftest.py", 5)]
    assert scanned.findings[0]["message"].startswith(
        "LANG written in hook pytest_configure (it runs for every property): "
    )


def test_clearing_the_environment_counts_unless_it_restores_a_saved_copy(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import contextlib
        import os

        from invoice_lib import total_for


        @contextlib.contextmanager
        def restored():
            saved = dict(os.environ)
            try:
                yield
            finally:
                os.environ.clear()
                os.environ.update(saved)


        def test_total():
            with restored():
                assert total_for([1]) == 1
            os.environ.clear()
        """,
    )
    scanned = scan(repo)
    assert scanned.introduced == [("env_write", PROPERTY, 20)]
    assert scanned.findings[0]["message"].startswith("every pinned variable written in property")


def test_hypothesis_derandomized_by_a_decorator_and_by_a_conftest_profile(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__conftest_dot_py="""\
        from hypothesis import settings

        settings.register_profile("ci", max_examples=50, derandomize=True)


        def pytest_configure(config):
            settings.load_profile("ci")
        """,
        tests__properties__test_invoice_dot_py="""\
        from hypothesis import given, settings, strategies as st

        from invoice_lib import total_for


        @settings(derandomize=True)
        @given(st.lists(st.integers()))
        def test_total(amounts):
            assert total_for(amounts) == sum(amounts)
        """,
    )
    scanned = scan(repo)
    assert scanned.code == 1
    assert scanned.introduced == [
        ("reseeded", "tests/conftest.py", 3),
        ("reseeded", "tests/conftest.py", 7),
        ("reseeded", PROPERTY, 6),
    ]
    assert scanned.findings[2]["message"] == (
        "settings(derandomize=True) in property test_total derandomizes hypothesis — it "
        "explores a fixed set of examples derived from the test instead of fresh ones each "
        "run, so a property that fails only on some inputs stays green"
    )
    assert scanned.findings[1]["message"].startswith(
        "settings.load_profile('ci') in hook pytest_configure (it runs for every property) "
        "loads the derandomized hypothesis profile 'ci' — "
    )


def test_a_profile_derandomized_through_its_parent_settings(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        conftest_dot_py="""\
        import hypothesis

        hypothesis.settings.register_profile(
            "fixed", hypothesis.settings(derandomize=True, deadline=None)
        )
        hypothesis.settings.load_profile("fixed")
        """,
    )
    scanned = scan(repo)
    assert scanned.introduced == [("reseeded", "conftest.py", 4), ("reseeded", "conftest.py", 6)]


def test_ordinary_hypothesis_settings_and_profiles_stay_quiet(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__conftest_dot_py="""\
        from datetime import timedelta

        from hypothesis import HealthCheck, settings

        settings.register_profile(
            "patience",
            settings(suppress_health_check=[HealthCheck.too_slow], deadline=timedelta(1)),
        )
        settings.register_profile("fast", max_examples=5, derandomize=False)
        settings.load_profile("patience")
        """,
        tests__properties__test_invoice_dot_py="""\
        from hypothesis import given, seed, settings, strategies as st

        from invoice_lib import total_for


        @seed(9173)
        @settings(max_examples=20, derandomize=False)
        @given(st.lists(st.integers()))
        def test_total(amounts):
            assert total_for(amounts) == sum(amounts)
        """,
    )
    scanned = scan(repo)
    assert (scanned.code, scanned.findings) == (0, [])


def test_a_modules_clock_replaced_by_plain_assignment(repo: Repo) -> None:
    """The red team's I2, I4 and M (2026-12-06): what monkeypatch.setattr does, by hand. The
    line that puts the saved original back is not a second patch."""
    base(repo)
    write(
        repo,
        tests__conftest_dot_py="""\
        import sys
        from datetime import datetime

        import pytest

        import invoice_lib


        class Pinned(datetime):
            pass


        @pytest.fixture(autouse=True)
        def steady():
            saved = invoice_lib.datetime
            invoice_lib.datetime = Pinned
            vars(invoice_lib)["datetime"] = Pinned
            invoice_lib.__dict__["random"] = None
            sys.modules["time"] = None
            yield
            invoice_lib.datetime = saved
        """,
    )
    scanned = scan(repo)
    assert scanned.code == 1
    assert [(k, n) for k, _, n in scanned.introduced] == [
        ("entropy_patched", 16),
        ("entropy_patched", 17),
        ("entropy_patched", 18),
        ("entropy_patched", 19),
    ]
    messages = [f["message"] for f in scanned.findings]
    assert messages[0].startswith("invoice_lib.datetime patched with an assignment in fixture")
    assert messages[1].startswith("invoice_lib.datetime patched with vars() in fixture")
    assert messages[2].startswith("invoice_lib.random patched with __dict__ in fixture")
    assert messages[3].startswith("sys.modules['time'] patched with sys.modules in fixture")


def test_assigning_to_a_tests_own_fake_clock_stays_quiet(repo: Repo) -> None:
    """The seam done right: the test's own clock object takes any attribute."""
    base(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import sys

        import invoice_lib
        from invoice_lib import total_for


        class FakeClock:
            now = None


        def test_total():
            clock = FakeClock()
            clock.now = lambda: 0
            FakeClock.now = staticmethod(lambda: 0)
            invoice_lib.ROUNDING = 2
            sys.modules["invoice_plugins"] = None
            assert total_for([1]) == 1
        """,
    )
    scanned = scan(repo)
    assert (scanned.code, scanned.findings) == (0, [])
