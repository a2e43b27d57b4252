"""Where the code under test comes from, seen inside the test process: for each repository
module the property module imports, the file it was loaded from (repository-relative) and a
digest of that file; and each way the unit under test was replaced outside the property
module. Standard library (and pytest) only; loaded by the plugin (plugin.py registers it)
when its config names `provenance_report`.

A replacement is one of:

- `shadowed`: a module loaded from the tests area (the property module's folder, tests/,
  test_*.py, conftest.py) while a production file of the same name exists in the tree (a
  copy next to the tests that pytest's rootdir insertion imports first);
- `substituted`: a `sys.modules` entry that holds another module than the import system
  would load for its name (a copy exec'd from a tests file, a module with no file), where
  the name resolves to a production file;
- `reassigned`: a production function the property module names (imported by name, or an
  attribute of an imported module it reads) whose live object, at the time a test is
  called, is code from the tests area or a mock (a conftest or a package `__init__.py`
  that assigns `invoice_lib.total_for`, an autouse fixture that monkeypatches through
  `request.module`).

Checked when each property test is called (fixtures are set up by then) and at session
finish. The report is data for the gate (core.hostinfo.Provenance), bounded here and read
with limits there.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib.machinery
import json
import os
import sys
import types
from typing import Any

MAX_ENTRIES = 200  # units and replacements kept each; the rest are counted as dropped
MAX_TEXT = 300
_TEST_DIRS = frozenset({"tests", "test"})
_MOCK_MODULES = ("unittest.mock", "mock")

_cfg: dict[str, Any] = {}
_units: dict[str, dict[str, Any]] = {}
_replaced: dict[tuple[Any, ...], dict[str, Any]] = {}
_dropped = [0]
_digests: dict[str, str | None] = {}
_plans: dict[int, tuple[list[tuple[str, str, str]], list[str], frozenset[str]]] = {}


def configure(root: str, modules: list[str], exempt: list[str], report: str) -> None:
    """What the recorder needs: the tree, the property modules (one per property the session
    runs), the environments inside the tree (not code under test), and where the report goes."""
    _cfg.update(
        root=os.path.realpath(root),
        modules=frozenset(module.replace(os.sep, "/") for module in modules),
        exempt=[os.path.realpath(p) for p in exempt],
        report=report,
    )


# --- places ---------------------------------------------------------------------------------


_relatives: dict[str, str | None] = {}


def relative(file: object) -> str | None:
    """`file` repository-relative (POSIX), when it lies in the tree and outside its
    environments; else None. Cached: called for every name at every test call."""
    if not isinstance(file, str) or not os.path.isabs(file) or "root" not in _cfg:
        return None  # "built-in", "<string>", "<frozen ...>": no file
    if file not in _relatives:
        _relatives[file] = _relative(file)
    return _relatives[file]


_real_folders: dict[str, str] = {}


def realpath(file: str) -> str:
    """`os.path.realpath(file)`, each absolute folder resolved once per run: the sweeps ask
    for every loaded module's file (~850 in a small run, ~10 lstat calls each uncached). A
    file that is itself a symbolic link is resolved whole, as are relative paths (the tests
    may change the working directory)."""
    folder, name = os.path.split(file)
    if not os.path.isabs(folder) or name in ("", os.curdir, os.pardir) or os.path.islink(file):
        return os.path.realpath(file)
    real = _real_folders.get(folder)
    if real is None:
        real = _real_folders[folder] = os.path.realpath(folder)
    return os.path.join(real, name)


def _relative(file: str) -> str | None:
    path = realpath(file)
    root = _cfg["root"]
    if not path.startswith(root.rstrip(os.sep) + os.sep):
        return None
    if any(path == e or path.startswith(e.rstrip(os.sep) + os.sep) for e in _cfg["exempt"]):
        return None
    return os.path.relpath(path, root).replace(os.sep, "/")


_areas: dict[str, bool] = {}


def tests_area(rel: str) -> bool:
    if rel not in _areas:
        _areas[rel] = _tests_area(rel)
    return _areas[rel]


def _tests_area(rel: str) -> bool:
    """Test code: conftest.py, test_*.py, *_test.py, a tests/ folder, the property module's
    own folder."""
    parts = rel.split("/")
    name = parts[-1]
    if name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py"):
        return True
    if _TEST_DIRS.intersection(parts[:-1]):
        return True
    folders = {module.rpartition("/")[0] for module in _cfg.get("modules", ())}
    return any(folder and rel.startswith(folder + "/") for folder in folders)


def _dir_in_tests(path: str) -> bool:
    rel = relative(os.path.join(path or os.curdir, "x.py"))
    return rel is not None and tests_area(rel)


def digest(rel: str | None) -> str | None:
    if rel is None:
        return None
    if rel not in _digests:
        try:
            with open(os.path.join(_cfg["root"], rel), "rb") as handle:
                _digests[rel] = hashlib.sha256(handle.read()).hexdigest()
        except OSError:
            _digests[rel] = None
    return _digests[rel]


def _file_of(module: object) -> str | None:
    file = getattr(module, "__file__", None)
    return file if isinstance(file, str) else None


def _defined_in(obj: object) -> tuple[str | None, int | None, bool]:
    """(defining file, first line, is a mock) of a function, class or module."""
    if type(obj).__module__ in _MOCK_MODULES:
        wrapped = getattr(obj, "_mock_wraps", None)
        if wrapped is not None:
            return _defined_in(wrapped)  # a spy calls the real function
        return None, None, True
    for _ in range(5):  # through functools.wraps decorators
        inner = getattr(obj, "__wrapped__", None)
        if inner is None or isinstance(obj, types.ModuleType):
            break
        obj = inner
    code = getattr(obj, "__code__", None)
    if isinstance(code, types.CodeType):
        return code.co_filename, code.co_firstlineno, False
    if isinstance(obj, types.ModuleType):
        return _file_of(obj), None, False
    if isinstance(obj, type):
        return _file_of(sys.modules.get(obj.__module__)), None, False
    return None, None, False


# --- where the import system finds a name -----------------------------------------------------


def _finders() -> list[Any]:
    """The meta path finders that answer for files (pytest's rewriting hook aside)."""
    return [
        f
        for f in sys.meta_path
        if hasattr(f, "find_spec") and not type(f).__module__.startswith("_pytest")
    ]


def expected_file(name: str, *, production: bool = False) -> str | None:
    """The file the import system would load for `name` (only production places: sys.path
    without the tests area's folders, when `production`), repository-relative, or None."""
    parent, _, _ = name.rpartition(".")
    if parent:
        path = getattr(sys.modules.get(parent), "__path__", None)
        if path is None:
            return None
        search: list[str] | None = list(path)
    else:
        search = None
    try:
        if production:
            if parent:
                return None  # a package's submodule follows its package
            dirs = [p for p in sys.path if isinstance(p, str) and not _dir_in_tests(p)]
            spec = importlib.machinery.PathFinder.find_spec(name, dirs)
            if spec is None:
                spec = _found(name, None, skip=importlib.machinery.PathFinder)
        else:
            spec = _found(name, search)
    except Exception:  # a finder of the suite's: never break the run
        return None
    return relative(getattr(spec, "origin", None)) if spec is not None else None


def _found(name: str, path: list[str] | None, skip: Any = None) -> Any:
    for finder in _finders():
        if skip is not None and finder is skip:
            continue
        spec = finder.find_spec(name, path, None)
        if spec is not None:
            return spec
    return None


# --- the records ----------------------------------------------------------------------------


def _add(key: tuple[Any, ...], entry: dict[str, Any]) -> None:
    if key in _replaced:
        return
    if len(_replaced) >= MAX_ENTRIES:
        _dropped[0] += 1
        return
    _replaced[key] = {k: (v[:MAX_TEXT] if isinstance(v, str) else v) for k, v in entry.items()}


def _unit(name: str, module: object) -> None:
    rel = relative(_file_of(module))
    if rel is None or name in _units:
        return
    if len(_units) >= MAX_ENTRIES:
        _dropped[0] += 1
        return
    _units[name] = {"module": name[:MAX_TEXT], "path": rel, "sha256": digest(rel)}
    _units[name]["tests_area"] = tests_area(rel)
    _units[name]["candidates"] = candidates(name, rel)


MAX_CANDIDATES = 5


def candidates(name: str, held: str) -> list[str]:
    """Other production files of the tree that a top-level module `name` could be loaded
    from on sys.path (`name.py`, `name/__init__.py`): a file the base loaded that still
    exists while the head loads another one is a copy the tests put first."""
    if "." in name:
        return []
    found: list[str] = []
    for entry in list(sys.path):
        folder = str(entry) or os.curdir  # a suite may put a Path on sys.path
        for file in (os.path.join(folder, name + ".py"), os.path.join(folder, name, "__init__.py")):
            rel = relative(os.path.abspath(file)) if os.path.isfile(file) else None
            if rel is not None and rel != held and not tests_area(rel) and rel not in found:
                found.append(rel)
        if len(found) >= MAX_CANDIDATES:
            break
    return found[:MAX_CANDIDATES]


def sweep() -> None:
    """Every `sys.modules` entry that is not what the import system would load for its name,
    and every module loaded from the tests area that a production file of its name exists
    for."""
    for name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType) or name == "__main__":
            continue
        held = relative(_file_of(module))
        if held is None and (_file_of(module) is not None or "." in name):
            continue  # outside the tree (the standard library, site-packages)
        expected = expected_file(name)
        replaced = expected is not None and expected != held and not tests_area(expected)
        if not replaced:
            if held is not None and tests_area(held):
                _shadow(name, held)
            continue
        if held is not None and not tests_area(held):
            continue  # production's own alias of a production module
        if _production_type(module):
            continue  # production's own lazy module (`sys.modules[__name__] = _Lazy(...)`)
        own = getattr(getattr(module, "__spec__", None), "name", None) or module.__name__
        _add(
            ("substituted", name, held),
            {
                "how": "substituted",
                "module": name,
                "name": None,
                "path": held,
                "line": None,
                "production": expected,
                "same_source": held is not None and digest(held) == digest(expected),
                "sha256": digest(held),
                "detail": f"sys.modules[{name!r}] holds {own!r} "
                + (f"from {held}" if held else "with no file"),
            },
        )


def _production_type(module: types.ModuleType) -> bool:
    """Whether the module object is of a ModuleType subclass that production code defines."""
    kind = type(module)
    if kind is types.ModuleType:
        return False
    files = [
        code.co_filename
        for value in vars(kind).values()
        if isinstance(code := getattr(value, "__code__", None), types.CodeType)
    ]
    where = relative(files[0] if files else _file_of(sys.modules.get(kind.__module__)))
    return where is not None and not tests_area(where)


def _shadow(name: str, held: str) -> None:
    base = held.rsplit("/", 1)[-1]
    if base == "conftest.py" or base.startswith("test_") or held in _cfg.get("modules", ()):
        return
    production = expected_file(name, production=True)
    if production is None or tests_area(production):
        return
    _add(
        ("shadowed", name, held),
        {
            "how": "shadowed",
            "module": name,
            "name": None,
            "path": held,
            "line": None,
            "production": production,
            "same_source": digest(held) == digest(production),
            "sha256": digest(held),
            "detail": f"{name} was imported from {held}, not from {production}",
        },
    )


def _plan(module: types.ModuleType) -> tuple[list[tuple[str, str, str]], list[str], frozenset[str]]:
    """What the property module's source imports: (local name, module, attribute) for each
    `from M import a as b`, the modules it imports whole, and every name its code calls
    (`total_for(...)`, `invoice_lib.total_for(...)`; not `invoice_lib.send.assert_called()`,
    a mocked dependency the test inspects)."""
    found = _plans.get(id(module))
    if found is not None:
        return found
    names: list[tuple[str, str, str]] = []
    whole: list[str] = []
    used: set[str] = set()
    try:
        with open(str(module.__file__), "rb") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError, TypeError):
        tree = ast.Module(body=[], type_ignores=[])
    package = getattr(module, "__package__", None) or ""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(node.module or "", node.level, package)
            for alias in node.names:
                if source and alias.name != "*":
                    names.append((alias.asname or alias.name, source, alias.name))
        elif isinstance(node, ast.Import):
            whole += [alias.name for alias in node.names]
        elif isinstance(node, ast.Call):  # what the tests call, not what they inspect
            func = node.func
            if isinstance(func, ast.Attribute):
                used.add(func.attr)
            elif isinstance(func, ast.Name):
                used.add(func.id)
            for arg in [*node.args, *(kw.value for kw in node.keywords)]:
                if isinstance(arg, ast.Name):  # map(total_for, ...), partial(total_for, 1)
                    used.add(arg.id)
    found = _plans[id(module)] = (names, whole, frozenset(used))
    return found


def _absolute(name: str, level: int, package: str) -> str:
    if not level:
        return name
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return ""
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, *([name] if name else [])])


def check(module: types.ModuleType, test: str) -> None:
    """The property module's imports as they stand when `test` is called."""
    names, whole, used = _plan(module)
    for local, source, attr in names:
        owner = sys.modules.get(source)
        if owner is None:
            continue
        _unit(source, owner)
        if local not in used:
            continue  # a constant, a class only inspected, a dependency to patch
        value = vars(module).get(local)
        _reassigned(owner, source, attr, value, test, f"{relative(_file_of(module))}'s {local}")
    for name in whole:
        owner = sys.modules.get(name)
        if owner is None:
            continue
        _unit(name, owner)
        where = relative(_file_of(owner))
        if where is None or tests_area(where):
            continue  # the standard library, a library, test code: not the unit
        for attr in sorted(used.intersection(vars(owner))):
            _reassigned(owner, name, attr, vars(owner)[attr], test, f"{name}.{attr}")


def _reassigned(
    owner: types.ModuleType, source: str, attr: str, value: object, test: str, shown: str
) -> None:
    """`value` (what the tests call for `source.attr`) when it is test code or a mock while
    `source` is a production module."""
    where = relative(_file_of(owner))
    if where is None or tests_area(where) or isinstance(value, types.ModuleType):
        return
    file, line, mock = _defined_in(value)
    if not mock:
        if file is None or not callable(value):
            return
        rel = relative(file)
        if rel is not None and not tests_area(rel):
            return  # production code (a re-export, a decorator of production's own)
        if rel is None and os.path.isfile(file):
            return  # a library's function (outside the tree)
    else:
        rel = None
    by = "a mock" if mock else (rel or file)
    _add(
        ("reassigned", source, attr, rel),
        {
            "how": "reassigned",
            "module": source,
            "name": attr,
            "path": rel,
            "line": line if rel is not None else None,
            "production": where,
            "same_source": False,
            "sha256": digest(rel),
            "test": test,
            "detail": f"{shown} is {by}, not {source}.{attr} of {where}",
        },
    )


# --- the hooks ------------------------------------------------------------------------------


_swept = [False]


def hooks() -> object:
    """The plugin object the gate's plugin registers: pytest is imported here, never when
    this module is (the plugin folder imports without pytest: tests/integration/test_run_python)."""
    import pytest  # noqa: PLC0415

    class Hooks:
        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_call(self, item: Any) -> None:
            on_call(item)

    return Hooks()


def on_call(item: Any) -> None:
    """A property test is about to be called (its fixtures set up): check what it uses."""
    if "root" not in _cfg:
        return
    with contextlib.suppress(Exception):  # never break the run it watches
        module = getattr(item, "module", None)
        if isinstance(module, types.ModuleType) and relative(_file_of(module)) in _cfg["modules"]:
            if not _swept[0]:
                _swept[0] = True
                sweep()
            check(module, str(item.nodeid)[:MAX_TEXT])


def report() -> dict[str, Any]:
    with contextlib.suppress(Exception):
        sweep()
    return {
        "units": sorted(_units.values(), key=lambda u: str(u["module"])),
        "replaced": list(_replaced.values()),
        "dropped": _dropped[0],
    }


def write() -> None:
    path = _cfg.get("report")
    if not path:
        return
    with contextlib.suppress(OSError), open(path, "w", encoding="utf-8") as handle:
        json.dump(report(), handle)
