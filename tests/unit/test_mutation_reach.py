"""Lost reach (strength/mutation/measure.py): a skipped head test is no lost reach."""

from __future__ import annotations

from pathlib import Path

from entropy_action.strength.mutation import measure
from entropy_action.strength.mutation.harness import Outcome, Workspace

HEAD, BASE = "tests/test_x.py", "tests/base_test_x.py"
SPACE = Workspace(Path("/nonexistent"), HEAD, BASE, {}, (), "python", Path("/nonexistent"))


def outcome(head: str) -> Outcome:
    return Outcome(
        outcomes={f"{BASE}::test_a": "passed", f"{HEAD}::test_a": head},
        reached={f"{BASE}::test_a": [("src/x.py", 3)], f"{HEAD}::test_a": []},
    )


def test_a_head_test_that_ran_and_reaches_nothing_lost_its_reach() -> None:
    said = measure._lost_reach(outcome("passed"), SPACE)
    assert said == (
        "mutation: the head's tests reach none of the production functions the base's "
        "reached (src/x.py:3)"
    )


def test_a_skipped_head_test_reaches_nothing_because_it_did_not_run() -> None:
    """The skip rules judge it (click's and itsdangerous' skip patches were `invalid`)."""
    assert measure._lost_reach(outcome("skipped"), SPACE) is None
