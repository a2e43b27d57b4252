"""Host B's clock shift on file timestamps, inside the test process and its Python children.

Standard library only (hosts.testfiles copies this file as `entropy_gate_filetimes.py` beside
the plugin, whose `_shift_clock` applies it right after time-machine's travel, in the test
process and, through childsite, in host B's Python children).

time-machine shifts what Python reads as the time (`time.time()`, `datetime.now()`...), not
what the kernel stamps on files. On host B a file written a moment ago read five years old:
honest code that compares a file's age with the clock (a cache's expiry, a log's rotation,
pytest's own cleanup of its numbered temp folders) failed there only, and production that
took the time from a fresh file's mtime escaped the shift. `shift(seconds)` makes `os.stat`,
`os.lstat` and `os.fstat` (and so `os.path.getmtime`, `pathlib.Path.stat`, `shutil.copystat`)
report `st_atime`, `st_mtime`, `st_ctime` (their `_ns` forms, `st_birthtime` where there is
one) `seconds` later, and `os.utime` take such times back: what the tests write, they read
back. importlib stats through `posix`, not `os`: imports and their caches are untouched.
Not reached: `os.DirEntry.stat()` (a C method of scandir's entries) and non-Python children.
"""

from __future__ import annotations

import os
from typing import Any

_real: dict[str, Any] = {}  # name -> the original function
_TIMES = ("st_atime", "st_mtime", "st_ctime", "st_birthtime")
_SEQUENCE = {"st_atime": 7, "st_mtime": 8, "st_ctime": 9}  # their int forms in the tuple
_SUPPORTS = ("supports_dir_fd", "supports_fd", "supports_follow_symlinks")


def shifted(result: os.stat_result, seconds: float) -> os.stat_result:
    """`result` with its timestamps `seconds` later."""
    reduced: Any = result.__reduce__()  # (os.stat_result, (the tuple's fields, the rest))
    fields, extra = reduced[1]
    nanoseconds = round(seconds * 1_000_000_000)
    times = dict(extra)
    for name in _TIMES:
        if isinstance(times.get(name), (int, float)):
            times[name] += seconds
        if isinstance(times.get(f"{name}_ns"), int):
            times[f"{name}_ns"] += nanoseconds
    head = list(fields)
    for name, index in _SEQUENCE.items():
        moved = times.get(name)
        head[index] = int(moved) if isinstance(moved, float) else head[index] + int(seconds)
    return os.stat_result(head, times)


def shift(seconds: float) -> list[str]:
    """Patch the stat and utime functions; the names patched."""
    if _real:
        return sorted(_real)
    stat, lstat, fstat, utime = os.stat, os.lstat, os.fstat, os.utime
    nanoseconds = round(seconds * 1_000_000_000)

    def shifted_stat(
        path: Any, *, dir_fd: int | None = None, follow_symlinks: bool = True
    ) -> os.stat_result:
        return shifted(stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks), seconds)

    def shifted_lstat(path: Any, *, dir_fd: int | None = None) -> os.stat_result:
        return shifted(lstat(path, dir_fd=dir_fd), seconds)

    def shifted_fstat(fd: int) -> os.stat_result:
        return shifted(fstat(fd), seconds)

    def shifted_utime(path: Any, times: Any = None, **options: Any) -> None:
        if times is not None:
            times = (times[0] - seconds, times[1] - seconds)
        if options.get("ns") is not None:
            atime, mtime = options["ns"]
            options["ns"] = (atime - nanoseconds, mtime - nanoseconds)
        utime(path, times, **options)

    patches = [
        ("os.stat", "stat", stat, shifted_stat),
        ("os.lstat", "lstat", lstat, shifted_lstat),
        ("os.fstat", "fstat", fstat, shifted_fstat),
        ("os.utime", "utime", utime, shifted_utime),
    ]
    for name, attribute, original, replacement in patches:
        _real[name] = original
        setattr(os, attribute, replacement)
        for supports in _SUPPORTS:  # `os.stat in os.supports_fd` still holds for the patched
            found = getattr(os, supports, None)
            if isinstance(found, set) and original in found:
                found.add(replacement)
    return [name for name, *_ in patches]
