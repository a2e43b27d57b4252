"""Host B's clock shift where time-machine does not reach it: file timestamps and uuid1's clock,
inside the test process and its Python children.

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

`uuid.uuid1()` takes its time from libuuid (C, the kernel's clock) where CPython has it; under
time-machine alone it took a slower path (`_shift_uuid1`), and uuid6's own test of its
timestamps (`uuid1()` beside `uuid6()`, within half a millisecond) failed on host B on every
commit. `shift` gives uuid1 libuuid's generator back with its timestamp `seconds` later, its
clock sequence and node as libuuid gave them.
Not reached: `os.DirEntry.stat()` (a C method of scandir's entries), other C libraries that
read the clock themselves (sqlite's `CURRENT_TIMESTAMP`), non-Python children.
"""

from __future__ import annotations

import os
from typing import Any

_real: dict[str, Any] = {}  # name -> the original function
_TIMES = ("st_atime", "st_mtime", "st_ctime", "st_birthtime")
_SEQUENCE = {"st_atime": 7, "st_mtime": 8, "st_ctime": 9}  # their int forms in the tuple
_SUPPORTS = ("supports_dir_fd", "supports_fd", "supports_follow_symlinks")
_UUID_EPOCH_TICKS = 10_000_000  # a version-1 UUID counts 100-ns intervals
_UUID_TIME = (1 << 60) - 1


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
    return [name for name, *_ in patches] + _shift_uuid1(seconds)


def _shift_uuid1(seconds: float) -> list[str]:
    """uuid1's libuuid timestamp `seconds` later (["uuid.uuid1"]); [] where uuid1 has no C
    generator: its Python path reads `time.time_ns()`, which time-machine shifts already.

    time-machine's travel, started just before, set `uuid._generate_time_safe` to None, so
    that uuid1 takes its Python path. That path finds the node without libuuid too: its first
    call ran `ip` or `ifconfig` (milliseconds; in host B's network namespace, no interface
    but loopback, so a random node), so uuid1's time lagged the clock read after it by ~3 ms
    on host B only (uuid6's `test_time`). libuuid's own generator, shifted, is what a host
    whose clock runs ahead gives."""
    import uuid  # noqa: PLC0415 (host B only)

    try:
        import _uuid  # type: ignore[import-not-found]  # noqa: PLC0415 (CPython's libuuid)
    except ImportError:
        return []
    real = getattr(_uuid, "generate_time_safe", None)
    if real is None or not hasattr(uuid, "_generate_time_safe"):
        return []
    ticks = round(seconds * _UUID_EPOCH_TICKS)

    def shifted_generate() -> tuple[bytes, Any]:
        raw, safe = real()
        made = uuid.UUID(bytes=raw)
        moved = (made.time + ticks) & _UUID_TIME
        version = made.time_hi_version & 0xF000
        fields = (moved & 0xFFFFFFFF, (moved >> 32) & 0xFFFF, version | (moved >> 48) & 0x0FFF)
        rest = (made.clock_seq_hi_variant, made.clock_seq_low, made.node)
        return uuid.UUID(fields=fields + rest).bytes, safe

    _real["uuid.uuid1"] = real
    setattr(uuid, "_generate_time_safe", shifted_generate)  # noqa: B010 (a private name)
    return ["uuid.uuid1"]
