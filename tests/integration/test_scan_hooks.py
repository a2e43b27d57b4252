"""Rule 3b: hooks by spec name, plugins the run loads, swallowing wrappers, replaced pytest
internals and retry loops — and the honest code none of them fires on."""

from __future__ import annotations

from tests.integration.test_scan_helpers import base, scan, write
from tests.support.helpers import Repo

SPECNAME = """\
import pytest


@pytest.hookimpl(wrapper=True, specname="pytest_runtest_call")
def pytest_steady(item):
    try:
        return (yield)
    except Exception:
        return None
"""


def test_a_wrapper_under_another_name_counts_as_its_spec_and_swallows(repo: Repo) -> None:
    base(repo)
    write(repo, tests__conftest_dot_py=SPECNAME)
    scanned = scan(repo)
    assert scanned.code == 1
    assert scanned.introduced == [
        ("report_tampering", "tests/conftest.py", 5),
        ("report_tampering", "tests/conftest.py", 8),
    ]
    messages = [f["message"] for f in scanned.findings]
    assert messages[0].startswith("hook pytest_runtest_call (as pytest_steady) in tests/conftest")
    assert messages[1] == (
        "hook wrapper pytest_steady (pytest_runtest_call) in tests/conftest.py catches "
        "Exception around its yield: every outcome of the hooks it wraps is swallowed, so a "
        "failing property reports as passed"
    )


def test_a_plugin_registered_at_run_time_is_found_and_read(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__conftest_dot_py="""\
        from tests import steady


        def pytest_configure(config):
            config.pluginmanager.register(steady.Steady(), "steady")
        """,
        tests__steady_dot_py="""\
        class Steady:
            def pytest_runtest_makereport(self, item, call):
                call.excinfo = None
        """,
    )
    scanned = scan(repo)
    assert scanned.introduced == [
        ("hook_added", "tests/conftest.py", 5),
        ("report_tampering", "tests/steady.py", 2),
    ]
    assert scanned.findings[0]["message"].startswith(
        "config.pluginmanager.register(steady.Steady(), 'steady') in tests/conftest.py "
        "registers a plugin at run time"
    )


def test_import_plugin_through_an_alias_loads_the_named_module(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        conftest_dot_py="""\
        def pytest_configure(config):
            pm = config.pluginmanager
            pm.import_plugin("tests.support_plugin")
        """,
        tests__support_plugin_dot_py="""\
        def pytest_sessionfinish(session, exitstatus):
            session.exitstatus = 0
        """,
    )
    assert scan(repo).introduced == [
        ("hook_added", "conftest.py", 3),
        ("report_tampering", "tests/support_plugin.py", 1),
    ]


PYPROJECT = """\
[project]
name = "invoice"
version = "1"

[project.entry-points.pytest11]
steady = "invoice_lib_plugin"
"""


def test_a_pytest11_entry_point_is_a_finding_and_its_module_is_read(repo: Repo) -> None:
    base(repo, pyproject_dot_toml='[project]\nname = "invoice"\nversion = "1"\n')
    write(
        repo,
        pyproject_dot_toml=PYPROJECT,
        invoice_lib_plugin_dot_py="""\
        import pytest


        @pytest.hookimpl(tryfirst=True)
        def pytest_report_teststatus(report, config):
            if report.failed:
                return "passed", ".", "PASSED"
        """,
    )
    scanned = scan(repo)
    assert scanned.introduced == [
        ("report_tampering", "invoice_lib_plugin.py", 5),
        ("hook_added", "pyproject.toml", 6),
    ]
    assert scanned.findings[1]["message"] == (
        "pytest11 entry point 'steady = invoice_lib_plugin' in pyproject.toml: installing the "
        "project (the workflow's `pip install -e .`) loads it as a plugin in every run"
    )


def test_entry_points_in_setup_cfg_and_setup_py(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        setup_dot_cfg="[options.entry_points]\npytest11 =\n    one = invoice_lib\n",
        setup_dot_py=(
            "from setuptools import setup\n\n"
            "setup(entry_points={'pytest11': ['two = invoice_lib:hooks']})\n"
        ),
    )
    located = [(k, p, n) for k, p, n in scan(repo).introduced if k == "hook_added"]
    assert located == [("hook_added", "setup.cfg", 3), ("hook_added", "setup.py", 3)]


def test_an_entry_point_that_stood_at_the_base_is_a_notice(repo: Repo) -> None:
    base(repo, pyproject_dot_toml=PYPROJECT, invoice_lib_plugin_dot_py="X = 1\n")
    write(repo, README_dot_md="docs\n")
    scanned = scan(repo)
    assert scanned.code == 0
    assert scanned.located == [("hook_added", "pyproject.toml", 6, False)]


def test_function_runtest_replaced_from_a_conftest(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__conftest_dot_py="""\
        import pytest
        from _pytest.python import Function

        _real = Function.runtest


        def _steady(self):
            try:
                _real(self)
            except Exception:
                pass


        Function.runtest = _steady


        @pytest.fixture(autouse=True)
        def _also(monkeypatch):
            monkeypatch.setattr("_pytest.runner.CallInfo.from_call", lambda *a, **k: None)
            monkeypatch.setattr(pytest.Function, "runtest", _steady)
        """,
    )
    scanned = scan(repo)
    assert scanned.introduced == [
        ("report_tampering", "tests/conftest.py", 14),
        ("report_tampering", "tests/conftest.py", 19),
        ("report_tampering", "tests/conftest.py", 20),
    ]
    assert (
        "replaces pytest's own _pytest.python.Function.runtest" in (scanned.findings[0]["message"])
    )


def test_a_retry_decorator_that_catches_exception(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__conftest_dot_py="""\
        import functools


        def retry(test):
            @functools.wraps(test)
            def wrapper(*args, **kwargs):
                for _ in range(5):
                    try:
                        return test(*args, **kwargs)
                    except Exception:
                        continue
            return wrapper


        def pytest_pyfunc_call(pyfuncitem):
            for _ in range(3):
                try:
                    pyfuncitem.obj(**pyfuncitem.funcargs)
                    return True
                except AssertionError:
                    pass
            return True
        """,
    )
    located = [(k, p, n) for k, p, n in scan(repo).introduced]
    assert located == [
        ("assertion_swallowed", "tests/conftest.py", 10),
        ("report_tampering", "tests/conftest.py", 15),
        ("assertion_swallowed", "tests/conftest.py", 20),
    ]


def test_honest_hooks_fixtures_and_wrappers_are_not_findings(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__conftest_dot_py="""\
        import os

        import pytest


        def pytest_configure(config):
            config.addinivalue_line("markers", "slow: a slow property")


        @pytest.fixture
        def invoices(tmp_path):
            return tmp_path / "invoices"


        @pytest.hookimpl(wrapper=True)
        def pytest_fixture_setup(fixturedef, request):
            try:
                return (yield)
            except Exception:
                raise


        def cleanup(paths):
            for path in paths:
                try:
                    os.remove(path)
                except Exception:
                    continue
        """,
    )
    scanned = scan(repo)
    assert scanned.code == 0
    assert scanned.findings == []


def test_an_unchanged_hook_wrapper_is_a_notice(repo: Repo) -> None:
    base(repo, tests__conftest_dot_py=SPECNAME)
    write(repo, README_dot_md="docs\n")
    scanned = scan(repo)
    assert scanned.code == 0
    assert [new for *_, new in scanned.located] == [False, False]


def test_an_old_style_hookwrapper_catching_a_tuple_with_exception(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__conftest_dot_py="""\
        import pytest


        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_protocol(item, nextitem):
            try:
                yield
            except (KeyError, Exception):
                pass
        """,
    )
    assert scan(repo).introduced == [
        ("report_tampering", "tests/conftest.py", 5),
        ("report_tampering", "tests/conftest.py", 8),
    ]
