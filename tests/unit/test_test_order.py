"""Host B's shuffle of the collected tests (testproc.order), as a pure function of node ids."""

from __future__ import annotations

import pytest

from entropy_action.hosts import hostjson
from entropy_action.testproc import order

IDS = [
    "tests/test_a.py::test_one",
    "tests/test_a.py::test_two",
    "tests/test_a.py::TestK::test_x",
    "tests/test_a.py::TestK::test_y",
    "tests/test_a.py::TestK::test_z[1]",
    "tests/test_a.py::TestK::test_z[2]",
    "tests/test_b.py::test_three",
    "tests/test_b.py::test_four",
]


def _runs(ids: list[str], key: object) -> list[str]:
    """The buckets in the order they appear (each contiguous)."""
    seen: list[str] = []
    for nodeid in ids:
        bucket = key(nodeid)  # type: ignore[operator]
        if not seen or seen[-1] != bucket:
            seen.append(bucket)
    return seen


@pytest.mark.parametrize("seed", [0, 1, 7, 2767, 0xFFFFFFFF])
def test_the_shuffle_keeps_modules_and_classes_together_and_moves_every_bucket(seed: int) -> None:
    got = order.shuffled(IDS, seed)
    assert sorted(got) == sorted(IDS)
    modules = _runs(got, lambda n: n.split("::")[0])
    assert sorted(modules) == sorted(set(modules))  # each module's tests run together
    assert modules != ["tests/test_a.py", "tests/test_b.py"]
    in_a = [n for n in got if n.startswith("tests/test_a.py")]
    parents = _runs(in_a, lambda n: "::".join(n.split("::")[1:-1]))
    assert parents == ["TestK", ""]  # a bucket of two always swaps
    klass = [n for n in in_a if "TestK" in n]
    assert klass != [n for n in IDS if "TestK" in n]
    own = [n for n in in_a if "TestK" not in n]
    assert own == ["tests/test_a.py::test_two", "tests/test_a.py::test_one"]


def test_the_shuffle_repeats_for_a_seed_and_differs_between_seeds() -> None:
    assert order.shuffled(IDS, 5) == order.shuffled(IDS, 5)
    assert len({tuple(order.shuffled(IDS, seed)) for seed in range(20)}) > 1


def test_adding_a_test_elsewhere_does_not_move_a_bucket() -> None:
    more = [*IDS, "tests/test_c.py::test_new"]
    inside = [n for n in order.shuffled(more, 11) if n.startswith("tests/test_a.py")]
    assert inside == [n for n in order.shuffled(IDS, 11) if n.startswith("tests/test_a.py")]


@pytest.mark.parametrize("seed", range(40))
def test_a_test_added_beside_them_moves_no_other_and_the_module_name_does_not_count(
    seed: int,
) -> None:
    """The base's module (run apart under another file name) and the head's, which adds one
    test: the tests they share keep one order, so an order-dependent test the patch left
    alone meets its polluter in both or in neither (tzlocal fa95c1d0a5da)."""
    base = [f"tests/test_tz_entropy_base.py::test_{n}" for n in range(12)]
    head = [f"tests/test_tz.py::test_{n}" for n in range(12)] + ["tests/test_tz.py::test_broken"]
    shared = [n.split("::")[1] for n in order.shuffled(head, seed) if "test_broken" not in n]
    assert [n.split("::")[1] for n in order.shuffled(base, seed)] == shared


def test_one_test_and_no_tests_stay_as_they_are() -> None:
    assert order.shuffled([], 3) == []
    assert order.shuffled(IDS[:1], 3) == IDS[:1]


def test_the_config_takes_only_an_int_seed_and_a_list_of_ids() -> None:
    assert not order.configure(None, None)
    assert not order.configure(True, "tests/x.py::t")  # a bool is no seed, a str no list
    assert order.seed() is None
    assert order.configure(9, None)
    assert order.seed() == 9
    assert order.configure(9, ["a::b"])
    assert order.seed() is None  # an exact order: nothing shuffled
    assert order.configure(-1, None)
    assert order.seed() == 0xFFFFFFFF
    assert order.report() is None  # nothing collected yet


@pytest.mark.parametrize(
    "found",
    [
        None,
        "shuffled",
        {"seed": True, "collected": [], "ran": [], "truncated": False},
        {"seed": -1, "collected": [], "ran": [], "truncated": False},
        {"seed": 2**32, "collected": [], "ran": [], "truncated": False},
    ],
)
def test_a_report_without_a_usable_seed_gives_host_json_none(found: object) -> None:
    assert hostjson._order_seed({"test_order": found}) is None


@pytest.mark.parametrize(
    "found",
    [
        {"seed": 1, "collected": ["a"], "ran": ["a"], "truncated": True},  # cut: unusable
        {"seed": 1, "collected": ["a"], "ran": "a", "truncated": False},
        {"seed": 1, "collected": [1], "ran": ["a"], "truncated": False},
        {"seed": 1, "collected": ["x"] * 2001, "ran": ["x"], "truncated": False},  # past the cap
        {"seed": 1, "collected": ["x" * 2001], "ran": ["a"], "truncated": False},
    ],
)
def test_host_json_lists_the_order_only_when_the_report_is_whole_and_well_formed(
    found: object,
) -> None:
    assert hostjson._test_order({"test_order": found}) is None
    good = {"seed": 1, "collected": ["a", "b"], "ran": ["b", "a"], "truncated": False}
    listed = hostjson._test_order({"test_order": good})
    assert listed is not None
    assert (listed.collected, listed.ran) == (["a", "b"], ["b", "a"])
