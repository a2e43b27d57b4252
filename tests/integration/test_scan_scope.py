"""What the scan reads: collection rules, imports across the repo, the pytest configuration."""

from __future__ import annotations

from pathlib import Path

from entropy_action.manifest import baseline
from entropy_action.scan import DefinedTest
from entropy_action.scan import scan as run_scan
from tests.integration.test_scan_helpers import PROPERTY, base, scan, write
from tests.support.helpers import Repo


def defined(repo: Repo) -> list[DefinedTest]:
    repo.monkeypatch.chdir(repo.path)
    return list(run_scan(baseline.check(Path("entropy.yaml"), "main", None)).tests)


def test_the_property_tests_pytest_would_collect(repo: Repo) -> None:
    base(
        repo,
        """\
        import unittest


        def test_total():
            pass


        def helper():
            pass


        class TestBase:
            def test_shared(self):
                pass


        class TestChild(TestBase):
            def test_own(self):
                pass

            class TestNested:
                def test_deep(self):
                    pass


        class TestWithInit:
            def __init__(self):
                pass

            def test_never(self):
                pass


        class TestOff:
            __test__ = False

            def test_off(self):
                pass


        class Cases(unittest.TestCase):
            def test_case(self):
                pass
        """,
    )
    assert [(t.name, t.line) for t in defined(repo)] == [
        ("test_total", 4),
        ("TestBase::test_shared", 13),
        ("TestChild::test_shared", 13),
        ("TestChild::test_own", 18),
        ("TestChild::TestNested::test_deep", 22),
        ("Cases::test_case", 42),
    ]
    assert {t.path for t in defined(repo)} == {PROPERTY}


def test_the_tests_a_generator_names_are_known_by_its_import(repo: Repo) -> None:
    """`parameterized.expand` on a test and `parameterized_class` on its class, however
    imported; a decorator of the same name from elsewhere is not a generator."""
    base(
        repo,
        """\
        import unittest

        import ddt
        import parameterized as p
        from ddt import idata
        from parameterized import parameterized, parameterized_class

        expand = parameterized.expand  # an alias is followed


        class Local:
            @staticmethod
            def expand(cases):
                return lambda f: f


        class Cases(unittest.TestCase):
            @parameterized.expand([(1,), (2,)])
            def test_expanded(self, n):
                pass

            @p.parameterized.expand([(1,)])
            def test_aliased(self, n):
                pass

            @Local.expand([(1,)])
            def test_local(self, n):
                pass


        @parameterized_class([{"n": 1}, {"n": 2}])
        class TestMany(unittest.TestCase):
            def test_each(self):
                pass


        @ddt.ddt
        class TestData(unittest.TestCase):
            @ddt.data(1, 2)
            def test_datum(self, n):
                pass

            @idata([(1, 2)])
            def test_pair(self, pair):
                pass

            @expand
            def test_bare(self):
                pass
        """,
    )
    assert [(t.name, t.generated) for t in defined(repo)] == [
        ("Cases::test_expanded", "function"),
        ("Cases::test_aliased", "function"),
        ("Cases::test_local", ""),
        ("TestMany::test_each", "class"),
        ("TestData::test_datum", "function"),
        ("TestData::test_pair", "function"),
        ("TestData::test_bare", "function"),
    ]


def test_python_functions_and_classes_from_the_config(repo: Repo) -> None:
    base(
        repo,
        "def check_total():\n    pass\n\n\nclass Suite:\n    def check_x(self):\n        pass\n",
        pytest_dot_ini="[pytest]\npython_functions = check_*\npython_classes = Suite\n",
    )
    assert [t.name for t in defined(repo)] == ["check_total", "Suite::check_x"]


def test_the_nearest_configuration_wins_and_pytest_ini_beats_pyproject(repo: Repo) -> None:
    base(
        repo,
        pyproject_dot_toml='[tool.pytest.ini_options]\naddopts = "-k outer"\n',
        tests__pyproject_dot_toml='[tool.pytest.ini_options]\naddopts = "-k pyproject"\n',
        tests__pytest_dot_ini="[pytest]\naddopts = -m inner\n",
    )
    scanned = scan(repo)
    assert scanned.located == [("config_selection", "tests/pytest.ini", 2, False)]


def test_imports_through_src_layouts_relative_imports_and_re_exports(repo: Repo) -> None:
    base(repo)
    repo.write("src/billing/__init__.py", "from .testing import skip_unless_online\n")
    repo.write("tests/properties/__init__.py", "")
    write(
        repo,
        src__billing__testing_dot_py="""\
        import pytest


        def skip_unless_online():
            pytest.skip("offline")
        """,
        tests__properties__support_dot_py="""\
        from billing import skip_unless_online as online


        def needs_network():
            online()
        """,
        tests__properties__test_invoice_dot_py="""\
        from .support import needs_network


        def test_total():
            needs_network()
            assert 2 > 1
        """,
    )
    scanned = scan(repo)
    assert scanned.introduced == [("skip_call", "src/billing/testing.py", 5)]
    assert (
        "pytest.skip in helper skip_unless_online, reached from property test_total"
        in (scanned.findings[0]["message"])
    )


def test_production_code_is_not_scanned_for_patching(repo: Repo) -> None:
    base(repo)
    repo.write("src/billing/__init__.py", "")
    write(
        repo,
        src__billing__clock_dot_py="""\
        import random
        import time
        from unittest import mock


        def now():
            random.seed(0)
            with mock.patch("time.time", return_value=0):
                return time.time()
        """,
        tests__properties__test_invoice_dot_py="""\
        from billing.clock import now


        def test_total():
            assert now() >= 0
        """,
    )
    scanned = scan(repo)
    assert (scanned.code, scanned.findings) == (0, [])


# -- the property's test side (scan.closure): helpers the scan reads with its rules ----------

HELPED = """\
from support.lines import invoice_lines

from invoice_lib import total_for


def test_total():
    amounts = invoice_lines()
    assert total_for(amounts) == sum(amounts)
"""


def test_a_skip_in_a_helper_found_through_a_conftest_s_folder_is_caught(repo: Repo) -> None:
    """`from support.lines import …` resolves as pytest resolves it: tests/ is on sys.path
    because tests/conftest.py is there."""
    base(
        repo,
        HELPED,
        tests__conftest_dot_py="",
        tests__support__lines_dot_py="def invoice_lines():\n    return [1, 2, 3]\n",
    )
    write(
        repo,
        tests__support__lines_dot_py="import pytest\n\n\ndef invoice_lines():\n"
        "    pytest.skip('flaky data')\n    return [1, 2, 3]\n",
    )
    assert scan(repo).introduced == [("skip_call", "tests/support/lines.py", 5)]


def test_a_helper_s_import_time_code_is_read_like_a_conftest_s(repo: Repo) -> None:
    """A helper the property imports runs at import: reseeding there reseeds every test."""
    base(
        repo,
        HELPED,
        tests__conftest_dot_py="",
        tests__support__lines_dot_py="def invoice_lines():\n    return [1, 2, 3]\n",
    )
    write(
        repo,
        tests__support__lines_dot_py="import random\n\nrandom.seed(42)\n\n\n"
        "def invoice_lines():\n    return [1, 2, 3]\n",
    )
    assert scan(repo).introduced == [("reseeded", "tests/support/lines.py", 3)]


def test_an_autouse_fixture_in_a_helper_plugin_that_patches_the_clock_is_caught(
    repo: Repo,
) -> None:
    """A fixture module the conftest loads (`pytest_plugins`): its autouse fixture runs
    around every property test, so a patch there is read as one in the conftest."""
    base(
        repo,
        HELPED,
        tests__conftest_dot_py='pytest_plugins = ["support.fixtures"]\n',
        tests__support__lines_dot_py="def invoice_lines():\n    return [1, 2, 3]\n",
        tests__support__fixtures_dot_py="import pytest\n\n\n@pytest.fixture\n"
        "def lines():\n    return [1, 2, 3]\n",
    )
    write(
        repo,
        tests__support__fixtures_dot_py="import time\n\nimport pytest\n\n\n"
        "@pytest.fixture(autouse=True)\ndef frozen(monkeypatch):\n"
        "    monkeypatch.setattr(time, 'time', lambda: 0.0)\n",
    )
    assert [(kind, path) for kind, path, _ in scan(repo).introduced] == [
        ("entropy_patched", "tests/support/fixtures.py")
    ]


def test_a_derandomized_hypothesis_profile_loaded_from_a_helper_is_caught(repo: Repo) -> None:
    """Hypothesis's configuration lives in the test side's Python files: a profile
    registered and loaded in a helper the conftest imports reaches every property."""
    base(
        repo,
        HELPED,
        tests__conftest_dot_py="import support.profiles  # noqa: F401\n",
        tests__support__lines_dot_py="def invoice_lines():\n    return [1, 2, 3]\n",
        tests__support__profiles_dot_py="from hypothesis import settings\n\n"
        "settings.register_profile('ci', max_examples=200)\nsettings.load_profile('ci')\n",
    )
    write(
        repo,
        tests__support__profiles_dot_py="from hypothesis import settings\n\n"
        "settings.register_profile('ci', max_examples=200, derandomize=True)\n"
        "settings.load_profile('ci')\n",
    )
    kinds = {(kind, path) for kind, path, _ in scan(repo).introduced}
    assert kinds == {("reseeded", "tests/support/profiles.py")}
