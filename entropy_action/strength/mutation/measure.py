"""Mutation strength, base vs head: mutants of the code the property exercises, run under the
base's and the head's module; what the base kills and the head lets survive.

Why a small operator set of our own and not mutmut or cosmic-ray: both mutate a whole
project and need their own configuration, state and runner (mutmut's trampolines rewrite
the sources it runs from, with a `mutants/` copy and a results database; cosmic-ray keeps a
session database and a distributor), while the gate needs mutants of a handful of functions
the property reached, drawn reproducibly from the pinned seed, and run under the pins by
its own runner against two modules at once. Their users' reports are mostly about time
("90 seconds * 522 is 13 hours"), tests selected from coverage missing a kill, and whole-suite
runs; the gate sidesteps those by budget (`max_mutants`, `time_budget_seconds`), by
mutating only what the property reached, and by counting only tests that pass unmutated.
Six classic operators on `ast` (operators.py) are small enough to test exhaustively.

The steps: one traced run on the unmutated head code (which production functions each test
calls, via the probe); the functions to mutate (`changed`: those the patch touched or its
changed tests reach; `all`: every one reached); the mutants, drawn with `rng_seed`; for
each, the tests that reach its function: one pytest session per core collects them once
and runs each mutant in a forked child (the probe), which a process of its own replaces
where the fork cannot apply the mutant (schedule.py); each mutant stopped at ten times its
tests' unmutated time, the whole step at `time_budget_seconds`, outcomes remembered per
(mutant, modules, tests) digest (cache.py).

`changed`, when only test functions differ between the modules (changes.py): a test the
patch left as it was kills a mutant in both modules or in neither, so it cannot make them
differ. The traced run then holds the changed tests of both modules only; each mutant runs
against the changed tests, base and head versions; and only where those disagree does a
traced run of the head's whole module find the unchanged tests that reach it, which then
run against it until the first kills it: one that kills it kills it in both modules, and
no finding is made.
The scores are then those of the changed tests (and of the unchanged ones where they ran).
`all`, or a patch that changed a helper, a fixture or an import of the module, runs every
test of both modules against every mutant.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from entropy_action.strength import evidence
from entropy_action.strength.mutation import changes, operators, schedule
from entropy_action.strength.mutation.harness import Imports, Outcome, Workspace
from entropy_action.strength.mutation.operators import Mutant, Target
from entropy_action.strength.mutation.schedule import Plan
from entropy_action.strength.unmeasured import Patched

SUPPORT_DIRS = frozenset({"test", "tests", "testing", "conftest"})
SKIP_DIRS = frozenset({".git", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".nox"})
MIN_MUTANT_SECONDS = 3.0
MUTANT_FACTOR = 10.0  # a mutant may take this many times its tests' unmutated time
# `changed` traces the head's whole module in the first run, and confirms in the same child,
# when it holds at most this many collected tests (a count, never a time): on a bigger one
# the trace would cost an honest patch more than the second pass costs a weakening
FOLD_MAX_TESTS = 30
REPEATS = 3  # a weakening counts when the base's kill and the head's survival repeat this often
MORE = 8  # where the base's kill repeats and the head's survival does not: the rates decide
SATURATED = ("*", 0)  # the probe stopped tracing this test: it may reach anything
UNNAMED = (
    "mutation: the changed tests' names select no test pytest collects (a decorator that "
    "makes them under other names, as parameterized.expand does): every test of both modules "
    "was measured"
)
NO_TEST_CHANGED = (
    "mutation: the patch changed no test function: both modules run the same tests and "
    "detect the same mutants"
)


@dataclass(frozen=True)
class Budget:
    mode: str  # "off" | "changed" | "all"
    max_mutants: int
    seconds: float


@dataclass(frozen=True)
class Inputs:
    """Everything the measurement reads, gathered by the caller."""

    root: Path
    base_module: bytes
    head_module: bytes
    touched: frozenset[tuple[str, str]]  # (path, qualified name) of functions the patch changed
    seed: int
    budget: Budget
    cache: Path | None = None
    # what the patch changed in production and in the module's calls (strength.unmeasured):
    # which base tests failing on the head's code count as killers (strength.evidence)
    patched: Patched = field(default_factory=Patched)
    # the patch changed the test side beyond the module (scan.closure; its digest): every test
    # of both modules may differ, each module runs under its own side (paired.py)
    side: str = ""
    # the base's tests every case of which passed on the head's code in the base-on-head run
    # (strength.base_on_head: the base's module under its own file name, a session of its
    # own), asked only when one fails here unmutated; None: that run was not made
    passed_alone: Callable[[], frozenset[str]] | None = None


@dataclass(frozen=True)
class Result:
    """One mutant under both modules."""

    mutant: Mutant
    base_killers: tuple[str, ...]  # base tests (names) that failed on it
    head_killers: tuple[str, ...]
    timed_out: bool = False
    # the base's kill or the head's survival did not repeat (`_repeat`): luck, not a score
    unsteady: bool = False

    @property
    def counted(self) -> bool:
        return not (self.timed_out or self.unsteady)

    @property
    def weakened(self) -> bool:
        """The base's module kills it and the head's lets it survive."""
        return self.counted and bool(self.base_killers) and not self.head_killers


@dataclass(frozen=True)
class Measured:
    results: tuple[Result, ...] = ()
    notes: tuple[str, ...] = ()
    skipped: int = 0  # mutants left out by the time budget
    seconds: float = 0.0
    extra: dict[str, int] = field(default_factory=dict)
    unmeasured: tuple[str, ...] = ()  # why there is no score, where that is not clean


Passing = dict[str, list[str]]  # "head", "base": node ids that passed unmutated
APART = "<apart>"  # the cache's side where the modules ran apart (`_crowded`)


def measure(
    inputs: Inputs,
    make_workspace: Callable[[Path], Workspace],
    progress: Callable[[str], None] = lambda line: None,
    apart: Callable[[Path], Workspace] | None = None,
) -> Measured:
    """Run the mutation step; `make_workspace(scratch)` copies the tree for one worker;
    `apart(scratch)` a worker's two copies, each module in its own session (paired.py), where
    the head's tests fail beside the base's module and pass apart (`_crowded`)."""
    started = time.monotonic()
    deadline = started + inputs.budget.seconds
    begun = _begin(inputs, make_workspace, apart, progress)
    if isinstance(begun, Measured):
        return begun
    inputs, diff, first, baseline, focused, unnamed, make_workspace, unmutated = begun
    fold = focused and baseline.whole
    if baseline.timed_out:  # no score, which would read as "no weakening"
        why = "mutation: the unmutated run did not finish in the time budget"
        why = f"{why} ({_budget(inputs.budget)})"
        return Measured(seconds=_since(started), unmeasured=(why,))
    if baseline.outside is not None:
        return Measured(notes=(cannot_measure(baseline.outside),), seconds=_since(started))
    if (gone := _uncollected(baseline, first, diff, diff.tests if focused else None)) is not None:
        return Measured(unmeasured=(gone,), seconds=_since(started))
    lost = _lost_reach(baseline, first)
    passing = _passing(baseline, first, diff.tests if fold else None)
    failing, dropped = _evidence(
        baseline,
        first,
        _failing(baseline, first, diff.tests if fold else None),
        inputs.patched,
        inputs.passed_alone,
    )
    passing["base"] += failing
    mutants = _mutants(inputs, first, baseline, passing, diff.tests if diff.only_tests else None)
    plans = [_plan(m, baseline, [*passing["head"], *passing["base"]]) for m in mutants]
    plans = [p for p in plans if p.selection or not focused]
    if not plans:
        why = _nothing_to_mutate(baseline, passing)
        if lost is not None:  # the base's tests could detect something there: never clean
            return Measured(unmeasured=(f"{why}; {lost}",), seconds=_since(started))
        return Measured(notes=(*unnamed, why), seconds=_since(started))
    if fold:
        unchanged = _unchanged(baseline, first.head_module, diff.tests)
        plans = [_with_confirm(p, baseline, unchanged, first.base_module) for p in plans]
    # each module's run stops at its first kill: one is all a module needs to count it killed
    # (not where the child compares the two modules' changed tests itself: `confirm`)
    plans = [p if p.confirm else replace(p, until_killed=True) for p in plans]
    workers = max(1, os.cpu_count() or 1)
    progress(f"mutation: {len(plans)} mutant(s) on {workers} worker(s)…")
    spaces = [first, *(make_workspace(Path(str(i))) for i in range(1, min(workers, len(plans))))]
    run = _Run(
        spaces,
        deadline,
        schedule.Store(inputs.cache, inputs.base_module, inputs.head_module, inputs.side),
        max(MIN_MUTANT_SECONDS, MUTANT_FACTOR * unmutated),
    )
    found = run.outcomes(plans)
    results = {i: _result(plans[i], found[i], passing) for i in sorted(found)}
    if focused:
        settled = {i for i, outcome in found.items() if outcome.confirmed}
        results = _confirm(plans, results, diff.tests, run, settled, baseline if fold else None)
    results, unsteady = _repeat(plans, results, run, passing)
    if run.outside is not None:
        return Measured(notes=(cannot_measure(run.outside),), seconds=_since(started))
    measured = _measured(plans, results, inputs.budget, started)
    notes = (*_failing_note(failing), *dropped, *unsteady) if failing else (*dropped, *unsteady)
    notes = (*unnamed, *notes)
    if notes:
        measured = replace(measured, notes=(*notes, *measured.notes))
    return _with_lost(measured, lost)


_Begun = tuple[
    Inputs,
    changes.Changes,
    Workspace,
    Outcome,
    bool,
    tuple[str, ...],
    Callable[[Path], Workspace],
    float,
]


def _begin(
    inputs: Inputs,
    make_workspace: Callable[[Path], Workspace],
    apart: Callable[[Path], Workspace] | None,
    progress: Callable[[str], None],
) -> _Begun | Measured:
    """The unmutated run, in one session or, where the modules disturb each other there,
    apart: the inputs, the changes, the first worker's copy, the run, whether it stayed
    focused, the notes so far, how to copy the tree for another worker, and the run's seconds."""
    diff = changes.between(inputs.base_module, inputs.head_module)
    if inputs.side:  # a conftest, helper or data file changed: any test may run otherwise
        diff = replace(diff, only_tests=False)
    focused = inputs.budget.mode == "changed" and diff.only_tests
    if focused and not diff.tests:
        return Measured(notes=(NO_TEST_CHANGED,))
    first = make_workspace(Path("0"))
    t0 = time.monotonic()
    baseline, kept = _baseline(first, diff.tests, inputs.budget.seconds, focused)
    took = time.monotonic() - t0
    unnamed: tuple[str, ...] = (UNNAMED,) if focused and not kept else ()
    crowded = _crowded(baseline, first) if apart is not None and not inputs.side else []
    if not crowded or apart is None:
        return inputs, diff, first, baseline, kept, unnamed, make_workspace, took
    alone = apart(Path("0-apart"))
    t0 = time.monotonic()
    separate, _ = _baseline(alone, diff.tests, inputs.budget.seconds, False)
    if separate.timed_out or _fails(separate, alone) >= _fails(baseline, first):
        return inputs, diff, first, baseline, kept, unnamed, make_workspace, took
    progress("mutation: the modules disturb each other in one session: measured apart…")
    moved, took = replace(inputs, side=APART), time.monotonic() - t0
    unnamed = (*unnamed, _apart_note(crowded))
    return moved, replace(diff, only_tests=False), alone, separate, False, unnamed, apart, took


def _crowded(baseline: Outcome, space: Workspace) -> list[str]:
    """The head's tests that fail in the session that holds both modules. The head's module
    passed alone on host A, so a failure here may be the base's module's doing: both define
    the same names at import (a registry keyed by name: circuitbreaker's monitor held the
    base's breakers, and every head test that asked it failed), and a head test that fails
    here kills nothing, so each mutant only the base's copy of it killed read as a weaker
    property (circuitbreaker 1287500d6658)."""
    return [
        n
        for n, outcome in baseline.outcomes.items()
        if outcome in ("failed", "error") and _module(n) == space.head_module
    ]


def _fails(baseline: Outcome, space: Workspace) -> int:
    modules = (space.head_module, space.base_module)
    return sum(
        o in ("failed", "error") and _module(n) in modules for n, o in baseline.outcomes.items()
    )


def _apart_note(crowded: Sequence[str]) -> str:
    shown = ", ".join(test_name(n) for n in crowded[:3])
    more = f" and {len(crowded) - 3} more" if len(crowded) > 3 else ""
    return (
        f"mutation: the head's {shown}{more} fail(s) beside the base's module in one session "
        "and pass with each module in a session of its own: measured apart, every test of "
        "both modules against every mutant"
    )


def _baseline(
    first: Workspace, changed: frozenset[str], budget: float, focused: bool
) -> tuple[Outcome, bool]:
    """The unmutated run, and whether it stayed focused on the changed tests. Where their
    names select nothing pytest collects — a decorator that makes the tests under other
    names (parameterized.expand: `test_x_0_...`) — every test of both modules is measured
    instead, as where a helper changed."""
    selection = [first.head_module, first.base_module]
    if focused:
        only, whole = _only(first, changed), [first.head_module]
        baseline = first.run(selection, budget, _watch(first), only, whole, FOLD_MAX_TESTS)
        asked = set(only)
        if (
            baseline.timed_out
            or baseline.outside is not None
            or any(n.split("[", 1)[0] in asked for n in baseline.outcomes)
        ):
            return baseline, True
    return first.run(selection, budget, _watch(first)), False


def _repeat(
    plans: Sequence[Plan], results: dict[int, Result], run: _Run, passing: Passing
) -> tuple[dict[int, Result], tuple[str, ...]]:
    """Each weakening runs REPEATS more times, outside the cache. It stands where the base's
    kill and the head's survival both repeat. Where the base's kill does not repeat, the
    base's own kill was luck: a test whose kill depends on what the pins leave free (the live
    clock's milliseconds in python-ulid's `ULID()`) kills a mutant by chance, and one lucky
    run of the base beside one unlucky run of the head is no weakening (85835a6f2f12: a
    cosmetic edit of such a test read as a weaker property). Where the base kills every time
    and the head only sometimes, MORE runs decide by the rates: a head that kills it in at
    most half of the runs the base always kills it in detects it by luck where the base did
    not (an assertion the patch put behind the clock's parity), and that is a weakening; a
    head that kills it more often is the same luck on both sides. Forked repeats keep the
    pinned seed, so a test reading only pinned entropy repeats exactly. A repeat the budget
    leaves out is not counted either way; with none, the first run's result stands."""
    weak = [i for i, r in results.items() if r.weakened]
    if not weak:
        return results, ()
    tallies = {i: _tally(results[i]) for i in weak}
    _more(plans, weak, REPEATS, run, passing, tallies)
    mixed = [i for i in weak if tallies[i][1] == tallies[i][0] and tallies[i][2]]
    _more(plans, mixed, MORE, run, passing, tallies)
    out = dict(results)
    notes: list[str] = []
    for i in weak:
        runs, base, head = tallies[i]
        said = (
            f"mutation: mutant {results[i].mutant.describe()}: the base's "
            f"{results[i].base_killers[0]} killed it in {base} of {runs} runs, the head's "
            f"module in {head} of {runs}"
        )
        if base == runs and head * 2 <= runs:
            if head:
                notes.append(f"{said}: counted as a weakening (the head detects it by luck)")
            continue
        out[i] = replace(results[i], unsteady=True)
        notes.append(
            f"{said}: not counted, the kill depends on something the pins leave free "
            "(os.urandom, a live clock), not on the tests"
        )
    return out, tuple(notes)


def _tally(result: Result) -> tuple[int, int, int]:
    """(runs, the base's module killed it, the head's module killed it)."""
    return 1, int(bool(result.base_killers)), int(bool(result.head_killers))


def _more(
    plans: Sequence[Plan],
    which: Sequence[int],
    times: int,
    run: _Run,
    passing: Passing,
    tallies: dict[int, tuple[int, int, int]],
) -> None:
    """Run each of `which` plans `times` more (forked, outside the cache) into `tallies`."""
    if not which:
        return
    again = [
        replace(plans[i], until_killed=False, confirm=(), sides=((), ()), confirm_timeout=0.0)
        for i in which
        for _ in range(times)
    ]
    found = run.outcomes(again, remembered=False)
    for n, i in enumerate(which):
        for k in range(n * times, (n + 1) * times):
            if k in found and not found[k].timed_out:
                repeat = _tally(_result(again[k], found[k], passing))
                tallies[i] = (
                    tallies[i][0] + 1,
                    tallies[i][1] + repeat[1],
                    tallies[i][2] + repeat[2],
                )


def _with_lost(measured: Measured, lost: str | None) -> Measured:
    """Reach the head's tests lost: measured where a mutant the base kills survives the head
    (its weakened_property finding says more); else the step could not measure it."""
    if lost is None:
        return measured
    if any(r.weakened for r in measured.results):
        return replace(measured, notes=(*measured.notes, lost))
    return replace(measured, unmeasured=(*measured.unmeasured, lost))


@dataclass
class _Run:
    """The workers, the deadline and the cache, shared by both phases; what was imported
    from outside the copies, if anything."""

    spaces: list[Workspace]
    deadline: float
    store: schedule.Store
    alone_timeout: float
    outside: Imports | None = None

    def outcomes(self, plans: Sequence[Plan], remembered: bool = True) -> dict[int, Outcome]:
        store = self.store if remembered else replace(self.store, folder=None)
        found = schedule.outcomes(plans, self.spaces, self.deadline, store, self.alone_timeout)
        self.outside = self.outside or next(
            (o.outside for o in found.values() if o.outside is not None), None
        )
        return found


def _budget(budget: Budget) -> str:
    return (
        f"constraints.time_budget_seconds={budget.seconds:g}, set by the base's manifest: "
        "raise it there in a change of its own"
    )


def _measured(
    plans: Sequence[Plan], results: dict[int, Result], budget: Budget, started: float
) -> Measured:
    notes: list[str] = []
    skipped = len(plans) - len(results)
    if plans and not results:  # no score at all, which would read as "no weakening"
        why = f"mutation: the time budget ran out before any of {len(plans)} mutants ran"
        why = f"{why} ({_budget(budget)})"
        return Measured(skipped=skipped, seconds=_since(started), unmeasured=(why,))
    if skipped:
        notes.append(
            f"mutation: budget reached: {len(results)} of {len(plans)} mutants run "
            f"(time_budget_seconds={budget.seconds:g})"
        )
    timed = sum(r.timed_out for r in results.values())
    if timed:
        notes.append(f"mutation: {timed} mutant(s) stopped at their time budget, not counted")
    ordered = tuple(results[i] for i in sorted(results))
    return Measured(ordered, tuple(notes), skipped, _since(started))


def _confirm(
    plans: Sequence[Plan],
    results: dict[int, Result],
    changed: frozenset[str],
    run: _Run,
    settled: set[int],
    full: Outcome | None,
) -> dict[int, Result]:
    """Where the changed tests disagree and the first pass did not confirm it already
    (`settled`), the unchanged tests that reach the mutant (`full`, a traced run of the
    head's whole module, else one now finds them): one that kills it kills it in both
    modules. A mutant the budget leaves unconfirmed is left out."""
    disagree = [
        i
        for i, r in results.items()
        if not r.timed_out and bool(r.base_killers) != bool(r.head_killers) and i not in settled
    ]
    left = run.deadline - time.monotonic()
    if not disagree:
        return results
    space = run.spaces[0]
    if full is None and left > 0:
        full = space.run([space.head_module], left, _watch(space))
    out = dict(results)
    if full is None or full.timed_out or full.outside is not None:
        run.outside = run.outside or (full.outside if full else None)
        return {i: r for i, r in out.items() if i not in disagree}
    unchanged = _unchanged(full, space.head_module, changed)
    checks = [
        (i, replace(_plan(plans[i].mutant, full, unchanged), until_killed=True)) for i in disagree
    ]
    checks = [(i, check) for i, check in checks if check.selection]
    found = run.outcomes([check for _, check in checks]) if checks else {}
    for n, (i, check) in enumerate(checks):
        outcome = found.get(n)
        if outcome is None:
            del out[i]
        elif outcome.timed_out:
            out[i] = Result(check.mutant, (), (), timed_out=True)
        else:
            # a test with no outcome did not run (the first kill stopped the child): only a
            # test seen failing confirms, so a lost outcome never hides a finding
            killers = _seen_failing(check.selection, outcome)
            before = out[i]
            out[i] = Result(
                before.mutant, before.base_killers + killers, before.head_killers + killers
            )
    return out


def _unchanged(full: Outcome, head_module: str, changed: frozenset[str]) -> list[str]:
    """The head's tests the patch left as they were that passed in `full`."""
    return [
        n
        for n, outcome in full.outcomes.items()
        if outcome == "passed"
        and n.split("::", 1)[0] == head_module
        and test_name(n) not in changed
    ]


def _with_confirm(plan: Plan, full: Outcome, unchanged: list[str], base_module: str) -> Plan:
    """`plan` with the unchanged tests that reach its mutant, to run in the same child where
    the base's and the head's versions of the changed tests disagree (`_confirm`'s work,
    folded into the first pass: no second traced run, no second session)."""
    confirm = _plan(plan.mutant, full, unchanged)
    if not confirm.selection:
        return plan
    base = tuple(n for n in plan.selection if n.split("::", 1)[0] == base_module)
    head = tuple(n for n in plan.selection if n.split("::", 1)[0] != base_module)
    return replace(
        plan,
        confirm=tuple(confirm.selection),
        sides=(base, head),
        confirm_timeout=confirm.timeout,
    )


def _only(space: Workspace, changed: frozenset[str]) -> list[str]:
    """The changed tests of both modules (bare ids); the unchanged ones are the same in both
    and run only to confirm a difference (`_confirm`)."""
    return [
        f"{module}::{name}"
        for module in (space.head_module, space.base_module)
        for name in sorted(changed)
    ]


def _plan(mutant: Mutant, baseline: Outcome, group: list[str]) -> Plan:
    selection = _selection(mutant, baseline, group)
    unmutated = sum(baseline.durations.get(n, 0.0) for n in selection)
    return Plan(mutant, selection, max(MIN_MUTANT_SECONDS, MUTANT_FACTOR * unmutated))


def cannot_measure(outside: Imports) -> str:
    """Fail closed: survivors of mutants that never ran would read as "no weakening"."""
    return f"mutation: cannot measure, no score: {outside.reason()}"


def _uncollected(
    baseline: Outcome, space: Workspace, diff: changes.Changes, changed: frozenset[str] | None
) -> str | None:
    """Why the base's module cannot be measured on the head's code at all: it defines tests
    the run asked for and none of them reported (it does not collect there: an import of a
    name the patch renamed)."""
    wanted = diff.base_tests if changed is None else diff.base_tests & changed
    if wanted and not any(_module(n) == space.base_module for n in baseline.outcomes):
        return (
            "mutation: cannot measure, no score: the base's module ran none of its tests on "
            "the head's code (it does not collect there: an import of a name the patch "
            "renamed or removed, or a broken module)"
        )
    return None


def _lost_reach(baseline: Outcome, space: Workspace) -> str | None:
    """The base's tests reached production code their head versions do not: none of it
    reached by the head's tests, or a test whose head version reaches no production code at
    all (a copy of the unit in the module). A test the head removed is the scan's finding; a
    test the head skips reaches nothing because it does not run, which the skip and
    not-executed rules judge (the adoption trials' skip patches were `invalid` without this)."""
    ran = [n for n in baseline.outcomes if _module(n) == space.base_module]
    heads = [
        n
        for n, outcome in baseline.outcomes.items()
        if _module(n) == space.head_module and outcome != "skipped"
    ]
    names = {test_name(n) for n in heads}
    base = _reach(baseline, [n for n in ran if test_name(n) in names])
    head = _reach(baseline, heads)
    if SATURATED in head | base:
        return None
    if base and not head & base:
        shown = ", ".join(f"{path}:{line}" for path, line in sorted(base)[:3])
        return (
            "mutation: the head's tests reach none of the production functions the base's "
            f"reached ({shown})"
        )
    emptied = [
        name
        for name in sorted(names)
        if _reach(baseline, [n for n in ran if test_name(n) == name])
        and not _reach(baseline, [n for n in heads if test_name(n) == name])
    ]
    if emptied:
        return (
            f"mutation: the base's {', '.join(emptied[:3])} reached production code, the "
            "head's version reaches none (it tests something else, or a copy)"
        )
    return None


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def _reach(baseline: Outcome, nodeids: Iterable[str]) -> set[tuple[str, int]]:
    return {where for n in nodeids for where in baseline.reached.get(n, [])}


def _failing(baseline: Outcome, space: Workspace, changed: frozenset[str] | None) -> list[str]:
    """The base's tests that fail on the head's unmutated code: never dropped, they run
    against every mutant they reach and count as its killers where they fail on it (the
    base's test detects what the head's does not)."""
    return [
        n
        for n, outcome in baseline.outcomes.items()
        if outcome in ("failed", "error")
        and _module(n) == space.base_module
        and (changed is None or test_name(n) in changed)
    ]


def _evidence(
    baseline: Outcome,
    space: Workspace,
    failing: Sequence[str],
    patched: Patched,
    passed_alone: Callable[[], frozenset[str]] | None = None,
) -> tuple[list[str], tuple[str, ...]]:
    """The failing base tests that count as killers (strength.evidence: the head's version
    of the test passes on the same code), and a note on each that does not. One that passed
    on the same code in the base-on-head run failed here for this session's sake alone: its
    module sits beside the head's under another name (`harness.base_path`), so a test of its
    own file or module name (a warning's `filename`, `__name__`) fails here and nowhere else
    (stamina b922a2e6c50f: `wi.pop().filename.endswith("test_sync.py")`)."""
    counted: list[str] = []
    notes: list[str] = []
    alone = passed_alone() if failing and passed_alone is not None else frozenset()
    for nodeid in failing:
        if test_name(nodeid) in alone:
            notes.append(
                f"mutation: the base's {test_name(nodeid)} fails on the head's code unmutated "
                "only in the mutation step's session, where its module runs under another "
                "file name; it passed on the same code in the base-on-head run: not counted "
                "as a killer"
            )
            continue
        head = baseline.outcomes.get(space.head_module + nodeid[len(space.base_module) :])
        message = baseline.messages.get(nodeid, "")
        decision = evidence.decide(test_name(nodeid), message, head, patched)
        if decision.kind == "counted":
            counted.append(nodeid)
            continue
        double = "test double " if decision.double else ""
        why = decision.why or {
            "excused": f"its call of the {double}{decision.name}() the patch re-signed fails",
            "unmeasured": f"it uses {decision.name}, which the patch renamed or removed",
        }.get(decision.kind, decision.kind)
        notes.append(
            f"mutation: the base's {test_name(nodeid)} fails on the head's code unmutated "
            f"and is not counted as a killer: {why}"
        )
    return counted, tuple(dict.fromkeys(notes))


def _failing_note(failing: Sequence[str]) -> tuple[str, ...]:
    shown = ", ".join(test_name(n) for n in failing[:3])
    more = f" and {len(failing) - 3} more" if len(failing) > 3 else ""
    return (
        f"mutation: the base's {shown}{more} fail(s) on the head's code unmutated: counted "
        "against the head, as killing every mutant they fail on",
    )


def _nothing_to_mutate(baseline: Outcome, passing: Passing) -> str:
    if any(baseline.reached.get(n) for n in (*passing["head"], *passing["base"])):
        return "mutation: no function to mutate"
    return (
        "mutation: no function to mutate: the tests run reached no production code of the "
        "checkout (tests that call none, or code installed outside the checkout, which is "
        "not mutated)"
    )


def _since(started: float) -> float:
    return time.monotonic() - started


def _watch(space: Workspace) -> list[str]:
    """The production files of the tree: Python files outside test folders and modules."""
    found: list[str] = []
    for folder, dirs, files in os.walk(space.tree):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            relative = (Path(folder) / name).relative_to(space.tree).as_posix()
            if name.endswith(".py") and not is_support(relative):
                found.append(relative)
    return found


def is_support(path: str) -> bool:
    pure = PurePosixPath(path)
    name = pure.name
    if name == "conftest.py" or name.startswith("test") or name.endswith("_test.py"):
        return True
    return any(part in SUPPORT_DIRS for part in pure.parts[:-1])


def test_name(nodeid: str) -> str:
    """`path::Class::test[param]` → `Class::test`."""
    bare = nodeid.split("[", 1)[0]
    return bare.split("::", 1)[1] if "::" in bare else bare


def _passing(baseline: Outcome, space: Workspace, changed: frozenset[str] | None) -> Passing:
    """Node ids that passed unmutated, per module ("head", "base"); with `changed`, only
    those tests (the run held the head's whole module too, for `_confirm`)."""
    out: dict[str, list[str]] = {"head": [], "base": []}
    for nodeid, outcome in baseline.outcomes.items():
        if outcome != "passed" or (changed is not None and test_name(nodeid) not in changed):
            continue
        path = nodeid.split("::", 1)[0]
        if path == space.head_module:
            out["head"].append(nodeid)
        elif path == space.base_module:
            out["base"].append(nodeid)
    return out


def _mutants(
    inputs: Inputs,
    space: Workspace,
    baseline: Outcome,
    passing: Passing,
    changed: frozenset[str] | None,
) -> list[Mutant]:
    """The mutants of the functions the tests reached: in `changed` mode only those the
    patch touched or its changed tests reach (`changed` None: every test may have changed)."""
    reached: set[tuple[str, int]] = set()
    near_change: set[tuple[str, int]] = set()
    for nodeid in (*passing["head"], *passing["base"]):
        found = baseline.reached.get(nodeid, [])
        reached.update(found)
        if changed is None or test_name(nodeid) in changed:
            near_change.update(found)
    sources: dict[str, str] = {}
    targets: list[Target] = []
    for path in sorted({p for p, _ in reached}):
        try:
            text = (space.tree / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        sources[path] = text
        for line, first, _, name in operators.functions(text):
            if (path, line) not in reached and (path, first) not in reached:
                continue
            hit = (path, line) in near_change or (path, first) in near_change
            if inputs.budget.mode == "all" or hit or (path, name) in inputs.touched:
                targets.append(Target(path, line, name))
    return operators.mutants(sources, targets, inputs.seed, inputs.budget.max_mutants)


def _selection(mutant: Mutant, baseline: Outcome, group: list[str]) -> list[str]:
    """The tests of `group` that called the mutated function."""
    first, end = mutant.span
    return [
        nodeid
        for nodeid in group
        if any(
            (path == mutant.path and first <= line <= end) or (path, line) == SATURATED
            for path, line in baseline.reached.get(nodeid, [])
        )
    ]


def _result(plan: Plan, outcome: Outcome, passing: Passing) -> Result:
    if outcome.timed_out:
        return Result(plan.mutant, (), (), timed_out=True)
    # the confirming tests that ran (only a test seen failing confirms, as in `_confirm`)
    also = _seen_failing(plan.confirm, outcome) if outcome.confirmed else ()
    killed = _killed(plan, outcome)
    killers = {
        which: tuple(
            dict.fromkeys(test_name(n) for n in passing[which] if n in plan.selection and killed(n))
        )
        for which in ("base", "head")
    }
    return Result(plan.mutant, killers["base"] + also, killers["head"] + also)


def _killed(plan: Plan, outcome: Outcome) -> Callable[[str], bool]:
    """Whether the mutant killed test `n`. A test with no outcome did not survive it (the run
    died first), except where each module's run stopped at its first kill (`until_killed`):
    the rest of that module never ran, and only where none of its tests reported did the
    run die."""
    seen = outcome.outcomes
    reported = {_module(n) for n in plan.selection if n in seen}

    def killed(n: str) -> bool:
        got = seen.get(n)
        if got is None:
            return not plan.until_killed or _module(n) not in reported
        return got != "passed"

    return killed


def _seen_failing(tests: Sequence[str], outcome: Outcome) -> tuple[str, ...]:
    return tuple(
        dict.fromkeys(test_name(t) for t in tests if outcome.outcomes.get(t, "passed") != "passed")
    )


def lost_by(results: Sequence[Result]) -> frozenset[str]:
    """The base's tests that kill a mutant the head's module lets survive."""
    return frozenset(name for result in results if result.weakened for name in result.base_killers)


def killed_counts(results: Sequence[Result]) -> tuple[int, int, int]:
    """(mutants counted, killed by the base's module, killed by the head's module)."""
    counted = [r for r in results if r.counted]
    return (
        len(counted),
        sum(bool(r.base_killers) for r in counted),
        sum(bool(r.head_killers) for r in counted),
    )
