"""Host B's file-listing order and CPU count, inside the test process and its Python children.

Standard library only (hosts.testfiles copies this file as `entropy_gate_listing.py` beside the
plugin, which applies it at import, before conftests and test modules, and childsite through
the plugin in host B's Python children).

`shuffle_listings(seed)`: `os.listdir`, `os.scandir`, `glob.glob`, `glob.iglob`,
`pathlib.Path.iterdir`, `Path.glob` and `Path.rglob` return their entries in an order drawn
from `seed` and the listed path (one listing never depends on how many came before), never
the OS's order when there are two entries or more (a shuffle that left it would be reversed).
importlib lists folders through `posix.listdir`, not `os`, so imports are untouched; pytest
sorts what it collects. Non-Python children (`ls`, `find`) list as the OS does.

`show_cpu_count(count)`: `os.cpu_count`, `os.process_cpu_count` (3.13+) and
`os.sched_getaffinity` (for this process) report `count` CPUs; `multiprocessing.cpu_count`
reads `os.cpu_count` at each call. The real affinity is left alone (restricting it would slow
host B); where the machine has fewer CPUs than `count`, the set holds CPU numbers it does not
have. Non-Python children (`nproc`) see the machine's count.

`platform_name()`: the machine as `platform.platform()` names it, without the `uname -p`
process that call starts on Linux (the fingerprint's "platform", read on both sides).
"""

from __future__ import annotations

import glob
import os
import pathlib
import platform
import random
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

_real: dict[str, Any] = {}  # name -> the original, for listings made while one is patched
_inside = threading.local()  # depth of patched calls in this thread: inner listings are real


def _key(path: Any) -> str:
    if isinstance(path, int):
        return f"fd:{path}"
    try:
        return os.fsdecode(os.path.abspath(os.fspath(path if path is not None else ".")))
    except (TypeError, ValueError):
        return repr(path)


def shuffled(items: list[Any], seed: int, key: str) -> list[Any]:
    """`items` in the order drawn from `seed` and `key`; never their own order when 2+."""
    out = list(items)
    random.Random(f"file_order:{seed}:{key}").shuffle(out)  # noqa: S311  # an order, no secret
    if len(out) > 1 and all(a is b for a, b in zip(out, items, strict=True)):
        out.reverse()
    return out


class _Listing:
    """What os.scandir returns: an iterator of DirEntry that is its own context manager."""

    def __init__(self, entries: list[Any]) -> None:
        self._entries = iter(entries)

    def __iter__(self) -> _Listing:
        return self

    def __next__(self) -> Any:
        return next(self._entries)

    def __enter__(self) -> _Listing:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._entries = iter(())


def _real_call(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`function` with the listings under it left in the OS's order (glob lists through
    os.scandir: the outer call shuffles once, by its own key)."""
    _inside.depth = getattr(_inside, "depth", 0) + 1
    try:
        return function(*args, **kwargs)
    finally:
        _inside.depth -= 1


def _outer() -> bool:
    return not getattr(_inside, "depth", 0)


def shuffle_listings(seed: int) -> list[str]:
    """Patch the listing functions; the names patched."""
    if "os.listdir" in _real:
        return sorted(name for name in _real if not name.startswith("cpu:"))
    listdir, scandir = os.listdir, os.scandir
    glob_glob, glob_iglob = glob.glob, glob.iglob
    iterdir, path_glob, path_rglob = pathlib.Path.iterdir, pathlib.Path.glob, pathlib.Path.rglob

    def shuffled_listdir(path: Any = None) -> list[Any]:
        found = listdir() if path is None else listdir(path)
        return shuffled(found, seed, _key(path)) if _outer() else found

    def shuffled_scandir(path: Any = None) -> Any:
        if not _outer():
            return scandir() if path is None else scandir(path)
        with scandir() if path is None else scandir(path) as it:
            entries = list(it)
        return _Listing(shuffled(entries, seed, _key(path)))

    def shuffled_glob(pathname: Any, *args: Any, **kwargs: Any) -> list[Any]:
        found = _real_call(glob_glob, pathname, *args, **kwargs)
        return shuffled(found, seed, f"glob:{_key(kwargs.get('root_dir'))}:{pathname!r}")

    def shuffled_iglob(pathname: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        found = list(_real_call(glob_iglob, pathname, *args, **kwargs))
        return iter(shuffled(found, seed, f"glob:{_key(kwargs.get('root_dir'))}:{pathname!r}"))

    def shuffled_iterdir(self: pathlib.Path) -> Iterator[pathlib.Path]:
        found = list(_real_call(iterdir, self))
        return iter(shuffled(found, seed, _key(self)))

    def shuffled_path_glob(self: pathlib.Path, pattern: str, *a: Any, **k: Any) -> Iterator[Any]:
        found = list(_real_call(path_glob, self, pattern, *a, **k))
        return iter(shuffled(found, seed, f"glob:{_key(self)}:{pattern}"))

    def shuffled_rglob(self: pathlib.Path, pattern: str, *a: Any, **k: Any) -> Iterator[Any]:
        found = list(_real_call(path_rglob, self, pattern, *a, **k))
        return iter(shuffled(found, seed, f"rglob:{_key(self)}:{pattern}"))

    patches: list[tuple[str, Any, str, Any, Any]] = [
        ("os.listdir", os, "listdir", listdir, shuffled_listdir),
        ("os.scandir", os, "scandir", scandir, shuffled_scandir),
        ("glob.glob", glob, "glob", glob_glob, shuffled_glob),
        ("glob.iglob", glob, "iglob", glob_iglob, shuffled_iglob),
        ("pathlib.Path.iterdir", pathlib.Path, "iterdir", iterdir, shuffled_iterdir),
        ("pathlib.Path.glob", pathlib.Path, "glob", path_glob, shuffled_path_glob),
        ("pathlib.Path.rglob", pathlib.Path, "rglob", path_rglob, shuffled_rglob),
    ]
    for name, owner, attribute, original, replacement in patches:
        _real[name] = original
        setattr(owner, attribute, replacement)
    return [name for name, *_ in patches]


def show_cpu_count(count: int) -> dict[str, Any]:
    """Patch the CPU-count functions; what the tests now see (report.json's "cpu_count")."""
    real_count = _real.get("cpu:os.cpu_count", os.cpu_count)()
    affinity = getattr(os, "sched_getaffinity", None)
    real_cpus: set[int] | None = None
    if affinity is not None:
        try:
            real_cpus = set(_real.get("cpu:os.sched_getaffinity", affinity)(0))
        except OSError:
            real_cpus = None
    chosen = sorted(real_cpus or ())[:count]
    past = max(chosen, default=-1) + 1  # then CPU numbers past the real ones
    shown = {*chosen, *range(past, past + count - len(chosen))}

    def cpu_count() -> int:
        return count

    def sched_getaffinity(pid: int) -> set[int]:
        if pid in (0, os.getpid()):
            return set(shown)
        return set(_real["cpu:os.sched_getaffinity"](pid))

    patched = []
    for name, replacement in (
        ("cpu_count", cpu_count),
        ("process_cpu_count", cpu_count),
        ("sched_getaffinity", sched_getaffinity),
    ):
        original = getattr(os, name, None)
        if original is None:
            continue
        _real.setdefault(f"cpu:os.{name}", original)
        setattr(os, name, replacement)
        patched.append(f"os.{name}")
    patched.append("multiprocessing.cpu_count")  # it calls os.cpu_count at each call
    return {
        "seen": os.cpu_count(),
        "real": real_count,
        "patched": patched,
        "error": None,
        "affinity_padded": len(shown - set(chosen)),  # CPU numbers this machine does not have
    }


def platform_name() -> str:
    """`platform.platform()`, except that on Linux the processor (`uname -p`, "unknown" on most
    distributions and the machine's name on others) is left out: finding it starts a process,
    ~15 ms of every test process's report. The same string wherever `uname -p` says
    "unknown" (Debian, Ubuntu, GitHub's runners)."""
    if not sys.platform.startswith("linux") or not hasattr(os, "uname"):
        return platform.platform()
    name = os.uname()
    libc = "".join(platform.libc_ver())
    parts = [name.sysname, name.release, name.machine, *(["with", libc] if libc else [])]
    text = "-".join(part.strip().replace(" ", "_") for part in parts if part.strip())
    for char in '/\\:;"()':
        text = text.replace(char, "-")
    text = text.replace("unknown", "")  # as platform does
    while "--" in text:
        text = text.replace("--", "-")
    return text.rstrip("-")
