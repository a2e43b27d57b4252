"""Rule 4: entropy patched inside the test process, the RNG reseeded, pinned variables written.

Read in the property module, its conftests (import-time code, hooks) and the helpers and
fixtures the properties reach in test code — never in production modules: a library that
seeds its own RNG is not silencing a test.
"""

from __future__ import annotations

import ast

from entropy_action.scan import environment
from entropy_action.scan.model import Context, Hit, Unit, units
from entropy_action.scan.names import FunctionNode, const_str, function_params, keyword, short
from entropy_action.testproc import protocol

# Dotted prefixes of entropy sources, longest first where they overlap.
SOURCES = (
    ("socket.gethostname", "the hostname"),
    ("socket.getfqdn", "the hostname"),
    ("platform.node", "the hostname"),
    ("platform.uname", "the hostname"),
    ("os.uname", "the hostname"),
    ("os.urandom", "the RNG"),
    ("os.environ", "the environment"),
    ("os.getenv", "the environment"),
    ("time", "the clock"),
    ("datetime", "the clock"),
    ("random", "the RNG"),
    ("numpy.random", "the RNG"),
    ("secrets", "the RNG"),
    ("uuid.uuid1", "the RNG"),
    ("uuid.uuid4", "the RNG"),
    ("socket", "the resolver and network"),
    ("dns", "the resolver"),
    ("tempfile", "the temp directory"),
    ("locale", "the locale"),
)
# Attribute names that stand for an entropy source on any object (a production module's
# `datetime`, `random`, ...). "time" and "date" only count on modules: too common otherwise.
ATTRIBUTES = {
    "datetime": "the clock",
    "now": "the clock",
    "utcnow": "the clock",
    "today": "the clock",
    "time_ns": "the clock",
    "random": "the RNG",
    "urandom": "the RNG",
    "uuid4": "the RNG",
    "environ": "the environment",
    "gethostname": "the hostname",
    "getaddrinfo": "the resolver",
    "gettempdir": "the temp directory",
}
MODULE_ATTRIBUTES = {
    **ATTRIBUTES,
    "time": "the clock",
    "date": "the clock",
    "uuid": "the RNG",
    "secrets": "the RNG",
    "socket": "the resolver and network",
    "tempfile": "the temp directory",
    "locale": "the locale",
}
# A wait, not a read: a test that makes `time.sleep` return at once leaves every clock the
# code reads live (pinned on host A, shifted on host B); backoff's suite does it in 20 tests.
DELAYS = frozenset({"time.sleep"})
PATCHERS = frozenset({"unittest.mock.patch", "mock.patch"})
CLOCK_FREEZERS = frozenset(
    {"freezegun.freeze_time", "freezegun.api.freeze_time", "time_machine.travel"}
)
CLOCK_FIXTURES = frozenset({"freezer", "time_machine"})
RESEEDERS = frozenset(
    {
        "random.seed",
        "random.Random",
        "numpy.random.seed",
        "numpy.random.default_rng",
        "numpy.random.RandomState",
        "torch.manual_seed",
        "tensorflow.random.set_seed",
        "hypothesis.seed",
    }
)
SEED_VARIABLE = protocol.RNG_SEED_ENV


def source_of(dotted: str) -> str | None:
    if dotted in DELAYS:
        return None
    for prefix, what in SOURCES:
        if dotted == prefix or dotted.startswith(prefix + "."):
            return what
    return None


def find(ctx: Context) -> list[Hit]:
    hits: list[Hit] = []
    profiles = derandomized_profiles(ctx)
    for unit in units(ctx, production=False, whole_module=True):
        for node in unit.nodes:
            if isinstance(node, ast.Call):
                hits += _patch(ctx, unit, node) + _reseed(ctx, unit, node)
                hits += _derandomized(ctx, unit, node, profiles)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                hits += _clock_fixtures(unit, node)
            elif isinstance(node, ast.Assign):
                hits += _assignment(ctx, unit, node)
        hits += environment.find(ctx, unit)
    return hits


def _patched(unit: Unit, node: ast.AST, target: str, what: str, api: str) -> Hit:
    message = (
        f"{target} patched with {api} in {unit.where()}: {short(node)} — {what} is faked "
        "inside the test process, so code that reads the live one goes unchecked"
    )
    return unit.hit("entropy_patched", node, message)


def _patch(ctx: Context, unit: Unit, call: ast.Call) -> list[Hit]:
    found = _target(ctx, unit, call)
    if found is None:
        return []
    target, what, api = found
    return [_patched(unit, call, target, what, api)]


def _target(ctx: Context, unit: Unit, call: ast.Call) -> tuple[str, str, str] | None:
    """(target, source, api) when `call` replaces an entropy source."""
    func = call.func
    dotted = ctx.dotted(func, unit.module) or ""
    if dotted in CLOCK_FREEZERS:
        return (short(call, 60), "the clock", dotted.split(".")[0])
    args = call.args
    if isinstance(func, ast.Attribute) and func.attr == "setattr" and args:
        if const_str(args[0]) is not None:
            return _string_target(const_str(args[0]) or "", "monkeypatch.setattr")
        return _object_target(ctx, unit, args, "monkeypatch.setattr")
    if isinstance(func, ast.Name) and func.id == "setattr" and dotted in ("", "setattr"):
        if args and not (isinstance(args[0], ast.Name) and args[0].id in ("self", "cls")):
            return _object_target(ctx, unit, args, "setattr")
        return None
    api = _mock_api(dotted, func)
    if api == "patch" and args and const_str(args[0]) is not None:
        return _string_target(const_str(args[0]) or "", "mock.patch")
    if api == "patch.object":
        return _object_target(ctx, unit, args, "mock.patch.object")
    if api == "patch.multiple" and args:
        for kw in call.keywords:
            found = _object_target(
                ctx, unit, [args[0], ast.Constant(kw.arg)], "mock.patch.multiple"
            )
            if kw.arg and found:
                return found
    return None


def _assignment(ctx: Context, unit: Unit, node: ast.Assign) -> list[Hit]:
    """A module's entropy source replaced by plain assignment — `invoice_lib.datetime =
    Fake`, `vars(invoice_lib)["datetime"] = Fake`, `sys.modules["datetime"] = fake` — as
    monkeypatch.setattr does it (the red team's I2, I4 and M, 2026-12-06). Only on a module
    (a test's own fake clock object takes any attribute), and not the line that puts back
    what a name saved from the same place (`invoice_lib.datetime = saved`)."""
    hits = []
    for target in node.targets:
        found = None
        if isinstance(target, ast.Attribute):
            found = _module_target(ctx, unit, target.value, target.attr, "an assignment")
        elif isinstance(target, ast.Subscript) and (key := const_str(target.slice)):
            owner = target.value
            if ctx.dotted(owner, unit.module) == "sys.modules":
                what = source_of(key)
                found = (f"sys.modules[{key!r}]", what, "sys.modules") if what else None
            elif isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.args:
                if owner.func.id == "vars":
                    found = _module_target(ctx, unit, owner.args[0], key, "vars()")
            elif isinstance(owner, ast.Attribute) and owner.attr == "__dict__":
                found = _module_target(ctx, unit, owner.value, key, "__dict__")
        if found is not None and not _restores(unit, target, node.value):
            hits.append(_patched(unit, node, *found))
    return hits


def _module_target(
    ctx: Context, unit: Unit, owner: ast.expr, attr: str, api: str
) -> tuple[str, str, str] | None:
    ref = ctx.scope.resolve(owner, unit.module)
    if ref is None or not (ref.path is None or ref.name == ""):
        return None  # not a module: a test's own object
    return _object_target(ctx, unit, [owner, ast.Constant(attr)], api)


def _restores(unit: Unit, target: ast.expr, value: ast.expr) -> bool:
    """`target = saved` where the unit bound `saved = <target>` before: putting it back."""
    if not isinstance(value, ast.Name):
        return False
    place = ast.dump(target, annotate_fields=False).replace("Store()", "Load()")
    return any(
        isinstance(n, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == value.id for t in n.targets)
        and ast.dump(n.value, annotate_fields=False) == place
        for n in unit.nodes
    )


def _mock_api(dotted: str, func: ast.expr) -> str | None:
    """ "patch", "patch.object", ... for unittest.mock's and pytest-mock's patchers."""
    for patcher in PATCHERS:
        if dotted == patcher or dotted.startswith(patcher + "."):
            return "patch" + dotted.removeprefix(patcher)
    chain: list[str] = []
    while isinstance(func, ast.Attribute):
        chain.insert(0, func.attr)
        func = func.value
    if isinstance(func, ast.Name) and func.id.endswith("mocker") and chain[:1] == ["patch"]:
        return ".".join(chain)
    return None


def _string_target(target: str, api: str) -> tuple[str, str, str] | None:
    what = source_of(target)
    if what is None:
        what = MODULE_ATTRIBUTES.get(target.rsplit(".", 1)[-1]) if "." in target else None
    return (target, what, api) if what else None


def _object_target(
    ctx: Context, unit: Unit, args: list[ast.expr], api: str
) -> tuple[str, str, str] | None:
    if len(args) < 2 or const_str(args[1]) is None:
        return None
    attr = const_str(args[1]) or ""
    ref = ctx.scope.resolve(args[0], unit.module)
    if ref is None:  # a local object: only unmistakable names
        what = ATTRIBUTES.get(attr)
        return (f"{short(args[0], 40)}.{attr}", what, api) if what else None
    dotted = f"{ctx.scope.ref_name(ref)}.{attr}"
    what = source_of(dotted) if ref.path is None else None
    if what is None:  # a module's `datetime`; any object's `now`
        module = ref.path is None or ref.name == ""
        what = (MODULE_ATTRIBUTES if module else ATTRIBUTES).get(attr)
    return (dotted, what, api) if what else None


def _clock_fixtures(unit: Unit, node: FunctionNode) -> list[Hit]:
    """Tests and fixtures that request pytest-freezer's `freezer` or time-machine's fixture."""
    used = [p for p in function_params(node) if p in CLOCK_FIXTURES]
    if not used or not (node.name.startswith("test") or node.decorator_list):
        return []
    message = (
        f"clock fixture '{used[0]}' requested by {node.name} in {unit.where()} — the clock is "
        "frozen inside the test process, so code that reads the live clock goes unchecked"
    )
    found = unit.hit("entropy_patched", node, message)
    return [Hit(found.finding, found.subject, f"clock fixture {used[0]} of {node.name}")]


def _reseed(ctx: Context, unit: Unit, call: ast.Call) -> list[Hit]:
    dotted = ctx.dotted(call.func, unit.module) or ""
    if dotted not in RESEEDERS:
        return []
    seed = call.args[0] if call.args else keyword(call, "seed") or keyword(call, "a")
    if seed is None or _pinned(ctx, unit, seed, 0):
        return []
    pinned = (
        f"{SEED_VARIABLE}={ctx.rules.rng_seed}" if ctx.rules.rng_seed is not None else SEED_VARIABLE
    )
    message = (
        f"{dotted}({short(seed, 50)}) in {unit.where()} seeds the RNG with something other "
        f"than the pinned seed ({pinned}) — reseeding until green hides the property's "
        "dependence on randomness"
    )
    return [unit.hit("reseeded", call, message)]


def derandomized_profiles(ctx: Context) -> frozenset[str]:
    """Names of hypothesis profiles registered with `derandomize` in the code the scan reads."""
    found: set[str] = set()
    for unit in units(ctx, production=False, whole_module=True):
        for node in unit.nodes:
            if isinstance(node, ast.Call) and _hypothesis(ctx, unit, node) == "register_profile":
                name = const_str(node.args[0]) if node.args else const_str(keyword(node, "name"))
                if name is not None and _profile_derandomizes(ctx, unit, node):
                    found.add(name)
    return frozenset(found)


def _hypothesis(ctx: Context, unit: Unit, call: ast.Call) -> str | None:
    """ "settings", "register_profile" or "load_profile" for hypothesis's settings API."""
    dotted = ctx.dotted(call.func, unit.module) or ""
    for prefix in ("hypothesis.settings", "hypothesis._settings.settings"):
        if dotted == prefix:
            return "settings"
        rest = dotted.removeprefix(prefix + ".")
        if rest != dotted and rest in ("register_profile", "load_profile"):
            return rest
    return None


def _derandomizes(call: ast.Call) -> bool:
    """`derandomize=` with anything but a false literal: the condition counts, whatever it
    says under the pins."""
    value = keyword(call, "derandomize")
    return value is not None and not (isinstance(value, ast.Constant) and not value.value)


def _profile_derandomizes(ctx: Context, unit: Unit, call: ast.Call) -> bool:
    parent = call.args[1] if len(call.args) > 1 else keyword(call, "parent")
    if _derandomizes(call):
        return True
    return (
        isinstance(parent, ast.Call)
        and _hypothesis(ctx, unit, parent) == "settings"
        and _derandomizes(parent)
    )


def _derandomized(ctx: Context, unit: Unit, call: ast.Call, profiles: frozenset[str]) -> list[Hit]:
    """`settings(derandomize=True)` (a decorator or a profile's parent),
    `settings.register_profile(..., derandomize=True)`, and `settings.load_profile` of such
    a profile: hypothesis then replays fixed examples instead of exploring fresh ones."""
    api = _hypothesis(ctx, unit, call)
    name = const_str(call.args[0]) if call.args else None
    shown = short(call, 80)
    if api == "settings" and _derandomizes(call):
        what = "derandomizes hypothesis"
    elif api == "register_profile" and _derandomizes(call):
        shown = f"{short(call.func)}(…, derandomize={short(keyword(call, 'derandomize') or call)})"
        what = f"registers the derandomized hypothesis profile '{name or '?'}'"
    elif api == "load_profile" and name in profiles:
        what = f"loads the derandomized hypothesis profile '{name}'"
    else:
        return []
    message = (
        f"{shown} in {unit.where()} {what} — it explores a fixed set of examples "
        "derived from the test instead of fresh ones each run, so a property that fails only "
        "on some inputs stays green"
    )
    return [unit.hit("reseeded", call, message)]


def _pinned(ctx: Context, unit: Unit, expr: ast.expr, depth: int) -> bool:
    """Whether `expr` is the pinned seed: the literal, or ENTROPY_RNG_SEED read from the env."""
    if depth > 5:
        return False
    if isinstance(expr, ast.Constant):
        return ctx.rules.rng_seed is not None and str(expr.value) == str(ctx.rules.rng_seed)
    if (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id in ("int", "str")
    ):
        return bool(expr.args) and _pinned(ctx, unit, expr.args[0], depth + 1)
    if environment.reads_variable(ctx, unit.module, expr) == SEED_VARIABLE:
        return True
    if isinstance(expr, ast.Name):
        if _drawn_by_hypothesis(ctx, unit, expr.id):
            return True  # a seed hypothesis draws is explored, not fixed
        values = _assigned(unit, expr.id) or _module_value(unit, expr.id)
        values = values or _fixture_returns(ctx, expr.id)
        return bool(values) and all(_pinned(ctx, unit, v, depth + 1) for v in values)
    return False


def _drawn_by_hypothesis(ctx: Context, unit: Unit, name: str) -> bool:
    """`name` is a parameter of a function decorated with hypothesis's `@given`."""
    for node in unit.nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and name in function_params(
            node
        ):
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                if ctx.dotted(target, unit.module) == "hypothesis.given":
                    return True
    return False


def _assigned(unit: Unit, name: str) -> list[ast.expr]:
    return [
        node.value
        for node in unit.nodes
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
    ]


def _module_value(unit: Unit, name: str) -> list[ast.expr]:
    value = unit.module.assigns.get(name)
    return [value] if value is not None else []


def _fixture_returns(ctx: Context, name: str) -> list[ast.expr]:
    """What a fixture called `name` returns or yields (a seed fixture)."""
    fixture = ctx.reach.lookup(name, ()) if ctx.reach is not None else None
    if fixture is None:
        return []
    return [
        node.value
        for node in ast.walk(fixture.func.node)
        if isinstance(node, (ast.Return, ast.Yield)) and node.value is not None
    ]
