"""Order dependence among the tests host B failed: which passed alone, which pass in host A's
order, and for each such victim the one test it depends on.

One function (`explore`) runs on host B (over real re-runs, attribution.record) and in the
judge (over the recorded ones, attribution.replay), so both ask for the same trials:

- a control trial: the failing tests alone, nothing left out. A test that gets host A's
  outcome there failed only because of the tests that ran before it on host B;
- each trial that gives a test host A's outcome runs once more, the same (`steady`): an
  outcome that does not repeat is the test's own luck (threads' timing, a live clock's
  fraction of a second), not what the trial left out (pybreaker 14139fd4bc31: a half-open
  thread-safety test that failed once on host A "depended on two or more earlier tests");
- one trial in host A's order (test_order reverted, the whole module, no selection);
- per victim (at most MAX_VICTIMS), a bisection over the tests that ran before it: on host B
  (B's order) for a victim that passed alone, until [P, V] fails (P: the polluter); on host A
  (A's order) for a victim that failed alone but passed in A's order, until [S, V] passes
  (S: the state-setter). Each probe runs exactly those tests in that order, about
  log2(n) + 1 re-runs per victim. Two tests needed (no single one found) leaves `other` None.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from entropy_action.verdict.model import OrderPair

MAX_VICTIMS = 5
# Order probes by design (issue 35 part 4): at most this many extra runs of the property's
# module, and none past this many tests (the budget: PROBES runs of the module).
PROBES = 3
MAX_PROBE_TESTS = 2000
REPLAY = "entropy-gate replay --report host-b"  # host B's report folder, as gate --out names it
ORDER = "test_order"


@dataclass(frozen=True)
class Trial:
    """One re-run of host B: what it left out, and whether host A's outcomes came back."""

    revert: frozenset[str] = frozenset()
    keep_env: tuple[str, ...] = ()
    order: tuple[str, ...] = ()  # run exactly these tests in this order (none: the selection)
    repeat: int = 0  # 1: the same trial again, confirming what it gave (`steady`)


Rerun = Callable[[Trial], Mapping[str, str]]


@dataclass
class Found:
    """What the order trials said."""

    alone: set[str] = field(default_factory=set)  # passed with nothing before them
    in_a_order: set[str] = field(default_factory=set)  # got host A's outcome in A's order
    pairs: list[OrderPair] = field(default_factory=list)
    capped: int = 0  # victims left out past MAX_VICTIMS

    @property
    def victims(self) -> set[str]:
        return self.alone | self.in_a_order


def same(got: str | None, want: str) -> bool:
    return got is not None and (got == want or {got, want} <= {"failed", "error"})


def steady(rerun: Rerun, trial: Trial, want: Mapping[str, str]) -> set[str]:
    """The tests of `want` that got their outcome in `trial` and again in its repeat (made
    only when some got it: a trial that explains nothing needs no confirming)."""
    got = rerun(trial)
    hit = {t for t, o in want.items() if same(got.get(t), o)}
    if not hit:
        return hit
    again = rerun(replace(trial, repeat=1))
    return {t for t in hit if same(again.get(t), want[t])}


def unsteady(
    trials: Sequence[tuple[Trial, Mapping[str, str]]], want: Mapping[str, str]
) -> dict[str, tuple[str, str]]:
    """Test -> its two outcomes, for the tests of `want` that a trial and its repeat judged
    differently: the same re-run, once with host A's outcome and once without."""
    first = {replace(trial, repeat=0): got for trial, got in trials if not trial.repeat}
    found: dict[str, tuple[str, str]] = {}
    for trial, again in trials:
        before = first.get(replace(trial, repeat=0), {}) if trial.repeat else {}
        for test, outcome in want.items():
            one, two = before.get(test), again.get(test)
            if one is not None and two is not None and same(one, outcome) != same(two, outcome):
                found.setdefault(test, (one, two))
    return found


def explore(
    rerun: Rerun,
    want: Mapping[str, str],
    order_a: Sequence[str],
    order_b: Sequence[str],
) -> Found:
    """The control trial, the trial in host A's order, and each victim's pair (see above)."""
    found = Found()
    if not order_b:
        return found
    rerun = _once(rerun)
    found.alone = steady(rerun, Trial(), want)
    found.in_a_order = steady(rerun, Trial(revert=frozenset({ORDER})), want)
    victims = sorted(found.victims)
    found.capped = max(0, len(victims) - MAX_VICTIMS)
    for victim in victims[:MAX_VICTIMS]:
        polluted = victim in found.alone
        before = _before(order_b if polluted else order_a, victim)
        other = _bisect(before, _probe(rerun, victim, want[victim], polluted)) if before else None
        kind = "polluter" if polluted else "state_setter"
        found.pairs.append(OrderPair(victim=victim, other=other, kind=kind, replay=None))
    found.pairs = [p.model_copy(update={"replay": replay(p)}) for p in found.pairs]
    return found


def _once(rerun: Rerun) -> Rerun:
    """`rerun` that makes each trial once (the bisection's last check may repeat a probe)."""
    made: dict[Trial, Mapping[str, str]] = {}

    def run(trial: Trial) -> Mapping[str, str]:
        if trial not in made:
            made[trial] = rerun(trial)
        return made[trial]

    return run


def _before(order: Sequence[str], victim: str) -> list[str]:
    return list(order[: order.index(victim)]) if victim in order else []


def _probe(rerun: Rerun, victim: str, want: str, polluted: bool) -> Callable[[list[str]], bool]:
    """Whether `tests`, run before the victim, reproduce host B's outcome (a polluter) or give
    host A's (a state-setter)."""

    def probe(tests: list[str]) -> bool:
        got = rerun(Trial(revert=frozenset({ORDER}), order=(*tests, victim))).get(victim)
        return got is not None and (not same(got, want) if polluted else same(got, want))

    return probe


def _bisect(names: list[str], probe: Callable[[list[str]], bool]) -> str | None:
    """The one test that alone makes the probe true, halving the candidates each run."""
    while len(names) > 1:
        half = names[: len(names) // 2]
        names = half if probe(half) else names[len(half) :]
    return names[0] if names and probe(names) else None


def replay(pair: OrderPair) -> str | None:
    """The command that replays the pair as host B ran it (`entropy-gate replay`: the other
    test first, then the victim, with host B's clock, environment, seeds and the rest from
    its report folder)."""
    if pair.other is None:
        return None
    return f"{REPLAY} --after {shlex.quote(pair.other)} {shlex.quote(pair.victim)}"


def explain_unsteady(found: Mapping[str, tuple[str, str]]) -> list[str]:
    """The reason lines for tests whose re-run did not repeat."""
    return [
        f"{test}: the same re-run on host B gave {one}, then {two}: its outcome turns on "
        "something the pins leave free (threads' timing, a live clock's fraction of a second), "
        "so it is not attributed to what host B varies"
        for test, (one, two) in sorted(found.items())
    ]


def explain(pairs: Sequence[OrderPair], capped: int) -> list[str]:
    """The reason lines: each victim and the test it depends on."""
    lines = []
    for pair in pairs:
        if pair.other is None:
            lines.append(
                f"{pair.victim} depends on the tests that run before it, but no single one "
                "(it needs two or more): make it set up its own state"
            )
        elif pair.kind == "polluter":
            lines.append(
                f"{pair.other} leaves state behind that makes {pair.victim} fail when it runs "
                "first: clean it up in a fixture, or give the victim its own state"
            )
        else:
            lines.append(
                f"{pair.victim} passes only after {pair.other} has run (it sets up state the "
                "victim relies on): make the victim set up its own state"
            )
    if capped:
        lines.append(f"{capped} more order-dependent test(s) not searched (at most {MAX_VICTIMS})")
    return lines


def probe_orders(
    order_a: Sequence[str], changed: Collection[str], budget: int = PROBES
) -> list[tuple[str, ...]]:
    """The orders host B runs the module in by design when the patch added or changed tests
    of the property (`changed`: their node ids), beside its seeded shuffle: the module in
    reverse of host A's order, then the changed tests first (the rest in A's order), then
    last — at most `budget` runs, none for a module past MAX_PROBE_TESTS or without changed
    tests. The reverse flips every pair of tests host A ran in one order, so a two-test
    dependence that passed in host A's order fails in it: missed with probability 0, against
    1/2 for one shuffle. First and last cover a changed test that needs state from, or is
    spoiled by, any set of other tests (nothing runs before it; everything does)."""
    ids = list(dict.fromkeys(order_a))
    moved = [t for t in ids if t in set(changed)]
    if not moved or len(ids) > MAX_PROBE_TESTS:
        return []
    rest = [t for t in ids if t not in set(moved)]
    orders = [tuple(reversed(ids)), (*moved, *rest), (*rest, *moved)]
    unique = list(dict.fromkeys(o for o in orders if o != tuple(ids)))
    return unique[: max(0, budget)]
