"""Which files a scan reads, and how a name in one of them leads to a definition in another.

The scope is the property module, every conftest.py from the repository root down to its
directory, the repository plugins they load, and whatever repository module a name in them
leads to (imports are followed lazily, up to MAX_MODULES files).
"""

from __future__ import annotations

import ast
import itertools
import sys
from dataclasses import dataclass
from pathlib import PurePosixPath

from entropy_action.scan import config
from entropy_action.scan.names import DefNode, ModuleIndex, Ref, const_str
from entropy_action.scan.source import Tree, parse

MAX_MODULES = 400
MAX_DEPTH = 12  # alias chains followed through re-exports
OUTSIDE = frozenset({"pytest", "_pytest", "unittest", "mock", "hypothesis", "numpy"})
SUPPORT_DIRS = frozenset({"test", "tests", "testing", "testutils", "test_utils", "conftest"})


def _package_dir(path: str) -> str:
    parent = str(PurePosixPath(path).parent)
    return "" if parent == "." else parent


def _join(*parts: str) -> str:
    return "/".join(p for p in parts if p)


class Finder:
    """Import resolution against one tree: sys.path as pytest's default import mode builds it."""

    def __init__(self, tree: Tree, pythonpath: tuple[str, ...]) -> None:
        self.tree = tree
        self.roots = ["", "src", *pythonpath]

    def basedir(self, importer: str) -> str:
        """The first directory above `importer` without an `__init__.py` (pytest's rootdir)."""
        folder = _package_dir(importer)
        while folder and self.tree.is_file(_join(folder, "__init__.py")):
            folder = _package_dir(folder)
        return folder

    def _module_at(self, base: str) -> str | None:
        if self.tree.is_file(base + ".py"):
            return base + ".py"
        if base and self.tree.is_dir(base):
            return _join(base, "__init__.py")
        return None

    def find(self, dotted: str, importer: str) -> str | None:
        top = dotted.split(".", maxsplit=1)[0]
        if not top or top in sys.stdlib_module_names or top in OUTSIDE:
            return None
        for root in dict.fromkeys([self.basedir(importer), *self.roots]):
            found = self._module_at(_join(root, dotted.replace(".", "/")))
            if found:
                return found
        return None

    def relative(self, importer: str, level: int, module: str) -> str | None:
        folder = _package_dir(importer)
        for _ in range(level - 1):
            folder = _package_dir(folder)
        if not module:
            return _join(folder, "__init__.py")
        return self._module_at(_join(folder, module.replace(".", "/")))

    def submodule(self, package: str, name: str) -> str | None:
        if not (package.endswith("__init__.py")):
            return None
        return self._module_at(_join(_package_dir(package), name))


@dataclass(frozen=True)
class Definition:
    module: ModuleIndex
    node: DefNode
    cls: ast.ClassDef | None = None  # the class of a method


class Scope:
    """The files of one revision that bear on the property module, parsed on demand."""

    def __init__(
        self,
        tree: Tree,
        module: str,
        pytest_config: config.PytestConfig,
        pythonpath: tuple[str, ...] = (),
    ) -> None:
        """`pythonpath`: more of sys.path than the configuration file names (the manifest's
        `-o pythonpath=` in run.pytest_args)."""
        self.tree = tree
        self.property_path = module
        self.config = pytest_config
        self.finder = Finder(tree, (*pytest_config.pythonpath, *pythonpath))
        # pytest's default import mode puts each conftest's folder (the first above it
        # without an `__init__.py`) on sys.path: `from support import x` resolves there
        self.finder.roots += [self.finder.basedir(path) for path in self.conftests()]
        self._modules: dict[str, ModuleIndex | None] = {}
        self._support: dict[str, bool] = {}
        self._walks: dict[int, tuple[ast.AST, ...]] = {}
        self.errors: dict[str, str] = {}  # unparseable files: path -> "path:line: ..."
        self.notes: list[str] = list(pytest_config.notes)

    # --- files -------------------------------------------------------------------------

    def module(self, path: str) -> ModuleIndex | None:
        if path in self._modules:
            return self._modules[path]
        index: ModuleIndex | None = None
        if len(self._modules) >= MAX_MODULES:
            if len(self._modules) == MAX_MODULES:
                self.notes.append(f"scan stopped following imports after {MAX_MODULES} files")
        else:
            parsed = parse(self.tree, path)
            if parsed is not None and parsed.tree is not None:
                index = ModuleIndex.build(path, parsed.tree, self.finder)
            elif parsed is not None and parsed.error:
                self.errors[path] = parsed.error
        self._modules[path] = index
        return index

    def conftests(self) -> list[str]:
        """conftest.py files from the repository root down to the property module's folder."""
        folder = PurePosixPath(self.property_path).parent
        chain = [*reversed(folder.parents), folder]
        paths = [_join("" if str(d) == "." else str(d), "conftest.py") for d in chain]
        return [p for p in dict.fromkeys(paths) if self.tree.is_file(p)]

    def package_inits(self) -> list[str]:
        """The `__init__.py` files Python runs before the property module when it is imported
        as part of a package (pytest's rootdir walk up through `__init__.py` files), from
        the outermost package down."""
        found: list[str] = []
        folder = _package_dir(self.property_path)
        while folder and self.tree.is_file(_join(folder, "__init__.py")):
            found.insert(0, _join(folder, "__init__.py"))
            folder = _package_dir(folder)
        return found

    def plugins(self) -> list[str]:
        """Repository modules loaded as plugins: `pytest_plugins` in conftests, `-p` in addopts."""
        found: list[str] = []
        for path in self.conftests():
            index = self.module(path)
            assigned = index.assigns.get("pytest_plugins") if index else None
            single = const_str(assigned)
            names = [single] if single else _strings(assigned)
            found += [p for n in names if (p := self.finder.find(n, path))]
        tokens = [token for token, _ in self.config.addopts]
        for option, value in itertools.pairwise(tokens):
            if option == "-p" and not value.startswith("no:"):
                plugin = self.finder.find(value, self.property_path)
                found += [plugin] if plugin else []
        return list(dict.fromkeys(found))

    def walk(self, node: ast.AST) -> tuple[ast.AST, ...]:
        """`ast.walk(node)`, computed once per node (the trees live as long as the scope)."""
        found = self._walks.get(id(node))
        if found is None:
            found = self._walks[id(node)] = tuple(ast.walk(node))
        return found

    def is_support(self, path: str) -> bool:
        """Test code (conftests, test modules, test folders), not the production package."""
        if path not in self._support:
            self._support[path] = self._is_support(path)
        return self._support[path]

    def _is_support(self, path: str) -> bool:
        return is_support(path, self.property_path)

    # --- names ---------------------------------------------------------------------------

    def resolve(self, expr: ast.expr, module: ModuleIndex, depth: int = 0) -> Ref | None:
        """Where `expr` (a name or an attribute chain) leads, or None when unknown."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(expr, ast.Name):
            return self.lookup(module, expr.id, depth + 1)
        if isinstance(expr, ast.Attribute):
            base = self.resolve(expr.value, module, depth + 1)
            return None if base is None else self.member(base, expr.attr, depth + 1)
        return None

    def lookup(self, module: ModuleIndex, name: str, depth: int = 0) -> Ref | None:
        if depth > MAX_DEPTH:
            return None
        if name in module.defs:
            return Ref(module.path, name)
        if name in module.assigns:
            value = module.assigns[name]
            if isinstance(value, (ast.Name, ast.Attribute)):
                return self.resolve(value, module, depth + 1) or Ref(module.path, name)
            return Ref(module.path, name)
        if name in module.imports:
            return self.chase(module.imports[name], depth + 1)
        for star in module.stars:
            starred = self.module(star)
            if starred is not None and starred is not module:
                found = self.lookup(starred, name, depth + 1)
                if found is not None:
                    return found
        sub = self.finder.submodule(module.path, name) if module.is_package else None
        return Ref(sub, "") if sub else None

    def chase(self, ref: Ref, depth: int = 0) -> Ref:
        """Follow a repository member to where it is defined (through re-exports)."""
        if ref.path is None or not ref.name or "." in ref.name or depth > MAX_DEPTH:
            return ref
        index = self.module(ref.path)
        found = self.lookup(index, ref.name, depth + 1) if index is not None else None
        if found is None:
            sub = self.finder.submodule(ref.path, ref.name)
            return Ref(sub, "") if sub else ref
        return found

    def member(self, base: Ref, attr: str, depth: int = 0) -> Ref:
        if base.path is None:
            return Ref(None, f"{base.name}.{attr}")
        if base.name:
            return Ref(base.path, f"{base.name}.{attr}")
        return self.chase(Ref(base.path, attr), depth + 1)

    def dotted(self, expr: ast.expr, module: ModuleIndex) -> str | None:
        """The dotted name `expr` stands for ("pytest.mark.skip", "invoice_lib.datetime")."""
        ref = self.resolve(expr, module)
        return None if ref is None else self.ref_name(ref)

    def ref_name(self, ref: Ref) -> str:
        if ref.path is None:
            return ref.name
        parts = list(PurePosixPath(ref.path.removesuffix(".py")).parts)
        if parts and parts[0] == "src":
            parts = parts[1:]
        if parts and parts[-1] == "__init__":
            parts = parts[:-1]
        return ".".join([*parts, *([ref.name] if ref.name else [])])

    def definition(self, ref: Ref) -> Definition | None:
        """The def or class a repository member names (`func` or `Class.method`)."""
        if ref.path is None or not ref.name:
            return None
        index = self.module(ref.path)
        if index is None:
            return None
        first, _, rest = ref.name.partition(".")
        node = index.defs.get(first)
        if node is None or not rest:
            return None if node is None else Definition(index, node)
        if isinstance(node, ast.ClassDef) and "." not in rest:
            for stmt in node.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == rest:
                    return Definition(index, stmt, node)
        return None

    def value(self, ref: Ref) -> tuple[ModuleIndex, ast.expr] | None:
        """The expression a repository module assigns to a name (for aliases like markers)."""
        if ref.path is None or not ref.name or "." in ref.name:
            return None
        index = self.module(ref.path)
        if index is None or ref.name not in index.assigns:
            return None
        return index, index.assigns[ref.name]


def is_support(path: str, property_path: str) -> bool:
    """Test code (conftests, test modules, test folders, the property module's folder), not
    the production package."""
    pure = PurePosixPath(path)
    name = pure.name
    if name == "conftest.py" or name.startswith("test") or name.endswith(("_test.py", "_tests.py")):
        return True
    prop = PurePosixPath(property_path).parent
    if str(prop) != "." and (pure.parent == prop or prop in pure.parents):
        return True
    return any(part in SUPPORT_DIRS for part in pure.parts[:-1]) or pure.stem in SUPPORT_DIRS


def _strings(value: ast.expr | None) -> list[str]:
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        return [s for element in value.elts if (s := const_str(element))]
    return []
