"""The compatibility tier's environments: one venv per supported Python on this machine, with
the gate (editable) and the plugins of requirements/compat.lock, built from PyPI once and
kept in the checkout beside the test venv (`.compat-venvs/KEY/`, KEY the sha256 of the lock,
pyproject.toml's [project] and the interpreter; outside `.venv`, which .ci/run rebuilds), so
the tier's cost after the first run is its gate runs. uv installs them where it is installed
(the ci extra), pip elsewhere.

Which Pythons: those of ci.yml's matrix (the versions the project supports), each found as
`python3.X` on PATH or under pyenv's root (PYENV_ROOT, or `pyenv root`), a version this machine
lacks named, not run; or exactly the interpreters ENTROPY_GATE_COMPAT_PYTHONS names
(space-separated paths: ci.yml names the matrix job's own), where one that is not a supported
Python is refused, never dropped. ENTROPY_GATE_REQUIRE_COMPAT=1 (.ci/run) makes a venv that
cannot be built a failure, not a skip.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml

from tests.support import hostpython

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent.parent
LOCK = ROOT / "requirements" / "compat.lock"
CI = ROOT / ".github" / "workflows" / "ci.yml"
CACHE = ROOT / ".compat-venvs"
PYTHONS_ENV = "ENTROPY_GATE_COMPAT_PYTHONS"
REQUIRE_ENV = "ENTROPY_GATE_REQUIRE_COMPAT"
INSTALL_TIMEOUT = 900


def supported() -> list[str]:
    """The Python versions the project supports: ci.yml's test matrix."""
    jobs = yaml.safe_load(CI.read_text(encoding="utf-8"))["jobs"]
    return [str(version) for version in jobs["test"]["strategy"]["matrix"]["python"]]


@dataclass(frozen=True)
class Interpreter:
    version: str  # "3.12"
    path: Path  # a base interpreter (not a venv's)
    full: str  # "3.12.1"


def _version_of(python: Path) -> tuple[str, str] | None:
    code = "import sys; print('%d.%d' % sys.version_info[:2], sys.version.split()[0])"
    try:
        done = subprocess.run(
            [str(python), "-I", "-c", code], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = done.stdout.split()
    return (words[0], words[1]) if done.returncode == 0 and len(words) == 2 else None


def _candidates(version: str) -> Iterator[Path]:
    found = shutil.which(f"python{version}")
    if found and "shims" not in Path(found).parts:  # pyenv's shims: its versions, below
        yield Path(found)
    root = os.environ.get("PYENV_ROOT") or _pyenv_root()
    if root:
        yield from sorted(Path(root, "versions").glob(f"{version}.*/bin/python{version}"))


def _pyenv_root() -> str | None:
    pyenv = shutil.which("pyenv")
    if pyenv is None:
        return None
    done = subprocess.run([pyenv, "root"], capture_output=True, text=True, check=False)
    return done.stdout.strip() or None


@dataclass(frozen=True)
class Found:
    have: list[Interpreter]  # the supported Pythons the tier runs on
    missing: list[str]  # supported versions this machine lacks (named, not run)
    refused: list[str]  # what ENTROPY_GATE_COMPAT_PYTHONS names that is no supported Python


def interpreters() -> Found:
    """The supported Pythons found here (or named), those missing, those refused."""
    if os.environ.get(PYTHONS_ENV):
        return _named(os.environ[PYTHONS_ENV].split())
    have, missing = [], []
    for version in supported():
        for candidate in _candidates(version):
            seen = _version_of(candidate)
            if seen is not None and seen[0] == version:
                have.append(Interpreter(version, candidate, seen[1]))
                break
        else:
            missing.append(version)
    return Found(have, missing, [])


def _named(paths: list[str]) -> Found:
    have, refused = [], []
    for path in paths:
        seen = _version_of(Path(path))
        if seen is None:
            refused.append(f"{PYTHONS_ENV}: {path} does not run as a Python")
        elif seen[0] not in supported():
            refused.append(f"{PYTHONS_ENV}: {path} is Python {seen[1]}, not one ci.yml lists")
        else:
            have.append(Interpreter(seen[0], Path(path), seen[1]))
    return Found(have, [], refused)


def key(interpreter: Interpreter) -> str:
    """The lock, the interpreter, and what of pyproject.toml's [project] the venv holds (the
    gate's dependencies, console script and pytest11 entry point), not its extras or tools."""
    with open(ROOT / "pyproject.toml", "rb") as handle:
        project = tomllib.load(handle)["project"]
    project = {k: project.get(k) for k in ("name", "dependencies", "scripts", "entry-points")}
    digest = hashlib.sha256()
    for part in (LOCK.read_bytes(), json.dumps(project, sort_keys=True).encode()):
        digest.update(hashlib.sha256(part).digest())
    digest.update(f"{interpreter.full} {interpreter.path}".encode())
    return digest.hexdigest()[:16]


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # another xdist worker building the same venv
        yield


def ensure(interpreter: Interpreter) -> Path:
    """The venv's python for `interpreter`, built once per key (RuntimeError: cannot)."""
    folder = CACHE / f"py{interpreter.version}-{key(interpreter)}"
    python = folder / "bin" / "python"
    with _locked(CACHE / f"py{interpreter.version}.lock"):
        if (folder / "done").is_file():
            return python
        shutil.rmtree(folder, ignore_errors=True)
        _build(interpreter, folder)
        (folder / "done").write_text(interpreter.full, encoding="utf-8")
        for stale in CACHE.glob(f"py{interpreter.version}-*"):
            if stale != folder:
                shutil.rmtree(stale, ignore_errors=True)
    return python


def _installer() -> list[str]:
    """uv (the ci extra brings it) where it is installed, else pip: both install the lock as
    it is (`--no-deps`: it is complete), without compiling every module up front."""
    beside = Path(hostpython.TEST_VENV_PYTHON).parent / "uv"  # sys.executable: the overlay
    uv = str(beside) if beside.is_file() else shutil.which("uv")
    return (
        [uv, "pip", "install", "--quiet"] if uv else ["-m", "pip", "install", "-q", "--no-compile"]
    )


def _build(interpreter: Interpreter, folder: Path) -> None:
    python = str(folder / "bin" / "python")
    env = {
        **os.environ,
        "PIP_CACHE_DIR": str(CACHE / "pip"),  # the builds share their downloads
        "UV_CACHE_DIR": str(CACHE / "uv"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    install = _installer()
    uv = install[0] != "-m"
    prefix = [*install, "--python", python] if uv else [python, *install]
    make = [install[0], "venv", "--quiet", "--seed", "--python", str(interpreter.path)]
    steps = [
        [*make, str(folder)] if uv else [str(interpreter.path), "-m", "venv", str(folder)],
        [*prefix, "--no-deps", "-r", str(LOCK)],
        [*prefix, "--no-deps", "-e", str(ROOT)],
    ]
    for step in steps:
        done = subprocess.run(
            step, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False
        )
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise RuntimeError(
                f"Python {interpreter.full}: {' '.join(step[-3:])} failed: {' / '.join(tail)}"
            )


def ensure_all(found: list[Interpreter]) -> dict[str, Path | str]:
    """Every interpreter's venv, built concurrently: version -> its python, or why not."""
    with ThreadPoolExecutor(max_workers=max(1, len(found))) as pool:
        futures = {i.version: pool.submit(ensure, i) for i in found}
    out: dict[str, Path | str] = {}
    for version, future in futures.items():
        error = future.exception()
        out[version] = str(error) if error is not None else future.result()
    return out


def required() -> bool:
    return os.environ.get(REQUIRE_ENV) == "1"


def main() -> int:
    """`python -m tests.support.compat`: the Pythons the tier runs on, those missing or refused."""
    found = interpreters()
    for interpreter in found.have:
        print(f"compat: Python {interpreter.full} ({interpreter.path})")
    if found.missing:
        print(f"compat: not on this machine, not run: Python {', '.join(found.missing)}")
    for refused in found.refused:
        print(f"compat: refused: {refused}")
    return 0 if found.have and not found.refused else 1


if __name__ == "__main__":
    raise SystemExit(main())
