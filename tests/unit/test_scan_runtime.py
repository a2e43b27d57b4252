"""Rule 6: every defined property must have executed on both hosts (a pure function)."""

from __future__ import annotations

from entropy_action.core.findings import Finding
from entropy_action.scan import DefinedTest, not_executed
from entropy_action.scan.runtime import Generated, cases_not_executed, executed_names
from entropy_action.verdict import model

P = "tests/properties/test_x.py"
TOTAL = DefinedTest("test_total", P, 4)
METHOD = DefinedTest("TestA::test_b", P, 10)
PARAM = DefinedTest("test_param", P, 15)


def result(test_id: str, a: str, b: str) -> model.TestResult:
    fields = {"id": test_id, "raw_ids": [test_id], "host_a": a, "host_b": b}
    return model.TEST_RESULT.validate_python(fields)


RESULTS = [
    result(f"{P}::test_total", "passed", "skipped"),
    result(f"{P}::test_param[1-2]", "skipped", "skipped"),
    result(f"{P}::test_param[a::b[c]]", "failed", "error"),
    result(f"{P}::TestA::test_other", "passed", "passed"),
]


def test_a_test_that_ran_on_one_host_only_or_on_none_is_a_finding() -> None:
    found = not_executed([TOTAL, METHOD, PARAM], RESULTS, None)
    assert [(f.kind, f.path, f.line, f.test) for f in found] == [
        ("not_executed", P, 4, "test_total"),
        ("not_executed", P, 10, "TestA::test_b"),
    ]
    assert found[0].message == (
        "property test_total did not execute on host B (skipped) — a property that does not "
        "run proves nothing"
    )
    assert found[1].message.startswith(
        "property TestA::test_b did not execute on host A (absent) and host B (absent)"
    )
    assert all(f.introduced for f in found)


def test_one_executed_parameter_case_is_enough() -> None:
    assert not_executed([PARAM], RESULTS, None) == []


def test_xfail_reported_as_skipped_on_both_hosts_is_a_finding() -> None:
    found = not_executed([PARAM], [result(f"{P}::test_param[0]", "skipped", "skipped")], None)
    assert [f.message.split(" — ")[0] for f in found] == [
        "property test_param did not execute on host A (skipped) and host B (skipped)"
    ]


def test_attribution_by_the_base_run() -> None:
    new = DefinedTest("test_new", P, 20)
    found = not_executed(
        [TOTAL, METHOD, new],
        RESULTS,
        executed_at_base={"test_total"},
        existed_at_base={"test_total", "TestA::test_b"},
    )
    assert [(f.test, f.introduced) for f in found] == [
        ("test_total", True),  # it ran at the base: the patch stopped it
        ("TestA::test_b", False),  # it existed at the base and did not run there either
        ("test_new", True),  # the patch added a property that does not run
    ]


def test_without_the_base_tests_every_name_is_taken_to_have_existed() -> None:
    found = not_executed([METHOD], RESULTS, executed_at_base=set())
    assert [(f.test, f.introduced) for f in found] == [("TestA::test_b", False)]


def finding(kind: str, test: str | None, introduced: bool) -> Finding:
    return Finding(kind=kind, path=P, line=1, message="m", test=test, introduced=introduced)


def test_static_attribution_when_the_base_run_is_skipped() -> None:
    static = [
        finding("skip_marker", "TestA", False),  # a class marker stood at the base
        finding("skip_call", "test_total", True),  # introduced: does not excuse
        finding("entropy_patched", None, False),  # cannot keep a test from running
    ]
    found = not_executed([TOTAL, METHOD], RESULTS, None, static)
    assert [(f.test, f.introduced) for f in found] == [
        ("test_total", True),
        ("TestA::test_b", False),
    ]


def test_a_pre_existing_module_wide_finding_concerns_every_test() -> None:
    static = [finding("config_selection", None, False)]
    found = not_executed([TOTAL, METHOD], RESULTS, None, static)
    assert [f.introduced for f in found] == [False, False]


# --- tests a generator names (parameterized.expand, parameterized_class) ---------------------

EXPAND = DefinedTest("T::test_x", P, 30, generated="function")
PLAIN = DefinedTest("T::test_fee", P, 40)
CLASSY = DefinedTest("TestUser::test_name", P, 50, generated="class")


def test_a_generated_name_is_a_case_of_its_maker_without_its_index() -> None:
    made = Generated([EXPAND, PLAIN, CLASSY])
    ids = [
        f"{P}::T::test_x_052_in_2_hours",
        f"{P}::T::test_x_3",
        f"{P}::T::test_x_4",  # expand's names repeat but for the index: counted apart
        f"{P}::T::test_fee_0",  # test_fee is no generator: a test of its own
        f"{P}::T::test_xy_0",  # a name that merely starts the same
        f"{P}::TestUser_0_admin::test_name",
        f"{P}::TestUser_1::test_name",
        f"{P}::TestUser_1::test_other",
    ]
    assert made.cases(ids) == [
        (f"{P}::T::test_x", f"{P}::T::test_x[~in_2_hours]"),
        (f"{P}::T::test_x", f"{P}::T::test_x[~]"),
        (f"{P}::T::test_x", f"{P}::T::test_x[~#2]"),
        (f"{P}::T::test_fee_0", f"{P}::T::test_fee_0"),
        (f"{P}::T::test_xy_0", f"{P}::T::test_xy_0"),
        (f"{P}::TestUser::test_name", f"{P}::TestUser::test_name[~admin]"),
        (f"{P}::TestUser::test_name", f"{P}::TestUser::test_name[~]"),
        (f"{P}::TestUser_1::test_other", f"{P}::TestUser_1::test_other"),
    ]


def test_a_name_the_module_defines_is_its_own_even_where_a_generator_could_make_it() -> None:
    own = DefinedTest("T::test_x_1", P, 60)
    assert Generated([EXPAND, own]).function(f"{P}::T::test_x_1") == f"{P}::T::test_x_1"
    assert Generated([EXPAND]).function(f"{P}::T::test_x_1") == f"{P}::T::test_x"


def test_a_new_expand_test_ran_where_its_generated_names_ran() -> None:
    ran = [result(f"{P}::T::test_x_{i}_case", "passed", "passed") for i in range(3)]
    assert not_executed([EXPAND], ran, executed_at_base=set(), existed_at_base=set()) == []
    plain = DefinedTest("T::test_x", P, 30)  # the same names without the decorator: absent
    (found,) = not_executed([plain], ran, executed_at_base=set(), existed_at_base=set())
    assert found.message.startswith(
        "property T::test_x did not execute on host A (absent) and host B (absent)"
    )
    assert found.introduced


def test_renumbered_cases_are_the_same_cases_and_a_case_gone_is_named() -> None:
    base = {f"{P}::T::test_x_{i}_{word}": "passed" for i, word in enumerate("abcd")}
    inserted = [
        result(f"{P}::T::test_x_{i}_{word}", "passed", "passed") for i, word in enumerate("abzcd")
    ]
    assert cases_not_executed([EXPAND], inserted, base) == []
    dropped = [r for r in inserted if not r.id.endswith(("_z", "_c"))]
    (found,) = cases_not_executed([EXPAND], dropped, base)
    assert found.message.startswith(
        "property T::test_x: cases that executed at the base did not execute on "
        "host A (1 of 4: [~c]) and host B (1 of 4: [~c])"
    )
    assert (found.path, found.line) == (P, 30)
    # the base's decorator counts too: the head's test, no longer expanded, runs once
    assert executed_names(base, [EXPAND]) == {"T::test_x"}
    assert executed_names(base) == {f"T::test_x_{i}_{w}" for i, w in enumerate("abcd")}


def test_cases_that_ran_under_new_ids_count_and_only_the_shortfall_is_missing() -> None:
    """A fixture's scope change renumbers a parametrized test's ids (python-recurring-ical-
    events e6c9618): of the base's 8 cases, 4 ran under ids the base did not have. 4 of 8 did
    not run, not 8 of 8."""
    base = {f"{P}::test_y[case{i}]": "passed" for i in range(8)}
    head = [result(f"{P}::test_y[new{i}]", "passed", "passed") for i in range(4)]
    (found,) = cases_not_executed([DefinedTest("test_y", P, 12)], head, base)
    assert found.message == (
        "property test_y: cases that executed at the base did not execute on "
        "host A (4 of 8: 4 ran under new ids in place of the base's [case0], [case1], [case2] "
        "and 5 more) and host B (4 of 8: 4 ran under new ids in place of the base's [case0], "
        "[case1], [case2] and 5 more) — a case that does not run proves nothing"
    )
    mixed = [*head[:3], *(result(f"{P}::test_y[case{i}]", "passed", "passed") for i in (0, 1))]
    (found,) = cases_not_executed([DefinedTest("test_y", P, 12)], mixed, base)
    assert "host A (3 of 8: 3 ran under new ids in place of the base's [case2], [case3], " in (
        found.message
    )
    kept = [result(f"{P}::test_y[case{i}]", "passed", "passed") for i in range(6)]
    (found,) = cases_not_executed([DefinedTest("test_y", P, 12)], kept, base)
    assert "host A (2 of 8: [case6], [case7])" in found.message
