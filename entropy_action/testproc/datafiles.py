"""The data files the tests open, seen inside the test process: each file of the tree opened
for reading that is not Python code, with the file of the code that opened it (the nearest
frame whose file lies in the tree) and the test running then. The gate reads the report as
host.json's `test_data` and keeps those of the property's test side (scan.closure): a patch
that changes one runs the base's test side on the head's code (strength.base_on_head).

Standard library only; loaded by the plugin (plugin.py), which turns it on at import, before
any conftest or test module runs, when its config names `data_report` (host A's runs). It
listens with `sys.addaudithook` to CPython's `open` event (the builtin `open`, `io.open`,
`os.open`, and what reads through them: `pathlib`, `json.load` of an open file): one
Python call per audit event, no line tracing. It never breaks the run it watches.

Bounded: at most MAX_FILES files (the rest counted in `dropped`), each path and test id at
most MAX_TEXT characters and printable, or left out. The report is data for the gate
(core.hostinfo.TestData), read with limits there.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from sys import _getframe  # bound once: a test may delete sys._getframe
from types import FrameType
from typing import Any

MAX_FILES = 200
MAX_TEXT = 1000
MAX_FRAMES = 60  # frames walked up from an open to find the code in the tree that asked
NOT_DATA = (".py", ".pyc", ".pyo", ".pyd", ".so")
SKIP_PARTS = frozenset(
    {".git", "__pycache__", ".venv", "venv", "site-packages", ".tox", ".nox", ".hypothesis",
     ".pytest_cache", ".mypy_cache", ".ruff_cache", "node_modules"}
)  # fmt: skip
_WRITING = frozenset("wax+")

_cfg: dict[str, Any] = {}
_files: dict[str, dict[str, str | None]] = {}
_dropped = [0]
_hooked = [False]
_relatives: dict[str, str | None] = {}


def configure(root: str, exempt: list[str], report: str) -> None:
    """Record from now on: opens inside `root` (not in the `exempt` environments), into
    `report` at `write()`."""
    real = os.path.realpath(root)
    _cfg.update(
        roots=tuple(dict.fromkeys((os.path.abspath(root), real))),
        root=real,
        exempt=tuple(os.path.realpath(p) for p in exempt),
        report=report,
        active=True,
    )
    if not _hooked[0]:
        _hooked[0] = True
        sys.addaudithook(_hook)


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event != "open" or not _cfg.get("active"):
        return
    with contextlib.suppress(Exception):  # never break the run it watches
        _opened(args)


def _opened(args: tuple[Any, ...]) -> None:
    if len(args) < 3 or not _reading(args[1], args[2]):
        return
    target = args[0]
    if isinstance(target, int) or target is None:
        return  # a file descriptor: no name
    path = os.fsdecode(os.fspath(target))
    if path.endswith(NOT_DATA):
        return
    full = os.path.abspath(path)
    rel = _relative(full)
    if rel is None or rel in _files or not os.path.isfile(full):
        return  # a path hook's name, a folder, a file that is not there: no data
    if len(_files) >= MAX_FILES:
        _dropped[0] += 1
        return
    _files[rel] = {"path": rel, "opener": _opener(), "test": _test()}


def _reading(mode: object, flags: object) -> bool:
    """Opened for reading only: a mode without w, a, x or + (the builtin), else os.open's
    flags read-only and not a directory."""
    if isinstance(mode, str):
        return not _WRITING.intersection(mode)
    if mode is None and isinstance(flags, int):
        directory = getattr(os, "O_DIRECTORY", 0)
        return flags & os.O_ACCMODE == os.O_RDONLY and not flags & directory
    return False


def _relative(path: str) -> str | None:
    """`path` repository-relative (POSIX) when it lies in the tree, outside its environments
    and caches, and is printable; else None."""
    if not any(path.startswith(root.rstrip(os.sep) + os.sep) for root in _cfg["roots"]):
        return None  # most opens: site-packages, /tmp, /proc; no realpath for those
    if path in _relatives:
        return _relatives[path]
    real = os.path.realpath(path)
    rel: str | None = None
    root = _cfg["root"]
    inside = real.startswith(root.rstrip(os.sep) + os.sep)
    if inside and not any(real == e or real.startswith(e + os.sep) for e in _cfg["exempt"]):
        rel = os.path.relpath(real, root).replace(os.sep, "/")
        parts = rel.split("/")
        if SKIP_PARTS.intersection(parts) or len(rel) > MAX_TEXT or not rel.isprintable():
            rel = None
    _relatives[path] = rel
    return rel


def _opener() -> str | None:
    """The file of the nearest frame in the tree: the code that opened the file (a fixture, a
    helper, production), past the standard library's and the libraries' frames."""
    try:
        frame: FrameType | None = _getframe(3)  # _opener ← _opened ← _hook ← open's caller
    except ValueError:  # no frame there: open called from no Python code
        return None
    for _ in range(MAX_FRAMES):
        if frame is None:
            return None
        found = _code_file(frame.f_code.co_filename)
        if found is not None:
            return found
        frame = frame.f_back
    return None


def _code_file(filename: str) -> str | None:
    if filename.startswith("<") or not os.path.isabs(filename):
        return None
    return _relative(filename)


_current: list[str | None] = [None]  # the node id of the test running (None: none)


def _test() -> str | None:
    name = _current[0]
    return name if name is not None and len(name) <= MAX_TEXT and name.isprintable() else None


def hooks() -> object:
    """The plugin object the gate's plugin registers: it names the test running (setup,
    call and teardown), from pytest's own item, never from the environment a caller may have
    left PYTEST_CURRENT_TEST in."""
    import pytest  # noqa: PLC0415 (the plugin folder imports without pytest)

    class Hooks:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_protocol(self, item: Any) -> Any:
            _current[0] = str(item.nodeid)
            try:
                yield
            finally:
                _current[0] = None

    return Hooks()


def report() -> dict[str, Any]:
    return {"files": list(_files.values()), "dropped": _dropped[0]}


def write() -> None:
    """The report, once; recording stops here (what runs after the session is not a test)."""
    path = _cfg.get("report")
    _cfg["active"] = False
    if not path:
        return
    with contextlib.suppress(OSError), open(path, "w", encoding="utf-8") as handle:
        json.dump(report(), handle)
