"""The host legs (manifest.legs): whole properties per leg, balanced, deterministic, capped."""

from __future__ import annotations

import pytest

from entropy_action.core.errors import GateError
from entropy_action.manifest import legs
from entropy_action.manifest.legs import Leg, Weighted


def group(prefix: str, *weights: int) -> list[Weighted]:
    return [Weighted(f"{prefix}{i}", w) for i, w in enumerate(weights, start=1)]


def ids(planned: list[Leg]) -> list[tuple[str, ...]]:
    return [leg.ids for leg in planned]


def test_one_property_gives_one_leg_and_two_matrix_jobs_without_properties():
    planned = legs.plan([group("p", 3)], 4)
    assert planned == [Leg(1, ("p1",), 3)]
    assert legs.matrix(planned, many=False) == {
        "include": [
            {"host": "a", "leg": "1", "properties": ""},
            {"host": "b", "leg": "1", "properties": ""},
        ]
    }


def test_a_list_names_each_legs_properties_and_host_a_and_b_get_the_same_legs():
    planned = legs.plan([group("p", 1, 1), group("q", 1)], 4)
    include = legs.matrix(planned, many=True)["include"]
    jobs = [(e["host"], e["leg"]) for e in include]
    assert jobs == [("a", "1"), ("a", "2"), ("a", "3"), ("b", "1"), ("b", "2"), ("b", "3")]
    by_host = {h: [e["properties"] for e in include if e["host"] == h] for h in "ab"}
    assert by_host["a"] == by_host["b"] == ["p1", "p2", "q1"]


def test_legs_per_host_1_is_one_job_per_host_holding_every_property_in_order():
    planned = legs.plan([group("p", 5, 1), group("q", 9), group("r", 2)], 1)
    assert ids(planned) == [("p1", "p2", "q1", "r1")]
    assert planned[0].weight == 17


def test_one_leg_per_group_while_the_groups_fit_and_spare_legs_split_the_heaviest():
    planned = legs.plan([group("p", 1, 1, 1, 1, 1, 1), group("q", 1, 1)], 3)
    assert ids(planned) == [("p1", "p2", "p3"), ("p4", "p5", "p6"), ("q1", "q2")]


def test_a_split_balances_by_weight_not_by_count():
    planned = legs.plan([group("p", 8, 1, 1, 1, 1, 1, 1, 1, 1)], 2)
    assert ids(planned) == [("p1",), ("p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9")]
    assert [leg.weight for leg in planned] == [8, 8]


def test_spare_legs_are_not_spent_where_a_single_property_is_the_critical_path():
    planned = legs.plan([group("p", 50), group("q", 1, 1, 1)], 6)
    # q could take 3 legs, but p's one property (50) stays the longest leg: q is left whole
    assert ids(planned) == [("p1",), ("q1", "q2", "q3")]


def test_spare_legs_go_to_the_group_whose_heaviest_leg_weighs_most():
    planned = legs.plan([group("p", 1, 1), group("q", 3, 3, 3, 3)], 4)
    # a third leg for q would leave its heaviest at 6: the job is not spent
    assert ids(planned) == [("p1", "p2"), ("q1", "q2"), ("q3", "q4")]
    planned = legs.plan([group("p", 1, 1), group("q", 3, 3, 3, 3)], 5)
    assert ids(planned) == [("p1", "p2"), ("q1",), ("q2",), ("q3",), ("q4",)]


def test_more_groups_than_legs_are_packed_whole_heaviest_first_into_the_lightest_leg():
    groups = [group("a", 1), group("b", 5, 5), group("c", 4), group("d", 3), group("e", 2)]
    planned = legs.plan(groups, 2)
    assert ids(planned) == [("b1", "b2"), ("a1", "c1", "d1", "e1")]
    assert [leg.weight for leg in planned] == [10, 10]


def test_packing_never_splits_a_group():
    groups = [group(f"g{i}-", 1, 1, 1) for i in range(5)]
    for leg in legs.plan(groups, 3):
        prefixes = {pid.rsplit("-", 1)[0] for pid in leg.ids}
        assert all(f"{p}-1" in leg.ids for p in prefixes)  # each group's whole run is here


def test_the_plan_is_a_function_of_its_input():
    groups = [group("p", 3, 1, 4, 1, 5), group("q", 9, 2, 6), group("r", 5, 3)]
    first = legs.plan(groups, 5)
    assert all(legs.plan(groups, 5) == first for _ in range(5))
    everyone = [pid for leg in first for pid in leg.ids]
    assert sorted(everyone) == sorted(w.property_id for g in groups for w in g)
    assert len(everyone) == len(set(everyone))  # every property in exactly one leg


def test_githubs_256_jobs_cap_the_legs_per_host_at_128():
    many = [group(f"g{i}-", 1) for i in range(300)]
    planned = legs.plan(many, 1000)
    assert len(planned) == 128
    assert len(legs.matrix(planned, many=True)["include"]) == 256
    assert sum(len(leg.ids) for leg in planned) == 300


def test_a_cap_below_one_is_a_usage_error():
    with pytest.raises(GateError, match="--legs-per-host: give at least 1, got 0"):
        legs.plan([group("p", 1)], 0)


def test_the_carrier_names_the_leg_of_a_property():
    planned = legs.plan([group("p", 1, 1), group("q", 1)], 4)
    assert legs.carrier(planned, "q1") == Leg(3, ("q1",), 1)
    assert legs.carrier(planned, "nobody") is None


@pytest.mark.parametrize(
    ("source", "count"),
    [
        ("def test_a(): pass\nasync def test_b(): pass\ndef helper(): pass\n", 2),
        ("class TestX:\n    def test_a(self): pass\n    def setup(self): pass\n", 1),
        ("class Helper:\n    def test_a(self): pass\n", 1),  # no Test class: weighs 1
        ("", 1),
        ("def test_(:\n", 1),  # does not parse
        ("x = '\0'\n", 1),
    ],
)
def test_a_modules_tests_are_counted_from_its_syntax(source, count):
    assert legs.count_tests(source) == count
