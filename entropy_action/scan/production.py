"""Cheap exits in the production code the patch changed (the seed's first: "Replace
datetime.now() with a constant").

The scan's other rules read the tests; this one reads the production `.py` files the patch
changed (not test code as `scope.is_support` tells it, not an environment folder), at the
base from git objects and at the head from the work tree, function by function (matched on
their qualified names):

- `live_read_constant`: a function that read the live clock at the base (`datetime.now()`,
  `date.today()`, `time.time()`, through any import alias) reads it fewer times at the head
  and refers to a clock constant it did not (a `date(2024, 1, 1)` or `datetime(...)` of
  literals, a module-level name bound to one, a Unix time literal) — in its body or as a
  parameter's default — while the changed files together read the clock fewer times (a read
  moved to another function is still a read). The global RNG likewise: a function that calls
  `random.uniform(...)` less and names a number it did not (`1.0`, `JITTER = 1.0`);
- `gate_pin_read`: a changed production file names one of the gate's own variables
  (`"ENTROPY_CLOCK_UNIX"`...) more often than at the base;
- seams: each function whose head version takes a parameter its base version did not (and
  reads it), or reads a parameter more often, or requires a parameter its base had with a
  default while reading a source less (`now=None` whose fallback was `datetime.now()` made
  `now`), while naming no new constant of a source it reads less (an injected Clock, RNG
  or value; `as_of` in place of the clock): `verdict.removed` does not count a live read
  removed there. Beside a new parameter a constant counts only as that
  parameter's default (`today=date(2024, 1, 1)`).

What it does not catch: a constant imported from another module, a constant computed at run
time (`datetime.fromtimestamp(0) + OFFSET`), a clock read replaced in a renamed function (the
run-time `live_read_removed` still sees the read gone), an RNG replaced by anything but a new
number (`xs[0]` for `random.choice(xs)`).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from entropy_action.core import git
from entropy_action.core.findings import Finding
from entropy_action.manifest.baseline import PinCheck
from entropy_action.scan.scope import is_support
from entropy_action.scan.source import CommitTree, Tree, head_tree, parse
from entropy_action.testproc.protocol import GATE_PREFIX
from entropy_action.verdict.removed import Seam, pin_message

MAX_FILES = 200  # changed production files read; past it the rest are named in a note
LIB_DIRS = frozenset({"site-packages", "dist-packages", ".venv", "venv", ".tox", ".nox"})
CLOCK_READS = frozenset(
    {
        "datetime.datetime.now",
        "datetime.datetime.utcnow",
        "datetime.datetime.today",
        "datetime.date.today",
        "time.time",
        "time.time_ns",
        "time.localtime",
    }
)
RNG_READS = frozenset(
    f"random.{name}"
    for name in (
        "random", "randint", "randrange", "randbytes", "getrandbits", "choice", "choices",
        "shuffle", "sample", "uniform", "triangular", "gauss", "normalvariate",
        "lognormvariate", "expovariate", "betavariate", "gammavariate", "paretovariate",
        "weibullvariate", "vonmisesvariate",
    )
)  # fmt: skip
Family = str  # "clock" or "rng"
_CONSTRUCTORS = frozenset({"datetime.date", "datetime.datetime"})
_FROM = frozenset({"fromtimestamp", "utcfromtimestamp", "fromisoformat", "strptime", "fromordinal"})
_UNIX_TIME = 100_000_000  # a literal this large in place of a clock read: a Unix time
_PIN_NAME = re.compile(GATE_PREFIX + r"[A-Z0-9_]*")  # the bare prefix too: a loop over them
_MANIFEST = re.compile(r"(?:^|/)entropy\.ya?ml")  # the pins' own file, read for a value
MESSAGE_CHARS = 12  # a string this long is a message, not a key ("info", "utf-8")


@dataclass(frozen=True)
class Production:
    findings: tuple[Finding, ...] = ()
    seams: tuple[Seam, ...] = ()
    notes: tuple[str, ...] = ()
    # the messages (string constants, `MESSAGE_CHARS` or longer, docstrings aside) the changed
    # files held at the base and hold no more: a behaviour the patch retired (a warning, an
    # error's text), which a test may stop checking (weakening.retired)
    retired: frozenset[str] = frozenset()


Read = tuple[Family, str, str, int]  # (family, API, as written, line)
Constant = tuple[Family, str]  # (family it stands in for, source text)


@dataclass
class Function:
    """One def of a module: where it is, its parameters, its live reads and constants."""

    first: int
    last: int
    params: frozenset[str]
    reads: list[Read] = field(default_factory=list)
    constants: dict[Constant, int] = field(default_factory=dict)  # -> first line
    defaults: set[Constant] = field(default_factory=set)  # the constants among the defaults
    uses: Counter[str] = field(default_factory=Counter)  # parameter -> times read
    optional: frozenset[str] = frozenset()  # the parameters that have a default

    def added(self, base: Function) -> bool:
        """Whether this (head) version takes a parameter its base did not, and reads it."""
        return any(self.uses[name] for name in self.params - base.params)

    def injects(self, base: Function) -> bool:
        """Whether this (head) version takes the value from its caller: a new parameter it
        reads, a parameter read more often (`as_of` in place of the clock), or one it had
        with a default and now requires (`now=None` with a live fallback becomes `now`: the
        seam the gate recommends) — while it names no constant its base did not."""
        if self.added(base):
            return True
        fewer = self.fewer(base)
        named = any(family in fewer for _, (family, _) in self.fresh(base))
        required = {p for p in base.optional - self.optional if p in self.params and self.uses[p]}
        return bool(self.uses - base.uses or (required and fewer)) and not named

    def fresh(self, base: Function) -> list[tuple[int, Constant]]:
        """(line, constant) of the constants this version names and its base did not."""
        return sorted((line, c) for c, line in self.constants.items() if c not in base.constants)

    def fewer(self, base: Function) -> Counter[str]:
        """API -> how many reads fewer this version makes than its base; and each family."""
        apis: Counter[str] = Counter()
        for family, api, _, _ in base.reads:
            apis.update([api, family])
        for family, api, _, _ in self.reads:
            apis.subtract([api, family])
        return +apis


@dataclass
class Module:
    functions: dict[str, Function]
    reads: Counter[Family]  # live reads in the whole module, per family
    pins: dict[str, int]  # gate variable -> times named
    pin_lines: dict[str, int]  # gate variable -> first line
    strings: frozenset[str] = frozenset()  # its messages (`MESSAGE_CHARS`+, not docstrings)


def check(pins: PinCheck) -> Production:
    """The rules over the production files the patch changed under the manifest's folder
    (the whole repository for a manifest at its root; a repository keeping one manifest per
    project gates each project's own code), none without a base."""
    if pins.base is None or pins.base_commit is None or pins.head is None:
        return Production()
    changed, notes = changed_production(pins, pins.base_commit)
    base_tree = CommitTree(pins.root, pins.base_commit)
    head = head_tree(pins.root, staged=pins.staged)
    before = {p: m for p in changed if (m := read(base_tree, p)) is not None}
    after = {p: m for p in changed if (m := read(head, p)) is not None}
    found = compare(before, after)
    kept = frozenset().union(*(m.strings for m in after.values()))
    retired = frozenset().union(*(m.strings for m in before.values())) - kept
    return Production(found.findings, found.seams, notes, retired)


def changed_production(pins: PinCheck, base_commit: str) -> tuple[list[str], tuple[str, ...]]:
    """The production `.py` files the patch changed under the manifest's folder (at most
    MAX_FILES), and a note when there were more."""
    prop = pins.head.manifest.module if pins.head is not None else ""
    folder = PurePosixPath(pins.relative).parent
    changed = [
        p
        for p in git.changed_files(pins.root, base_commit, staged=pins.staged)
        if _production(p, prop)
        and (folder == PurePosixPath(".") or folder in PurePosixPath(p).parents)
    ]
    if len(changed) <= MAX_FILES:
        return changed, ()
    note = f"production scan read {MAX_FILES} of {len(changed)} changed production files"
    return changed[:MAX_FILES], (note,)


def _production(path: str, property_module: str) -> bool:
    pure = PurePosixPath(path)
    return (
        pure.suffix == ".py"
        and not LIB_DIRS.intersection(pure.parts)
        and not is_support(path, property_module)
    )


def compare(base: dict[str, Module], head: dict[str, Module]) -> Production:
    """The findings and seams of the changed production modules, base against head."""
    findings: list[Finding] = []
    seams: list[Seam] = []
    before_all = sum((m.reads for m in base.values()), Counter[Family]())
    after_all = sum((m.reads for m in head.values()), Counter[Family]())
    lost = {family for family in before_all if after_all[family] < before_all[family]}
    for path, now in sorted(head.items()):
        before = base.get(path)
        findings += _pin_reads(path, now, before)
        if before is None:
            continue
        for name, old in before.functions.items():
            new = now.functions.get(name)
            if new is None:
                continue
            seam = new.injects(old)
            if seam:
                seams.append(Seam(path, old.first, old.last))
            findings += _constant(path, old, new, lost)
    return Production(tuple(findings), tuple(seams))


_SAID = {
    "clock": (
        "the live clock",
        "the time-dependent path is fixed at one instant, in production too (take a Clock or "
        "the value as a parameter, without a constant default)",
    ),
    "rng": (
        "the global RNG",
        "the random path is fixed to one value, in production too (take a random.Random or "
        "the value as a parameter, without a constant default)",
    ),
}


def _constant(path: str, old: Function, new: Function, lost: set[Family]) -> list[Finding]:
    """Per family the changed files read less (`lost`): the function reads it less and names
    a constant it did not — one finding. Where it takes a new parameter, only a constant that
    is a parameter's default counts (an `EPOCH` beside an injected Clock is arithmetic,
    `today=date(2024, 1, 1)` is the exit)."""
    found = []
    fewer, added = new.fewer(old), new.added(old)
    for family in sorted(lost):
        fresh = [
            (line, text)
            for line, (kind, text) in new.fresh(old)
            if kind == family and (not added or (kind, text) in new.defaults)
        ]
        if not fewer[family] or not fresh:
            continue
        call, where = next((r[2], r[3]) for r in old.reads if r[0] == family and fewer[r[1]])
        line, text = fresh[0]
        source, why = _SAID[family]
        found.append(
            Finding(
                kind="live_read_constant",
                path=path,
                line=line,
                message=(
                    f"replaces {source} `{call}()` (base {path}:{where}) with the constant "
                    f"`{text}`: {why}"
                ),
            )
        )
    return found


def _pin_reads(path: str, now: Module, before: Module | None) -> list[Finding]:
    return [
        Finding(
            kind="gate_pin_read", path=path, line=now.pin_lines[name], message=pin_message(name)
        )
        for name, count in sorted(now.pins.items())
        if count > (before.pins.get(name, 0) if before is not None else 0)
    ]


# --- reading one module --------------------------------------------------------------------


def read(tree: Tree, path: str) -> Module | None:
    """The module's functions, live reads and gate variables; None when absent or broken."""
    parsed = parse(tree, path)
    if parsed is None or parsed.tree is None:
        return None
    return build(parsed.tree)


@dataclass(frozen=True)
class _Names:
    """What a module's names stand for: imports, module-level names, constants among them."""

    aliases: dict[str, str]
    names: set[str]
    clock: set[str]  # bound to a clock constant (`REFERENCE_DATE = date(2024, 1, 1)`)
    rng: set[str]  # bound to a number (`FIXED_JITTER = 0.5`)


def build(module: ast.Module) -> Module:
    every = tuple(ast.walk(module))  # one walk for the imports, the reads and the strings
    aliases = import_aliases(every)
    names = set(aliases) | _assigned(module)
    values = list(_module_values(module))
    known = _Names(
        aliases,
        names,
        {n for n, v in values if _clock_constant(v, aliases, names, set()) is not None},
        {n for n, v in values if _number(v) is not None},
    )
    functions = {qualname: _function(node, known) for qualname, node in _functions(module.body, "")}
    reads: Counter[Family] = Counter(
        family
        for n in every
        if isinstance(n, ast.Call) and (family := _family(dotted(n.func, aliases))) is not None
    )
    pins: Counter[str] = Counter()
    lines: dict[str, int] = {}
    for constant in every:
        value = constant.value if isinstance(constant, ast.Constant) else None
        if isinstance(value, str) and (_PIN_NAME.fullmatch(value) or _MANIFEST.search(value)):
            pins[value] += 1
            lines.setdefault(value, getattr(constant, "lineno", 1))
    docs = {
        id(body[0].value)
        for n in every
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and (body := n.body)
        and isinstance(body[0], ast.Expr)
    }
    strings = frozenset(
        n.value
        for n in every
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and len(n.value) >= MESSAGE_CHARS
        and id(n) not in docs
    )
    return Module(functions, reads, dict(pins), lines, strings)


def _family(api: str | None) -> Family | None:
    if api in CLOCK_READS:
        return "clock"
    return "rng" if api in RNG_READS else None


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef, known: _Names) -> Function:
    function = Function(
        node.lineno, node.end_lineno or node.lineno, _params(node), optional=_optional(node)
    )
    for default in (*node.args.defaults, *node.args.kw_defaults):
        for child in ast.walk(default) if default is not None else ():
            function.defaults.update(_constants(child, known))
    for child in _inside(node):
        if isinstance(child, ast.Name) and child.id in function.params:
            function.uses[child.id] += isinstance(child.ctx, ast.Load)
        if isinstance(child, ast.Call):
            api = dotted(child.func, known.aliases)
            family = _family(api)
            if family is not None and api is not None:
                function.reads.append((family, api, ast.unparse(child.func), child.lineno))
        for constant in _constants(child, known):
            function.constants.setdefault(constant, getattr(child, "lineno", 1))
    return function


def _constants(node: ast.AST, known: _Names) -> list[Constant]:
    """The constants `node` is, per family it could stand in for."""
    found: list[Constant] = []
    clock = _clock_constant(node, known.aliases, known.names, known.clock)
    if clock is not None:
        found.append(("clock", clock))
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in known.rng:
        found.append(("rng", node.id))
    elif isinstance(node, ast.Constant) and _number(node) is not None:
        found.append(("rng", ast.unparse(node)))
    return found


def _number(node: ast.expr) -> str | None:
    """A number literal (a sign allowed) as written; None for anything else, bools too."""
    inner = node.operand if isinstance(node, ast.UnaryOp) else node
    value = inner.value if isinstance(inner, ast.Constant) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return ast.unparse(node)


def _functions(
    body: list[ast.stmt], prefix: str
) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + stmt.name, stmt
            yield from _functions(stmt.body, f"{prefix}{stmt.name}.")
        elif isinstance(stmt, ast.ClassDef):
            yield from _functions(stmt.body, f"{prefix}{stmt.name}.")


def _inside(node: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """The function's defaults and body (not its decorators), nested defs included."""
    for default in (*node.args.defaults, *node.args.kw_defaults):
        if default is not None:
            yield from ast.walk(default)
    for stmt in node.body:
        yield from ast.walk(stmt)


def _params(node: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    args = node.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return frozenset(a.arg for a in every if a is not None)


def _optional(node: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The parameters that have a default (the last `len(defaults)` positional ones, and the
    keyword-only ones whose default is not None in `kw_defaults`)."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    named = positional[len(positional) - len(args.defaults) :] if args.defaults else []
    keywords = [a for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
    return frozenset(a.arg for a in (*named, *keywords))


def import_aliases(nodes: Iterable[ast.AST]) -> dict[str, str]:
    """Local name -> the dotted name it imports (`dt` -> `datetime`, `now` -> `time.time`)."""
    out: dict[str, str] = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                out[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                out[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return out


def _assigned(module: ast.Module) -> set[str]:
    return {name for name, _ in _module_values(module)}


def _module_values(module: ast.Module) -> Iterator[tuple[str, ast.expr]]:
    return bindings(module.body)


def bindings(nodes: Iterable[ast.AST]) -> Iterator[tuple[str, ast.expr]]:
    """(name, value) of each `name = value` and `name: T = value` among `nodes`."""
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name):
            yield target.id, value


def _clock_constant(
    node: ast.AST, aliases: dict[str, str], names: set[str], clock_names: set[str]
) -> str | None:
    """The source text of a clock constant, or None."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in clock_names:
        return node.id
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        big = not isinstance(node.value, bool) and abs(node.value) >= _UNIX_TIME
        return ast.unparse(node) if big else None
    if not isinstance(node, ast.Call) or not node.args:
        return None
    callee = dotted(node.func, aliases) or ""
    owner, _, last = callee.rpartition(".")
    if callee not in _CONSTRUCTORS and not (owner in _CONSTRUCTORS and last in _FROM):
        return None
    values = [*node.args, *(k.value for k in node.keywords)]
    return ast.unparse(node) if all(_static(v, aliases, names) for v in values) else None


def _static(node: ast.expr, aliases: dict[str, str], names: set[str]) -> bool:
    """A value fixed when the module is written: literals, module names, calls of them."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp):
        return _static(node.operand, aliases, names)
    if isinstance(node, ast.BinOp):
        return _static(node.left, aliases, names) and _static(node.right, aliases, names)
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_static(e, aliases, names) for e in node.elts)
    if isinstance(node, ast.Name):
        return node.id in names
    if isinstance(node, ast.Attribute):
        return dotted(node, aliases) is not None and _root(node) in names
    if isinstance(node, ast.Call):
        values = [*node.args, *(k.value for k in node.keywords)]
        return _static(node.func, aliases, names) and all(
            _static(v, aliases, names) for v in values
        )
    return False


def _root(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def dotted(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """`dt.datetime.now` as `datetime.datetime.now`, through the module's imports."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(aliases.get(node.id, node.id))
    return ".".join(reversed(parts))
