"""outcomes.json: the gate's own record of what its plugin said while the tests ran (written
by hosts.channel), read back and checked."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from entropy_action.core.errors import GateError
from entropy_action.evidence.junitcases import RANK

MAX_OUTCOMES_JSON = 128 << 20


@dataclass(frozen=True)
class Outcomes:
    """outcomes.json, checked."""

    tests: dict[str, str]
    collect_errors: tuple[str, ...]
    counts: dict[str, int]
    complete: bool  # a begin and an end line arrived, nothing truncated


def parse_outcomes(path: Path, loaded: dict[str, Any]) -> Outcomes:
    """The checked record; GateError naming the file and field when it is damaged."""
    tests, errors, counts = loaded.get("tests"), loaded.get("collect_errors"), loaded.get("counts")
    if loaded.get("format") != 1:
        raise GateError(f"{path}: field 'format': must be 1")
    if not isinstance(tests, dict) or not set(tests.values()) <= RANK.keys():
        raise GateError(f"{path}: field 'tests': must map test ids to outcomes")
    if not isinstance(errors, list) or not all(isinstance(e, str) for e in errors):
        raise GateError(f"{path}: field 'collect_errors': must be a list of test ids")
    if not isinstance(counts, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in counts.values()
    ):
        raise GateError(f"{path}: field 'counts': must map categories to integers")
    complete = bool(loaded.get("begin")) and bool(loaded.get("end"))
    return Outcomes(tests, tuple(errors), counts, complete and loaded.get("truncated") is False)
