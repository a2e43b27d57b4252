"""Shared fixtures: real git repositories in temp dirs, and the CLI called in-process."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.github_api import GitHubAPI, serving
from tests.helpers import SEED_MANIFEST, SEED_PROPERTY, Repo, Result

__all__ = ["SEED_MANIFEST", "SEED_PROPERTY", "Repo", "Result"]


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test writes to the real $HOME or reads the developer's git config."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Author")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "author@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Author")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "author@example.invalid")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)


@pytest.fixture
def repo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Repo:
    """An empty git repository (branch main) whose root is the working directory of `cli`."""
    path = tmp_path / "repo"
    path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
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
    """A local server speaking GitHub's check-run API (tests/github_api.py), stopped after."""
    with serving() as api:
        yield api
