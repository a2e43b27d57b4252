"""Order dependence in attribution (gate.orderdep through gate.attribution): the control
trial, the trial in host A's order, the bisection to a polluter or a state-setter, and the
judge's replay of the recorded trials asking for exactly the trials host B made."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping

import pytest

from entropy_action.gate import attribution, hoststeps, orderdep
from entropy_action.testproc import order
from entropy_action.verdict.classify import Evidence, classify
from entropy_action.verdict.model import TEST_RESULT, OrderPair, Verdict

M = "tests/properties/test_p.py"
OTHERS = [f"{M}::test_{n:02d}" for n in range(20)]
VICTIM = f"{M}::test_victim"
DIMS = ["clock", "env", "network", "path", "test_order"]


def coupled(victim: str = VICTIM) -> Verdict:
    result = TEST_RESULT.validate_python({"id": victim, "host_a": "passed", "host_b": "failed"})
    return classify(Evidence(host_a="pass", host_b="fail", tests=(result,)))


class Host:
    """Host B over a suite where `culprit` pollutes the victim (it fails when `culprit` ran
    before it) or, with `setter=True`, sets up its state (it passes only after it)."""

    def __init__(self, order_a: list[str], order_b: list[str], culprit: str, *, setter: bool):
        self.order_a, self.order_b, self.culprit, self.setter = order_a, order_b, culprit, setter
        self.trials: list[attribution.Trial] = []

    def ran(self, trial: attribution.Trial) -> list[str]:
        if trial.order:
            return list(trial.order)
        if "test_order" in trial.revert:
            return self.order_a
        return [VICTIM]  # a selected re-run of the failing test (the control, the dimensions)

    def __call__(self, trial: attribution.Trial) -> Mapping[str, str]:
        self.trials.append(trial)
        run = self.ran(trial)
        before = run[: run.index(VICTIM)] if VICTIM in run else []
        passes = (self.culprit in before) if self.setter else (self.culprit not in before)
        return {VICTIM: "passed" if passes else "failed"} if VICTIM in run else {}


def orders(host: Host) -> attribution.Orders:
    return attribution.Orders(tuple(host.order_a), tuple(host.order_b))


def test_a_polluter_is_found_by_bisection_over_host_bs_order_and_named():
    order_a = [VICTIM, *OTHERS]  # A: the victim first, nothing pollutes it
    order_b = [*OTHERS[::-1], VICTIM]
    host = Host(order_a, order_b, OTHERS[13], setter=False)
    found = attribution.order_dependence(coupled(), host, DIMS, orders(host))
    assert [(p.victim, p.other, p.kind) for p in found.pairs] == [(VICTIM, OTHERS[13], "polluter")]
    probes = [t for t in host.trials if t.order]
    assert len(probes) <= math.ceil(math.log2(len(OTHERS))) + 1
    assert probes[-1].order == (OTHERS[13], VICTIM)
    assert found.pairs[0].replay == (
        f"entropy-gate replay --report host-b --after {OTHERS[13]} {VICTIM}"
    )
    host.trials.clear()
    # the victim passed alone: no other dimension is concluded from it; test_order is named
    assert attribution.attribute(coupled(), host, [], DIMS, orders(host)) == ["test_order"]


def test_a_state_setter_is_found_over_host_as_order():
    order_a = [*OTHERS, VICTIM]
    order_b = [VICTIM, *OTHERS]  # B: the victim first, its setter has not run yet
    host = Host(order_a, order_b, OTHERS[4], setter=True)
    found = attribution.order_dependence(coupled(), host, DIMS, orders(host))
    assert [(p.other, p.kind) for p in found.pairs] == [(OTHERS[4], "state_setter")]
    assert attribution.attribute(coupled(), host, [], DIMS, orders(host)) == ["test_order"]
    verdict = attribution.with_attribution(coupled(), ["test_order"], found)
    assert verdict.order_dependence == found.pairs
    assert any(f"passes only after {OTHERS[4]}" in r for r in verdict.reasons)


def test_an_order_dependent_victim_gets_no_trial_per_dimension():
    """Its failure is explained by the order trials: a selected re-run reverting the clock
    or the environment cannot explain it (a state-setter's victim fails in each, its setter
    does not run there), so host B does not make them; a victim the order does not explain
    still gets them."""
    for setter, order_a, order_b in (
        (True, [*OTHERS, VICTIM], [VICTIM, *OTHERS]),
        (False, [VICTIM, *OTHERS], [*OTHERS, VICTIM]),
    ):
        host = Host(order_a, order_b, OTHERS[4], setter=setter)
        made = attribution.record(host, {VICTIM: "passed"}, ["A", "B"], DIMS, orders(host))
        assert [t.revert for t, _ in made if t.revert - {"test_order"}] == []  # no dimension
        assert [t.keep_env for t, _ in made if t.keep_env] == []  # nor the env's bisection
        replayed = attribution.replay(made)
        assert attribution.attribute(coupled(), replayed, [], DIMS, orders(host)) == ["test_order"]

    class Clocked(Host):  # fails on host B in any order: the clock, not the order
        def __call__(self, trial: attribution.Trial) -> Mapping[str, str]:
            self.trials.append(trial)
            return {VICTIM: "passed" if "clock" in trial.revert else "failed"}

    host = Clocked([*OTHERS, VICTIM], [VICTIM, *OTHERS], "", setter=False)
    made = attribution.record(host, {VICTIM: "passed"}, [], DIMS, orders(host))
    assert {"clock"} in [set(t.revert) for t, _ in made]
    assert attribution.attribute(coupled(), attribution.replay(made), [], DIMS, orders(host)) == [
        "clock"
    ]


def test_two_polluters_needed_is_said_never_guessed():
    class Both(Host):
        def __call__(self, trial: attribution.Trial) -> Mapping[str, str]:
            run = self.ran(trial)
            before = set(run[: run.index(VICTIM)]) if VICTIM in run else set()
            fails = {OTHERS[2], OTHERS[17]} <= before
            return {VICTIM: "failed" if fails else "passed"} if VICTIM in run else {}

    host = Both([VICTIM, *OTHERS], [*OTHERS, VICTIM], "", setter=False)
    found = attribution.order_dependence(coupled(), host, DIMS, orders(host))
    assert [(p.other, p.replay) for p in found.pairs] == [(None, None)]
    assert "no single one" in orderdep.explain(found.pairs, 0)[0]


def test_the_judges_replay_asks_for_exactly_the_trials_host_b_recorded():
    host = Host([VICTIM, *OTHERS], [*OTHERS[::-1], VICTIM], OTHERS[7], setter=False)
    made = attribution.record(host, {VICTIM: "passed"}, ["A", "B"], DIMS, orders(host))
    replayed = attribution.replay(made)
    found = attribution.order_dependence(coupled(), replayed, DIMS, orders(host))
    assert [p.other for p in found.pairs] == [OTHERS[7]]
    assert attribution.attribute(coupled(), replayed, [], DIMS, orders(host)) == ["test_order"]
    assert len(made) == len({(t.revert, t.keep_env, t.order, t.repeat) for t, _ in made})


def test_without_a_shuffle_there_are_no_order_trials_and_the_victim_is_not_searched():
    host = Host([VICTIM, *OTHERS], [*OTHERS, VICTIM], OTHERS[0], setter=False)
    found = attribution.order_dependence(coupled(), host, DIMS, attribution.Orders())
    assert found.pairs == []
    assert host.trials == []
    made = attribution.record(host, {VICTIM: "passed"}, [], DIMS[:-1], orders(host))
    assert all(not t.order for t, _ in made)


def test_victims_past_the_cap_are_counted_and_said():
    assert "3 more order-dependent" in orderdep.explain([], 3)[0]


def test_the_pairs_replay_runs_the_other_test_first_as_host_b_ran_them():
    pair = OrderPair(victim=VICTIM, other=f"{M}::test_a b", kind="polluter", replay=None)
    assert orderdep.replay(pair) == (
        f"entropy-gate replay --report host-b --after '{M}::test_a b' {VICTIM}"
    )
    assert orderdep.replay(pair.model_copy(update={"other": None})) is None


# --- order probes by design (issue 35 part 4) ------------------------------------------------


def _module(n: int) -> list[str]:
    return [f"tests/test_m.py::test_{i}" for i in range(n)]


@pytest.mark.parametrize("n", range(2, 8))
def test_the_probes_flip_every_pair_host_a_ran_so_no_two_test_dependence_is_missed(n: int) -> None:
    tests = _module(n)
    for changed in ([tests[-1]], [tests[0]], tests[n // 2 : n // 2 + 2]):
        orders = orderdep.probe_orders(tests, changed)
        for x, y in itertools.combinations(tests, 2):  # x before y in host A's order
            assert any(o.index(y) < o.index(x) for o in orders), (changed, x, y)
        # first (nothing before it) and last (everything before it), or host A's own order
        ran = [*orders, tuple(tests)]
        first, last = changed[0], changed[-1]
        assert any(o[0] == first for o in ran)
        assert any(o[-1] == last for o in ran)


def test_one_shuffle_keeps_a_given_pair_in_host_as_order_about_half_the_time() -> None:
    tests = _module(10)
    kept = sum(
        (ran := order.shuffled(tests, seed)).index(tests[3]) < ran.index(tests[7])
        for seed in range(2000)
    )
    assert 0.45 < kept / 2000 < 0.55  # a two-test dependence is missed ~1/2 of the time


def test_the_probes_stay_within_their_budget() -> None:
    tests = _module(6)
    assert len(orderdep.probe_orders(tests, [tests[2]])) == orderdep.PROBES
    assert orderdep.probe_orders(tests, [tests[2]], budget=1) == [tuple(reversed(tests))]
    assert orderdep.probe_orders(tests, []) == []  # no test of the property changed
    big = _module(orderdep.MAX_PROBE_TESTS + 1)
    assert orderdep.probe_orders(big, [big[0]]) == []
    # a new test appended last: "last" is host A's own order, not run again
    assert len(orderdep.probe_orders(tests, [tests[-1]])) == 2


def test_the_changed_tests_order_probes_take_include_the_names_a_generator_made() -> None:
    m = "tests/t.py::T::"
    collected = [
        f"{m}test_x_00_in_2_hours",
        f"{m}test_x_01",
        f"{m}test_xy_0",  # another test that merely starts the same
        f"{m}test_x_a",  # not an index
        f"{m}test_x[1]",
        f"{m}test_other",
    ]
    assert hoststeps.changed_ids(collected, {"test_x"}) == [
        f"{m}test_x_00_in_2_hours",
        f"{m}test_x_01",
        f"{m}test_x[1]",
    ]
    assert hoststeps.changed_ids(collected, set()) == []
