"""`changed` on a small module folds the confirmation into the first pass: the head's whole
module is traced once, and the child that finds the two versions of a changed test
disagreeing goes on with the unchanged tests that reach the mutant. The verdict is the same
as with the second pass (a traced run of the module, then a session of confirmations)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from entropy_action.manifest import pinfile
from entropy_action.strength.mutation import cache, harness, measure
from entropy_action.strength.mutation.harness import Outcome, Spec
from tests.integration.test_mutation_focus import BASE, FEES, MANIFEST, REDUNDANT, measure_fees
from tests.support.helpers import Repo

SLOW_GRACE = BASE.replace(
    "def test_grace():\n", "def test_grace():\n    __import__('time').sleep(1)\n"
).replace("from fees", "import time\n\nfrom fees")
DUE = "tests/test_fees.py::test_due_day"
GRACE = "tests/test_fees.py::test_grace"
BASE_DUE = "tests/test_fees_entropy_base.py::test_due_day"


def summary(measured: measure.Measured) -> list[tuple[str, tuple[str, ...], tuple[str, ...], bool]]:
    return [
        (r.mutant.describe(), r.base_killers, r.head_killers, r.timed_out) for r in measured.results
    ]


@pytest.mark.parametrize(
    ("base", "head"),
    [
        (BASE, REDUNDANT),  # an unchanged test still kills what the changed one let go
        (  # nothing else kills it: a weakening
            BASE.replace("def test_grace", "def _grace"),
            REDUNDANT.replace("def test_grace", "def _grace"),
        ),
    ],
)
def test_folded_and_two_pass_confirmation_give_the_same_results(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base: str, head: str
) -> None:
    folded = measure_fees(repo, tmp_path / "folded", base, head, "changed")
    monkeypatch.setattr(measure, "FOLD_MAX_TESTS", 0)  # every module is "large": two passes
    two_pass = measure_fees(repo, tmp_path / "two", base, head, "changed")
    assert folded.results
    assert summary(folded) == summary(two_pass)
    assert (folded.notes, folded.skipped) == (two_pass.notes, two_pass.skipped) == ((), 0)


def test_the_fold_confirms_with_the_unchanged_test(repo: Repo, tmp_path: Path) -> None:
    measured = measure_fees(repo, tmp_path, BASE, REDUNDANT, "changed")
    by = {r.mutant.describe(): r for r in measured.results}
    compare = by["fees.py:2: days_late > 30 → days_late >= 30"]
    assert compare.base_killers == ("test_due_day", "test_grace")
    assert compare.head_killers == ("test_grace",)


def space_for(repo: Repo, tmp_path: Path, module: str) -> harness.Workspace:
    repo.write("entropy.yaml", MANIFEST)
    repo.write("fees.py", FEES)
    repo.write("tests/test_fees.py", module)
    repo.commit("base")
    loaded = pinfile.parse(MANIFEST.encode(), "entropy.yaml", repo.path)
    return harness.workspace(repo.path, loaded, module.encode(), dict(os.environ), tmp_path / "w")


MUTATED = FEES.replace("days_late > 30", "days_late >= 30")  # both tests kill it


def test_a_child_confirms_only_where_the_sides_disagree(repo: Repo, tmp_path: Path) -> None:
    space = space_for(repo, tmp_path, BASE)
    disagree = Spec(
        "0", "fees.py", "late_fee", 1, MUTATED, [BASE_DUE], 30.0, False, (GRACE,), ((BASE_DUE,), ())
    )
    agree = Spec(
        "1",
        "fees.py",
        "late_fee",
        1,
        MUTATED,
        [BASE_DUE, DUE],
        30.0,
        False,
        (GRACE,),
        ((BASE_DUE,), (DUE,)),
    )
    found = space.run_mutants([disagree, agree], 60)
    assert found["0"] == Outcome({BASE_DUE: "failed", GRACE: "failed"}, {}, confirmed=True)
    assert found["1"] == Outcome({BASE_DUE: "failed", DUE: "failed"}, {})


@pytest.mark.parametrize(("more", "timed_out"), [(30.0, False), (0.0, True)])
def test_a_confirming_child_gets_the_confirmation_s_time_too(
    repo: Repo, tmp_path: Path, more: float, timed_out: bool
) -> None:
    """The changed test takes no time, the confirming one a second: the child's own timeout
    (0.8 s) covers the first part only, `confirm_timeout` the rest."""
    space = space_for(repo, tmp_path, SLOW_GRACE)
    spec = Spec(
        "0",
        "fees.py",
        "late_fee",
        1,
        MUTATED,
        [BASE_DUE],
        0.8,
        False,
        (GRACE,),
        ((BASE_DUE,), ()),
        more,
    )
    found = space.run_mutants([spec], 60)
    outcome = found["0"]
    assert outcome is not None
    assert outcome.timed_out is timed_out
    assert outcome.confirmed is not timed_out


def test_the_cache_remembers_a_confirmation(tmp_path: Path) -> None:
    outcome = Outcome({GRACE: "failed"}, {}, confirmed=True)
    cache.store(tmp_path, "k", outcome)
    assert cache.load(tmp_path, "k") == outcome
    cache.store(tmp_path, "n", Outcome({GRACE: "passed"}, {}))
    loaded = cache.load(tmp_path, "n")
    assert loaded is not None
    assert not loaded.confirmed


@pytest.mark.parametrize(("most", "whole"), [(2, True), (1, False)])
def test_a_module_runs_whole_only_when_it_holds_few_enough_tests(
    repo: Repo, tmp_path: Path, most: int, whole: bool
) -> None:
    space = space_for(repo, tmp_path, BASE)
    only = ["tests/test_fees.py::test_due_day"]
    found = space.run([space.head_module], 60, (), only, [space.head_module], most)
    assert found.whole is whole
    assert sorted(found.outcomes) == ([DUE, GRACE] if whole else [DUE])


PROPERTY_FEES = """\
class Fee:
    def __init__(self, days_late):
        self.days_late = days_late

    @property
    def late(self):
        return self.days_late > 30
"""
PROPERTY_BASE = """\
from fees import Fee


def test_due_day():
    assert not Fee(30).late
    assert Fee(31).late


def test_grace():
    assert not Fee(30).late
"""
PROPERTY_HEAD = PROPERTY_BASE.replace("    assert not Fee(30).late\n    assert", "    assert", 1)


def test_a_mutant_the_fork_cannot_swap_is_confirmed_in_a_second_pass(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A property's getter runs in a process of its own, which does not confirm: the second
    pass does, from the first pass's trace, with the same result as the two-pass path."""
    repo.write("entropy.yaml", MANIFEST)
    repo.write("fees.py", PROPERTY_FEES)
    repo.write("tests/test_fees.py", PROPERTY_HEAD)
    repo.commit("head")
    loaded = pinfile.parse(MANIFEST.encode(), "entropy.yaml", repo.path)

    def run(folder: Path) -> measure.Measured:
        inputs = measure.Inputs(
            root=repo.path,
            base_module=PROPERTY_BASE.encode(),
            head_module=PROPERTY_HEAD.encode(),
            touched=frozenset(),
            seed=5,
            budget=measure.Budget("changed", 40, 120),
        )
        return measure.measure(
            inputs,
            lambda index: harness.workspace(
                repo.path, loaded, PROPERTY_BASE.encode(), dict(os.environ), folder / index
            ),
        )

    folded = run(tmp_path / "folded")
    by = {r.mutant.describe(): r for r in folded.results}
    compare = by["fees.py:7: self.days_late > 30 → self.days_late >= 30"]
    assert compare.base_killers == ("test_due_day", "test_grace")
    assert compare.head_killers == ("test_grace",)
    monkeypatch.setattr(measure, "FOLD_MAX_TESTS", 0)
    assert summary(folded) == summary(run(tmp_path / "two"))
