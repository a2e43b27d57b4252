"""When a base test that fails on the head's code is evidence that the patch weakened the
property: the one decision both strength steps take (base_on_head.py's
`test_changed_to_pass`, and which base tests the mutation step counts as killers).

A base test failing on the head's code testifies against the head only where the head's
version of the same test passes (or is skipped: it stopped asking) on the same code: the
patch then changed the test to pass. Not evidence (pure):

- `excused` and `unmeasured` (strength/unmeasured.py): a changed signature the head's test
  calls differently, a test double re-signed for what production now passes it, a name the
  patch renamed or removed — the base's test cannot run on the head's code at all;
- `no_evidence`: the head's version fails there too (neither module detects anything at that
  spot: a property that already failed at the base, say, on the live clock), or the head has
  no test of that name (its removal is the scan's `test_removed`).

And the other way round, `moved`: a base test the head has no test of that name for is no
evidence of a removal where the head still runs its cases (it passes on the head's code, and
every mutant it killed is killed by the head's module): merged into a parametrized test, or
moved out of a class.

Later checks that widen what counts (the property's whole test side, a test-detection rule)
decide here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from entropy_action.strength import unmeasured
from entropy_action.strength.unmeasured import Patched

Kind = Literal["counted", "excused", "unmeasured", "no_evidence"]
GREEN = frozenset({"passed", "skipped"})
FAILING = frozenset({"failed", "error"})


@dataclass(frozen=True)
class Decision:
    kind: Kind
    name: str | None = None  # excused, unmeasured: the function or name the failure is about
    why: str = ""  # no_evidence: in words
    double: bool = False  # excused: the function is a test double the patch re-signed


def decide(test: str, message: str, head_outcome: str | None, patched: Patched) -> Decision:
    """How the base's `test` (`Class::name`), failing on the head's code with `message`,
    counts; `head_outcome` is the head's version of it on the same code (None: the head
    has no test of that name)."""
    if head_outcome is None:
        return Decision("no_evidence", why="the head has no test of that name")
    if head_outcome not in GREEN:
        return Decision(
            "no_evidence", why="the head's version fails on the same code too: neither detects"
        )
    failure = unmeasured.classify(test, message, patched)
    if failure.kind == "counted":
        return Decision("counted")
    return Decision(failure.kind, failure.name, double=failure.double)


def moved(
    removed: frozenset[str], passed_on_head: frozenset[str], lost_by: frozenset[str] | None
) -> frozenset[str]:
    """The base's tests the head has no test of that name for (`removed`, as the scan tells
    it: a word-for-word rename is still its own finding) whose cases the head still runs:
    each passed on the head's code with the base's module, and killed no mutant the head's
    module lets survive. Unknown without a mutation run (`lost_by` None): then none."""
    if lost_by is None:
        return frozenset()
    return frozenset(name for name in removed if name in passed_on_head and name not in lost_by)
