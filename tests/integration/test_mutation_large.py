"""Mutation on a large module, as mimesis's `tests/test_schema.py` (1,861 tests) is: each
mutant's outcomes come back whatever their size; where the patch changed the property's test
side, each worker's two copies (the head's test side, the base's) run their sessions side by
side, so a mutant counts once both ran it; and a step that ran no mutant has no score, which
is never clean.

On mimesis every commit that changed a conftest said `budget reached: 0 of 40 mutants run`
and merged: a forked child's outcomes over ~1,800 tests filled the pipe and the child waited
in its write until its timeout; the head's copy ran its mutants until the budget ran out and
the base's copy, one after it, got none; and a step with no score was only a note."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import Repo

MODULE = "tests/test_total.py"
# The tests sleep (no CPU, so a loaded machine barely moves the timing): each copy's session
# takes ~SLEEP seconds per run of the module. Two sessions one after the other for the
# unmutated run and again for the mutants take 4 × that; side by side, 2 ×. The budget lies
# between, with several seconds of start-up to spare either way.
SLEEP = 6
BUDGET = 25
MANIFEST = """\
version: 1
property_id: total
module: tests/test_total.py
pins:
  rng_seed: 3
  tz: UTC
  temp_root: {temp_root}
constraints:
  mutation: all
  max_mutants: 2
  time_budget_seconds: {budget}
"""
TOTAL = """\
def total(values):
    result = 0
    for value in values:
        result += value
    return result
"""
PROPERTY = f"""\
import time

from total import total


def test_total_of_three():
    time.sleep({SLEEP / 3})
    assert total([1, 2, 3]) == 6


def test_total_of_none():
    time.sleep({SLEEP / 3})
    assert total([]) == 0


def test_total_of_negatives():
    time.sleep({SLEEP / 3})
    assert total([-1, -2]) == -3
"""
CONFTEST = """\
import pytest


@pytest.fixture
def numbers():
    return [1, 2, 3]
"""


def repo_with(
    repo: Repo, tmp_path: Path, budget: int, module: str = PROPERTY, mutants: int = 2
) -> Repo:
    manifest = MANIFEST.format(temp_root=tmp_path / "pins-tmp", budget=budget)
    repo.write("entropy.yaml", manifest.replace("max_mutants: 2", f"max_mutants: {mutants}"))
    repo.write("total.py", TOTAL)
    repo.write(MODULE, module)
    repo.write("tests/conftest.py", CONFTEST)
    repo.commit("base")
    # the test side changes beyond the module: every run is a pair of copies
    repo.write("tests/conftest.py", CONFTEST + "\n\n@pytest.fixture\ndef empty():\n    return []\n")
    return repo


def strength(repo: Repo) -> tuple[int, dict[str, Any], str]:
    out = repo.path.parent / "strength.json"
    done = repo.cli("strength", "--base-ref", "main", "--json", str(out))
    return done.code, json.loads(out.read_text(encoding="utf-8")), done.err


LARGE = """\
import pytest

from total import total


@pytest.mark.parametrize("count", range(2500))
def test_total_of_ones(count):
    assert total([1] * count) == count
"""


def test_a_mutant_s_outcomes_larger_than_a_pipe_holds_are_counted(
    repo: Repo, tmp_path: Path
) -> None:
    """2,500 outcomes are ~110 KB of JSON from the forked child (a pipe holds 64 KiB)."""
    manifest = MANIFEST.format(temp_root=tmp_path / "pins-tmp", budget=300)
    repo.write("entropy.yaml", manifest.replace("max_mutants: 2", "max_mutants: 1"))
    repo.write("total.py", TOTAL)
    repo.write(MODULE, LARGE)
    repo.commit("base")
    repo.write(MODULE, LARGE.replace("== count", "== count, count"))
    code, found, err = strength(repo)
    assert code == 0, err
    assert not [n for n in found["notes"] if "stopped at their time budget" in n], found
    assert found["mutation"]["mutants"] == 1, found
    assert found["mutation"]["base_killed"] == found["mutation"]["head_killed"] == 1, found


def test_both_copies_run_each_mutant_within_a_budget_one_after_the_other_would_miss(
    repo: Repo, tmp_path: Path
) -> None:
    code, found, err = strength(repo_with(repo, tmp_path, BUDGET))
    assert code == 0, err
    assert found["unmeasured"] == [], err
    assert not [n for n in found["notes"] if "budget" in n], found["notes"]
    assert found["mutation"]["mutants"] == 2, found
    assert found["mutation"]["base_killed"] == found["mutation"]["head_killed"] == 2
    assert "the patch changed the property's test side (tests/conftest.py)" in err


FIRST_KILLS = """\
import time

import pytest

from total import total


def test_total_kills_every_mutant_first():
    assert total([1, 2, 3]) == 6
    assert total([]) == 0


@pytest.mark.parametrize("count", range(4))
def test_total_of_ones_slowly(count):
    time.sleep(3)
    assert total([1] * count) == count
"""


@pytest.mark.parametrize("changed", ["conftest", "module"])
def test_each_module_s_run_stops_at_its_first_kill(
    repo: Repo, tmp_path: Path, changed: str
) -> None:
    """Every mutant fails the first test, then four tests of 3 s each reach it too. Each
    module's run stops at its first kill — in its own copy where the conftest changed, in
    one session holding both modules where only the module did — so three mutants on two
    workers fit in a budget that running every test against each of them would overrun
    (24 s on one worker with two copies, after ~12 s unmutated; 48 s in one session, after
    ~24 s)."""
    repo_with(repo, tmp_path, {"conftest": 30, "module": 45}[changed], FIRST_KILLS, mutants=3)
    if changed == "module":
        repo.git("checkout", "--", "tests/conftest.py")
        repo.write(MODULE, FIRST_KILLS.replace("== 0\n", "== 0\n    assert total([0]) == 0\n"))
    code, found, err = strength(repo)
    assert code == 0, err
    assert ("the patch changed the property's test side" in err) is (changed == "conftest")
    assert not [n for n in found["notes"] if "budget" in n], found["notes"]
    assert found["mutation"]["mutants"] == 3, found
    assert found["mutation"]["base_killed"] == found["mutation"]["head_killed"] == 3, found


@pytest.mark.parametrize("path", ["strength", "gate", "workflow"])
def test_a_step_that_ran_out_of_budget_unmeasured_has_no_score_and_is_not_clean(
    repo: Repo, tmp_path: Path, path: str
) -> None:
    """One second: the unmutated run cannot finish. The strength command exits 2, and the
    verdict is invalid, naming the constraint, on every path: the local gate, and the
    workflow's (host A's job measures strength beside its run; `verdict` and `compare` judge
    its folders with the one judge)."""
    repo_with(repo, tmp_path, 1)
    why = (
        "mutation: the unmutated run did not finish in the time budget "
        "(constraints.time_budget_seconds=1, set by the base's manifest: raise it there in a "
        "change of its own)"
    )
    if path == "strength":
        code, found, err = strength(repo)
        assert (code, found["mutation"], found["unmeasured"]) == (2, None, [why]), err
        assert f"entropy-gate: strength: cannot measure: {why}" in err
        return
    said = (
        f"invalid input: strength: cannot measure: {why} (constraints.mutation is 'all': the "
        "patch's strength must be measurable)"
    )
    if path == "gate":
        judged = {"gate": _judged(repo, "gate", "--base-ref", "main")}
    else:
        hosts = {h: str(repo.path.parent / f"host-{h}") for h in "ab"}
        for host, extra in (("a", ()), ("b", ("--isolate",))):
            args = ("--out", hosts[host], "--base-ref", "main", *extra)
            ran = repo.cli("run", "--host", host, *args)
            assert ran.code == 0, ran.err
        folders = ("--host-a", hosts["a"], "--host-b", hosts["b"], "--base-ref", "main")
        judged = {c: _judged(repo, c, *folders) for c in ("verdict", "compare")}
    for command, (code, verdict) in judged.items():
        assert (code, verdict["classification"]) == (2, "invalid"), (command, verdict["reasons"])
        assert said in verdict["reasons"], (command, verdict["reasons"])


def _judged(repo: Repo, command: str, *args: str) -> tuple[int, dict[str, Any]]:
    out = repo.path.parent / f"{command}.json"
    done = repo.cli(command, *args, "--json", str(out))
    return done.code, json.loads(out.read_text(encoding="utf-8"))
