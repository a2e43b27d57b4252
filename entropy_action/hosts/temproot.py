"""The pinned temp_root: fresh and empty for each run, never shared by two runs at once.

Two ways to keep runs apart:

- a private mount namespace (the runner's `unshare`): a private empty directory is bind-mounted
  over temp_root inside the run, so runs may overlap; here temp_root only has to exist;
- otherwise an exclusive `flock` on a lock file beside temp_root, held for the whole run, while
  temp_root is emptied before and after.

The gate never deletes what it did not create: a directory it creates (or adopts while empty)
gets a marker beside it recording its device and inode, and a non-empty temp_root without a
matching marker is refused rather than wiped.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from entropy_action.core.errors import GateError

MARKER_SUFFIX = ".entropy-gate"
# `discard`'s detached removal; folders a test made read-only are made writable first, as
# tempfile.TemporaryDirectory's own clean-up does
REMOVE = '(chmod -R u+rwx -- "$1"; rm -rf -- "$1") </dev/null >/dev/null 2>&1 &'
LOCK_SUFFIX = ".entropy-gate.lock"

if sys.platform != "win32":
    import fcntl


@dataclass(frozen=True)
class Claim:
    """The temp root a run will see as TMPDIR (`target`), and its private stand-in if any."""

    target: Path
    private: Path | None = None


def plan(pin: str | None, private: Path | None) -> Claim | None:
    """The claim for a pinned temp_root; `private` when the run bind-mounts one over it."""
    return None if pin is None else Claim(Path(pin), private)


def marker_of(target: Path) -> Path:
    return target.with_name(f".{target.name}{MARKER_SUFFIX}")


def lock_of(target: Path) -> Path:
    return target.with_name(f".{target.name}{LOCK_SUFFIX}")


@contextlib.contextmanager
def scratch(prefix: str, parent: str | None = None) -> Iterator[Path]:
    """A scratch folder of this run, discarded at the end without waiting on it (`discard`)."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    try:
        yield path
    finally:
        discard(path)


def discard(path: Path) -> None:
    """Remove `path` in the background: a copied tree is thousands of unlinks (holidays' 3,000
    files, ~0.9 s here), which the run's end need not wait for. `sh` starts `rm` detached and
    returns at once; where it cannot, the folder is removed here and now."""
    try:
        subprocess.run(
            ["sh", "-c", REMOVE, "sh", os.fspath(path)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        shutil.rmtree(path, ignore_errors=True)


def scratch_parent(pin: str | None) -> str:
    """Where the gate keeps its own scratch: never inside the temp_root it empties."""
    default = Path(tempfile.gettempdir()).resolve()
    if pin is None:
        return str(default)
    target = Path(pin).resolve()
    return str(target.parent if default == target or target in default.parents else default)


@contextlib.contextmanager
def claimed(claim: Claim | None) -> Iterator[None]:
    """Hold `claim` for the duration of one run."""
    if claim is None:
        yield
        return
    if claim.private is not None:
        claim.private.mkdir(parents=True, exist_ok=True)
        _ensure(claim.target)
        yield
        return
    with _locked(lock_of(claim.target)):
        _ensure(claim.target)
        empty(claim.target)
        try:
            yield
        finally:
            empty(claim.target)


def _ensure(target: Path) -> None:
    """`target` exists as a directory; created (and marked) here when it did not."""
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise GateError(f"temp_root {target}: exists and is not a directory; pin another path")
    if target.is_dir():
        if not any(target.iterdir()) and not _owned(target):
            _mark(target)  # adopted while empty: whatever appears in it is the gate's doing
        return
    try:
        target.mkdir(parents=True)
    except FileExistsError:
        pass  # another run created it just now
    except OSError as exc:
        raise GateError(f"temp_root {target}: cannot create it: {exc.strerror}") from None
    _mark(target)


def empty(target: Path) -> None:
    """Remove everything inside `target`, which the gate must own."""
    if not any(target.iterdir()):
        return
    if not _owned(target):
        raise GateError(
            f"temp_root {target}: exists, is not empty and was not created by entropy-gate; "
            "empty or remove it yourself, or pin another temp_root"
        )
    for entry in target.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            _rmtree(entry)
        else:
            entry.unlink()


def _mark(target: Path) -> None:
    info = target.stat()
    record = {"temp_root": str(target), "dev": info.st_dev, "ino": info.st_ino}
    marker = marker_of(target)
    try:
        marker.write_text(json.dumps(record) + "\n", encoding="utf-8")
    except OSError as exc:
        raise GateError(f"temp_root {target}: cannot write {marker}: {exc.strerror}") from None


def _owned(target: Path) -> bool:
    try:
        record: Any = json.loads(marker_of(target).read_text(encoding="utf-8"))
        info = target.stat()
    except (OSError, ValueError):
        return False
    return (
        isinstance(record, dict)
        and record.get("dev") == info.st_dev
        and record.get("ino") == info.st_ino
    )


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock between runs, threads of one process included (flock, not lockf)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        if sys.platform != "win32":
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            if sys.platform != "win32":
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _rmtree(path: Path) -> None:
    def retry(function: Any, name: str, *_: Any) -> None:
        os.chmod(os.path.dirname(name), stat.S_IRWXU)
        with contextlib.suppress(FileNotFoundError):
            os.chmod(name, stat.S_IRWXU)
        function(name)

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=retry)
    else:
        shutil.rmtree(path, onerror=retry)
