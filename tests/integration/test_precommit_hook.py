"""The hook under the real pre-commit (PyPI's `pre-commit`): `pre-commit try-repo` of this
checkout in a scratch repository that adopted the gate, as a user tries a hooks repository
before adding it to `.pre-commit-config.yaml`. pre-commit installs entropy-gate from the
checkout into its own virtualenv (`language: python`) and runs `.pre-commit-hooks.yaml`'s
entry on the staged change: a staged skip marker fails naming its line, a docs change passes.

The checkout is snapshotted once per module (its tracked and new files, committed in a
scratch clone), so both tests share one installed hook environment."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.conftest import FULL_PYTHON
from tests.integration.test_precommit import SKIP_FINDING, SKIPPED, SUMMARY
from tests.integration.test_scan_helpers import CLEAN, INVOICE_LIB, MANIFEST, PROPERTY
from tests.support.e2e_kit import project_copy

ROOT = Path(__file__).resolve().parents[2]
IDENTITY = {
    "GIT_AUTHOR_NAME": "A. User",
    "GIT_AUTHOR_EMAIL": "user@example.invalid",
    "GIT_COMMITTER_NAME": "A. User",
    "GIT_COMMITTER_EMAIL": "user@example.invalid",
}
HOOK = "entropy-gate (pins and silencing in the staged change)"


def sh(
    args: list[str | Path], cwd: Path, env: Mapping[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """(this checkout as a committed snapshot, the environment pre-commit runs in: its own
    cache folder, a fresh HOME, no developer git config)."""
    snapshot = project_copy(tmp_path_factory.mktemp("hooks-repo"))
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "GIT_", "VIRTUAL_ENV"))
    }
    env |= IDENTITY | {
        "HOME": str(tmp_path_factory.mktemp("home")),
        "PRE_COMMIT_HOME": str(tmp_path_factory.mktemp("pre-commit-cache")),
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    for command in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "add", "-A"],
        ["git", "commit", "-qm", "snapshot"],
    ):
        done = sh([*command], snapshot, env)
        assert done.returncode == 0, done.stderr
    return snapshot, env


@pytest.fixture
def adopted(tmp_path: Path, world: tuple[Path, dict[str, str]]) -> Path:
    """A library that adopted the gate: entropy.yaml, its property module, committed."""
    _, env = world
    repo = tmp_path / "library"
    files = {
        "entropy.yaml": MANIFEST,
        PROPERTY: CLEAN,
        "invoice_lib.py": INVOICE_LIB,
        "README.md": "# Invoices\n",
    }
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    for command in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "add", "-A"],
        ["git", "commit", "-qm", "base"],
    ):
        assert sh([*command], repo, env).returncode == 0
    return repo


def try_repo(repo: Path, world: tuple[Path, dict[str, str]]) -> subprocess.CompletedProcess[str]:
    snapshot, env = world
    return sh(
        [FULL_PYTHON, "-m", "pre_commit", "try-repo", snapshot, "entropy-gate", "--color=never"],
        repo,
        env,
    )


def test_the_hooks_manifest_is_one_pre_commit_accepts(world: tuple[Path, dict[str, str]]) -> None:
    snapshot, env = world
    checked = sh(
        [FULL_PYTHON, "-m", "pre_commit", "validate-manifest", ".pre-commit-hooks.yaml"],
        snapshot,
        env,
    )
    assert (checked.returncode, checked.stdout, checked.stderr) == (0, "", "")


def test_a_staged_skip_marker_fails_the_hook_naming_its_line(
    adopted: Path, world: tuple[Path, dict[str, str]]
) -> None:
    (adopted / PROPERTY).write_text(SKIPPED, encoding="utf-8")
    assert sh(["git", "add", PROPERTY], adopted, world[1]).returncode == 0
    ran = try_repo(adopted, world)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    lines = ran.stdout.splitlines()
    (verdict,) = [line for line in lines if line.startswith(HOOK)]
    assert verdict.endswith("Failed")
    assert "- exit code: 1" in lines
    assert SKIP_FINDING in lines
    assert SUMMARY.format(n=1).strip() in lines  # pre-commit shows the hook's stderr too


def test_a_staged_docs_change_passes_the_hook(
    adopted: Path, world: tuple[Path, dict[str, str]]
) -> None:
    (adopted / "README.md").write_text("# Invoices\n\nMore docs.\n", encoding="utf-8")
    assert sh(["git", "add", "README.md"], adopted, world[1]).returncode == 0
    ran = try_repo(adopted, world)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (verdict,) = [line for line in ran.stdout.splitlines() if line.startswith(HOOK)]
    assert verdict.endswith("Passed")
