"""Tests a generator names at import time (`parameterized.expand`, `parameterized_class`), gated
end to end with the real `parameterized` package. In dateparser's shape (github.com/scrapinghub/
dateparser, tests/test_freshness_date_parser.py: 1,055 tests from `@parameterized.expand` in a
`unittest.TestCase`; 075712f2364e and 5c6d97f09b75 insert cases mid-list): the generated name
carries the case's index (`test_x_052_in_2_hours`), so an inserted case renumbers every later
one, and a new expand test defines a name pytest never collects (`test_x` itself). Both are
honest; removing a case is still a case that no longer runs.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.integration.test_honest_work import gate, kinds, manifest
from tests.support.helpers import Repo

PARSER = textwrap.dedent(
    """\
    UNITS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}


    def seconds(text):
        number, unit = text.split()
        return int(number) * UNITS[unit.rstrip("s")]
    """
)

CASES = [
    ("1 second", 1),
    ("2 minutes", 120),
    ("3 hours", 10800),
    ("1 day", 86400),
    ("2 days", 172800),
    ("5 seconds", 5),
    ("10 minutes", 600),
    ("4 hours", 14400),
    ("3 days", 259200),
    ("7 seconds", 7),
    ("11 minutes", 660),
]


def module(cases: list[tuple[str, int]], extra: str = "") -> str:
    listed = "".join(f"            param({text!r}, {value}),\n" for text, value in cases)
    return (
        textwrap.dedent(
            """\
            import unittest

            from parameterized import param, parameterized

            from duration import seconds


            class TestFreshness(unittest.TestCase):
                @parameterized.expand(
                    [
            """
        )
        + listed
        + "        ]\n"
        + "    )\n"
        + "    def test_relative(self, text, value):\n"
        + "        self.assertEqual(seconds(text), value)\n"
        + extra
    )


NEW_TEST = """
    @parameterized.expand([param("1 minute"), param("1 hour"), param("1 day")])
    def test_singular_units(self, text):
        self.assertGreater(seconds(text), 0)
"""


def base(repo: Repo, tmp_path: Path) -> str:
    repo.write("duration.py", PARSER)
    repo.write("tests/test_freshness.py", module(CASES))
    repo.write("entropy.yaml", manifest("tests/test_freshness.py", tmp_path / "pins"))
    return repo.commit("dateparser's shape")


def test_a_case_inserted_mid_list_renumbers_the_rest_and_is_a_merge(
    repo: Repo, tmp_path: Path
) -> None:
    start = base(repo, tmp_path)
    repo.write("duration.py", PARSER.replace('"day": 86400}', '"day": 86400, "week": 604800}'))
    repo.write("tests/test_freshness.py", module([*CASES[:2], ("1 week", 604800), *CASES[2:]]))
    repo.commit("weeks")
    verdict = gate(repo, start)
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]
    names = sorted(t["id"].rsplit("::", 1)[1] for t in verdict["tests"])
    assert names[:3] == [
        "test_relative_00_1_second",
        "test_relative_01_2_minutes",
        "test_relative_02_1_week",
    ]
    assert len(names) == 12


def test_a_new_expand_test_is_a_merge(repo: Repo, tmp_path: Path) -> None:
    start = base(repo, tmp_path)
    repo.write("tests/test_freshness.py", module(CASES, NEW_TEST))
    repo.commit("singular units")
    verdict = gate(repo, start)
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]
    assert sum("test_singular_units_" in t["id"] for t in verdict["tests"]) == 3


def test_a_case_removed_from_the_list_is_still_a_case_that_no_longer_runs(
    repo: Repo, tmp_path: Path
) -> None:
    start = base(repo, tmp_path)
    repo.write("tests/test_freshness.py", module([*CASES[:4], *CASES[5:]]))  # "2 days" gone
    repo.commit("drop a case")
    verdict = gate(repo, start)
    assert verdict["classification"] == "entropy_silenced", verdict["reasons"]
    assert kinds(verdict) == ["not_executed"]
    (finding,) = (f for f in verdict["findings"] if f["kind"] == "not_executed")
    assert finding["test"] == "TestFreshness::test_relative"
    assert finding["line"] == 23  # the def, below its ten cases
    assert finding["message"].startswith(
        "property TestFreshness::test_relative: cases that executed at the base did not execute "
        "on host A (1 of 11: [~2_days]) and host B (1 of 11: [~2_days])"
    )


NEW_CLASS = """

@parameterized_class(("text", "value"), [("1 minute", 60), ("2 hours", 7200)])
class TestUnits(unittest.TestCase):
    def test_value(self):
        self.assertEqual(seconds(self.text), self.value)
"""


def test_a_new_parameterized_class_and_a_case_inserted_into_it_are_merges(
    repo: Repo, tmp_path: Path
) -> None:
    start = base(repo, tmp_path)
    header = "from parameterized import param, parameterized\n"
    text = module(CASES).replace(
        header, header.replace("parameterized\n", "parameterized, parameterized_class\n")
    )
    repo.write("tests/test_freshness.py", text + NEW_CLASS)
    added = repo.commit("units by class")
    verdict = gate(repo, start)
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]
    classes = sorted({t["id"].split("::")[1] for t in verdict["tests"]} - {"TestFreshness"})
    assert classes == ["TestUnits_0_1_minute", "TestUnits_1_2_hours"]
    repo.write(
        "tests/test_freshness.py",
        text + NEW_CLASS.replace('[("1 minute", 60),', '[("3 days", 259200), ("1 minute", 60),'),
    )
    repo.commit("days first")
    verdict = gate(repo, added)
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]
    classes = sorted({t["id"].split("::")[1] for t in verdict["tests"]} - {"TestFreshness"})
    assert classes == ["TestUnits_0_3_days", "TestUnits_1_1_minute", "TestUnits_2_2_hours"]


DDT = """\
import unittest

from ddt import data, ddt, unpack

from duration import seconds


@ddt
class TestSeconds(unittest.TestCase):
    @data({cases})
    @unpack
    def test_seconds(self, text, value):
        self.assertEqual(seconds(text), value)
"""


def test_ddt_data_renumbered_by_an_inserted_value_is_a_merge_and_a_value_gone_is_not(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write("duration.py", PARSER)
    listed = ", ".join(repr(case) for case in CASES)
    repo.write("tests/test_freshness.py", DDT.format(cases=listed))
    repo.write("entropy.yaml", manifest("tests/test_freshness.py", tmp_path / "pins"))
    start = repo.commit("ddt's shape")
    inserted = ", ".join(repr(case) for case in [CASES[0], ("0 seconds", 0), *CASES[1:]])
    repo.write("tests/test_freshness.py", DDT.format(cases=inserted))
    repo.commit("zero")
    verdict = gate(repo, start)
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]
    names = sorted(t["id"].rsplit("::", 1)[1] for t in verdict["tests"])
    assert names[:2] == ["test_seconds_01___1_second___1_", "test_seconds_02___0_seconds___0_"]
    dropped = ", ".join(repr(case) for case in CASES[1:])
    repo.write("tests/test_freshness.py", DDT.format(cases=dropped))
    repo.commit("one second is too short")
    verdict = gate(repo, start)
    assert verdict["classification"] == "entropy_silenced", verdict["reasons"]
    assert kinds(verdict) == ["not_executed"]


def test_an_expectation_changed_to_pass_under_renumbered_names_is_still_found(
    repo: Repo, tmp_path: Path
) -> None:
    """The trick the renumbering allows: a case inserted at the top of the list shifts every
    later name, and an expectation changed to what broken code now returns no longer has a
    base case of the same name to be compared with. Cases pair by what they are (their
    name without its index), so the base's `2 minutes` == 120, failing on the head's code,
    meets the head's `2 minutes` == 2, passing: changed to pass."""
    start = base(repo, tmp_path)
    repo.write("duration.py", PARSER.replace('"minute": 60', '"minute": 1'))  # broken
    changed = [("0 seconds", 0), CASES[0], ("2 minutes", 2), ("10 minutes", 10)]
    kept = [case for case in CASES[1:] if "minute" not in case[0]]
    repo.write("tests/test_freshness.py", module([*changed, *kept, ("11 minutes", 11)]))
    repo.commit("minutes")
    verdict = gate(repo, start)
    assert verdict["classification"] == "entropy_silenced", verdict["reasons"]
    found = [f for f in verdict["findings"] if f["kind"] == "test_changed_to_pass"]
    assert [f["test"] for f in found] == ["TestFreshness::test_relative"], verdict["findings"]
    assert found[0]["message"].startswith(
        "property TestFreshness::test_relative fails with the base's module on the head's code "
        "(AssertionError: 2 != 120) and passes with the head's module"
    )
