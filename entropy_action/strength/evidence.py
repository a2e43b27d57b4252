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
  no test of that name (its removal is the scan's `test_removed`, or it moved: see
  `moved`).

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
