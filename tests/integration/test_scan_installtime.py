"""Code the host job runs when it installs the project (setup.py, an in-tree build backend,
setuptools command classes) and the project's test extra: read with the classes the scan
already knows — and the honest install code none of it fires on."""

from __future__ import annotations

from tests.integration.test_scan_helpers import base, scan, write
from tests.support.helpers import Repo

# Issue 34's attack: the defect undone in the working tree, a gate of its own planted.
ATTACK = """\
import os
import pathlib

from setuptools import setup

pathlib.Path("invoice_lib.py").write_text("def total_for(amounts, as_of=None):\\n    return 0\\n")
venv = pathlib.Path(os.environ.get("RUNNER_TEMP", "/tmp")) / "entropy-gate-venv"
setup(name="invoices", version="0", py_modules=["invoice_lib"])
"""
HONEST = """\
import pathlib

from setuptools import setup

here = pathlib.Path(__file__).parent
long_description = (here / "README.md").read_text()
pathlib.Path("build").mkdir(exist_ok=True)
with open("build/version.txt", "w") as handle:
    handle.write("1")
setup(name="invoices", version="1", long_description=long_description)
"""


def test_a_setup_py_that_rewrites_the_tree_and_names_the_gate_is_found(repo: Repo) -> None:
    base(repo)
    write(repo, setup_dot_py=ATTACK)
    scanned = scan(repo)
    assert scanned.code == 1
    assert scanned.introduced == [
        ("unit_replaced", "setup.py", 6),
        ("report_tampering", "setup.py", 7),
        ("report_tampering", "setup.py", 7),
    ]
    messages = {f["message"] for f in scanned.findings}
    assert any(
        m.endswith(
            " in setup.py writes, moves or removes invoice_lib.py, a file of the tree, when the "
            "host job installs the project: the tests then run a tree the commit does not hold"
        )
        for m in messages
    ), messages
    assert (
        "setup.py names `RUNNER_TEMP` in code the host job runs when it installs the project: "
        "with it that code can rewrite entropy-gate's own files or the job's environment, and "
        "with them what the host reports"
    ) in messages
    assert any("names `entropy-gate-venv`" in m for m in messages)


def test_the_same_setup_py_at_the_base_is_a_notice(repo: Repo) -> None:
    base(repo, setup_dot_py=ATTACK)
    write(repo, README_dot_md="docs\n")
    scanned = scan(repo)
    assert scanned.code == 0
    assert scanned.introduced == []
    assert {kind for kind, _, _, _ in scanned.located} == {"unit_replaced", "report_tampering"}


def test_an_honest_setup_py_reads_and_writes_outside_the_tree(repo: Repo) -> None:
    """Reading README.md, writing build output that is not a file of the tree: nothing."""
    base(repo)
    write(repo, setup_dot_py=HONEST, README_dot_md="docs\n")
    assert scan(repo).introduced == []


def test_an_in_tree_build_backend_and_a_command_class_are_install_time_code(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        pyproject_dot_toml="""\
        [build-system]
        requires = []
        build-backend = "backend"
        backend-path = ["_build"]

        [tool.setuptools.cmdclass]
        build_py = "tools.cmds:BuildPy"
        """,
        _build__backend_dot_py="""\
        import os

        def build_wheel(*args):
            open(os.environ["GITHUB_ENV"], "a").write("BASH_ENV=/tmp/x\\n")
        """,
        tools____init___dot_py="",
        tools__cmds_dot_py="""\
        import shutil

        class BuildPy:
            def run(self):
                shutil.copy("tests/fixed.py", "invoice_lib.py")
        """,
    )
    scanned = scan(repo)
    assert sorted(scanned.introduced) == [
        ("report_tampering", "_build/backend.py", 4),
        ("report_tampering", "_build/backend.py", 4),
        ("unit_replaced", "tools/cmds.py", 5),
    ]


def test_a_pytest_plugin_in_the_test_extra_is_a_plugin_the_run_loads(repo: Repo) -> None:
    base(repo, pyproject_dot_toml='[project]\nname = "x"\nversion = "0"\n')
    write(
        repo,
        pyproject_dot_toml="""\
        [project]
        name = "x"
        version = "0"

        [project.optional-dependencies]
        test = ["pytest>=8", "pytest-rerunfailures>=14", "requests"]
        """,
    )
    scanned = scan(repo)
    assert scanned.introduced == [("hook_added", "pyproject.toml", 6)]
    assert scanned.findings[0]["message"] == (
        "the test extra `test` in pyproject.toml installs pytest-rerunfailures, a pytest "
        "plugin every run then loads from site-packages (the base run's too): the scan cannot "
        "read its hooks"
    )
