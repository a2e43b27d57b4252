"""A venv inside the checkout (`python -m venv .venv && .venv/bin/pip install -e .`) is an
environment, not code under test: host B's import check passes, the gate gives a verdict.

Real venvs made by `python -m venv` inside real git repositories; pytest and its
dependencies are copied into the venv's site-packages, so the test process imports them from
inside the checkout, as after `pip install pytest` there (no network in the test suite).
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from entropy_action.core.layout import JUNIT_XML
from entropy_action.gate import local
from entropy_action.hosts import environments, hostjson, launch
from entropy_action.testproc import plugin
from tests.integration.test_run_editable import PACKAGE, props
from tests.integration.test_run_host_a import GIT_ENV, MODULE, make_repo, manifest_yaml, settings

# pytest and what it needs at run time, copied into the checkout's venv.
COPIED = ("pytest", "pluggy", "iniconfig", "packaging", "pygments")


def git(root: Path, *args: str) -> None:
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def copy_distribution(name: str, purelib: Path) -> None:
    """Copy one installed distribution's files (its modules and dist-info) into `purelib`."""
    dist = importlib.metadata.distribution(name)
    for file in dist.files or ():
        source = Path(str(dist.locate_file(file)))
        if file.parts[0] == ".." or not source.is_file() or "__pycache__" in file.parts:
            continue  # scripts in bin/, bytecode
        target = purelib / file
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def venv_in_checkout(root: Path, name: str = ".venv") -> str:
    """`python -m venv <root>/<name>` with pytest copied in and the project installed editable
    (pip, offline); the venv's interpreter. The gate's own site-packages (time-machine, its
    pytest11 entry point) and checkout come last on the venv's path, through a .pth."""
    venv = root / name
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    purelib = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    )  # fmt: skip
    for dist in COPIED:
        copy_distribution(dist, purelib)
    gate_root = str(Path(__file__).resolve().parents[2])  # its pytest11 entry point's module
    (purelib / "gate_deps.pth").write_text(f"{sysconfig.get_paths()['purelib']}\n{gate_root}\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps",
         "--no-build-isolation", "--no-index", "-e", str(root)],
        check=True, capture_output=True,
    )  # fmt: skip
    return python


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A src-layout library with its venv in `.venv`, which git does not ignore (an unpacked
    sdist has no .gitignore for it)."""
    tmp = tmp_path_factory.mktemp("venv-in-checkout")
    files = {**PACKAGE, "entropy.yaml": manifest_yaml(tmp / "entropy-tmp")}
    root = make_repo(tmp / "repo", files)
    return root, venv_in_checkout(root)


def test_pytest_runs_from_the_venv_inside_the_checkout(checkout):
    root, python = checkout
    where = subprocess.run(
        [python, "-c", "import pytest, gatepkg; print(pytest.__file__); print(gatepkg.__file__)"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert Path(where[0]).is_relative_to(root / ".venv")
    assert where[1] == str(root / "src" / "gatepkg" / "__init__.py")


def test_host_b_with_the_venv_inside_the_checkout_is_valid(checkout, tmp_path):
    root, python = checkout
    info_b = launch.run_host(settings(root, tmp_path / "b", python=python, isolate=True))
    assert info_b.imported_outside == []
    assert hostjson.outcome(info_b)[0] == 0
    assert props(tmp_path / "b" / JUNIT_XML)["where"] == "copy"  # the copy's code ran
    copy = Path(info_b.root)
    assert not (copy / ".venv").exists()  # the venv is not copied into host B's tree
    assert info_b.imported_from["gatepkg"] == str((copy / "src" / "gatepkg").resolve())
    assert "pytest" not in info_b.imported_from


def test_the_projects_package_from_the_original_checkout_is_still_caught(checkout, tmp_path):
    """The exemptions cover the venv, not the project: a package of the project loaded from
    the original checkout makes host B invalid, the venv there all the same."""
    root, python = checkout
    init = root / "src" / "gatepkg" / "__init__.py"
    (root / MODULE).write_text(
        "import importlib.util\nimport sys\n\n\n"
        "def test_loads_the_original_package():\n"
        f"    spec = importlib.util.spec_from_file_location('gatepkg_original', {str(init)!r})\n"
        "    module = importlib.util.module_from_spec(spec)\n"
        "    sys.modules['gatepkg_original'] = module\n"
        "    spec.loader.exec_module(module)\n"
    )
    git(root, "commit", "-qam", "load the original by path")
    try:
        info_b = launch.run_host(settings(root, tmp_path / "b", python=python, isolate=True))
    finally:
        git(root, "revert", "--no-edit", "HEAD")
    outside = info_b.imported_outside
    assert str(init.resolve()) in outside
    assert not [path for path in outside if "/.venv/" in path]  # pytest is not named
    code, why = hostjson.outcome(info_b)
    assert code == 2
    assert why.startswith("host b: the code under test was imported from outside its own tree")


def test_a_docs_patch_with_the_venv_inside_the_checkout_is_a_merge_candidate(checkout, tmp_path):
    root, python = checkout
    (root / "README.md").write_text("# gatepkg\n\nA line of docs.\n")
    git(root, "add", "README.md")
    git(root, "commit", "-qm", "docs")
    result = local.run_gate(
        local.GateSettings(
            manifest=root / "entropy.yaml",
            base_ref="HEAD~1",
            environ=dict(os.environ),
            out=tmp_path / "out",
            python=python,
            python_a=python,
        )
    )
    assert result.verdict.classification == "merge_candidate", result.verdict.reasons


# --- which folders are environments ------------------------------------------------------------


def test_environments_are_venvs_and_what_git_ignores_outside_a_package(tmp_path):
    root = make_repo(
        tmp_path / "repo",
        {
            ".gitignore": "build/\nenv/\nsrc/pkg/_generated/\n",
            "src/pkg/__init__.py": "",
            "venv/__init__.py": "# a package of the project that happens to be named venv\n",
            "README.md": "x\n",
        },
    )
    for folder in (".venv", "env", "myenv", "build/lib", "src/pkg/_generated", "venv"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "myenv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    found = [path.relative_to(root).as_posix() for path in environments.environments(root)]
    # venv/ holds a tracked file: the project's; src/pkg/_generated/ is inside a package
    assert found == [".venv", "build", "env", "myenv"]


def test_outside_git_only_folders_that_say_they_are_a_venv(tmp_path):
    for folder in (".venv", "venv", "build", "other"):
        (tmp_path / folder).mkdir()
    (tmp_path / "other" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    found = [path.name for path in environments.environments(tmp_path)]
    assert found == [".venv", "other", "venv"]


def test_the_interpreters_own_places_are_environments(tmp_path):
    roots = plugin._environment_roots({"tree": str(tmp_path), "original": str(tmp_path / "o")})
    assert os.path.realpath(sys.prefix) in roots
    assert os.path.realpath(sysconfig.get_paths()["purelib"]) in roots


def test_a_place_that_holds_the_tree_exempts_nothing(tmp_path):
    """An interpreter under /usr with the checkout in /usr/src: its prefix holds the tree, so
    it would exempt the project's own code; it is dropped (fail closed)."""
    tree = os.path.join(sys.prefix, "src", "project")
    config = {"tree": tree, "original": str(tmp_path), "environments": [str(tmp_path)]}
    roots = plugin._environment_roots(config)
    assert os.path.realpath(sys.prefix) not in roots
    assert os.path.realpath(str(tmp_path)) not in roots  # the original checkout itself
