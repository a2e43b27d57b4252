"""Production that branches on the value a pin fixes: `scan.detection`'s `pinned` shape.

Under the gate a pinned source holds the value the manifest names, on both hosts. Production
that compares the source with exactly that value (`os.environ.get("TZ") == "UTC"` under
`tz: UTC`) takes one branch under the gate and another wherever the value differs, so the
property passes on a path production need not run anywhere else — the way past host B for a
patch that cannot otherwise tell the gate's run (docs/backtests.md, the red team's open
case). A comparison of a source with a pin's value, in a changed production file, counts as
one of detection's places: one the base did not have rejects, at its line.

The sources, and the literal that matches the pin:

- an environment variable a pin sets (TZ, LANG, LC_ALL, each of `pins.env`), read with
  `os.environ.get`, `os.getenv` or `os.environ[...]`: its pinned value;
- the time zone's names (`time.tzname`, `time.tzname[0]`): the pinned zone;
- the locale (`locale.getlocale()`, `getdefaultlocale()`, `setlocale(category)`): the pinned
  locale, or its language and territory (`en_US` of `en_US.UTF-8`);
- the temporary folder (`tempfile.gettempdir()`, `tempfile.tempdir`): the pinned root;
- the clock (`time.time()`, `datetime.now().timestamp()`, `int(time.time())`): a Unix time
  within a day of the pinned instant.

A name the function binds to one read and nothing else (`zone = os.getenv("TZ")`; never a
parameter) stands for the read, and so does `.strip()`, `.upper()` and the like of a read;
a module-level name bound to a literal (`DEFAULT_ZONE = "UTC"`) for the literal. Not a
place: a comparison with any other value (`== "C"` under `lang: C.UTF-8`), a pin's value used
as a default (`os.getenv("TZ", "UTC")`), a source the manifest leaves unpinned.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from entropy_action.manifest.pinfile import PinFields
from entropy_action.scan.production import CLOCK_READS, bindings, dotted

DAY = 86_400  # a Unix time this close to the pinned instant names it
_ENV_CALLS = frozenset({"os.environ.get", "os.getenv"})
_LOCALE_CALLS = frozenset({"locale.getlocale", "locale.getdefaultlocale", "locale.setlocale"})
_TEMP = frozenset({"tempfile.gettempdir", "tempfile.gettempdirb", "tempfile.tempdir"})
_SAME = frozenset({"lower", "upper", "casefold", "strip", "lstrip", "rstrip"})  # the same value
_OPS = (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)
_ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)  # the clock's: before or after the pinned instant
Literal = str | int | float


@dataclass(frozen=True)
class Pinned:
    """The values the property pins, by the source production would read them from."""

    env: tuple[tuple[str, str], ...] = ()  # (variable, value)
    tz: str | None = None
    locale: frozenset[str] = frozenset()
    temp_root: str | None = None
    clock: int | None = None

    @classmethod
    def of(cls, *pins: PinFields | None) -> Pinned:
        """What the manifests' pins fix (the base's and the head's: a branch on either)."""
        env: dict[str, set[str]] = {}
        zones, locales, roots, clocks = set(), set(), set(), set()
        for fields in filter(None, pins):
            for name, value in (fields.env or {}).items():
                env.setdefault(name, set()).add(value)
            if fields.tz:
                zones.add(fields.tz)
                env.setdefault("TZ", set()).add(fields.tz)
            if fields.lang:
                locales |= {fields.lang, fields.lang.split(".", 1)[0]}
                for name in ("LANG", "LC_ALL"):
                    env.setdefault(name, set()).add(fields.lang)
            roots |= {fields.temp_root.rstrip("/")} if fields.temp_root else set()
            clocks |= {fields.clock_unix} if fields.clock_unix is not None else set()
        return cls(
            tuple(sorted((name, value) for name, values in env.items() for value in values)),
            min(zones, default=None),
            frozenset(locales),
            min(roots, default=None),
            min(clocks, default=None),
        )

    def matches(self, source: str, literal: Literal) -> bool:
        if source == "clock":
            return (
                self.clock is not None
                and not isinstance(literal, str)
                and (abs(literal - self.clock) <= DAY)
            )
        if not isinstance(literal, str):
            return False
        if source.startswith("env:"):
            return (source[4:], literal) in self.env
        if source == "tz":
            return literal == self.tz
        if source == "locale":
            return literal in self.locale
        return source == "temp" and literal.rstrip("/") == self.temp_root


def places(
    scope: list[ast.AST], aliases: dict[str, str], pinned: Pinned, module: dict[str, Literal]
) -> Iterator[tuple[tuple[str, str], ast.AST]]:
    """(("pinned", what), the comparison) for each comparison, among one scope's nodes, of a
    pinned source with its pinned value; `module`: the module's names bound to a literal."""
    if pinned == Pinned():
        return
    bound = _bound(scope, aliases)
    constants = {**module, **_constants(scope)}
    for node in scope:
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        for op, left, right in zip(node.ops, sides, sides[1:], strict=False):
            for read, other in ((left, right), (right, left)):
                source = _source(read, aliases, bound)
                if source is None or not isinstance(
                    op, _OPS + (_ORDER if source == "clock" else ())
                ):
                    continue
                hit = next(
                    (v for v in _literals(other, constants) if pinned.matches(source, v)), None
                )
                if hit is not None:
                    yield ("pinned", f"{_said(source)} with {hit!r}"), node
                    break


def _said(source: str) -> str:
    if source.startswith("env:"):
        return f"`{source[4:]}`"
    return {"tz": "the time zone's name", "locale": "the locale", "temp": "the temporary folder",
            "clock": "the clock"}[source]  # fmt: skip


def _source(node: ast.AST, aliases: dict[str, str], bound: dict[str, str]) -> str | None:
    """Which pinned source `node` reads ("env:TZ", "tz", "locale", "temp", "clock")."""
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    if isinstance(node, ast.Subscript):  # os.environ["TZ"], time.tzname[0], getlocale()[0]
        if dotted(node.value, aliases) == "os.environ":
            name = _text(node.slice)
            return f"env:{name}" if name is not None else None
        return _source(node.value, aliases, bound)
    if isinstance(node, ast.Attribute):
        name = dotted(node, aliases)
        return "tz" if name == "time.tzname" else "temp" if name in _TEMP else None
    if not isinstance(node, ast.Call):
        return None
    name = dotted(node.func, aliases)
    if name in _ENV_CALLS and node.args:
        variable = _text(node.args[0])
        return f"env:{variable}" if variable is not None else None
    if name in _LOCALE_CALLS:
        return "locale" if name != "locale.setlocale" or len(node.args) < 2 else None
    if name in _TEMP:
        return "temp"
    if name in CLOCK_READS:
        return "clock"
    if name in ("int", "float", "round") and node.args:  # int(time.time())
        return "clock" if _source(node.args[0], aliases, bound) == "clock" else None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "timestamp":  # now().timestamp()
        return "clock" if _source(func.value, aliases, bound) == "clock" else None
    if isinstance(func, ast.Attribute) and func.attr in _SAME:  # os.getenv("TZ", "").upper()
        return _source(func.value, aliases, bound)
    return None


def _bound(scope: list[ast.AST], aliases: dict[str, str]) -> dict[str, str]:
    """Names the scope binds to one source's read and to nothing else (`zone =
    os.getenv("TZ")`); never a parameter (`name = name or os.environ["TZ"]`, dateutil's
    `gettz`, holds the caller's value as often)."""
    params = {n.arg for n in scope if isinstance(n, ast.arg)}
    stores = Counter(
        n.id for n in scope if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    )
    found: dict[str, list[str]] = {}
    for name, value in bindings(scope):
        if (source := _source(value, aliases, {})) is not None:
            found.setdefault(name, []).append(source)
    return {
        name: sources[0]
        for name, sources in found.items()
        if name not in params and len(set(sources)) == 1 and len(sources) == stores[name]
    }


def module_constants(module: ast.Module) -> dict[str, Literal]:
    """The module's top-level names bound to a literal (`DEFAULT_ZONE = "UTC"`)."""
    return _constants(module.body)


def _constants(scope: Iterable[ast.AST]) -> dict[str, Literal]:
    """Names bound to a literal among the scope's nodes."""
    return {name: v for name, value in bindings(scope) if (v := _literal(value)) is not None}


def _literals(node: ast.AST, constants: dict[str, Literal]) -> list[Literal]:
    """The literal values `node` stands for: itself, a name bound to one, each element of a
    tuple, list or set of them."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [v for element in node.elts for v in _literals(element, constants)]
    if isinstance(node, ast.Name) and node.id in constants:
        return [constants[node.id]]
    literal = _literal(node)
    return [] if literal is None else [literal]


def _literal(node: ast.AST) -> Literal | None:
    value = node.value if isinstance(node, ast.Constant) else None
    return value if isinstance(value, str | int | float) and not isinstance(value, bool) else None


def _text(node: ast.AST) -> str | None:
    value = node.value if isinstance(node, ast.Constant) else None
    return value if isinstance(value, str) else None
