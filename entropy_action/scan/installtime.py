"""Code the host job runs when it installs the project, before and outside any test process,
and what that install brings into the runs — read as data (ast, toml, configparser; nothing
is run), with the classes the scan already knows:

- install-time code: `setup.py` at the root, an in-tree build backend (`[build-system]`
  `backend-path` with `build-backend`), and setuptools command classes named in `setup.cfg`
  (`[options] cmdclass`) or `pyproject.toml` (`[tool.setuptools.cmdclass]`):
  - `report_tampering`: it names entropy-gate's own files or variables, or the runner's
    (`RUNNER_TEMP`, `GITHUB_ENV`, `GITHUB_PATH`, `GITHUB_OUTPUT`, `BASH_ENV`, `LD_PRELOAD`,
    `ENTROPY_*`, `host.json`, `junit.xml`...): with them it can rewrite the gate that runs
    next in the job, or the report the host uploads;
  - `unit_replaced`: it writes, moves or removes a file of the tree (`open(..., "w")`,
    `Path(...).write_text`, `shutil.copy`, `os.replace`, ... on a path that names one): the
    tests then run a tree the commit does not hold (the host records it too: host.json's
    `tree`, which the judge reads);
- the project's test extra (the first of test, tests, testing, as the reusable workflow's
  default install picks it) in `pyproject.toml`, `setup.cfg` or `setup.py`: a pytest plugin
  listed there (`pytest-*`, `flaky`) is loaded by every run from site-packages, the base run's
  too, so its hooks are in no inventory's difference: `hook_added`.

Each finding names the file and line; one that stood the same at the base is a notice.
"""

from __future__ import annotations

import ast
import configparser
import re
import sys
from collections.abc import Iterator
from pathlib import PurePosixPath

from entropy_action.core.findings import FindingKind
from entropy_action.scan.model import Context, Hit, hit
from entropy_action.scan.names import ModuleIndex, const_str, short
from entropy_action.scan.scope import Scope

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

TEST_EXTRAS = ("test", "tests", "testing")  # scripts/install-project.sh's order
PLUGIN_DISTRIBUTIONS = frozenset({"flaky"})  # pytest plugins not named pytest-*
# What install-time code has no honest use for: the gate's files and variables, the runner's.
GATE_NAMES = re.compile(
    r"\bENTROPY_[A-Z0-9_]+|entropy-gate-(venv|cli|evidence)|\.entropy-gate-evidence"
    r"|\b(RUNNER_TEMP|GITHUB_ENV|GITHUB_PATH|GITHUB_OUTPUT|GITHUB_STEP_SUMMARY"
    r"|GITHUB_ACTION_PATH|BASH_ENV|LD_PRELOAD|LD_AUDIT)\b"
    r"|\b(host|outcomes|error)\.json\b|\bjunit\.xml\b"
)
WRITING_MODES = frozenset("wax+")
PATH_METHODS = frozenset(
    {"write_text", "write_bytes", "unlink", "rename", "replace", "rmdir", "touch", "symlink_to"}
)
FILE_CALLS = {  # module.function: the argument positions that name the written file
    "shutil.copy": (1,), "shutil.copy2": (1,), "shutil.copyfile": (1,), "shutil.move": (0, 1),
    "shutil.rmtree": (0,), "shutil.copytree": (1,), "os.remove": (0,), "os.unlink": (0,),
    "os.rename": (0, 1), "os.replace": (0, 1), "os.rmdir": (0,), "os.symlink": (1,),
}  # fmt: skip


def find(ctx: Context) -> list[Hit]:
    scope = ctx.scope
    hits: list[Hit] = []
    for path in install_files(scope):
        index = scope.module(path)
        if index is not None:
            hits += _gate_names(index)
            hits += _tree_writes(scope, index)
    hits += _test_plugins(scope)
    return hits


# --- which files run at install -------------------------------------------------------------


def install_files(scope: Scope) -> list[str]:
    """The repository's install-time code: setup.py, an in-tree backend, command classes."""
    found = ["setup.py"] if scope.tree.is_file("setup.py") else []
    pyproject = _toml(scope, "pyproject.toml")
    system = pyproject.get("build-system")
    if isinstance(system, dict):
        found += _backend(scope, system)
    tool = pyproject.get("tool")
    setuptools = tool.get("setuptools") if isinstance(tool, dict) else None
    classes = setuptools.get("cmdclass") if isinstance(setuptools, dict) else None
    named = [str(v) for v in classes.values()] if isinstance(classes, dict) else []
    cfg = _cfg(scope)
    if cfg is not None and cfg.has_option("options", "cmdclass"):
        named += [value for _, value in _pairs(cfg.get("options", "cmdclass"))]
    for value in named:
        module = scope.finder.find(value.partition(":")[0].strip(), "setup.py")
        found += [module] if module else []
    return list(dict.fromkeys(found))


def _backend(scope: Scope, system: dict[str, object]) -> list[str]:
    backend, paths = system.get("build-backend"), system.get("backend-path")
    if not isinstance(backend, str) or not isinstance(paths, list):
        return []
    dotted = backend.partition(":")[0].strip().replace(".", "/")
    found = []
    for folder in (p for p in paths if isinstance(p, str)):
        base = str(PurePosixPath(folder) / dotted).removeprefix("./")
        for candidate in (f"{base}.py", f"{base}/__init__.py"):
            if scope.tree.is_file(candidate):
                found.append(candidate)
                break
    return found


# --- the rules ------------------------------------------------------------------------------


def _gate_names(index: ModuleIndex) -> list[Hit]:
    """One hit per gate or runner name the file's string constants hold (its first line)."""
    first: dict[str, int] = {}
    for node in ast.walk(index.tree):
        text = const_str(node) if isinstance(node, ast.expr) else None
        for match in GATE_NAMES.finditer(text or ""):
            first.setdefault(match.group(0), getattr(node, "lineno", 1))
    return [
        _hit(
            "report_tampering",
            index.path,
            line,
            f"{index.path} names `{name}` in code the host job runs when it installs the "
            "project: with it that code can rewrite entropy-gate's own files or the job's "
            "environment, and with them what the host reports",
            name,
        )
        for name, line in sorted(first.items(), key=lambda item: item[1])
    ]


def _tree_writes(scope: Scope, index: ModuleIndex) -> list[Hit]:
    hits = []
    for call, targets in _writes(index):
        for target in targets:
            named = _tree_file(scope, index, target)
            if named is None:
                continue
            message = (
                f"{short(call)} in {index.path} writes, moves or removes {named}, a file of the "
                "tree, when the host job installs the project: the tests then run a tree the "
                "commit does not hold"
            )
            hits.append(_hit("unit_replaced", index.path, call.lineno, message, named))
    return hits


def _writes(index: ModuleIndex) -> Iterator[tuple[ast.Call, list[ast.expr]]]:
    """Each call that writes, moves or removes a file, with the expressions naming it."""
    for node in ast.walk(index.tree):
        if not isinstance(node, ast.Call):
            continue
        name = short(node.func)
        if name in ("open", "io.open", "builtins.open") and _writing(node):
            yield node, node.args[:1]
        elif name in FILE_CALLS:
            yield node, [node.args[i] for i in FILE_CALLS[name] if i < len(node.args)]
        elif isinstance(node.func, ast.Attribute) and node.func.attr in PATH_METHODS:
            yield node, [node.func.value, *node.args[:1]]
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "open" and _writing(node):
            yield node, [node.func.value]


def _writing(call: ast.Call) -> bool:
    mode = call.args[1] if len(call.args) > 1 else None
    for keyword in call.keywords:
        if keyword.arg == "mode":
            mode = keyword.value
    text = const_str(mode) if mode is not None else None
    return text is not None and bool(WRITING_MODES & set(text))


def _tree_file(scope: Scope, index: ModuleIndex, expr: ast.expr) -> str | None:
    """The file of the tree `expr` names: its string constants joined as a path, from the
    repository root or from the writing module's folder (a Name: its module-level value)."""
    if isinstance(expr, ast.Name) and expr.id in index.assigns:
        expr = index.assigns[expr.id]
    parts = [t for node in ast.walk(expr) if isinstance(node, ast.expr) and (t := const_str(node))]
    folder = str(PurePosixPath(index.path).parent)
    for joined in dict.fromkeys(["/".join(parts), *parts]):
        for base in dict.fromkeys(("", "" if folder == "." else folder)):
            candidate = str(PurePosixPath(base) / joined.removeprefix("./")) if joined else ""
            if candidate and scope.tree.is_file(candidate):
                return candidate
    return None


def _test_plugins(scope: Scope) -> list[Hit]:
    """pytest plugins in the project's test extra (the one the default install installs)."""
    for path, extra, requirements in _test_extras(scope):
        text = (scope.tree.read(path) or b"").decode("utf-8", "replace")
        hits = []
        for requirement in requirements:
            name = re.split(r"[\s\[<>=!~;@(]", requirement.strip(), maxsplit=1)[0].lower()
            normalized = name.replace("_", "-").replace(".", "-")
            if not (normalized.startswith("pytest-") or normalized in PLUGIN_DISTRIBUTIONS):
                continue
            message = (
                f"the test extra `{extra}` in {path} installs {name}, a pytest plugin every run "
                "then loads from site-packages (the base run's too): the scan cannot read its "
                "hooks"
            )
            hits.append(_hit("hook_added", path, _line_of(text, name), message, normalized))
        return hits
    return []


def _test_extras(scope: Scope) -> Iterator[tuple[str, str, list[str]]]:
    """(file, extra, requirements) of the first test extra each file declares."""
    extras = _toml(scope, "pyproject.toml").get("project", {})
    declared = extras.get("optional-dependencies") if isinstance(extras, dict) else None
    for name in TEST_EXTRAS:
        if isinstance(declared, dict) and isinstance(declared.get(name), list):
            yield "pyproject.toml", name, [str(r) for r in declared[name]]
            return
    cfg = _cfg(scope)
    for name in TEST_EXTRAS:
        if cfg is not None and cfg.has_option("options.extras_require", name):
            lines = cfg.get("options.extras_require", name).splitlines()
            yield "setup.cfg", name, [line for line in lines if line.strip()]
            return
    yield from _setup_py_extras(scope)


def _setup_py_extras(scope: Scope) -> Iterator[tuple[str, str, list[str]]]:
    index = scope.module("setup.py") if scope.tree.is_file("setup.py") else None
    for node in ast.walk(index.tree) if index is not None else ():
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values, strict=True):
            name = const_str(key) if key is not None else None
            if name in TEST_EXTRAS and isinstance(value, (ast.List, ast.Tuple)):
                yield "setup.py", name, [s for item in value.elts if (s := const_str(item))]
                return


# --- reading --------------------------------------------------------------------------------


def _hit(kind: FindingKind, path: str, line: int, message: str, subject: str) -> Hit:
    return hit(kind, path, line, message, subject=subject, key=subject)


def _toml(scope: Scope, path: str) -> dict[str, object]:
    raw = scope.tree.read(path) if scope.tree.is_file(path) else None
    try:
        return tomllib.loads(raw.decode("utf-8")) if raw else {}
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        scope.notes.append(f"{path}: not TOML; its build configuration is not read")
        return {}


def _cfg(scope: Scope) -> configparser.ConfigParser | None:
    raw = scope.tree.read("setup.cfg") if scope.tree.is_file("setup.cfg") else None
    if raw is None:
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(raw.decode("utf-8", "replace"))
    except configparser.Error:
        scope.notes.append("setup.cfg: cannot be parsed; its build configuration is not read")
        return None
    return parser


def _pairs(value: str) -> list[tuple[str, str]]:
    pairs = [line.partition("=") for line in value.splitlines()]
    return [(k.strip(), v.strip()) for k, sep, v in pairs if sep and k.strip() and v.strip()]


def _line_of(text: str, name: str) -> int:
    for number, line in enumerate(text.splitlines(), 1):
        if name in line.lower():
            return number
    return 1
