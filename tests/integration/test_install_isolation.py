"""entropy-gate's own venv is built without running anything of the working directory (the
check job's and the verdict job's working directory is the PR's checkout): scripts/install.sh
run for real, from the hashed lock, in a folder where a pull request planted `venv.py`,
`pip/`, `ensurepip/`, `hashlib.py`, `tomllib.py`, `sitecustomize.py`, `site.py` and a `.pth`
(tests/support/planted.py) — at its root and in the folder below it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from entropy_action.evidence import hosterror
from tests.support import planted

pytestmark = pytest.mark.integration
ROOT = Path(__file__).parent.parent.parent
INSTALL_GATE = ROOT / "scripts" / "install.sh"


@pytest.fixture(scope="module")
def lock_wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """requirements/action.lock and uv.lock as wheels for this interpreter (the build then
    needs no index, as under act)."""
    target = tmp_path_factory.mktemp("lock-wheels")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--require-hashes",
         "--only-binary=:all:", "-d", target, "-r", ROOT / "requirements" / "action.lock",
         "-r", ROOT / "requirements" / "uv.lock"],
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
    assert "entropy-gate: venv built with uv (uv " in done.stdout  # from the hashed uv.lock
    assert planted.records(markers) == []
    assert tar.is_file()
    version = subprocess.run(
        [target / "bin" / "python", "-I", "-m", "entropy_action", "--version"],
        cwd=tree, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert version.returncode == 0, version.stderr
    assert planted.records(markers) == []


def test_without_uv_the_venv_is_built_with_pip_and_says_so(
    tmp_path: Path, lock_wheels: Path
) -> None:
    """uv.lock's wheel not to be had (an index without it): one line, then pip, as before."""
    tree, markers = checkout(tmp_path)
    wheels = tmp_path / "no-uv"
    shutil.copytree(lock_wheels, wheels, ignore=shutil.ignore_patterns("uv-*"))
    target = tmp_path / "runner-temp" / "entropy-gate-venv"
    target.parent.mkdir()
    done = install(target, tree, wheels)
    assert done.returncode == 0, done.stdout + done.stderr
    said = done.stdout.splitlines()[0]
    assert said.startswith("entropy-gate: uv could not be installed from requirements/uv.lock (")
    assert said.endswith("): building the venv with pip (slower)")
    assert planted.records(markers) == []
    assert (target / "bin" / "pip").exists()  # python -m venv's own


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


# --- it trusts only what it built or verified itself -------------------------------------------

VERIFY_GATE = ROOT / "scripts" / "verify-gate.sh"


def outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def test_a_venv_planted_before_the_install_is_removed_and_built_again(
    tmp_path: Path, lock_wheels: Path
) -> None:
    """What the PR's setup.py did in issue 34: a `bin/python` of its own at the venv's path,
    stamped with the action's folder. The install never runs it."""
    target = tmp_path / "runner-temp" / "entropy-gate-venv"
    (target / "bin").mkdir(parents=True)
    marker = tmp_path / "planted-python-ran"
    (target / "bin" / "python").write_text(f"#!/bin/sh\ntouch {marker}\nexit 0\n")
    (target / "bin" / "python").chmod(0o755)
    (target / ".entropy-gate-source").write_text(f"{ROOT}\n")
    done = install(target, tmp_path, lock_wheels)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == (
        f"::warning title=entropy-gate::{target} holds a venv this job's install did not "
        "build, or one changed since: removed, building it here"
    )
    assert not marker.exists()
    assert (target / "pyvenv.cfg").is_file()


def test_the_jobs_own_venv_is_reused_only_unchanged_and_verified_after_the_prs_code(
    tmp_path: Path, lock_wheels: Path
) -> None:
    """Install (step output venv-tree), install again in the same job (reused, the same
    digest), then verify-gate.sh: it passes on the venv as built and refuses it once a file in
    it changed, writing the host's error report with the runner's Python."""
    runner_temp = tmp_path / "runner-temp"
    target = runner_temp / "entropy-gate-venv"
    runner_temp.mkdir()
    first_out, second_out = tmp_path / "out-1", tmp_path / "out-2"
    assert install(target, tmp_path, lock_wheels, GITHUB_OUTPUT=str(first_out)).returncode == 0
    again = install(target, tmp_path, lock_wheels, GITHUB_OUTPUT=str(second_out))
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout == ""  # reused: nothing built, nothing said
    tree = outputs(first_out)["venv-tree"]
    assert outputs(second_out)["venv-tree"] == tree
    gate = runner_temp / "entropy-gate-cli"
    env = {
        **os.environ,
        "VENV": str(target),
        "TREE": tree,
        "GATE": str(gate),
        "HOST": "a",
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_OUTPUT": str(tmp_path / "out-3"),
        "ENTROPY_GATE_INSTALL_PYTHON": sys.executable,
    }
    verify = ["bash", str(VERIFY_GATE)]
    ok = subprocess.run(verify, env=env, capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    wrapper = f'#!/bin/sh\nexec "{target}/bin/python" -I -B -m entropy_action "$@"\n'
    assert gate.read_text() == wrapper
    (site,) = target.glob("lib/python*/site-packages")
    (site / "zz-planted.pth").write_text("import os\n")  # what a setup.py could leave
    refused = subprocess.run(verify, env=env, capture_output=True, text=True, check=False)
    assert refused.returncode == 2
    assert refused.stdout.startswith(
        f"::error title=entropy-gate::host a: entropy-gate's own venv ({target}) changed after "
        "it was installed, while the project's install ran the PR's code"
    )
    error = runner_temp / "entropy-gate" / "host-a" / "error.json"
    read = hosterror.read(error.parent)  # the verdict's reader takes it as the host's cause
    assert read is not None
    assert (read.host, read.step) == ("a", "verify entropy-gate")
    assert read.message.startswith("entropy-gate's own venv")
    changed = install(target, tmp_path, lock_wheels)  # a later install in the job rebuilds it
    assert "removed, building it here" in changed.stdout
    assert not (site / "zz-planted.pth").exists()
