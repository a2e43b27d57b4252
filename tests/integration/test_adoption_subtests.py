"""Suites with subtests (unittest's subTest, as more-itertools uses it 11,000 times).

pytest counts every subtest's report in the JUnit suite's `tests` attribute, but writes no
testcase for a passing one and one <failure> per failing one inside its test's testcase. The
reader's check against removed testcases must not take that for tampering: found running the
gate on more-itertools (docs/adoption-trials.md), where every patch came out `invalid`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from entropy_action.core.errors import GateError
from entropy_action.evidence import junitstream
from tests.support.helpers import Repo

PROPERTIES = """\
import unittest


class Squares(unittest.TestCase):
    def test_squares_are_not_negative(self):
        for n in range(-3, 4):
            with self.subTest(n=n):
                self.assertGreaterEqual(n * n, 0)

    def test_doubling(self):
        for n in range(3):
            with self.subTest(n=n):
                self.assertEqual(n + n, 2 * n)
"""

MANIFEST = """\
version: 1
property_id: squares
module: tests/test_squares.py
pins:
  rng_seed: 5
  temp_root: {temp_root}
"""


@pytest.fixture
def with_subtests(repo: Repo, tmp_path: Path) -> tuple[Repo, str]:
    repo.write("tests/test_squares.py", PROPERTIES)
    repo.write("README.md", "# squares\n")
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    return repo, repo.commit("base")


def _gate(repo: Repo, base: str) -> tuple[int, dict[str, Any], str]:
    out = repo.path.parent / "verdict.json"
    result = repo.cli("gate", "--base-ref", base, "--json", str(out))
    return result.code, json.loads(out.read_text(encoding="utf-8")), result.out


def test_a_docs_only_patch_on_a_suite_with_subtests_is_a_merge_candidate(
    with_subtests: tuple[Repo, str],
) -> None:
    repo, base = with_subtests
    repo.write("README.md", "# squares\n\nSquares numbers.\n")
    code, verdict, out = _gate(repo, base)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), out
    assert sorted((t["id"], t["host_a"], t["host_b"]) for t in verdict["tests"]) == [
        ("tests/test_squares.py::Squares::test_doubling", "passed", "passed"),
        ("tests/test_squares.py::Squares::test_squares_are_not_negative", "passed", "passed"),
    ]


def test_failing_subtests_fail_their_test_on_both_hosts(with_subtests: tuple[Repo, str]) -> None:
    repo, base = with_subtests
    repo.write("tests/test_squares.py", PROPERTIES.replace("n + n", "n + n + (n > 0)"))
    code, verdict, out = _gate(repo, base)
    assert (code, verdict["classification"]) == (1, "real_defect"), out
    outcomes = {t["id"]: (t["host_a"], t["host_b"]) for t in verdict["tests"]}
    assert outcomes["tests/test_squares.py::Squares::test_doubling"] == ("failed", "failed")


def _suite(tests: int, failures: int, cases: str) -> bytes:
    return (
        f'<testsuites><testsuite name="pytest" tests="{tests}" failures="{failures}" '
        f'errors="0" skipped="0">{cases}</testsuite></testsuites>'
    ).encode()


def _case(name: str, subtests: int = 0, failures: int = 0) -> str:
    noted = (
        f'<properties><property name="{junitstream.SUBTESTS}" value="{subtests}"/></properties>'
        if subtests
        else ""
    )
    return f'<testcase name="{name}">{noted}{"<failure/>" * failures}</testcase>'


def _names(document: bytes) -> list[str]:
    return junitstream.read_cases([document], "x.xml", lambda elem: elem.get("name", ""))


def test_the_counts_of_noted_subtests_and_each_failure_element_are_accepted() -> None:
    # pytest 9 writes tests=5 for a test with 3 subtests (2 failing) and a plain test: each
    # subtest and each test counts once; the failing subtests are two <failure> elements
    document = _suite(5, 2, _case("a", subtests=3, failures=2) + _case("b"))
    assert _names(document) == ["a", "b"]


def test_testcases_removed_beyond_the_noted_subtests_are_still_refused() -> None:
    document = _suite(7, 0, _case("a", subtests=3) + _case("b"))
    with pytest.raises(GateError, match="says tests=7 but holds 5 such testcases"):
        _names(document)


def test_a_subtests_property_that_is_no_count_counts_nothing() -> None:
    cases = _case("a").replace("></testcase>", ">") + (
        f'<properties><property name="{junitstream.SUBTESTS}" value="-3"/></properties></testcase>'
    )
    with pytest.raises(GateError, match="says tests=4 but holds 1 such testcases"):
        _names(_suite(4, 0, cases))
