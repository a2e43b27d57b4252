"""The property's test side (scan.closure) of one revision, read from a work tree."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from entropy_action.core.hostinfo import DataFile, TestData
from entropy_action.scan import closure
from entropy_action.scan.source import WorkTree

MODULE = "tests/properties/test_invoices.py"


def _tree(root: Path, files: dict[str, str]) -> WorkTree:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text), encoding="utf-8")
    return WorkTree(root)


def test_the_side_follows_imports_into_the_test_area_and_stops_at_production(
    tmp_path: Path,
) -> None:
    tree = _tree(
        tmp_path,
        {
            MODULE: """\
            import invoice_lib
            from support.expected import expected_total
            from tests.fixtures import rows
            from .neighbour import helper
            """,
            "tests/conftest.py": "from tests.support import plugins\n",
            "tests/properties/conftest.py": "",
            "tests/properties/neighbour.py": "",
            "tests/support/__init__.py": "",
            "tests/support/expected.py": "from support import deeper\n",
            "tests/support/deeper.py": "import invoice_lib\n",
            "tests/support/plugins.py": "",
            "tests/support/unused.py": "",
            "tests/fixtures.py": "",
            "invoice_lib.py": "import testing_helpers\n",
            "testing_helpers.py": "",
        },
    )
    side = closure.side_of(tree, MODULE)
    assert side.python[0] == MODULE
    assert set(side.python) == {
        MODULE,
        "tests/conftest.py",
        "tests/properties/conftest.py",
        "tests/properties/neighbour.py",
        "tests/support/__init__.py",
        "tests/support/expected.py",
        "tests/support/deeper.py",
        "tests/support/plugins.py",
        "tests/fixtures.py",
    }
    assert side.config is None


def test_the_manifest_s_pythonpath_finds_a_helper_pytest_finds_there(tmp_path: Path) -> None:
    tree = _tree(
        tmp_path,
        {
            "demo/" + MODULE: "from tests.support.invoices import expected_total\n",
            "demo/tests/support/invoices.py": "",
        },
    )
    module = "demo/" + MODULE
    assert closure.side_of(tree, module).python == (module,)
    args = ("-o", "addopts=", "-q", "-o", "pythonpath=demo")
    assert closure.side_of(tree, module, args).python == (
        module,
        "demo/tests/support/invoices.py",
    )


@pytest.mark.parametrize(
    ("args", "found"),
    [
        (("-o", "pythonpath=src lib"), ("src", "lib")),
        (("--override-ini", "pythonpath=demo/"), ("demo",)),
        (("--override-ini=pythonpath=a",), ("a",)),
        (("-o", "addopts=-q"), ()),
        (("-o",), ()),
    ],
)
def test_pythonpath_is_read_from_the_run_arguments(
    args: tuple[str, ...], found: tuple[str, ...]
) -> None:
    assert closure.pythonpath(args) == found


@pytest.mark.parametrize(
    ("path", "test_area"),
    [
        ("tests/support/expected.py", True),
        ("tests/data/invoices.json", True),
        ("pkg/tests/helpers.py", True),
        ("conftest.py", True),
        ("test_x.py", True),
        ("pkg/thing_test.py", True),
        ("testing/fixtures.json", True),
        ("src/click/testing.py", False),  # a production module named like test code
        ("invoice_lib.py", False),
        ("proptests/helpers.py", False),
    ],
)
def test_the_test_area_never_holds_production_code(path: str, test_area: bool) -> None:
    assert closure.in_test_area(path) is test_area


PYPROJECT = """\
[project]
name = "invoices"
version = "1.0"

[tool.pytest.ini_options]
addopts = "-q"
"""


def test_only_pytest_s_section_of_a_configuration_file_counts(tmp_path: Path) -> None:
    before = closure.config_section(
        _tree(tmp_path / "a", {"pyproject.toml": PYPROJECT}), "pyproject.toml"
    )
    bumped = PYPROJECT.replace('"1.0"', '"1.1"')
    after = closure.config_section(
        _tree(tmp_path / "b", {"pyproject.toml": bumped}), "pyproject.toml"
    )
    stricter = PYPROJECT.replace('"-q"', '"-q -x"')
    changed = closure.config_section(
        _tree(tmp_path / "c", {"pyproject.toml": stricter}), "pyproject.toml"
    )
    moved = PYPROJECT.replace('"-q"', '"-q"\npythonpath = ["src"]')
    layout = closure.config_section(
        _tree(tmp_path / "d", {"pyproject.toml": moved}), "pyproject.toml"
    )
    assert before == after == layout != changed
    assert before == b'{"ini_options": {"addopts": "-q"}}'


@pytest.mark.parametrize(
    ("name", "text", "section"),
    [
        ("setup.cfg", "[metadata]\nname = x\n[tool:pytest]\naddopts = -q\n", b'{"addopts": "-q"}'),
        ("tox.ini", "[tox]\nenvlist = py\n", None),
        ("pytest.ini", "[pytest]\nxfail_strict = true\n", b'{"xfail_strict": "true"}'),
        ("pytest.ini", "[pytest]\npythonpath = src\n", None),
        ("pytest.ini", "[pytest]\n", None),
        ("pyproject.toml", "[project]\nname = 'x'\n", None),
        ("pyproject.toml", "[tool.pytest.ini_options\n", b"[tool.pytest.ini_options\n"),
    ],
)
def test_the_section_of_each_file_pytest_reads(
    tmp_path: Path, name: str, text: str, section: bytes | None
) -> None:
    assert closure.config_section(_tree(tmp_path, {name: text}), name) == section


def test_the_side_names_the_file_pytest_reads(tmp_path: Path) -> None:
    tree = _tree(
        tmp_path, {MODULE: "", "tests/pytest.ini": "[pytest]\n", "setup.cfg": "[tool:pytest]\n"}
    )
    assert closure.side_of(tree, MODULE).config == "tests/pytest.ini"


def _recorded(*files: tuple[str, str | None]) -> TestData:
    return TestData(files=[DataFile(path=path, opener=opener) for path, opener in files])


def test_the_data_files_are_the_test_area_s_or_those_test_code_opened() -> None:
    info = _recorded(
        ("tests/data/rows.json", "invoice_lib.py"),  # in the test area, whoever opened it
        ("fixtures/rows.csv", "tests/conftest.py"),  # opened by test code
        ("invoice_lib/tables.json", "invoice_lib/__init__.py"),  # production's own data
        ("README.txt", None),
        ("tests/helpers.py", MODULE),  # code, not data: the side follows imports
        ("tests/data/rows.json", MODULE),
    )
    assert closure.data_files(info) == ("fixtures/rows.csv", "tests/data/rows.json")
    assert closure.data_files(None) == ()


def test_the_walk_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {MODULE: "".join(f"import tests.h{i}\n" for i in range(10))}
    files.update({f"tests/h{i}.py": "" for i in range(10)})
    monkeypatch.setattr(closure, "MAX_FILES", 4)
    side = closure.side_of(_tree(tmp_path, files), MODULE)
    assert len(side.python) == 4
    assert side.notes == (f"the test side's walk stopped at 4 files ({MODULE})",)


def test_a_package_s_own_init_is_production_not_the_test_side(tmp_path: Path) -> None:
    """toolz/tests/test_itertoolz.py runs toolz/__init__.py first: production code all the
    same, never the base's on the head's code."""
    module = "toolz/tests/test_itertoolz.py"
    tree = _tree(tmp_path, {module: "", "toolz/__init__.py": "", "toolz/tests/__init__.py": ""})
    assert closure.side_of(tree, module).python == (module, "toolz/tests/__init__.py")
