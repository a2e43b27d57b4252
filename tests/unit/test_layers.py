"""The layers of entropy_action, written down once: a subpackage may import its own layer and
the layers below it, never one above. The folder list is the architecture; this test keeps
the next feature from quietly adding an arrow upwards.

testproc/ runs inside the test process (copied there by path, see hosts.testfiles): it
imports the standard library and pytest only, and nothing of the gate outside testproc/.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import entropy_action

PACKAGE = Path(entropy_action.__file__).parent

# Lowest first. testproc is below everything: any layer may read its shared names.
LAYERS = (
    "testproc",
    "core",
    "manifest",
    "evidence",
    "hosts",
    "verdict",
    "scan",
    "strength",
    "render",
    "github",
    "gate",
    "cli",
)
# The package's top level: entry points only, and what each may import.
ENTRY_POINTS = {
    "__init__": set(),
    "__main__": {"cli"},
    "seams": {"testproc"},  # the public name, the pytest11 entry point
    "plugin": {"testproc"},  # the public name the printed replay loads
}
# What the test process may import besides the standard library.
TEST_PROCESS_EXTRA = {"pytest", "_pytest"}


def modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] == "gate" and "demo_data" in relative.parts:
            continue  # the demo's sample repository: data, not the gate's code
        yield ".".join(relative.with_suffix("").parts), path


def imports(path: Path, *, top_level_only: bool = False) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of each import in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = _top_level(tree) if top_level_only else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                yield node.lineno, "." * node.level + (node.module or "")
            elif node.module == "entropy_action":
                for alias in node.names:  # `from entropy_action import scan`
                    yield node.lineno, f"entropy_action.{alias.name}"
            elif node.module:
                for alias in node.names:  # `from entropy_action.gate import judge`
                    yield node.lineno, f"{node.module}.{alias.name}"


def _top_level(tree: ast.Module) -> Iterator[ast.AST]:
    """Statements run at import: the module body, descending into if/try, not functions."""
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.If, ast.Try)):
            stack.extend(ast.iter_child_nodes(node))
        elif isinstance(node, ast.ExceptHandler):
            stack.extend(node.body)


def layer_of(dotted: str) -> str:
    """The layer (or top-level entry point) of a module inside entropy_action."""
    return dotted.split(".", maxsplit=1)[0]


def target_layer(imported: str) -> str | None:
    """The layer an `entropy_action.…` import reaches; None for anything outside the gate."""
    parts = imported.split(".")
    if parts[0] != "entropy_action":
        return None
    if len(parts) == 1 or parts[1] == "__version__":
        return "__init__"
    return parts[1]


def upward(module: str, path: Path, package: Path = PACKAGE) -> list[str]:
    """Every import of `path` that points at a layer above its own."""
    own = layer_of(module)
    problems = []
    for line, imported in imports(path):
        target = target_layer(imported)
        if target is None or target == own or target == "__init__":
            continue
        if own in ENTRY_POINTS:
            allowed = target in ENTRY_POINTS[own]
        else:
            allowed = target in LAYERS and LAYERS.index(target) <= LAYERS.index(own)
        if not allowed:
            problems.append(f"{path.relative_to(package.parent)}:{line}: {own} imports {target}")
    return problems


def test_every_module_sits_in_a_layer_or_is_an_entry_point() -> None:
    stray = [m for m, _ in modules() if layer_of(m) not in (*LAYERS, *ENTRY_POINTS)]
    assert stray == []
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == set(LAYERS)


def test_no_layer_imports_a_layer_above_it() -> None:
    problems = [problem for module, path in modules() for problem in upward(module, path)]
    assert problems == []


def test_the_test_process_imports_only_the_standard_library_and_pytest() -> None:
    problems = []
    for module, path in modules():
        if layer_of(module) != "testproc":
            continue
        for line, imported in imports(path, top_level_only=True):
            top = imported.split(".")[0]
            gate_own = imported.startswith("entropy_action.testproc") or top.startswith(
                "entropy_gate_"  # a sibling, under the name it is copied as
            )
            if not (gate_own or top in sys.stdlib_module_names or top in TEST_PROCESS_EXTRA):
                problems.append(f"{module}:{line}: {imported}")
        for line, imported in imports(path):
            if imported.startswith("entropy_action") and not imported.startswith(
                "entropy_action.testproc"
            ):
                problems.append(f"{module}:{line}: {imported} (the gate stays out)")
    assert problems == []


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("core.git", "from entropy_action.hosts import launch\n", ["core imports hosts"]),
        ("verdict.model", "from entropy_action import scan\n", ["verdict imports scan"]),
        ("hosts.launch", "from entropy_action.gate.judge import judge\n", ["hosts imports gate"]),
        ("seams", "from entropy_action.core import errors\n", ["seams imports core"]),
        ("gate.judge", "from entropy_action.verdict import classify\n", []),
        ("cli.main", "import entropy_action.gate.local\n", []),
    ],
)
def test_the_rule_itself_sees_an_upward_arrow(
    tmp_path: Path, module: str, source: str, expected: list[str]
) -> None:
    """The checker must be able to fail: an upward import in a written file is reported."""
    package = tmp_path / "entropy_action"
    fake = package / Path(*module.split(".")).with_suffix(".py")
    fake.parent.mkdir(parents=True)
    fake.write_text(source)
    found = [problem.split(": ", 1)[1] for problem in upward(module, fake, package)]
    assert found == expected


def test_no_import_cycle_between_modules_at_import_time() -> None:
    """Import-time edges (function-level imports excluded, they run later) form no cycle."""
    graph: dict[str, set[str]] = {}
    known = {m for m, _ in modules()}
    for module, path in modules():
        edges = set()
        for _, imported in imports(path, top_level_only=True):
            name = imported.removeprefix("entropy_action.")
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module and imported.startswith("entropy_action"):
                edges.add(name)
        graph[module] = edges
    cycle = _find_cycle(graph)
    assert cycle is None, " -> ".join(cycle or [])


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None
