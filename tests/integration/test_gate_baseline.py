"""The base ref's own runs: failures and cases judged against the base, not in the abstract."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import Repo

MANIFEST = """\
version: 1
property_id: years
module: tests/test_years.py
pins:
  rng_seed: 3
  tz: UTC
  temp_root: {temp_root}
"""

# A suite that already reads the live clock at the base, like dateutil's two-digit years:
# green on the laptop, red on host B, before any patch.
COUPLED_AT_BASE = """\
import time

import pytest


def test_live_year_is_this_decade():
    assert time.localtime().tm_year < 2030


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_squares(n):
    assert n * n >= n
"""


@pytest.fixture
def years(repo: Repo, tmp_path: Path) -> tuple[Repo, str]:
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("tests/test_years.py", COUPLED_AT_BASE)
    repo.write("README.md", "years\n")
    return repo, repo.commit("base")


def _gate(repo: Repo, base: str) -> tuple[int, dict[str, Any], str]:
    out = repo.path.parent / "verdict.json"
    result = repo.cli(
        "gate", "--base-ref", base, "--json", str(out), "--out", str(repo.path.parent / "reports")
    )
    return result.code, json.loads(out.read_text(encoding="utf-8")), result.out


def test_a_host_b_failure_that_stood_at_the_base_still_rejects_a_docs_patch(
    years: tuple[Repo, str],
) -> None:
    repo, base = years
    repo.write("README.md", "years, documented\n")
    code, verdict, out = _gate(repo, base)
    assert (code, verdict["classification"]) == (1, "env_coupled"), out
    (coupled,) = [t for t in verdict["tests"] if t["id"].endswith("test_live_year_is_this_decade")]
    assert (coupled["host_a"], coupled["host_b"]) == ("passed", "failed")
    assert (coupled["base_a"], coupled["base_b"]) == ("passed", "failed")
    assert coupled["failed_at_base"] is True
    assert verdict["reasons"][1] == (
        "host B: fail (1 failed; 1 failed at the base ref too: the patch did not cause it, "
        "and it does not fix it)"
    )
    assert (
        "(failed at the base ref too on host B: the patch did not cause it, and it does not "
        "fix it)\n" in out
    )
    assert (repo.path.parent / "reports" / "host-b" / "base" / "host.json").exists()


def test_a_patch_that_removes_the_live_clock_read_is_a_merge_candidate(
    years: tuple[Repo, str],
) -> None:
    repo, base = years
    repo.write(
        "tests/test_years.py",
        COUPLED_AT_BASE.replace(
            "time.localtime().tm_year < 2030",
            "time.gmtime(int(os.environ['ENTROPY_RNG_SEED'])).tm_year < 2030",
        ).replace("import time\n", "import os\nimport time\n"),
    )
    code, verdict, out = _gate(repo, base)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), out
    assert {t["failed_at_base"] for t in verdict["tests"]} == {False}


def test_a_property_that_fails_at_the_base_is_a_real_defect_under_a_docs_patch(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write(
        "tests/test_years.py",
        "def test_total_is_order_free():\n    assert sum([0.1, 0.2, 0.3]) == sum([0.3, 0.2, 0.1])\n"
        "\n\ndef test_len():\n    assert len([1, 2]) == 2\n",
    )
    base = repo.commit("base")
    repo.write("README.md", "docs only\n")
    code, verdict, out = _gate(repo, base)
    assert (code, verdict["classification"], verdict["merge"]) == (1, "real_defect", False), out
    by_id = {t["id"].split("::")[-1]: t for t in verdict["tests"]}
    failing = by_id["test_total_is_order_free"]
    assert (failing["host_a"], failing["host_b"], failing["base_a"]) == ("failed",) * 3
    assert (failing["failed_at_base"], by_id["test_len"]["failed_at_base"]) == (True, False)
    assert verdict["reasons"][0] == (
        "host A: fail (1 failed; 1 failed at the base ref too: the patch did not cause it, "
        "and it does not fix it)"
    )


def test_a_green_host_b_needs_no_base_run_on_host_b(years: tuple[Repo, str]) -> None:
    """A production-only patch: host B passed, nothing of the test side changed, so host B's
    base run is never made."""
    repo, _ = years
    repo.write("tests/test_years.py", COUPLED_AT_BASE.replace("< 2030", "> 2000"))
    base = repo.commit("the test no longer depends on the year")
    repo.write("years.py", "AGE = 2\n")
    code, verdict, _ = _gate(repo, base)
    assert (code, verdict["classification"]) == (0, "merge_candidate")
    assert not (repo.path.parent / "reports" / "host-b" / "base").exists()
    assert {t["base_b"] for t in verdict["tests"]} == {None}


def test_a_test_fixed_for_host_b_is_measured_there_against_the_base(
    years: tuple[Repo, str],
) -> None:
    """The test side changed and host B passed: host B runs the base's test on the head's
    code (it fails there: the year) and the base's own run on host B (it failed there too),
    so the failure is pre-existing — a note, not a test changed to pass. The base run is not
    read beside a green host B."""
    repo, base = years
    repo.write("tests/test_years.py", COUPLED_AT_BASE.replace("< 2030", "> 2000"))
    code, verdict, _ = _gate(repo, base)
    assert (code, verdict["classification"]) == (0, "merge_candidate")
    assert (repo.path.parent / "reports" / "host-b" / "base" / "host.json").is_file()
    assert {t["base_b"] for t in verdict["tests"]} == {None}
    assert any("fails on host B at the base too" in r for r in verdict["reasons"]), verdict


def test_a_new_coupled_test_is_still_env_coupled(years: tuple[Repo, str]) -> None:
    repo, base = years
    repo.write(
        "tests/test_years.py",
        COUPLED_AT_BASE + "\n\ndef test_month_is_not_far_off():\n"
        "    assert time.time() < 1_900_000_000\n",
    )
    code, verdict, _ = _gate(repo, base)
    assert (code, verdict["classification"]) == (1, "env_coupled")
    assert verdict["reasons"][1] == (
        "host B: fail (2 failed; 1 failed at the base ref too: the patch did not cause it, "
        "and it does not fix it)"
    )
    new = [t for t in verdict["tests"] if t["id"].endswith("test_month_is_not_far_off")]
    assert [(t["host_b"], t["base_b"], t["failed_at_base"]) for t in new] == [
        ("failed", "missing", False)
    ]


def test_one_parametrized_case_skipped_at_run_time_is_caught(years: tuple[Repo, str]) -> None:
    repo, base = years
    repo.write(
        "tests/test_years.py",
        COUPLED_AT_BASE.replace(
            "    assert n * n >= n\n",
            "    if n == 3:\n        getattr(pytest, 'sk' + 'ip')('slow')\n    assert n * n >= n\n",
        ),
    )
    code, verdict, _ = _gate(repo, base)
    assert (code, verdict["classification"]) == (1, "entropy_silenced")
    (finding,) = [f for f in verdict["findings"] if f["introduced"]]
    assert (finding["kind"], finding["path"], finding["line"]) == (
        "not_executed",
        "tests/test_years.py",
        11,
    )
    assert finding["message"] == (
        "property test_squares: cases that executed at the base did not execute on host A "
        "(1 of 4: [3]) and host B (1 of 4: [3]) — a case that does not run proves nothing"
    )


def test_a_dropped_parametrized_case_is_caught(years: tuple[Repo, str]) -> None:
    repo, base = years
    repo.write("tests/test_years.py", COUPLED_AT_BASE.replace("[1, 2, 3, 4]", "[1, 2, 4]"))
    code, verdict, _ = _gate(repo, base)
    assert (code, verdict["classification"]) == (1, "entropy_silenced")
    assert [f["kind"] for f in verdict["findings"] if f["introduced"]] == ["not_executed"]


def test_tests_inherited_from_another_file_keep_the_modules_ids(repo: Repo, tmp_path: Path) -> None:
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "t"))
    repo.write(
        "tests/shared_cases.py",
        "class SharedCases:\n    def test_a(self):\n        assert 1\n\n"
        "    def test_b(self):\n        assert 2\n",
    )
    repo.write(
        "tests/test_years.py",
        "from tests.shared_cases import SharedCases\n\n\nclass TestYears(SharedCases):\n    pass\n",
    )
    repo.write("tests/__init__.py", "")
    base = repo.commit("base")
    repo.write(
        "tests/test_years.py",
        "import pytest\n\nfrom tests.shared_cases import SharedCases\n\n\n"
        "class TestYears(SharedCases):\n"
        "    @pytest.mark.skip(reason='flaky')\n    def test_b(self):\n        pass\n",
    )
    code, verdict, _ = _gate(repo, base)
    assert [t["id"] for t in verdict["tests"]] == [
        "tests/test_years.py::TestYears::test_a",
        "tests/test_years.py::TestYears::test_b",
    ]
    assert (code, verdict["classification"]) == (1, "entropy_silenced")


def test_a_pytest_ini_below_the_root_keeps_ids_relative_to_the_repository(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "t"))
    repo.write("tests/pytest.ini", "[pytest]\nmarkers =\n    slow: slow tests\n")
    repo.write("tests/test_years.py", "def test_a():\n    assert sum([1, 2]) == 3\n")
    base = repo.commit("base")
    repo.write("README.md", "docs\n")
    code, verdict, _ = _gate(repo, base)
    assert [t["id"] for t in verdict["tests"]] == ["tests/test_years.py::test_a"]
    assert (code, verdict["classification"], verdict["findings"]) == (0, "merge_candidate", [])


def test_a_renamed_property_is_one_finding_at_its_new_def(years: tuple[Repo, str]) -> None:
    """Renamed word for word, its decorator rewritten (the same cases in another order): not
    what ran around it at the base, so not let go as the same test (a rename that keeps its
    decorators and fixtures is a note: test_honest_restructured)."""
    repo, base = years
    renamed = COUPLED_AT_BASE.replace("def test_squares", "def test_sq")
    repo.write("tests/test_years.py", renamed.replace("[1, 2, 3, 4]", "[4, 3, 2, 1]"))
    code, verdict, _ = _gate(repo, base)
    assert (code, verdict["classification"]) == (1, "entropy_silenced")
    introduced = [(f["kind"], f["line"]) for f in verdict["findings"] if f["introduced"]]
    assert introduced == [("test_removed", 11)]
