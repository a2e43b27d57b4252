"""One revision analysed end to end, and the head's hits matched against the base's."""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass

from entropy_action.core.findings import Finding
from entropy_action.scan import (
    closure,
    config,
    hollow,
    hooks,
    installtime,
    markers,
    patching,
    provenance,
    skipcalls,
    tampering,
    weakening,
)
from entropy_action.scan import guards as skip_guards
from entropy_action.scan.collect import Collector, PropertyTest
from entropy_action.scan.model import Context, Guard, Hit, Rules, module_functions
from entropy_action.scan.names import ModuleIndex
from entropy_action.scan.reach import Reach
from entropy_action.scan.runtime import DefinedTest
from entropy_action.scan.scope import Scope
from entropy_action.scan.source import Tree


@dataclass(frozen=True)
class Analysis:
    """What one revision shows: its hits, its property tests, and what it could not read."""

    hits: tuple[Hit, ...]
    tests: tuple[DefinedTest, ...]
    counted: weakening.Counted
    module_found: bool
    module_parsed: bool
    errors: tuple[str, ...]  # the property module or a conftest cannot be parsed
    notes: tuple[str, ...]
    imports: tuple[provenance.Import, ...] = ()  # where the property module's imports lead
    bindings: tuple[provenance.Binding, ...] = ()  # ... and its names
    guards: tuple[Guard, ...] = ()  # skips only a missing dependency or feature reaches
    quiet_hooks: tuple[tuple[str, int], ...] = ()  # hooks the inventory need not report


def analyze(tree: Tree, module_path: str, rules: Rules) -> Analysis:
    run_path = closure.pythonpath(rules.run_args)
    scope = Scope(tree, module_path, config.locate(tree, module_path), run_path)
    module = scope.module(module_path)
    ctx = Context(scope=scope, rules=rules, module=module)
    ctx.conftests = [m for p in scope.conftests() if (m := scope.module(p)) is not None]
    conftest_paths = {m.path for m in ctx.conftests}
    ctx.plugins = [
        m for p in scope.plugins() if p not in conftest_paths and (m := scope.module(p)) is not None
    ]
    ctx.inits = [m for p in scope.package_inits() if (m := scope.module(p)) is not None]
    read = {module_path, *conftest_paths, *(m.path for m in (*ctx.plugins, *ctx.inits))}
    side = closure.side_of(tree, module_path, rules.run_args).python
    ctx.helpers = [m for p in side if p not in read and (m := scope.module(p)) is not None]
    known = conftest_paths | {m.path for m in ctx.plugins}
    ctx.plugins += [
        m for p in hooks.loaded(ctx) if p not in known and (m := scope.module(p)) is not None
    ]
    ctx.hooks = [
        f
        for index in (*ctx.conftests, *ctx.plugins)
        for f in module_functions(index)
        if f.node.name.startswith("pytest_")
    ]
    shadowed = _collect(ctx, module) if module is not None else []
    hits = [
        *markers.find(ctx),
        *skipcalls.find(ctx),
        *tampering.find(ctx),
        *hooks.find(ctx),
        *patching.find(ctx),
        *weakening.find(ctx, shadowed),
        *hollow.find(ctx),
        *provenance.find(ctx),
        *installtime.find(ctx),
    ]
    hits = tampering.explained(ctx, hits)
    tests = tuple(
        DefinedTest(t.name, module_path, t.func.node.lineno, _generated(ctx, t)) for t in ctx.tests
    )
    fatal = {module_path, *scope.conftests()}
    errors = tuple(e for p, e in scope.errors.items() if p in fatal)
    notes = (*scope.notes, *(e for p, e in scope.errors.items() if p not in fatal))
    found = module is not None or module_path in scope.errors
    counted = weakening.count(ctx)
    imports = provenance.imports(scope, module) if module is not None else ()
    names = provenance.bindings(scope, module) if module is not None else ()
    parsed = module is not None
    guards = (*skip_guards.import_guards(ctx), *skip_guards.feature_guards(ctx))
    return Analysis(
        tuple(hits),
        tests,
        counted,
        found,
        parsed,
        errors,
        notes,
        imports,
        names,
        guards,
        tuple(ctx.quiet_hooks),
    )


def _collect(ctx: Context, module: ModuleIndex) -> list[PropertyTest]:
    """Fill in the property tests and what each reaches; return the shadowed definitions."""
    collector = Collector(ctx.scope, module)
    everything = collector.tests()
    last = {t.name: t for t in everything}
    ctx.collector = collector
    ctx.tests = [t for t in everything if last[t.name] is t]
    nearest_first = list(reversed(ctx.conftests))
    ctx.reach = Reach.build(ctx.scope, collector, [module, *nearest_first, *ctx.plugins])
    ctx.reach.requesters = {t.func.key for t in ctx.tests}
    for test in ctx.tests:
        ctx.reached[test.name] = ctx.reach.from_roots(ctx.reach.roots(test))
    return [t for t in everything if last[t.name] is not t]


def match(
    head: tuple[Hit, ...],
    base: tuple[Hit, ...] | None,
    rename: dict[str, str],
    tests: dict[str, str] | None = None,
) -> list[Finding]:
    """The head's findings, `introduced=False` for each that stood the same at the base.

    Identity is (kind, path, subject, normalized source and its guarding conditions) —
    never the line or the message — and counted: a second identical skip where the base had
    one is introduced. `tests` maps a base property renamed word for word to its head name:
    a skip or a self comparison it carried at the base is not new under the new name.
    """
    standing = Counter(h.identity(rename, tests) for h in base or ())
    out: list[Finding] = []
    for item in sorted(head, key=lambda h: (h.finding.path, h.finding.line)):
        identity = item.identity({})
        if standing[identity] > 0:
            standing[identity] -= 1
            out.append(item.finding.model_copy(update={"introduced": False}))
        else:
            out.append(item.finding)
    return out


# Decorators that make a test's cases tests of other names at import time, by package: the
# names carry an index (`test_x_052_rest`, `Test_0_rest`), which inserting a case renumbers.
PARAMETERIZED = {"expand": "function", "parameterized_class": "class"}
GENERATORS = {
    "parameterized": PARAMETERIZED,
    "nose_parameterized": PARAMETERIZED,
    "ddt": {"data": "function", "idata": "function", "file_data": "function"},
}


def _generated(ctx: Context, test: PropertyTest) -> str:
    """`"function"` where a generator decorates the test (`parameterized.expand`, ddt's
    `@data`: its cases are tests named `test_x_0_...`), `"class"` where one decorates its class
    (`parameterized_class`), else `""`."""
    func = test.func
    owners = [(func.node.decorator_list, func.module, "function")]
    if func.classes:
        owners.append((func.classes[-1].decorator_list, func.class_module, "class"))
    for decorators, module, kind in owners:
        for decorator in decorators:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            parts = (ctx.dotted(target, module) or "").split(".")
            if GENERATORS.get(parts[0], {}).get(parts[-1]) == kind and len(parts) > 1:
                return kind
    return ""
