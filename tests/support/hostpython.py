"""The interpreter this suite's host runs use: the test venv, less hypothesis's pytest plugin.

The test extra installs hypothesis (the plugin seeds it; the readers are fuzzed with it), and
its pytest plugin imports all of hypothesis in every session's terminal summary, whether the
tests use it or not: 0.13 s of a 0.31 s bare pytest run on these machines, paid by each of
the suite's ~1,500 host runs (measured: the act-skipped suite 485 s with it, 372 s without).

So the suite's tests see `sys.executable` = an overlay venv (`<venv>/.entropy-gate-host/`)
whose site-packages links every entry of the test venv's, except hypothesis's dist-info,
which is copied without its `[pytest11]` entry point: the same packages, versions and
entry points otherwise, hypothesis importable as before. Host runs, CLI subprocesses and
pytester's subprocess runs all start it. A test that needs hypothesis's plugin in a host run
takes the `full_python` fixture. ENTROPY_GATE_TEST_FULL_PYTHON=1 runs the whole suite on the
test venv itself; where the overlay cannot be built, the suite says so and does the same.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

FULL_ENV = "ENTROPY_GATE_TEST_FULL_PYTHON"
FOLDER = ".entropy-gate-host"
HIDDEN_GROUP = "[pytest11]"
HIDDEN_PLUGIN = "hypothesispytest"


def _site() -> Path:
    return Path(sysconfig.get_paths()["purelib"])


def _key(site: Path) -> str:
    """What the overlay is built from: this interpreter and the names in its site-packages."""
    names = sorted(entry.name for entry in site.iterdir())
    return hashlib.sha256(repr((sys.version, str(site), names)).encode()).hexdigest()


def python_of(folder: Path) -> Path:
    return folder / "bin" / "python"


def _test_venv_python() -> str:
    """The test venv's interpreter, also from a process the overlay started (a bench script, a
    CLI subprocess): the overlay lives inside the venv it overlays."""
    prefix = Path(sys.prefix)
    return str(python_of(prefix.parent)) if prefix.name == FOLDER else sys.executable


TEST_VENV_PYTHON = _test_venv_python()  # whose bin/ holds the console scripts and act


def wanted() -> bool:
    return os.environ.get(FULL_ENV, "") in ("", "0") and sys.prefix != sys.base_prefix


def built() -> Path | str:
    """The overlay's interpreter as the xdist controller left it (a worker builds nothing)."""
    folder = Path(sys.prefix) / FOLDER
    stamp = folder / "key"
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == _key(_site()):
        return python_of(folder)
    return f"no current host-run interpreter at {folder}"


def ensure() -> Path | str:
    """The overlay's interpreter, built or rebuilt when the test venv changed; or why not."""
    site = _site()
    folder = Path(sys.prefix) / FOLDER
    key = _key(site)
    stamp = folder / "key"
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == key:
        return python_of(folder)
    try:
        _build(site, folder, key)
    except (OSError, subprocess.CalledProcessError) as exc:
        return f"cannot build the host-run interpreter at {folder}: {exc}"
    return python_of(folder)


def _build(site: Path, folder: Path, key: str) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", "--symlinks", str(folder)],
        check=True,
        capture_output=True,
    )
    python = python_of(folder)
    done = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    )
    target = Path(done.stdout.strip())
    target.mkdir(parents=True, exist_ok=True)
    for entry in site.iterdir():
        if entry.name.startswith("hypothesis-") and entry.name.endswith(".dist-info"):
            shutil.copytree(entry, target / entry.name)
            _hide_plugin(target / entry.name / "entry_points.txt")
        else:
            (target / entry.name).symlink_to(entry)
    check = "import importlib.metadata as m, pytest, entropy_action, hypothesis; " + (
        f"assert {HIDDEN_PLUGIN!r} not in {{e.name for e in m.entry_points(group='pytest11')}}"
    )
    subprocess.run([python, "-c", check], check=True, capture_output=True)
    (folder / "key").write_text(key, encoding="utf-8")


def _hide_plugin(entry_points: Path) -> None:
    """entry_points.txt without its [pytest11] group."""
    if not entry_points.is_file():
        return
    kept, skipping = [], False
    for line in entry_points.read_text(encoding="utf-8").splitlines():
        if line.startswith("["):
            skipping = line.strip() == HIDDEN_GROUP
        if not skipping:
            kept.append(line)
    entry_points.write_text("\n".join(kept) + "\n", encoding="utf-8")
