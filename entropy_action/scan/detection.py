"""`test_detection`: production code that branches on whether it runs under a test.

An agent's cheapest exit after the gate's pins: the unit runs the correct code only under
pytest and the old, wrong code everywhere else. The property passes under the gate and says
nothing of production. This rule reads the production `.py` files the patch changed (the
same files as `scan.production`) at the base and at the head, and counts the places that
can tell a test run from production:

- `env`: a read of a `PYTEST_*` variable (`os.environ.get("PYTEST_CURRENT_TEST")`,
  `os.getenv`, `os.environ[...]`, `"PYTEST_VERSION" in os.environ`), or of a variable a
  conftest sets whose name says TEST (`os.environ["APP_TESTING"] = "1"` in `pytest_configure`);
- `modules`: `"pytest"` (`"_pytest"`, `"unittest"`) in `sys.modules`, `sys.modules.get(...)`;
- `argv`: an expression that reads `sys.argv` and names pytest (`"pytest" in sys.argv[0]`,
  `any("pytest" in a for a in sys.argv)`);
- `stack`: a function that inspects its callers' frames (`inspect.stack()`, `sys._getframe`,
  `inspect.currentframe`, `traceback.extract_stack`) and names a test (`"test_"`, `"pytest"`);
- `marker`: an attribute a conftest sets on `sys` or `builtins` (`sys._called_from_test =
  True` in `pytest_configure`, pytest's own recipe), read in production (`sys.X`,
  `getattr(sys, "X", ...)`, `hasattr(sys, "X")`);
- `pinned`: a comparison of a pinned source with the value the pin gives it
  (`os.environ.get("TZ") == "UTC"` under `tz: UTC`): the gate's run told by its pins
  (scan.pinbranch).

A place the head has more of than the base (same shape, same subject) is one finding, at the
first head line whose source the base did not have. Not detection: writing a `PYTEST_*`
variable (a tool that runs pytest in a subprocess), `"numpy" in sys.modules`, `sys.argv`
read for its options, a stack walk for logging that names no test. The test process sees
the `PYTEST_*` reads too (the audit: verdict.detection); `sys.modules`, `sys.argv`, the
stack and attributes are plain reads it cannot observe, so for them this rule is the net.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from entropy_action.core import git
from entropy_action.core.findings import Finding
from entropy_action.manifest.baseline import PinCheck
from entropy_action.scan import pinbranch
from entropy_action.scan.pinbranch import Pinned
from entropy_action.scan.production import changed_production, dotted, import_aliases
from entropy_action.scan.source import CommitTree, Tree, head_tree, parse
from entropy_action.verdict.detection import message

FRAMEWORKS = frozenset({"pytest", "_pytest", "unittest", "nose", "nose2"})
STACK_APIS = frozenset(
    {"inspect.stack", "inspect.currentframe", "inspect.getouterframes", "inspect.trace",
     "sys._getframe", "traceback.extract_stack", "traceback.walk_stack"}
)  # fmt: skip
MARKER_OWNERS = frozenset({"sys", "builtins"})
MAX_CONFTESTS = 50  # conftests read for the markers they set
_ENV_READS = frozenset({"os.environ.get", "os.getenv", "os.environ.__contains__"})
_ENV_OWNERS = frozenset({"os.environ", "os.environ.keys"})
_MODULE_OWNERS = frozenset({"sys.modules", "sys.modules.keys"})
_MODULE_READS = frozenset({"sys.modules.get", "sys.modules.__contains__"})
_ENV_WRITES = frozenset({"os.environ.setdefault", "os.putenv"})
Key = tuple[str, str]  # (shape, subject): ("env", "PYTEST_CURRENT_TEST"), ("argv", "")


@dataclass(frozen=True)
class Markers:
    """What the test side sets to mark a test run: attributes of sys/builtins, variables."""

    attributes: frozenset[str] = frozenset()
    variables: frozenset[str] = frozenset()
    # what the manifests pin: production comparing a source with it (scan.pinbranch)
    pinned: Pinned = field(default_factory=Pinned)


@dataclass
class Places:
    """One module's detection places: key -> [(line, normalized source)]."""

    found: dict[Key, list[tuple[int, str]]] = field(default_factory=dict)

    def add(self, key: Key, node: ast.AST) -> None:
        line = getattr(node, "lineno", 1)
        self.found.setdefault(key, []).append((line, ast.unparse(node)))


def check(pins: PinCheck) -> list[Finding]:
    """The rule over the production files the patch changed (scan.production's), none
    without a base; the markers are those the head's and the base's conftests set."""
    if pins.base is None or pins.base_commit is None or pins.head is None:
        return []
    changed, _ = changed_production(pins, pins.base_commit)
    if not changed:
        return []
    base_tree = CommitTree(pins.root, pins.base_commit)
    head = head_tree(pins.root, staged=pins.staged)
    ours = read_markers(head_files(pins.root, staged=pins.staged), head)
    theirs = read_markers(base_tree.files, base_tree)
    pinned = Pinned.of(pins.base.manifest.pins, pins.head.manifest.pins)
    markers = Markers(
        ours.attributes | theirs.attributes, ours.variables | theirs.variables, pinned
    )
    return findings(_trees(base_tree, changed), _trees(head, changed), markers)


def _trees(tree: Tree, paths: Iterable[str]) -> dict[str, ast.Module]:
    return {p: parsed.tree for p in paths if (parsed := parse(tree, p)) and parsed.tree}


def findings(
    base: Mapping[str, ast.Module], head: Mapping[str, ast.Module], markers: Markers
) -> list[Finding]:
    """One `test_detection` per (file, shape, subject) the head has more places of. A file
    the base lacks is held against the places of the files the patch removed (a module
    moved, `src/` layouts, keeps its places)."""
    out = []
    moved = Places()
    for path in sorted(base.keys() - head.keys()):
        for key, seen in places(base[path], markers).found.items():
            moved.found.setdefault(key, []).extend(seen)
    for path, module in sorted(head.items()):
        now = places(module, markers)
        before = places(base[path], markers) if path in base else moved
        for key, seen in sorted(now.found.items()):
            old = before.found.get(key, [])
            if len(seen) <= len(old):
                continue
            out.append(
                Finding(
                    kind="test_detection", path=path, line=_new(seen, old), message=message(*key)
                )
            )
    return out


def _new(seen: list[tuple[int, str]], old: list[tuple[int, str]]) -> int:
    """The first head line whose source is not matched by one of the base's (as a multiset)."""
    left = Counter(text for _, text in old)
    for line, text in seen:
        if left[text] <= 0:
            return line
        left[text] -= 1
    return seen[0][0]


def read_markers(root_files: Iterable[str], tree: Tree) -> Markers:
    """The markers the conftests among `root_files` set (at most MAX_CONFTESTS read)."""
    conftests = sorted(p for p in root_files if p.rsplit("/", 1)[-1] == "conftest.py")
    attributes: set[str] = set()
    variables: set[str] = set()
    for path in conftests[:MAX_CONFTESTS]:
        parsed = parse(tree, path)
        if parsed is None or parsed.tree is None:
            continue
        aliases = import_aliases(ast.walk(parsed.tree))
        for node in ast.walk(parsed.tree):
            attributes.update(_set_attribute(node, aliases))
            variables.update(v for v in _set_variable(node, aliases) if "TEST" in v.upper())
    return Markers(frozenset(attributes), frozenset(variables))


def head_files(root: Path, *, staged: bool) -> list[str]:
    """The head's files (the index for a staged check) the markers are looked for in."""
    return list(git.index_files(root)) if staged else git.tracked_and_untracked(root)


def places(module: ast.Module, markers: Markers) -> Places:
    found = Places()
    aliases = import_aliases(ast.walk(module))
    for node in ast.walk(module):
        for key in _at(node, aliases, markers):
            found.add(key, node)
    constants = pinbranch.module_constants(module)
    for scope in _scopes(module):
        _stack(scope, aliases, found)
        for key, node in pinbranch.places(scope, aliases, markers.pinned, constants):
            found.add(key, node)
    return found


def _at(node: ast.AST, aliases: dict[str, str], markers: Markers) -> Iterator[Key]:
    """The detection keys `node` itself stands for (not its children's)."""
    yield from _env_read(node, aliases, markers)
    yield from _modules_read(node, aliases)
    if isinstance(node, (ast.Compare, ast.Call)) and _argv_names_pytest(node, aliases):
        yield ("argv", "")
    yield from _marker_read(node, aliases, markers)
    yield from _scanned(node, aliases)


def _scanned(node: ast.AST, aliases: dict[str, str]) -> Iterator[Key]:
    """A condition that walks the environment or the loaded modules for a framework's names
    (`any(k.startswith("PYTEST_") for k in os.environ)`, `any(n.endswith("pytest") for n in
    sys.modules)`): the test run told by a prefix rather than a name. Only as a condition
    (`any`/`all`, an `if` or ternary test): a comprehension that drops PYTEST_* variables
    from a copy for a subprocess is no such place."""
    tests: list[ast.AST] = []
    if isinstance(node, (ast.If, ast.IfExp, ast.While)):
        tests = [node.test]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        tests = [node] if node.func.id in ("any", "all") else []
    for test in tests:
        if not any(isinstance(c, ast.comprehension) for c in ast.walk(test)):
            continue  # no walk: a name asked for is `_env_read`'s and `_modules_read`'s
        owners = {dotted(c, aliases) for c in ast.walk(test) if isinstance(c, ast.expr)}
        texts = [t for child in ast.walk(test) if (t := _string(child)) is not None]
        if owners & _ENV_OWNERS and any(t.startswith("PYTEST_") for t in texts):
            yield ("env_scan", "")
        if owners & _MODULE_OWNERS and any(_framework_text(t) for t in texts):
            yield ("modules_scan", "")


def _framework_text(text: str) -> bool:
    return any(name in text for name in ("pytest", "unittest", "nose"))


def _is_env_name(name: str | None, markers: Markers) -> bool:
    return name is not None and (name.startswith("PYTEST_") or name in markers.variables)


def _env_read(node: ast.AST, aliases: dict[str, str], markers: Markers) -> Iterator[Key]:
    name = None
    if isinstance(node, ast.Call) and dotted(node.func, aliases) in _ENV_READS and node.args:
        name = _string(node.args[0])
    elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        if dotted(node.value, aliases) == "os.environ":
            name = _string(node.slice)
    elif isinstance(node, ast.Compare) and _membership(node, aliases, _ENV_OWNERS):
        name = _string(node.left)
    if _is_env_name(name, markers):
        yield ("env", str(name))


def _modules_read(node: ast.AST, aliases: dict[str, str]) -> Iterator[Key]:
    name = None
    if isinstance(node, ast.Call) and dotted(node.func, aliases) in _MODULE_READS and node.args:
        name = _string(node.args[0])
    elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        if dotted(node.value, aliases) == "sys.modules":
            name = _string(node.slice)
    elif isinstance(node, ast.Compare) and _membership(node, aliases, _MODULE_OWNERS):
        name = _string(node.left)
    if name is not None and name.split(".")[0] in FRAMEWORKS:  # `_pytest.runner` too
        yield ("modules", name)


def _membership(node: ast.Compare, aliases: dict[str, str], owners: frozenset[str]) -> bool:
    """`X in owner` / `X not in owner` (or `owner.keys()`)."""
    if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.In, ast.NotIn)):
        return False
    right = node.comparators[0]
    target = right.func if isinstance(right, ast.Call) else right
    return dotted(target, aliases) in owners


def _argv_names_pytest(node: ast.AST, aliases: dict[str, str]) -> bool:
    argv = named = False
    for child in ast.walk(node):
        argv = argv or (isinstance(child, ast.Attribute) and dotted(child, aliases) == "sys.argv")
        text = _string(child)
        named = named or (text is not None and ("pytest" in text or "py.test" in text))
    return argv and named


def _marker_read(node: ast.AST, aliases: dict[str, str], markers: Markers) -> Iterator[Key]:
    attribute = None
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        owned = dotted(node.value, aliases) in MARKER_OWNERS
        attribute = node.attr if owned else None
    elif _called(node, ("getattr", "hasattr"), aliases):
        assert isinstance(node, ast.Call)
        attribute = _string(node.args[1])
    if attribute is not None and attribute in markers.attributes:
        yield ("marker", attribute)


def _called(node: ast.AST, builtins: tuple[str, ...], aliases: dict[str, str]) -> bool:
    """`getattr(sys, "X", ...)`-like: a builtin from `builtins` on sys or builtins."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in builtins
        and len(node.args) >= 2
        and dotted(node.args[0], aliases) in MARKER_OWNERS
    )


def _scopes(module: ast.Module) -> Iterator[list[ast.AST]]:
    """Each function's nodes (nested defs included), and the module's outside any function."""
    outside: list[ast.AST] = []
    for stmt in module.body:
        todo: list[ast.AST] = [stmt]
        while todo:
            node = todo.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield list(ast.walk(node))
                continue
            outside.append(node)
            todo.extend(ast.iter_child_nodes(node))
    yield outside


def _stack(nodes: list[ast.AST], aliases: dict[str, str], found: Places) -> None:
    """A stack inspection in a scope that names a test: one place, at the inspection."""
    calls = [n for n in nodes if isinstance(n, ast.Call) and dotted(n.func, aliases) in STACK_APIS]
    if calls and any(_names_a_test(_string(n)) for n in nodes):
        found.add(("stack", ""), calls[0])


def _names_a_test(text: str | None) -> bool:
    return text is not None and (
        text.startswith("test_")
        or text in ("test", "tests")
        or "pytest" in text
        or "conftest" in text
        or "tests/" in text
        or "/tests" in text
    )


def _set_attribute(node: ast.AST, aliases: dict[str, str]) -> Iterator[str]:
    """`sys.X = ...` and `setattr(sys, "X", ...)`: the attribute names set on sys/builtins."""
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign):
        targets = [node.target]
    for target in targets:
        if isinstance(target, ast.Attribute) and dotted(target.value, aliases) in MARKER_OWNERS:
            yield target.attr
    if _called(node, ("setattr",), aliases):
        assert isinstance(node, ast.Call)
        attribute = _string(node.args[1])
        yield from [attribute] if attribute is not None else []


def _set_variable(node: ast.AST, aliases: dict[str, str]) -> Iterator[str]:
    """`os.environ["X"] = ...`, `os.environ.setdefault("X", ...)`, `os.putenv("X", ...)`."""
    written: list[ast.AST] = []
    if isinstance(node, ast.Assign):
        written = [
            t.slice
            for t in node.targets
            if isinstance(t, ast.Subscript) and dotted(t.value, aliases) == "os.environ"
        ]
    elif isinstance(node, ast.Call) and dotted(node.func, aliases) in _ENV_WRITES and node.args:
        written = [node.args[0]]
    yield from (name for w in written if (name := _string(w)) is not None)


def _string(node: ast.AST) -> str | None:
    value = node.value if isinstance(node, ast.Constant) else None
    return value if isinstance(value, str) else None
