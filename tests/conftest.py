"""Shared fixtures: real git repositories in temp dirs, and the CLI called in-process.

The tiers are directories: tests/unit (fast, no process started; see its conftest),
tests/integration, tests/e2e, tests/hostile and tests/compat (every supported Python with the
plugins real suites use), each test marked with its tier's name here."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import hostpython
from tests.support.github_api import GitHubAPI, serving
from tests.support.helpers import SEED_MANIFEST, SEED_PROPERTY, Repo, Result, init_repo

__all__ = ["SEED_MANIFEST", "SEED_PROPERTY", "Repo", "Result"]

TESTS = Path(__file__).parent
TIERS = ("unit", "integration", "e2e", "hostile", "compat")  # each marked by its name (not unit)


FULL_PYTHON = hostpython.TEST_VENV_PYTHON  # the test venv's own interpreter
HOST_PYTHON = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    """Host runs start the overlay interpreter (tests/support/hostpython.py). The xdist
    controller builds it (before its workers start) and runs no test itself; a worker, or a
    run without workers, makes it this process's `sys.executable`."""
    if not hostpython.wanted():
        config.stash[HOST_PYTHON] = f"{FULL_PYTHON} ({hostpython.FULL_ENV} set, or no venv)"
        return
    worker = hasattr(config, "workerinput")
    got = hostpython.built() if worker else hostpython.ensure()
    if isinstance(got, str):
        config.stash[HOST_PYTHON] = f"{FULL_PYTHON} ({got})"
        return
    config.stash[HOST_PYTHON] = f"{got} (the test venv less hypothesis's pytest plugin)"
    distributed = not worker and (getattr(config.option, "numprocesses", None) or 0) > 0
    if not distributed:
        sys.executable = str(got)


def pytest_report_header(config: pytest.Config) -> str:
    return f"host runs: {config.stash.get(HOST_PYTHON, FULL_PYTHON)}"


@pytest.fixture
def full_python(monkeypatch: pytest.MonkeyPatch) -> str:
    """This test's host runs start the test venv itself, hypothesis's pytest plugin and all."""
    monkeypatch.setattr(sys, "executable", FULL_PYTHON)
    return FULL_PYTHON


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test gets its tier's marker by directory (unit gets none: it is what is left by
    `-m "not integration and not e2e and not hostile"`)."""
    for item in items:
        tier = item.path.relative_to(TESTS).parts[0] if item.path.is_relative_to(TESTS) else ""
        if tier in TIERS[1:]:
            item.add_marker(getattr(pytest.mark, tier))


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test writes to the real $HOME or reads the developer's git config."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)  # the gate's cache lives under $HOME
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    for name in ("AUTHOR", "COMMITTER"):  # each repository sets its own identity (a fresh
        monkeypatch.delenv(f"GIT_{name}_NAME", raising=False)  # machine has none)
        monkeypatch.delenv(f"GIT_{name}_EMAIL", raising=False)


@pytest.fixture
def repo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Repo:
    """An empty git repository (branch main) whose root is the working directory of `cli`."""
    path = tmp_path / "repo"
    path.mkdir()
    init_repo(path)
    return Repo(path=path, capsys=capsys, monkeypatch=monkeypatch)


@pytest.fixture
def seed_repo(repo: Repo) -> Repo:
    """A repository whose base commit holds the seed's manifest and its property module."""
    repo.write("entropy.yaml", SEED_MANIFEST.read_text(encoding="utf-8"))
    repo.write("tests/properties/test_invoice_total.py", SEED_PROPERTY)
    repo.commit("base")
    return repo


@pytest.fixture
def github_api() -> Iterator[GitHubAPI]:
    """A local server speaking GitHub's check-run API (tests/support/github_api.py), stopped
    after."""
    with serving() as api:
        yield api
