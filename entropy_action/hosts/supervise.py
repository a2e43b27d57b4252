"""Watching one pytest process group: a deadline, a cap on the temp root, and what outlives it.

The test process runs in its own session (process group). While it runs, `wait` watches it
(through a pidfd on Linux, so its end is seen at once; else by polling): past
the deadline, or once the pinned temp root holds more than its cap, the whole group is killed
and the reason returned. When it ends, `reap` kills what the tests left behind: members of the
group, and (on Linux) every process carrying the run's marker in its environment — which a
daemon that left the group with `setsid` still inherits.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import select
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from entropy_action.testproc.protocol import MARKER_ENV  # a fresh token in each run's environ

POLL_SECONDS = 0.25
MAX_ENTRIES = 200_000  # entries counted per look at the temp root; more counts as full
DEFAULT_TEMP_CAP_MB = 4096
_PROC = Path("/proc")


@dataclass(frozen=True)
class Limits:
    timeout: float  # seconds
    temp_dir: Path | None = None  # the directory that backs the pinned temp root
    temp_cap: int = DEFAULT_TEMP_CAP_MB * 1024 * 1024  # bytes
    cancel: threading.Event | None = None  # set: kill the run, its result can no longer matter


def new_marker() -> str:
    return secrets.token_hex(12)


def wait(proc: subprocess.Popen[bytes], limits: Limits) -> tuple[int, str | None]:
    """Wait for `proc`; (returncode, why it was killed — None when it ended by itself)."""
    deadline = time.monotonic() + limits.timeout
    next_look = 0.0  # when to measure the temp root next
    with _exit_notice(proc) as ended:
        while True:
            remaining = deadline - time.monotonic()
            code = _wait_for(proc, ended, max(0.0, min(POLL_SECONDS, remaining)))
            if code is not None:
                return code, None
            why = None
            if remaining <= 0:
                why = f"did not finish within {limits.timeout:g} s"
            elif limits.cancel is not None and limits.cancel.is_set():
                why = "was cancelled (its result could no longer change the verdict)"
            elif limits.temp_dir is not None and time.monotonic() >= next_look:
                started = time.monotonic()
                if over(limits.temp_dir, limits.temp_cap):
                    why = f"filled temp_root past its cap of {limits.temp_cap // (1024 * 1024)} MB"
                # a temp root with many files is measured less often: at most a fifth of a core
                next_look = time.monotonic() + 4 * (time.monotonic() - started)
            if why is not None:
                kill_group(proc)
                return proc.returncode, why


@contextlib.contextmanager
def _exit_notice(proc: subprocess.Popen[bytes]) -> Iterator[int | None]:
    """A pidfd of `proc` (Linux 5.3+): readable the moment it exits. Without one, `wait`
    polls as `Popen.wait(timeout)` does, in sleeps of up to 50 ms: up to that much later."""
    try:
        fd: int | None = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # not Linux, an old kernel, or a seccomp filter
        fd = None
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def _wait_for(proc: subprocess.Popen[bytes], ended: int | None, timeout: float) -> int | None:
    """`proc`'s return code once it ended within `timeout` seconds, else None."""
    if ended is not None:
        readable, _, _ = select.select([ended], [], [], timeout)
        return proc.wait() if readable else None  # it has exited: no wait
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


def over(folder: Path, cap: int) -> bool:
    """Whether the files below `folder` occupy more than `cap` bytes of disk (blocks, so a
    sparse file counts what it uses); stops counting as soon as the answer is known."""
    used, seen, stack = 0, 0, [str(folder)]
    while stack:
        with contextlib.suppress(OSError), os.scandir(stack.pop()) as entries:
            for entry in entries:
                seen += 1
                with contextlib.suppress(OSError):
                    info = entry.stat(follow_symlinks=False)
                    used += info.st_blocks * 512 if hasattr(info, "st_blocks") else info.st_size
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                if used > cap or seen > MAX_ENTRIES:
                    return True
    return False


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group `proc` leads, then reap `proc`."""
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def reap(pgid: int, marker: str) -> list[str]:
    """Kill what outlived the run: its process group and every process with its marker.

    Returns "pid N (name)" for each process killed.
    """
    found = {pid: _name(pid) for pid in _marked(marker)}
    if hasattr(os, "killpg"):
        found.update({pid: _name(pid) for pid in _group(pgid)})
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    for pid in found:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return [f"pid {pid} ({name})" for pid, name in sorted(found.items())]


def _pids() -> list[int]:
    try:
        return [int(entry.name) for entry in os.scandir(_PROC) if entry.name.isdigit()]
    except OSError:
        return []


def _group(pgid: int) -> list[int]:
    members = []
    for pid in _pids():
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = (_PROC / str(pid) / "stat").read_bytes()
            fields = stat[stat.rindex(b")") + 2 :].split()
            if int(fields[2]) == pgid and fields[0] != b"Z":
                members.append(pid)
    return members


def _marked(marker: str) -> list[int]:
    needle = f"{MARKER_ENV}={marker}".encode()
    marked = []
    for pid in _pids():
        if pid == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if needle in (_PROC / str(pid) / "environ").read_bytes().split(b"\0"):
                marked.append(pid)
    return marked


def _name(pid: int) -> str:
    try:
        return (_PROC / str(pid) / "comm").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return "?"
