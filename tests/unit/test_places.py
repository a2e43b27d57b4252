"""Parametrized cases by their place (verdict/places.py, the `entropy_case` property): the
fallback that pairs ids built from a value read at collection."""

from __future__ import annotations

from entropy_action.evidence import junitcases
from entropy_action.verdict import places

REPORT = """\
<testsuite name="pytest" tests="3">
  <testcase classname="t.ids" name="test_bad[from_ts-{value}]" file="t/ids.py" line="4">
    <properties>
      <property name="entropy_case" value="t/ids.py::test_bad[make:0,value:1]"/>
    </properties>
  </testcase>
  <testcase classname="t.ids" name="test_bad[from_ts-x]" file="t/ids.py" line="4">
    <properties>
      <property name="entropy_case" value="t/ids.py::test_bad[make:0,value:0]"/>
    </properties>
  </testcase>
  <testcase classname="t.ids" name="test_plain" file="t/ids.py" line="9"/>
</testsuite>
"""


def cases(value: str) -> dict[str, junitcases.TestCase]:
    tests, errors = junitcases.parse_junit(
        REPORT.format(value=value).encode(), "junit.xml", module="t/ids.py"
    )
    assert errors == ()
    return junitcases.merge(tests)


def test_the_place_is_read_from_the_case_and_nothing_else() -> None:
    got = cases("1768.5")
    assert got["t/ids.py::test_bad[from_ts-1768.5]"].case == ("t/ids.py::test_bad[make:0,value:1]")
    assert got["t/ids.py::test_plain"].case is None
    odd = REPORT.replace("t/ids.py::test_bad[make:0,value:1]", "x" * (junitcases.MAX_CASE + 1))
    parsed, _ = junitcases.parse_junit(odd.format(value="1").encode(), "j.xml", module=None)
    assert next(t.case for t in parsed) is None  # past the cap: ignored, as other odd values


def test_only_ids_that_pair_with_nothing_pair_by_place() -> None:
    a, b = cases("1768.5"), cases("1999.25")
    assert places.by_place(a, b) == {
        "t/ids.py::test_bad[from_ts-1768.5]": "t/ids.py::test_bad[from_ts-1999.25]"
    }
    assert places.by_place(a, a) == {}
    b_only = {k: v for k, v in b.items() if "from_ts-x" not in k}
    a_only = {k: v for k, v in a.items() if "1768" not in k}
    assert places.by_place(a_only, b_only) == {}  # a place with no partner: nothing to pair


def test_a_base_run_is_read_by_id_then_by_place() -> None:
    head = cases("1768.5")
    named = {test_id: t.case for test_id, t in head.items() if t.case is not None}

    class Report:
        tests = tuple(cases("1500.0").values())

    base = places.Base(Report(), named)  # type: ignore[arg-type]
    assert base.get("t/ids.py::test_plain") is not None
    moved = base.get("t/ids.py::test_bad[from_ts-1768.5]")
    assert moved is not None
    assert moved.raw_id == "t/ids.py::test_bad[from_ts-1500.0]"
    assert base.get("t/ids.py::test_gone") is None


def test_a_case_inserted_into_a_list_is_not_read_as_the_base_case_at_its_place() -> None:
    """icalendar 698624cacf4b: four cases added in the middle of a parametrize list; the new
    one at place 1 is not the base's case at place 1 (another id, another shape)."""
    base_report = REPORT.format(value="1500.0").replace("from_ts-x", "from_iso-y")
    tests, _ = junitcases.parse_junit(base_report.encode(), "junit.xml", module="t/ids.py")

    class Report:
        pass

    Report.tests = tuple(junitcases.merge(tests).values())  # type: ignore[attr-defined]
    head = cases("1768.5")  # the head's place 0 is `from_ts-x`: the base's was `from_iso-y`
    named = {test_id: t.case for test_id, t in head.items() if t.case is not None}
    base = places.Base(Report(), named)  # type: ignore[arg-type]
    assert base.get("t/ids.py::test_bad[from_ts-x]") is None
    # the digits alone differ at place 1: the same case, read at collection
    moved = base.get("t/ids.py::test_bad[from_ts-1768.5]")
    assert moved is not None
    assert moved.raw_id == "t/ids.py::test_bad[from_ts-1500.0]"


def test_a_base_case_the_head_still_has_is_not_lent_to_another_id_by_place() -> None:
    head = cases("1768.5")
    named = {test_id: t.case for test_id, t in head.items() if t.case is not None}
    named["t/ids.py::test_bad[from_ts-1500.0]"] = "t/ids.py::test_bad[make:0,value:9]"

    class Report:
        tests = tuple(cases("1500.0").values())

    base = places.Base(Report(), named)  # type: ignore[arg-type]
    assert base.get("t/ids.py::test_bad[from_ts-1768.5]") is None
