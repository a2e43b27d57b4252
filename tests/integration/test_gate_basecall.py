"""The tests of tests/unit/test_gate_basecall.py that start a process (pytest runs, git)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import Repo
from tests.unit.test_gate_basecall import MANIFEST, MODULE, _gate


@pytest.fixture
def cases(repo: Repo, tmp_path: Path) -> tuple[Repo, str]:
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("tests/test_cases.py", MODULE)
    repo.write("tests/cases.txt", "1 2 3 4\n")
    repo.write("README.md", "cases\n")
    return repo, repo.commit("base")


def test_a_green_docs_only_patch_runs_no_base(cases: tuple[Repo, str]) -> None:
    repo, base = cases
    repo.write("README.md", "cases, documented\n")
    repo.write("docs/guide.rst", "Guide\n=====\n")
    code, verdict, reports_dir = _gate(repo, base)
    assert (code, verdict["classification"]) == (0, "merge_candidate")
    assert not (reports_dir / "host-a" / "base").exists()
    assert [(t["host_a"], t["host_b"], t["base_a"]) for t in verdict["tests"]] == [
        ("passed", "passed", None)
    ] * 4


def test_a_case_dropped_through_a_data_file_is_still_caught(cases: tuple[Repo, str]) -> None:
    repo, base = cases
    repo.write("tests/cases.txt", "1 2 4\n")
    code, verdict, reports_dir = _gate(repo, base)
    assert (code, verdict["classification"]) == (1, "entropy_silenced")
    assert [f["kind"] for f in verdict["findings"] if f["introduced"]] == ["not_executed"]
    assert (reports_dir / "host-a" / "base" / "host.json").exists()


def test_a_docs_only_patch_over_a_skip_still_runs_the_base(cases: tuple[Repo, str]) -> None:
    repo, _ = cases
    repo.write(
        "tests/test_cases.py",
        MODULE + "\n\n@pytest.mark.skip(reason='flaky')\ndef test_skipped():\n    pass\n",
    )
    base = repo.commit("a skip stands at the base")
    repo.write("README.md", "cases, documented\n")
    code, verdict, reports_dir = _gate(repo, base)
    assert (code, verdict["classification"]) == (0, "merge_candidate")
    assert (reports_dir / "host-a" / "base" / "host.json").exists()
    (skipped,) = [t for t in verdict["tests"] if t["id"].endswith("test_skipped")]
    assert (skipped["host_a"], skipped["base_a"]) == ("skipped", "skipped")
    assert [f["introduced"] for f in verdict["findings"] if f["kind"] == "not_executed"] == [False]
