"""Where a host's pytest died of a signal: faulthandler's traceback, read into host.json.

The plugin points faulthandler at a file in the run's scratch folder (plugin.py, `crash_log`
in its config) before conftests import, and again once pytest's own faulthandler plugin has
taken it for stderr. A run that died of a signal leaves the traceback there: the gate keeps
the file in the host folder (core.layout.CRASH_LOG) and names the crashing thread's frames
in host.json (`crash`), each placed as the hook inventory places files: in the repository
(a repository-relative path), pytest, the gate's own copies, installed code, elsewhere.
The file is the test process's output: read with a cap, as data, never trusted beyond its
words (the judge only says what it shows).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sysconfig
from pathlib import Path

from entropy_action.core.hostinfo import MAX_CRASH_FRAMES, Crash, CrashFrame, Place
from entropy_action.core.signals import signal_name

MAX_LOG = 64 << 10  # bytes of faulthandler's file read
_FATAL = re.compile(r"^Fatal Python error: (.{1,200})$")
_THREAD = re.compile(r"^(Current thread 0x[0-9a-f]+.{0,100}|Stack) \(most recent call first\):$")
_FRAME = re.compile(r'^  File "(.{1,1000})", line (\d{1,9}|\?\?\?) in (.{1,200})$')
_INSTALLED = ("site-packages", "dist-packages")
_PYTEST = ("_pytest", "pytest", "pluggy")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def keep(scratch_log: Path, out: Path, returncode: int, root: Path, gate: Path) -> Crash | None:
    """A run that died of a signal: its traceback kept in `out` (when faulthandler wrote one)
    and read; None for a run that exited. `root` is the tree the tests ran in, `gate` the
    folder of the gate's copies."""
    if returncode >= 0:
        return None
    text = _read(scratch_log)
    if text.strip():
        with contextlib.suppress(OSError):  # the frames are still named in host.json
            shutil.copyfile(scratch_log, out / scratch_log.name)
    fatal, frames = parse(text, str(root), str(gate))
    return Crash(signal=signal_name(returncode), fatal=fatal, frames=frames)


def _read(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(MAX_LOG).decode("utf-8", "replace")
    except OSError:
        return ""


def parse(text: str, root: str, gate: str) -> tuple[str | None, list[CrashFrame]]:
    """faulthandler's fatal-error line and the crashing thread's frames (most recent first)."""
    fatal: str | None = None
    frames: list[CrashFrame] = []
    current = False
    for line in text.splitlines():
        found = _FATAL.match(line)
        if found and fatal is None:
            fatal = _CONTROL.sub("?", found.group(1))
        if _THREAD.match(line):  # the crashing thread's block (another thread's: "Thread …")
            current, frames = True, []
        elif not line.startswith("  "):
            current = False
        frame = _FRAME.match(line) if current else None
        if frame and len(frames) < MAX_CRASH_FRAMES:
            place, path = place_of(frame.group(1), root, gate)
            number = frame.group(2)
            frames.append(
                CrashFrame(
                    place=place,
                    path=_CONTROL.sub("?", path),
                    line=int(number) if number.isdigit() and int(number) >= 1 else None,
                    function=_CONTROL.sub("?", frame.group(3)),
                )
            )
    return fatal, frames


def place_of(file: str, root: str, gate: str) -> tuple[Place, str]:
    """(place, path) of a file a frame names: repository-relative in the repository."""
    if file.startswith("<"):
        return "other", file
    path = os.path.normpath(file)
    parts = path.split(os.sep)
    if _inside(path, gate):
        return "gate", os.path.basename(path)
    installed = next((i for i, part in enumerate(parts) if part in _INSTALLED), None)
    if installed is not None:
        rest = "/".join(parts[installed + 1 :])
        return ("pytest" if rest.split("/")[0] in _PYTEST else "site-packages"), rest
    if _inside(path, root):
        return "repository", os.path.relpath(path, root).replace(os.sep, "/")
    stdlib = sysconfig.get_paths().get("stdlib", "")
    if stdlib and _inside(path, stdlib):
        return "other", os.path.relpath(path, stdlib).replace(os.sep, "/")
    return "other", path


def _inside(path: str, folder: str) -> bool:
    return bool(folder) and (path == folder or path.startswith(folder.rstrip(os.sep) + os.sep))
