"""Parametrized cases by their place, not their id: `path::test[arg:0,other:2]`, the index
of each argument's value in its parametrize list (the gate's plugin records it as the JUnit
property `entropy_case`). An id built from a value read at collection — `time.time()` in a
parametrize list, as python-ulid's tests have it — differs between the hosts (host B's clock
runs years ahead) and between the head's run and the base's; the place does not. Pairing
falls back on it for ids that pair with nothing, and only there."""

from __future__ import annotations

import re

from entropy_action.evidence import junitcases
from entropy_action.evidence.hostreport import HostReport


def by_place(
    by_a: dict[str, junitcases.TestCase], by_b: dict[str, junitcases.TestCase]
) -> dict[str, str]:
    """Host A's id -> host B's, for the parametrized cases the ids do not pair but their
    places do (`entropy_case`): an id that holds a value read at collection (`time.time()`
    in a parametrize list) differs between the hosts, the case is the same."""
    lonely_b = {t.case: key for key, t in by_b.items() if t.case is not None and key not in by_a}
    if not lonely_b:
        return {}
    return {
        key: lonely_b[t.case]
        for key, t in by_a.items()
        if t.case is not None and key not in by_b and t.case in lonely_b
    }


class Base:
    """A base run's tests by id, and by place for an id the base spelled otherwise: only a
    base case whose id the head no longer has, and whose id has the head's shape but for its
    digits (a value read at collection). A case the patch inserts into a parametrize list
    takes the place of another at the base (icalendar 698624cacf4b added four cases in the
    middle of a list: the new `setting nothing` case, which runs no assertion by design, was
    read as the base's case at its place, which ran 14)."""

    def __init__(self, report: HostReport, places: dict[str, str]) -> None:
        self.by_id = junitcases.merge(report.tests)
        self.places = places
        self.by_place: dict[str, tuple[str, junitcases.TestCase]] | None = None

    def get(self, test_id: str) -> junitcases.TestCase | None:
        found = self.by_id.get(test_id)
        if found is not None or test_id not in self.places:
            return found
        if self.by_place is None:
            self.by_place = {
                t.case: (key, t)
                for key, t in self.by_id.items()
                if t.case is not None and key not in self.places
            }
        key, case = self.by_place.get(self.places[test_id], ("", None))
        return case if case is not None and _shape(key) == _shape(test_id) else None


def _shape(test_id: str) -> str:
    """The id with its digits masked: `time.time()` read at collection changes the digits."""
    return re.sub(r"[0-9]+", "#", test_id)


def of(a: HostReport | None, b: HostReport | None) -> dict[str, str]:
    """The head's parametrized cases: normalized id -> place (both hosts' ids)."""
    return {t.id: t.case for r in (a, b) if r is not None for t in r.tests if t.case is not None}
