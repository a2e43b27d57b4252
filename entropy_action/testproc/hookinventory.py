"""The hook and plugin inventory, taken inside the test process (hooks.json, then host.json).

Standard library only; it reads pytest's plugin manager through the objects pytest passes in.
Every registered plugin is listed with where its file lies (the repository, pytest itself, the
gate, an installed distribution) and, for each plugin that is not pytest's or the gate's own,
every hook it implements *by spec name* (pluggy's hook callers: a function registered under
another name with `hookimpl(specname=...)` counts as the spec's), with the file and line of the
function and whether it wraps the other hooks. pytest's internals that run a test and report
it (`Function.runtest`, `call_and_report`, `CallInfo.from_call`, ...) are checked too: one
whose code no longer lies in pytest's package was replaced at run time.

Taken after collection, at each test's call report when the plugin count changed (a plugin
registered while the tests ran) and at session finish; the snapshots are merged, so a plugin
unregistered again, or an internal restored by monkeypatch's teardown, is still listed.
Capped (MAX_PLUGINS, MAX_HOOKS, MAX_REPLACED); the gate validates it again when it reads it.

PYTEST_DONT_REWRITE
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

MAX_PLUGINS = 300
MAX_HOOKS = 1000
MAX_REPLACED = 50

# (module, attribute path): what runs a test and turns its outcome into a report
INTERNALS = (
    ("_pytest.python", "Function.runtest"),
    ("_pytest.python", "Function.setup"),
    ("_pytest.python", "pytest_pyfunc_call"),
    ("_pytest.runner", "call_and_report"),
    ("_pytest.runner", "call_runtest_hook"),
    ("_pytest.runner", "runtestprotocol"),
    ("_pytest.runner", "CallInfo.from_call"),
    ("_pytest.runner", "pytest_runtest_call"),
    ("_pytest.runner", "pytest_runtest_makereport"),
    ("_pytest.reports", "TestReport.from_item_and_call"),
    ("_pytest.skipping", "pytest_runtest_makereport"),
    ("_pytest.unittest", "TestCaseFunction.runtest"),
    ("_pytest.terminal", "TerminalReporter.pytest_runtest_logreport"),
    ("_pytest.junitxml", "LogXML.pytest_runtest_logreport"),
    ("_pytest.main", "pytest_runtestloop"),
)

_plugins: dict[tuple[str, str], dict[str, Any]] = {}  # (name, path) -> entry
_hooks: dict[tuple[str, str, str, int], dict[str, Any]] = {}  # (plugin, spec, path, line)
_replaced: dict[str, dict[str, Any]] = {}
_seen = {"count": -1}
_entry_cache: dict[int, str] = {}
_checked: dict[str, Any] = {}  # target -> the code object last found there (checked once)


def _inside(path: str, root: str) -> bool:
    return bool(root) and (path == root or path.startswith(root.rstrip(os.sep) + os.sep))


class Places:
    """Where a file lies: the repository (relative path), pytest, the gate, installed code."""

    def __init__(self, root: str, installed: list[str]) -> None:
        self.root = os.path.realpath(root)
        self.pytest = _package_dir("_pytest")
        self.pluggy = _package_dir("pluggy")
        self.gate = os.path.dirname(os.path.realpath(__file__))
        self.installed = [os.path.realpath(p) for p in installed if p]
        self._known: dict[str, tuple[str, str]] = {}

    def of(self, file: str | None) -> tuple[str, str]:
        """(place, path): path repository-relative for "repository", else as found."""
        if not file:
            return "unknown", ""
        found = self._known.get(file)
        if found is None:
            found = self._known[file] = self._place(file)
        return found

    def _place(self, file: str) -> tuple[str, str]:
        path = os.path.realpath(file)
        if any(_inside(path, own) for own in (self.pytest, self.pluggy)):
            return "pytest", path
        if _inside(path, self.gate):
            return "gate", path
        if any(_inside(path, place) for place in self.installed):
            return "site-packages", path  # checked first: a .venv inside the checkout
        if _inside(path, self.root):
            return "repository", os.path.relpath(path, self.root).replace(os.sep, "/")
        return "other", path


def _package_dir(name: str) -> str:
    module = sys.modules.get(name)
    file = getattr(module, "__file__", None)
    return os.path.dirname(os.path.realpath(file)) if isinstance(file, str) else ""


def _code_of(obj: Any) -> Any:
    """The code object of a function, method, classmethod or decorated function."""
    for _ in range(5):
        code = getattr(obj, "__code__", None)
        if code is not None:
            return code
        inner = getattr(obj, "__func__", None) or getattr(obj, "__wrapped__", None)
        if inner is None:
            call = type(obj).__dict__.get("__call__")  # a callable object's method
            return getattr(call, "__code__", None)
        obj = inner
    return None


def _plugin_file(plugin: Any) -> str | None:
    file = getattr(plugin, "__file__", None)
    if isinstance(file, str):
        return file
    module = sys.modules.get(getattr(type(plugin), "__module__", "") or "")
    file = getattr(module, "__file__", None)
    return file if isinstance(file, str) else None


def _entry_points(pm: Any) -> dict[int, str]:
    """Plugin id -> its distribution's name, for the plugins pytest loaded from entry points
    (at start-up only: read once, a distribution's metadata costs a millisecond each)."""
    if _entry_cache:
        return _entry_cache
    out = _entry_cache
    out[0] = ""  # read: a run without entry points does not read again
    try:
        for plugin, dist in pm.list_plugin_distinfo():
            meta = getattr(dist, "metadata", None)
            name = meta["name"] if meta is not None else getattr(dist, "project_name", "?")
            out[id(plugin)] = str(name)[:200]
    except Exception:  # a distribution's odd metadata: no entry point then
        return out
    return out


def snapshot(config: Any, places: Places) -> None:
    """Merge what the plugin manager holds now into the inventory."""
    pm = config.pluginmanager
    entry = _entry_points(pm)
    names: dict[int, str] = {}
    for name, plugin in pm.list_name_plugin():
        if plugin is None or len(_plugins) >= MAX_PLUGINS:
            continue
        names[id(plugin)] = str(name)
        place, path = places.of(_plugin_file(plugin))
        key = (str(name)[:300], path[:1000])
        found: dict[str, Any] = {"name": key[0], "place": place, "path": key[1]}
        found["entry_point"] = entry.get(id(plugin))
        _plugins.setdefault(key, found)
    _seen["count"] = len(pm.get_plugins())
    for spec in dir(pm.hook):
        if spec.startswith("pytest_"):
            _hooks_of(getattr(pm.hook, spec, None), spec, names, places)


def _hooks_of(caller: Any, spec: str, names: dict[int, str], places: Places) -> None:
    try:
        impls = caller.get_hookimpls()
    except Exception:  # not a hook caller: nothing to list
        return
    for impl in impls:
        code = _code_of(impl.function)
        place, path = places.of(getattr(code, "co_filename", None))
        plugin_place = places.of(_plugin_file(impl.plugin))[0]
        if place in ("pytest", "gate") and plugin_place in ("pytest", "gate"):
            continue  # pytest's and the gate's own hooks, where they belong
        line = int(getattr(code, "co_firstlineno", 0) or 0)
        plugin = names.get(id(impl.plugin), str(getattr(impl, "plugin_name", "?")))[:300]
        key = (plugin, spec, path[:1000], line)
        if key in _hooks or len(_hooks) >= MAX_HOOKS:
            continue
        _hooks[key] = {
            "plugin": plugin,
            "spec": spec,
            "function": str(getattr(impl.function, "__name__", "?"))[:200],
            "place": place,
            "path": key[2],
            "line": max(1, line),
            "wrapper": bool(getattr(impl, "wrapper", False)),
            "hookwrapper": bool(getattr(impl, "hookwrapper", False)),
        }


_TARGETS = tuple((module, tuple(attr.split(".")), f"{module}.{attr}") for module, attr in INTERNALS)


_ABSENT = object()  # no such attribute (an older pytest): nothing to check


def _current_codes() -> list[Any]:
    """The code object at each of INTERNALS now (None: an object without one; _ABSENT)."""
    modules, codes = sys.modules, []
    for module_name, parts, _ in _TARGETS:
        obj: Any = modules.get(module_name)
        for part in parts:
            obj = getattr(obj, part, None)
        codes.append(_ABSENT if obj is None else getattr(obj, "__code__", None) or _code_of(obj))
    return codes


def check_internals(places: Places) -> None:
    """Record each of pytest's internals (INTERNALS) whose code is no longer pytest's.

    Called after every test's call: one pass over the code objects, compared with the last
    check's by identity, is all it costs when nothing was replaced (the common case)."""
    codes = _current_codes()
    if codes == _checked.get("codes"):  # list equality of code objects: identity first
        return
    _checked["codes"] = codes
    for (_, _, target), code in zip(_TARGETS, codes, strict=True):
        if target in _replaced or len(_replaced) >= MAX_REPLACED or code is _ABSENT:
            continue
        if code is not None and _checked.get(target) is code:
            continue  # the same code as at the last check: nothing new
        _checked[target] = code
        place, path = places.of(getattr(code, "co_filename", None))
        if place != "pytest":
            line = max(1, int(getattr(code, "co_firstlineno", 1) or 1))
            _replaced[target] = {"target": target, "place": place, "path": path[:1000]}
            _replaced[target]["line"] = line


def changed(config: Any) -> bool:
    """Whether plugins were registered or unregistered since the last snapshot (cheap)."""
    try:
        return len(config.pluginmanager.get_plugins()) != _seen["count"]
    except Exception:
        return False


def report() -> dict[str, Any]:
    return {
        "plugins": list(_plugins.values()),
        "hooks": list(_hooks.values()),
        "replaced": list(_replaced.values()),
        "truncated": len(_plugins) >= MAX_PLUGINS or len(_hooks) >= MAX_HOOKS,
    }


def write(path: str) -> None:
    with open(path + ".part", "w", encoding="utf-8") as handle:
        json.dump(report(), handle)
    os.replace(path + ".part", path)
