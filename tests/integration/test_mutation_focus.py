"""`changed` mode runs the changed tests, base and head versions, and the unchanged tests only
where those disagree; the time budget is a hard stop."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from entropy_action.manifest import pinfile
from entropy_action.strength.mutation import changes, harness, measure
from entropy_action.strength.mutation.harness import Spec
from tests.support.helpers import Repo

MANIFEST = """\
version: 1
property_id: fees
module: tests/test_fees.py
pins:
  rng_seed: 5
  tz: UTC
"""

FEES = """\
def late_fee(amount, days_late):
    if days_late > 30:
        return amount // 10
    return 0
"""

BASE = """\
from fees import late_fee


def test_due_day():
    assert late_fee(1000, 30) == 0
    assert late_fee(1000, 31) == 100


def test_grace():
    assert late_fee(1000, 30) == 0
"""
# the head drops test_due_day's first assertion: test_grace, unchanged, still makes it
REDUNDANT = BASE.replace("    assert late_fee(1000, 30) == 0\n    assert", "    assert", 1)


def test_the_changes_name_the_tests_and_whether_anything_else_differs() -> None:
    base = (
        b"import os\n\n\ndef helper():\n    return 1\n\n\ndef test_a():\n    assert 1\n\n\n"
        b"class TestT:\n    x = 1\n\n    def setup_method(self):\n        pass\n\n"
        b"    def test_m(self):\n        assert 2\n"
    )
    same = changes.between(base, base)
    assert same == changes.Changes(frozenset(), frozenset({"test_a", "TestT::test_m"}), True)
    changed = changes.between(base, base.replace(b"assert 2", b"assert 3"))
    assert (changed.tests, changed.only_tests) == (frozenset({"TestT::test_m"}), True)
    added = changes.between(base, base + b"\n\ndef test_new():\n    pass\n")
    assert (added.tests, added.only_tests) == (frozenset({"test_new"}), True)
    removed = changes.between(base, base.replace(b"def test_a", b"def _a"))
    assert removed.tests == frozenset({"test_a"})
    assert not removed.only_tests
    for other in (b"return 1", b"x = 1", b"pass", b"import os"):
        edited = changes.between(base, base.replace(other, other + b"; y = 0"))
        assert (edited.tests, edited.only_tests) == (frozenset(), False), other
    assert not changes.between(b"def (:", base).only_tests


# (statement added to the head, whether only the tests still count as changed)
ADDED_IMPORTS = [
    ("import pytest", True),  # loaded before any test module: `@pytest.mark.skip` needs it
    ("import unittest", True),  # the standard library: defines, does nothing else
    ("from unittest import mock", True),
    ("import os.path as osp", True),
    ("import fees", False),  # the code under test: importing it may run anything
    ("import freezegun", False),  # a third-party import may patch the clock on import
    ("import os", False),  # the base binds `os` already (`import os as system` below)
    ("from os import getcwd as helper", False),  # rebinds a name the base uses
    ("from math import pow", False),  # shadows a builtin an unchanged test may call
    ("from os import *", False),  # binds what it likes
    ("import this", False),  # prints on import
    ("from . import fees", False),  # relative: the project's own code
]


@pytest.mark.parametrize(("line", "inert"), ADDED_IMPORTS)
def test_an_added_import_that_cannot_reach_an_unchanged_test_keeps_the_focus(
    line: str, inert: bool
) -> None:
    base = (
        b"import os\n\n\ndef helper():\n    return os.sep\n\n\ndef test_a():\n    assert helper()\n"
    )
    head = base.replace(b"import os\n", b"import os\n" + line.encode() + b"\n")
    head = head.replace(b"def test_a():", b"@skip\ndef test_a():")
    found = changes.between(
        base.replace(b"import os\n", b"import os as system\nimport os\n"),
        head.replace(b"import os\n", b"import os as system\nimport os\n", 1),
    )
    assert found.tests == frozenset({"test_a"})
    assert found.only_tests is inert, line


def test_a_moved_or_removed_import_still_runs_every_test() -> None:
    base = b"import sys\nimport os\n\n\ndef test_a():\n    assert os.sep\n"
    moved = b"import os\nimport sys\n\n\ndef test_a():\n    assert os.sep\n"
    assert not changes.between(base, moved).only_tests
    removed = b"import os\n\n\ndef test_a():\n    assert os.sep\n"
    assert not changes.between(base, removed).only_tests


def test_a_skip_that_adds_its_import_weakens_as_the_whole_module_says(
    repo: Repo, tmp_path: Path
) -> None:
    """The patch the trials make: `import pytest` added with a skip marker. The focused run
    (the skipped test's two versions, then the unchanged test where they disagree) finds the
    same weakening as running every test against every mutant."""
    head = "import pytest\n" + BASE.replace(
        "def test_due_day", "@pytest.mark.skip(reason='flaky on CI')\ndef test_due_day"
    )
    focused = measure_fees(repo, tmp_path / "changed", BASE, head, "changed")
    whole = measure_fees(repo, tmp_path / "all", BASE, head, "all")
    assert measure.NO_TEST_CHANGED not in focused.notes
    assert "fees.py:2: 30 → 31" in weakened(focused)  # only the skipped test killed it
    assert "fees.py:2: days_late > 30 → days_late >= 30" not in weakened(focused)  # test_grace
    assert sorted(weakened(focused)) == sorted(weakened(whole))


def measure_fees(repo: Repo, tmp: Path, base: str, head: str, mode: str) -> measure.Measured:
    repo.write("entropy.yaml", MANIFEST)
    repo.write("fees.py", FEES)
    repo.write("tests/test_fees.py", head)
    repo.commit("head")
    loaded = pinfile.parse(MANIFEST.encode(), "entropy.yaml", repo.path)
    inputs = measure.Inputs(
        root=repo.path,
        base_module=base.encode(),
        head_module=head.encode(),
        touched=frozenset(),
        seed=5,
        budget=measure.Budget(mode, 40, 120),
    )

    def workspace(index: Path) -> harness.Workspace:
        return harness.workspace(repo.path, loaded, base.encode(), dict(os.environ), tmp / index)

    return measure.measure(inputs, workspace)


def weakened(measured: measure.Measured) -> list[str]:
    return [
        r.mutant.describe()
        for r in measured.results
        if not r.timed_out and r.base_killers and not r.head_killers
    ]


@pytest.mark.parametrize("mode", ["changed", "all"])
def test_an_assertion_an_unchanged_test_still_makes_is_no_weakening(
    repo: Repo, tmp_path: Path, mode: str
) -> None:
    measured = measure_fees(repo, tmp_path, BASE, REDUNDANT, mode)
    assert measured.results
    assert weakened(measured) == []
    by = {r.mutant.describe(): r for r in measured.results}
    compare = by["fees.py:2: days_late > 30 → days_late >= 30"]
    if mode == "changed":  # the unchanged test_grace confirms it in both modules
        assert "test_grace" in compare.base_killers
        assert "test_grace" in compare.head_killers
    else:  # each module's run stops at its first kill: the head's is the unchanged test
        assert (compare.base_killers, compare.head_killers) == (("test_due_day",), ("test_grace",))


def test_without_the_unchanged_test_the_same_patch_weakens(repo: Repo, tmp_path: Path) -> None:
    alone = BASE.split("\n\n\ndef test_grace", maxsplit=1)[0] + "\n"
    head = REDUNDANT.split("\n\n\ndef test_grace")[0] + "\n"
    measured = measure_fees(repo, tmp_path, alone, head, "changed")
    assert "fees.py:2: days_late > 30 → days_late >= 30" in weakened(measured)


def test_a_patch_that_changed_no_test_starts_nothing(repo: Repo, tmp_path: Path) -> None:
    head = BASE + "\n# reviewed\n"
    measured = measure_fees(repo, tmp_path, BASE, head, "changed")
    assert (measured.results, measured.notes) == ((), (measure.NO_TEST_CHANGED,))


SLOW = """\
import time

from fees import late_fee


def test_slow():
    time.sleep(1)
    assert late_fee(1000, 31) == 100
"""


def test_the_time_budget_stops_a_session_and_leaves_the_rest_unrun(
    repo: Repo, tmp_path: Path
) -> None:
    """Five mutants whose test takes a second each, two and a half seconds of budget (the
    session's start and collection included): some never run, and have no outcome."""
    repo.write("entropy.yaml", MANIFEST)
    repo.write("fees.py", FEES)
    repo.write("tests/test_fees.py", SLOW)
    repo.commit("base")
    loaded = pinfile.parse(MANIFEST.encode(), "entropy.yaml", repo.path)
    space = harness.workspace(repo.path, loaded, SLOW.encode(), dict(os.environ), tmp_path / "w")
    mutated = FEES.replace("amount // 10", "amount // 11")
    node = "tests/test_fees.py::test_slow"
    batch = [Spec(str(i), "fees.py", "late_fee", 1, mutated, [node], 30.0) for i in range(5)]
    found = space.run_mutants(batch, 2.5)
    assert 0 < len(found) < 5
    assert all(o is not None and o.outcomes == {node: "failed"} for o in found.values())
    assert all(o is not None and not o.timed_out for o in found.values())


def test_a_confirming_run_stops_at_the_first_kill(repo: Repo, tmp_path: Path) -> None:
    repo.write("entropy.yaml", MANIFEST)
    repo.write("fees.py", FEES)
    repo.write("tests/test_fees.py", BASE)
    repo.commit("base")
    loaded = pinfile.parse(MANIFEST.encode(), "entropy.yaml", repo.path)
    space = harness.workspace(repo.path, loaded, BASE.encode(), dict(os.environ), tmp_path / "w")
    mutated = FEES.replace("days_late > 30", "days_late >= 30")
    nodes = ["tests/test_fees.py::test_due_day", "tests/test_fees.py::test_grace"]
    every = Spec("0", "fees.py", "late_fee", 1, mutated, nodes, 30.0)
    first = Spec("1", "fees.py", "late_fee", 1, mutated, nodes, 30.0, until_killed=True)
    found = space.run_mutants([every, first], 60)
    assert found["0"] is not None
    assert found["0"].outcomes == dict.fromkeys(nodes, "failed")
    assert found["1"] is not None
    assert found["1"].outcomes == {nodes[0]: "failed"}
