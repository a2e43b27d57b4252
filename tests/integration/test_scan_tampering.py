"""Rule 3: collection and report tampering in conftests, plugins and pytest's configuration."""

from __future__ import annotations

import pytest

from tests.integration.test_scan_helpers import MANIFEST, base, scan, write
from tests.support.helpers import Repo

MODIFYITEMS = """\
import pytest


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: item.name)
"""


def test_a_hook_the_patch_adds_is_introduced(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__conftest_dot_py="""\
        def pytest_collection_modifyitems(config, items):
            items[:] = [i for i in items if "total" not in i.name]


        def pytest_runtest_makereport(item, call):
            return None
        """,
    )
    scanned = scan(repo)
    assert scanned.code == 1
    assert scanned.located == [
        ("collection_tampering", "tests/conftest.py", 1, True),
        ("report_tampering", "tests/conftest.py", 5, True),
    ]
    assert scanned.findings[0]["message"] == (
        "hook pytest_collection_modifyitems in tests/conftest.py can drop, deselect, reorder "
        "or re-mark property tests"
    )


def test_an_unchanged_hook_is_a_notice_and_a_changed_one_counts(repo: Repo) -> None:
    base(repo, tests__conftest_dot_py=MODIFYITEMS)
    write(repo, README_dot_md="docs only\n")
    unchanged = scan(repo)
    assert unchanged.code == 0
    assert unchanged.located == [("collection_tampering", "tests/conftest.py", 4, False)]
    assert unchanged.result.out.splitlines()[0] == (
        "tests/conftest.py:4: notice: pre-existing — hook pytest_collection_modifyitems in "
        "tests/conftest.py can drop, deselect, reorder or re-mark property tests "
        "(consider removing it)"
    )
    write(repo, tests__conftest_dot_py="\n\n" + MODIFYITEMS.replace("item.name", "item.nodeid"))
    changed = scan(repo)
    assert changed.code == 1
    assert changed.located == [("collection_tampering", "tests/conftest.py", 6, True)]


@pytest.mark.parametrize(
    ("head", "introduced"),
    [
        # progressbar2 4a98f814c594: a typing pass over the conftest
        (
            MODIFYITEMS.replace(
                "(config, items):", "(config: pytest.Config, items: list[pytest.Item]) -> None:"
            ),
            False,
        ),
        (MODIFYITEMS.replace("(config, items):", "(config, items: list = []):"), True),
        (MODIFYITEMS.replace("(config, items):", "(config: setup(), items):"), True),
    ],
    ids=["annotations", "a-default-added", "an-annotation-that-calls"],
)
def test_a_hook_that_only_gains_type_annotations_is_the_hook_it_was(
    repo: Repo, head: str, introduced: bool
) -> None:
    base(repo, tests__conftest_dot_py=MODIFYITEMS)
    write(repo, tests__conftest_dot_py=head)
    scanned = scan(repo)
    assert scanned.located == [("collection_tampering", "tests/conftest.py", 4, introduced)]
    assert scanned.code == int(introduced)


def test_collect_ignore_and_a_repository_plugin(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        conftest_dot_py="""\
        pytest_plugins = ["tests.plugins.outcomes"]

        collect_ignore = ["tests/properties/test_invoice.py"]
        """,
        tests__plugins__outcomes_dot_py="""\
        import pytest


        @pytest.hookimpl(hookwrapper=True)
        def pytest_report_teststatus(report, config):
            yield
        """,
    )
    scanned = scan(repo)
    assert scanned.located == [
        ("collection_tampering", "conftest.py", 3, True),
        ("report_tampering", "tests/plugins/outcomes.py", 5, True),
    ]
    assert scanned.findings[0]["message"] == (
        "collect_ignore in conftest.py (collect_ignore = ['tests/properties/test_invoice.py']) "
        "drops the property module tests/properties/test_invoice.py from collection — its "
        "properties never run"
    )


@pytest.mark.parametrize(
    ("name", "text", "line", "shown"),
    [
        (
            "pyproject.toml",
            '[project]\nname = "x"\n\n[tool.pytest.ini_options]\n'
            "addopts = \"-ra -k 'not total'\"\n",
            5,
            "-k not total",
        ),
        ("pytest.ini", "[pytest]\naddopts =\n    -ra\n    -m 'smoke'\n", 4, "-m smoke"),
        (
            "setup.cfg",
            "[metadata]\nname = x\n[tool:pytest]\n"
            "addopts = --deselect=tests/properties/test_invoice.py::test_total\n",
            4,
            "--deselect tests/properties/test_invoice.py::test_total",
        ),
        ("tox.ini", "[tox]\n[pytest]\naddopts = -p no:randomly\n", 3, "-p no:randomly"),
    ],
)
def test_selection_in_addopts(repo: Repo, name: str, text: str, line: int, shown: str) -> None:
    base(repo)
    (repo.path / name).write_text(text, encoding="utf-8")
    scanned = scan(repo)
    assert scanned.located == [("config_selection", name, line, True)]
    assert f"passes '{shown}'" in scanned.findings[0]["message"]


def test_ordinary_conftests_and_config_stay_quiet(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        pyproject_dot_toml="""\
        [tool.pytest.ini_options]
        addopts = ["-ra", "--strict-markers", "-p", "no:cacheprovider", "--cov=invoice_lib"]
        markers = ["slow: slow tests"]
        """,
        tests__conftest_dot_py="""\
        import pytest

        collect_ignore = []


        def pytest_configure(config):
            config.addinivalue_line("markers", "network: needs the network")


        @pytest.fixture
        def amounts():
            return [1, 2, 3]
        """,
    )
    scanned = scan(repo)
    assert (scanned.code, scanned.findings) == (0, [])


def test_run_pytest_args_that_replace_addopts_silence_the_config_rule(repo: Repo) -> None:
    manifest = MANIFEST + 'run:\n  pytest_args: ["-o", "addopts="]\n'
    base(repo, manifest=manifest)
    write(repo, pytest_dot_ini="[pytest]\naddopts = -k total\n")
    scanned = scan(repo)
    assert (scanned.code, scanned.findings) == (0, [])


@pytest.mark.parametrize(
    ("addopts", "shown"),
    [
        ('"--hypothesis-seed=1234"', "--hypothesis-seed 1234"),
        ('"--hypothesis-seed 77"', "--hypothesis-seed 77"),
    ],
)
def test_a_hypothesis_seed_in_addopts(repo: Repo, addopts: str, shown: str) -> None:
    base(repo)
    write(repo, pyproject_dot_toml=f"[tool.pytest.ini_options]\naddopts = {addopts}\n")
    scanned = scan(repo)
    assert scanned.located == [("config_selection", "pyproject.toml", 2, True)]
    assert scanned.findings[0]["message"] == (
        f"addopts in pyproject.toml passes '{shown}' — hypothesis explores the examples of one "
        "fixed seed instead of fresh ones each run, so a property that fails only on some "
        "inputs stays green"
    )


def test_a_derandomized_profile_selected_in_addopts(repo: Repo) -> None:
    base(
        repo,
        tests__conftest_dot_py=(
            'from hypothesis import settings\n\nsettings.register_profile("ci", derandomize=True)\n'
        ),
    )
    write(repo, pytest_dot_ini="[pytest]\naddopts = --hypothesis-profile=ci\n")
    scanned = scan(repo)
    assert scanned.located == [
        ("config_selection", "pytest.ini", 2, True),
        ("reseeded", "tests/conftest.py", 3, False),
    ]


def test_the_pinned_hypothesis_seed_and_an_ordinary_profile_stay_quiet(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        pytest_dot_ini="[pytest]\naddopts = --hypothesis-seed=9173 --hypothesis-profile=dev\n",
        tests__conftest_dot_py=(
            'from hypothesis import settings\n\nsettings.register_profile("dev", max_examples=5)\n'
        ),
    )
    scanned = scan(repo)
    assert (scanned.code, scanned.findings) == (0, [])


def test_ignores_and_deselections_of_other_files_stay_quiet(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        pytest_dot_ini="""\
        [pytest]
        addopts =
            -m "not stress"
            --ignore=tests/test_pattern_matching.py
            --ignore-glob=*_py2.py
            --deselect tests/test_other.py::test_x
        """,
        tests__conftest_dot_py="""\
        import sys

        collect_ignore = ["setup.py"]
        collect_ignore_glob = ["*_windows.py", "properties/test_other*.py"]
        if sys.version_info < (3, 10):
            collect_ignore.extend(["test_pattern_matching.py"])
            collect_ignore.append("properties/test_invoice_helpers.py")
        """,
    )
    scanned = scan(repo)
    assert (scanned.code, scanned.findings) == (0, [])


def test_ignores_that_match_the_property_module_or_cannot_be_read(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        pytest_dot_ini="[pytest]\naddopts = --ignore=tests/properties/\n",
        tests__conftest_dot_py="""\
        import os

        collect_ignore_glob = ["prop*/test_inv*.py"]
        collect_ignore = [os.path.join("properties", "x.py")]
        """,
    )
    scanned = scan(repo)
    assert scanned.located == [
        ("config_selection", "pytest.ini", 2, True),
        ("collection_tampering", "tests/conftest.py", 3, True),
        ("collection_tampering", "tests/conftest.py", 4, True),
    ]
    assert (
        "drops the property module tests/properties/test_invoice.py"
        in (scanned.findings[1]["message"])
    )
    assert (
        "drops files from collection that the scan cannot name" in (scanned.findings[2]["message"])
    )


def test_a_marker_expression_counts_once_a_property_carries_its_marker(repo: Repo) -> None:
    base(
        repo,
        "def test_total():\n    assert 1 < 2\n",
        pyproject_dot_toml="[tool.pytest.ini_options]\naddopts = \"-m 'not stress'\"\n",
    )
    write(repo, README_dot_md="docs\n")
    assert scan(repo).findings == []
    write(
        repo,
        tests__properties__test_invoice_dot_py="""\
        import pytest

        heavy = pytest.mark.stress


        @heavy
        class TestInvoice:
            def test_total(self):
                assert 1 < 2


        def test_total():
            assert 1 < 2
        """,
    )
    scanned = scan(repo)
    assert scanned.located == [("config_selection", "pyproject.toml", 2, True)]
    assert scanned.findings[0]["message"] == (
        "addopts in pyproject.toml passes '-m not stress' — it deselects tests by marker, so a "
        "property can stop running unnoticed"
    )


@pytest.mark.parametrize(
    ("hook", "line"),
    [
        ("def pytest_configure(config):\n    config.option.markexpr = 'not slow'\n", 1),
        ("def pytest_sessionstart(session):\n    session.config.option.keyword = 'not late'\n", 1),
        ("def pytest_markeval_namespace(config):\n    return {'CI': True}\n", 1),
        # a marker registered beside something else is no longer only a registration
        (
            "def pytest_configure(config):\n"
            "    config.addinivalue_line('markers', 'slow: s')\n"
            "    config.option.deselect = ['tests']\n",
            1,
        ),
        # a flag beside something else, a computed value, or a name sys defines is no flag
        ("def pytest_configure(config):\n    sys._x = True\n    config.option.keyword = 'a'\n", 1),
        ("def pytest_configure(config):\n    sys._called_from_test = config.option\n", 1),
        ("def pytest_configure(config):\n    FLAG = True\n    config.option.keyword = 'a'\n", 1),
        ("def pytest_configure(config):\n    sys.path = config.rootpath\n", 1),
        # a hook that reaches the run without its argument: pytest's modules, a value it
        # returns (pytest_cmdline_main's firstresult ends the session), pytest's variables
        ("def pytest_configure():\n    import _pytest.python\n    db.setup()\n", 1),
        ("def pytest_configure():\n    importlib.import_module('_pytest.main')\n", 1),
        ("def pytest_configure():\n    pytest.skip = lambda *a: None\n", 1),
        ("def pytest_cmdline_main():\n    return 0\n", 1),
        ("def pytest_configure():\n    os.environ['PYTEST_ADDOPTS'] = '-k x'\n", 1),
    ],
)
def test_a_new_configuration_hook_is_collection_tampering(repo: Repo, hook: str, line: int) -> None:
    base(repo)
    repo.write("tests/conftest.py", hook)
    scanned = scan(repo)
    assert scanned.introduced == [("collection_tampering", "tests/conftest.py", line)]
    assert "can change which tests run" in scanned.findings[0]["message"] or (
        "skipif and xfail" in scanned.findings[0]["message"]
    )


def test_a_configure_hook_that_only_registers_markers_is_not_a_finding(repo: Repo) -> None:
    base(repo)
    repo.write(
        "tests/conftest.py",
        'def pytest_configure(config):\n    """Markers."""\n'
        '    config.addinivalue_line("markers", "slow: a slow property")\n',
    )
    assert scan(repo).introduced == []


def test_pytests_flag_recipe_in_configure_and_unconfigure_is_not_a_finding(repo: Repo) -> None:
    """pytest's documented recipe ("Detect if running from within a pytest run"): a flag set in
    `pytest_configure` and removed in `pytest_unconfigure`; a global flag kept the same way."""
    base(repo)
    repo.write(
        "tests/conftest.py",
        "import sys\n\n"
        "_IN_RUN = False\n\n"
        "def pytest_configure(config):\n"
        "    global _IN_RUN\n"
        "    sys._called_from_test = True\n"
        "    _IN_RUN = True\n\n"
        "def pytest_unconfigure(config):\n"
        "    del sys._called_from_test\n\n"
        "def pytest_sessionfinish(session, exitstatus):\n"
        "    delattr(sys, '_called_from_test_too')\n",
    )
    assert scan(repo).introduced == []


def test_an_unconfigure_hook_that_does_more_than_drop_a_flag_is_report_tampering(
    repo: Repo,
) -> None:
    base(repo)
    repo.write(
        "tests/conftest.py",
        "import sys\n\n"
        "def pytest_unconfigure(config):\n"
        "    del sys._called_from_test\n"
        "    config.pluginmanager.unregister(name='junitxml')\n",
    )
    assert scan(repo).introduced == [("report_tampering", "tests/conftest.py", 3)]


def test_a_hook_that_sets_the_project_up_and_tears_it_down_is_not_a_finding(repo: Repo) -> None:
    """A configuration or session-finish hook that touches neither its arguments nor pytest:
    Django's setup, a database created and dropped, logging configured."""
    base(repo)
    repo.write(
        "tests/conftest.py",
        "import logging\n\nimport django\n\nfrom app import db\n\n"
        "def pytest_configure(config):\n"
        '    """Django and the test database, before collection."""\n'
        "    django.setup()\n"
        "    db.create_all(echo=False)\n"
        "    logging.basicConfig(level=logging.DEBUG)\n\n"
        "def pytest_sessionfinish(session, exitstatus):\n"
        "    db.drop_all()\n",
    )
    assert scan(repo).introduced == []


@pytest.mark.parametrize(
    "body",
    [
        "    os._exit(0)\n",  # the process ends before the reports are written
        "    outcome = yield\n",
        "    session.exitstatus = 0\n",
    ],
)
def test_a_session_finish_hook_that_reaches_the_outcome_is_report_tampering(
    repo: Repo, body: str
) -> None:
    base(repo)
    repo.write("tests/conftest.py", f"def pytest_sessionfinish(session):\n{body}")
    assert scan(repo).introduced == [("report_tampering", "tests/conftest.py", 1)]
