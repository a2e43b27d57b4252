"""The action's install scripts, run for real: the project under test installed the way the
reusable workflow's default does it (scripts/install-project.sh), and entropy-gate's own venv
reused across jobs only when it is the check job's build (scripts/install.sh)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent.parent
INSTALL_PROJECT = ROOT / "scripts" / "install-project.sh"
INSTALL_GATE = ROOT / "scripts" / "install.sh"

LIBRARY = """\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "scratchlib"
version = "0.1"
{extras}
[tool.setuptools]
py-modules = ["scratchlib"]
"""


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pytest and setuptools with their dependencies, as wheels: the scripts then install with
    no index, as under act."""
    target = tmp_path_factory.mktemp("wheels")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:", "-d", target,
         "pytest", "setuptools", "wheel"],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return target


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new venv with pip and nothing else, made once: ensurepip is the slow part."""
    path = tmp_path_factory.mktemp("fresh") / "env"
    subprocess.run([sys.executable, "-m", "venv", path], check=True, capture_output=True)
    return path


@pytest.fixture
def venv(fresh_venv: Path, tmp_path: Path) -> Path:
    """This test's own copy of the fresh venv (its interpreter; `python -m pip` works from a
    copied venv, which finds its prefix by its pyvenv.cfg)."""
    copy = tmp_path / "env"
    shutil.copytree(fresh_venv, copy, symlinks=True)
    return copy / "bin" / "python"


@pytest.fixture(scope="module")
def uv_wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """uv's wheel, from the action's hashed requirements/uv.lock (what install-project.sh
    installs uv from, with pip --require-hashes)."""
    target = tmp_path_factory.mktemp("uv-wheels")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--require-hashes", "--no-deps",
         "--only-binary=:all:", "-d", target, "-r", ROOT / "requirements" / "uv.lock"],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return target


def install_project(
    project: Path, python: Path, *links: Path, installer: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHON": str(python),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": " ".join(map(str, links)),
        "PIP_CONFIG_FILE": os.devnull,
        "UV_NO_CONFIG": "1",  # this machine's uv.toml is not the runner's
    }
    env.pop("ENTROPY_GATE_PROJECT_INSTALLER", None)
    if installer is not None:
        env["ENTROPY_GATE_PROJECT_INSTALLER"] = installer
    return subprocess.run(
        ["bash", INSTALL_PROJECT], cwd=project, env=env, capture_output=True, text=True, check=False
    )


def has(python: Path, module: str) -> bool:
    done = subprocess.run([python, "-c", f"import {module}"], capture_output=True, check=False)
    return done.returncode == 0


def installer_of(python: Path, distribution: str) -> str:
    """What installed the distribution: its dist-info's INSTALLER file (pip, uv)."""
    done = subprocess.run(
        [python, "-c", f"import importlib.metadata as m; print(m.distribution({distribution!r})"
         ".read_text('INSTALLER'))"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def scratch_library(tmp_path: Path, extras: str) -> Path:
    project = tmp_path / "lib"
    project.mkdir()
    (project / "pyproject.toml").write_text(LIBRARY.format(extras=extras))
    (project / "scratchlib.py").write_text("VALUE = 1\n")
    return project


def test_the_test_extra_brings_pytest(tmp_path: Path, wheels: Path, venv: Path) -> None:
    """The first of test, tests, testing the project declares (never its other extras)."""
    extra = "testing"
    project = scratch_library(
        tmp_path, f'[project.optional-dependencies]\n{extra} = ["pytest"]\ndocs = ["sphinx"]\n'
    )
    done = install_project(project, venv, wheels)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"entropy-gate: installing the project under test: pip install -e '.[{extra}]' "
        f"(the {extra} extra of pyproject.toml; install input empty)"
    ]
    assert has(venv, "scratchlib")
    assert has(venv, "pytest")


SETUP_CFG = """\
[metadata]
name = scratchlib
version = 0.1

[options]
py_modules = scratchlib

[options.extras_require]
docs = sphinx
tests =
    pytest
"""
SETUP_PY = """\
from setuptools import setup

EXTRAS = {"docs": ["sphinx"], "test": ["pytest"]}

setup(name="scratchlib", version="0.1", py_modules=["scratchlib"], extras_require=EXTRAS)
"""
SHIM = "from setuptools import setup\nsetup()\n"
LEGACY = {  # setuptools' older declarations: the extra and the file the line names
    "setup.cfg": ({"setup.cfg": SETUP_CFG, "setup.py": SHIM}, "tests"),
    "setup.py": ({"setup.py": SETUP_PY}, "test"),
}


@pytest.mark.parametrize("declared", LEGACY)
def test_an_extra_in_setup_cfg_or_setup_py_is_found_and_named(
    tmp_path: Path, wheels: Path, venv: Path, declared: str
) -> None:
    files, extra = LEGACY[declared]
    project = tmp_path / "lib"
    project.mkdir()
    (project / "scratchlib.py").write_text("VALUE = 1\n")
    for name, text in files.items():
        (project / name).write_text(text)
    done = install_project(project, venv, wheels)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"entropy-gate: installing the project under test: pip install -e '.[{extra}]' "
        f"(the {extra} extra of {declared}; install input empty)"
    ]  # one line: the extra brought pytest, none was installed after it
    assert has(venv, "scratchlib")
    assert has(venv, "pytest")


def test_setup_py_is_read_never_run(tmp_path: Path, wheels: Path, venv: Path) -> None:
    """Run, this setup.py stops before its setup() call: the extra is found by reading it."""
    project = tmp_path / "lib"
    project.mkdir()
    (project / "setup.py").write_text("raise SystemExit(3)\nsetup(extras_require={'test': []})\n")
    done = install_project(project, venv, wheels)
    assert done.stdout.splitlines()[0] == (
        "entropy-gate: installing the project under test: pip install -e '.[test]' "
        "(the test extra of setup.py; install input empty)"
    )
    assert done.returncode != 0  # pip's build runs it, and it fails: so does the step


def test_a_project_without_a_test_extra_gets_pytest_after_it(
    tmp_path: Path, wheels: Path, venv: Path
) -> None:
    project = scratch_library(tmp_path, "")
    done = install_project(project, venv, wheels)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "entropy-gate: installing the project under test: pip install -e '.' (no test, tests or "
        "testing extra declared; install input empty)",
        "entropy-gate: pytest is not among the project's dependencies: pip install pytest",
    ]
    assert has(venv, "scratchlib")
    assert has(venv, "pytest")


def test_a_tree_that_is_not_a_package_is_left_alone(
    tmp_path: Path, wheels: Path, venv: Path
) -> None:
    project = tmp_path / "scripts-only"
    project.mkdir()
    done = install_project(project, venv, wheels)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith(
        "entropy-gate: no pyproject.toml, setup.py or setup.cfg at the root"
    )
    assert has(venv, "pytest")


def test_a_project_that_does_not_install_fails_the_step(
    tmp_path: Path, wheels: Path, venv: Path
) -> None:
    project = scratch_library(
        tmp_path, '[project.optional-dependencies]\ntest = ["no-such-dist-x"]\n'
    )
    done = install_project(project, venv, wheels)
    assert done.returncode != 0
    assert not has(venv, "scratchlib")


# --- project-installer: uv ----------------------------------------------------------------


UV_CASES = {  # the project's extras: the lines said, as pip's with uv doing each install
    "no test extra": (
        "",
        [
            "entropy-gate: installing the project under test: uv pip install -e '.' (no test, "
            "tests or testing extra declared; install input empty)",
            "entropy-gate: pytest is not among the project's dependencies: uv pip install pytest",
        ],
    ),
    "a test extra": (
        '[project.optional-dependencies]\ntest = ["pytest"]\n',
        [
            "entropy-gate: installing the project under test: uv pip install -e '.[test]' (the "
            "test extra of pyproject.toml; install input empty)"
        ],
    ),
}


@pytest.mark.parametrize("case", UV_CASES)
def test_uv_installs_the_project_and_pytest_when_asked(
    tmp_path: Path, wheels: Path, uv_wheels: Path, venv: Path, case: str
) -> None:
    """The same decisions and lines as pip's, `uv pip install` doing the installs, with uv
    from the action's hashed lock and pip's index variables (no index, the wheelhouse)."""
    extras, said = UV_CASES[case]
    project = scratch_library(tmp_path, extras)
    done = install_project(project, venv, wheels, uv_wheels, installer="uv")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == said
    assert installer_of(venv, "scratchlib") == "uv"
    assert installer_of(venv, "pytest") == "uv"


def test_where_uv_cannot_be_installed_pip_installs_the_project_said_in_one_line(
    tmp_path: Path, wheels: Path, venv: Path
) -> None:
    """No uv wheel where pip may look: the install goes on with pip, and says why."""
    project = scratch_library(tmp_path, '[project.optional-dependencies]\ntest = ["pytest"]\n')
    done = install_project(project, venv, wheels, installer="uv")
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first.startswith("entropy-gate: uv could not be installed from requirements/uv.lock (")
    assert first.endswith("): the project is installed with pip (project-installer: uv)")
    assert second == (
        "entropy-gate: installing the project under test: pip install -e '.[test]' (the test "
        "extra of pyproject.toml; install input empty)"
    )
    assert installer_of(venv, "scratchlib") == "pip"


def test_an_unknown_installer_fails_before_anything_is_installed(
    tmp_path: Path, wheels: Path, venv: Path
) -> None:
    project = scratch_library(tmp_path, "")
    done = install_project(project, venv, wheels, installer="poetry")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "entropy-gate: project-installer must be pip or uv, not 'poetry'\n"
    assert not has(venv, "scratchlib")


# --- one venv per workflow run: unpacked only when it is the check job's ---------------------


def fake_gate_venv(folder: Path) -> Path:
    """A tar holding `venv/`: a real venv (no pip) whose site-packages reaches this checkout
    and this test run's distributions through a .pth file, so that `-I -m entropy_action`
    runs in it, as in a venv the check job built."""
    tree = folder / "packing" / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", tree], check=True, capture_output=True
    )
    (site,) = tree.glob("lib/python*/site-packages")
    (site / "gate.pth").write_text(f"{ROOT}\n{sysconfig.get_paths()['purelib']}\n")
    tar = folder / "entropy-gate-venv.tar"
    with tarfile.open(tar, "w") as archive:
        archive.add(tree, arcname="venv")
    return tar


def install_gate(
    target: Path, env: dict[str, str], python: str = sys.executable
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ENTROPY_GATE_")}
    return subprocess.run(
        ["bash", INSTALL_GATE, target],
        env={**clean, "ENTROPY_GATE_INSTALL_PYTHON": python, **env},
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_check_jobs_venv_is_unpacked_when_its_sha256_matches(tmp_path: Path) -> None:
    tar = fake_gate_venv(tmp_path)
    digest = hashlib.sha256(tar.read_bytes()).hexdigest()
    target = tmp_path / "runner-temp" / "entropy-gate-venv"
    target.parent.mkdir()
    env = {"ENTROPY_GATE_VENV_FROM": str(tar), "ENTROPY_GATE_VENV_DIGEST": digest}
    done = install_gate(target, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == (
        f"entropy-gate: venv unpacked from the check job's build (sha256 {digest})"
    )
    assert done.stdout.splitlines()[1].startswith("entropy-gate ")  # its --version
    assert (target / "pyvenv.cfg").is_file()
    assert (target / ".entropy-gate-source").read_text().strip() == str(ROOT)


@pytest.mark.parametrize("damage", ["digest", "missing", "broken"])
def test_any_other_venv_is_refused_and_built_from_the_lock(tmp_path: Path, damage: str) -> None:
    """A tar that is not the check job's build (another sha256, none, or one whose interpreter
    does not run) is never used: the script says why and builds from the lock — here with an
    interpreter that does not exist, so the build stops at once and nothing was unpacked."""
    tar = fake_gate_venv(tmp_path)
    digest = hashlib.sha256(tar.read_bytes()).hexdigest()
    if damage == "digest":
        tar.write_bytes(tar.read_bytes() + b"\0" * 512)  # the same venv, one more block
    elif damage == "missing":
        tar.unlink()
    else:
        for python in (tmp_path / "packing" / "venv" / "bin").glob("python*"):
            python.unlink()
            python.symlink_to("/nonexistent/python")
        with tarfile.open(tar, "w") as archive:
            archive.add(tmp_path / "packing" / "venv", arcname="venv")
        digest = hashlib.sha256(tar.read_bytes()).hexdigest()
    target = tmp_path / "runner-temp" / "entropy-gate-venv"
    target.parent.mkdir()
    env = {"ENTROPY_GATE_VENV_FROM": str(tar), "ENTROPY_GATE_VENV_DIGEST": digest}
    done = install_gate(target, env, python=str(tmp_path / "no-python"))
    assert done.returncode != 0
    first = done.stdout.splitlines()[0]
    got = hashlib.sha256(tar.read_bytes()).hexdigest() if tar.exists() else ""
    expected = {
        "digest": f"::warning title=entropy-gate::the packed venv's sha256 is {got}, not the "
        f"check job's {digest}: building it here",
        "missing": f"entropy-gate: no packed venv at {tar}: building it here",
        "broken": "entropy-gate: the packed venv does not run on this runner: building it here",
    }[damage]
    assert first == expected
    assert not (target / "bin").exists()
    assert list(target.parent.iterdir()) == []  # no half-unpacked folder left behind
