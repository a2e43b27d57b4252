"""entropy-gate's own venv is built without running anything of the working directory (the
check job's and the verdict job's working directory is the PR's checkout): scripts/install.sh
run for real, from the hashed lock, in a folder where a pull request planted `venv.py`,
`pip/`, `ensurepip/`, `hashlib.py`, `tomllib.py`, `sitecustomize.py`, `site.py` and a `.pth`
(tests/support/planted.py) — at its root and in the folder below it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import planted

pytestmark = pytest.mark.integration
ROOT = Path(__file__).parent.parent.parent
INSTALL_GATE = ROOT / "scripts" / "install.sh"


@pytest.fixture(scope="module")
def lock_wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """requirements/action.lock as wheels for this interpreter (the build then needs no index,
    as under act)."""
    target = tmp_path_factory.mktemp("lock-wheels")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--require-hashes",
         "--only-binary=:all:", "-d", target, "-r", ROOT / "requirements" / "action.lock"],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return target


def checkout(tmp_path: Path) -> tuple[Path, Path]:
    """A PR's checkout with every planted file at its root and in `tests/`; the markers folder."""
    tree, markers = tmp_path / "checkout", tmp_path / "markers"
    planted.plant(tree, markers)
    planted.plant(tree / "tests", markers)
    return tree, markers


def install(
    target: Path, cwd: Path, wheels: Path, **extra: str
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("ENTROPY_GATE_", "PIP_"))}
    env = {
        **clean,
        "ENTROPY_GATE_INSTALL_PYTHON": sys.executable,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "PIP_CONFIG_FILE": os.devnull,
        **extra,
    }
    return subprocess.run(
        ["bash", INSTALL_GATE, target], cwd=cwd, env=env, capture_output=True, text=True,
        check=False,
    )  # fmt: skip


def test_the_venv_is_built_and_packed_without_running_a_planted_file(
    tmp_path: Path, lock_wheels: Path
) -> None:
    """The check job's build (`gate-venv: pack`): `python -m venv`, `python -m pip`, the
    sha256 and the version check all run isolated, in a folder of their own."""
    tree, markers = checkout(tmp_path)
    target = tmp_path / "runner-temp" / "entropy-gate-venv"
    target.parent.mkdir()
    tar = tmp_path / "runner-temp" / "entropy-gate-venv.tar"
    done = install(target, tree, lock_wheels, ENTROPY_GATE_VENV_PACK=str(tar))
    assert done.returncode == 0, done.stdout + done.stderr
    assert planted.records(markers) == []
    assert tar.is_file()
    version = subprocess.run(
        [target / "bin" / "python", "-I", "-m", "entropy_action", "--version"],
        cwd=tree, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert version.returncode == 0, version.stderr
    assert planted.records(markers) == []


def test_the_machine_wide_venv_cache_key_runs_no_planted_file(
    tmp_path: Path, lock_wheels: Path
) -> None:
    """ENTROPY_GATE_VENV_CACHE's key is computed by a Python of its own (`python -I -`)."""
    tree, markers = checkout(tmp_path)
    target = tmp_path / "runner-temp" / "entropy-gate-venv"
    target.parent.mkdir()
    cache = tmp_path / "venv-cache"
    done = install(target, tree, lock_wheels, ENTROPY_GATE_VENV_CACHE=str(cache))
    assert done.returncode == 0, done.stdout + done.stderr
    assert planted.records(markers) == []
    assert target.is_symlink()
