"""The run-time hook inventory (`hooks` in host.json) as findings: hooks and replaced pytest
internals the head's run had and the base's did not.

A hook counts when a repository file implements it by spec name (so `hookimpl(specname=...)`
under any function name counts) and the spec can change which tests run or what their outcome
says: a runtest hook (`pytest_runtest_*`, `pytest_pyfunc_call`), a report hook, a collection
hook or a session-finish hook. It is new at the head when the base's run, on either host,
listed no implementation of that spec in that file. Without a base run's inventory the base
tree decides statically: a hook in a file the patch did not change, or one the scan found
unchanged at the base, stood there already. Plugins of installed distributions (site-packages)
and pytest's own are the environment's, never the patch's; a plugin outside both and outside
the repository counts only against a base run that lacked it.

A hook the static scan already reported at the same place is not reported twice.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from entropy_action.core.findings import Finding, FindingKind
from entropy_action.core.hostinfo import HookEntry, HookInventory, ReplacedInternal

RUNTEST_PREFIX = "pytest_runtest"  # pytest_runtest_call, _makereport, _protocol, loop, ...
RUNTEST = frozenset({"pytest_pyfunc_call"})
REPORT = frozenset(
    {
        "pytest_report_teststatus",
        "pytest_report_to_serializable",
        "pytest_report_from_serializable",
        "pytest_terminal_summary",
    }
)
COLLECTION = frozenset(
    {
        "pytest_collection",
        "pytest_collection_modifyitems",
        "pytest_collection_finish",
        "pytest_collect_file",
        "pytest_collect_directory",
        "pytest_ignore_collect",
        "pytest_itemcollected",
        "pytest_deselected",
        "pytest_pycollect_makeitem",
        "pytest_pycollect_makemodule",
        "pytest_generate_tests",
        "pytest_make_collect_report",
        "pytest_collectreport",
        "pytest_collectstart",
        "pytest_make_parametrize_id",
    }
)
SESSION_FINISH = frozenset({"pytest_sessionfinish", "pytest_unconfigure"})
# Hooks that run before collection and can change what runs: options (-k, -m, --deselect),
# ini values, plugins (pytest's hook reference: bootstrapping and initialization hooks).
CONFIGURE = frozenset(
    {
        "pytest_configure",
        "pytest_sessionstart",
        "pytest_load_initial_conftests",
        "pytest_cmdline_main",
        "pytest_cmdline_parse",
        "pytest_cmdline_preparse",
        "pytest_plugin_registered",
    }
)
MARKEVAL = frozenset({"pytest_markeval_namespace"})  # the names skipif/xfail strings see
STATIC_KINDS = frozenset({"report_tampering", "collection_tampering", "hook_added"})
DECORATOR_SPAN = 30  # lines a static finding's `def` may sit below the function's first line


def category(spec: str) -> tuple[FindingKind, str] | None:
    """The finding kind of a hook on `spec` and what such a hook can do, or None (harmless)."""
    if spec.startswith(RUNTEST_PREFIX) or spec in RUNTEST:
        return "report_tampering", (
            "a runtest hook: it can run a test differently or swallow its failure"
        )
    if spec in REPORT:
        return "report_tampering", "a report hook: it can rewrite what an outcome says"
    if spec in COLLECTION:
        return "collection_tampering", (
            "a collection hook: it can drop, deselect or re-mark property tests"
        )
    if spec in CONFIGURE:
        return "collection_tampering", (
            "a configuration hook: it runs before collection and can change which tests run "
            "(options such as -k, -m or --deselect, ini values, plugins)"
        )
    if spec in MARKEVAL:
        return "collection_tampering", (
            "a marker-evaluation hook: its names decide skipif and xfail string conditions"
        )
    if spec in SESSION_FINISH:
        return "report_tampering", (
            "a session-finish hook: it runs after the tests and can rewrite their reports or "
            "the exit status"
        )
    return None


def findings(
    head: Iterable[HookInventory | None],
    base: Iterable[HookInventory | None],
    *,
    changed: Collection[str] | None,
    static: Sequence[Finding] = (),
    quiet: Collection[tuple[str, int]] = (),
) -> list[Finding]:
    """The head's new hooks and replaced internals (see the module's docstring).

    `changed`: the files the patch changed (None: not known, so every repository hook counts
    as new when no base inventory exists); `static`: the scan's findings; `quiet`: the
    (path, line) of hooks the scan read and found doing nothing that changes a run (a
    `pytest_configure` that only registers markers).
    """
    heads = [inventory for inventory in head if inventory is not None]
    bases = [inventory for inventory in base if inventory is not None]
    old_hooks: set[tuple[str, str, str]] | None = None
    if bases:
        old_hooks = {(h.place, h.path, h.spec) for b in bases for h in b.hooks}
    old_targets = {r.target for b in bases for r in b.replaced} if bases else None
    standing = {(f.path, f.line) for f in static if not f.introduced}
    out: dict[tuple[str, str, int], Finding] = {}
    for entry in (h for inventory in heads for h in inventory.hooks):
        found = category(entry.spec)
        if found is None or not _counts(entry, old_hooks, changed, standing):
            continue
        if any(_covers(f, entry.path, entry.line) for f in static):
            continue
        if any(_near(path, line, entry.path, entry.line) for path, line in quiet):
            continue
        out.setdefault((entry.path, entry.spec, entry.line), _hook_finding(entry, *found))
    for item in (r for inventory in heads for r in inventory.replaced):
        new = item.target not in old_targets if old_targets is not None else None
        if new is False or (new is None and not _repository_new(item, changed, standing)):
            continue
        out.setdefault((item.path, item.target, item.line), _replaced_finding(item))
    return sorted(out.values(), key=lambda f: (f.path, f.line, f.message))


def _counts(
    entry: HookEntry,
    old: set[tuple[str, str, str]] | None,
    changed: Collection[str] | None,
    standing: set[tuple[str, int]],
) -> bool:
    if entry.place not in ("repository", "other"):
        return False  # an installed distribution's plugin, pytest's or the gate's own
    if old is not None:
        return (entry.place, entry.path, entry.spec) not in old
    return _repository_new(entry, changed, standing)


def _repository_new(
    entry: HookEntry | ReplacedInternal,
    changed: Collection[str] | None,
    standing: set[tuple[str, int]],
) -> bool:
    """Without a base run: a repository file the patch changed, at no line the scan found
    unchanged at the base."""
    if entry.place != "repository":
        return False
    if any(
        path == entry.path and 0 <= line - entry.line <= DECORATOR_SPAN for path, line in standing
    ):
        return False
    return changed is None or entry.path in changed


def _covers(finding: Finding, path: str, line: int) -> bool:
    return finding.kind in STATIC_KINDS and _near(finding.path, finding.line, path, line)


def _near(path: str, line: int, entry_path: str, entry_line: int) -> bool:
    """A scan's place (a `def` line) within the function the inventory names (its first
    line, decorators included)."""
    return path == entry_path and 0 <= line - entry_line <= DECORATOR_SPAN


def _hook_finding(entry: HookEntry, kind: FindingKind, what: str) -> Finding:
    wraps = " (a wrapper around the other hooks)" if entry.wrapper or entry.hookwrapper else ""
    named = "" if entry.function == entry.spec else f" as {entry.function}"
    return Finding(
        kind=kind,
        path=entry.path,
        line=entry.line,
        message=(
            f"{entry.path} implements {entry.spec}{named}{wraps}, a hook the base's run did "
            f"not have (run-time inventory): {what}"
        ),
    )


def _replaced_finding(item: ReplacedInternal) -> Finding:
    return Finding(
        kind="report_tampering",
        path=item.path,
        line=item.line,
        message=(
            f"pytest's {item.target} was replaced at run time by code in {item.path} "
            "(run-time inventory): it runs or reports every test, and a replacement can "
            "swallow a failure"
        ),
    )
