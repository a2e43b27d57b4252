"""pytest's terminal text: the summary line at the end of pytest.log, held against the
channel's counts."""

from __future__ import annotations

import os
import re
from pathlib import Path

from entropy_action.core.errors import GateError
from entropy_action.core.layout import PYTEST_LOG
from entropy_action.evidence.bounded import open_regular
from entropy_action.evidence.outcomes import Outcomes

# terminal categories compared with the summary line at the end of pytest.log
COMPARED = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")


_SUMMARY = re.compile(r"^=*\s*((?:\d+ [a-z][a-z ]*?)(?:, \d+ [a-z][a-z ]*?)*) in [\d.]+s\b")


_PLURAL = {"errors": "error", "warnings": "warning"}


def summary_counts(tail: str) -> dict[str, int] | None:
    """The counts of pytest's terminal summary line ("1 failed, 2 passed in 0.12s"), the
    last one in `tail`; None when there is none."""
    for line in reversed(tail.splitlines()[-20:]):
        found = _SUMMARY.match(line.strip())
        if found:
            counts: dict[str, int] = {}
            for part in found.group(1).split(", "):
                number, _, word = part.partition(" ")
                word = _PLURAL.get(word.strip(), word.strip())
                counts[word] = counts.get(word, 0) + int(number)
            return counts
    return None


def summary_disagrees(summary: dict[str, int], counts: dict[str, int]) -> str | None:
    """The first compared category in which the terminal summary and the channel differ."""
    for name in COMPARED:
        said, heard = summary.get(name, 0), counts.get(name, 0)
        if said != heard:
            return f"{said} {name} in pytest's summary, {heard} as the gate's channel saw them"
    return None


SUMMARY_TAIL = 4096  # bytes at the end of pytest.log searched for its summary line


def check_summary(dir: Path, heard: Outcomes) -> None:
    """pytest's terminal summary line, where pytest.log ends in one, against the channel."""
    path = dir / PYTEST_LOG
    if not heard.complete or not os.path.lexists(path):
        return
    with open_regular(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        handle.seek(max(0, size - SUMMARY_TAIL))
        tail = handle.read(SUMMARY_TAIL).decode("utf-8", "replace")
    summary = summary_counts(tail)
    why = None if summary is None else summary_disagrees(summary, heard.counts)
    if why is not None:
        raise GateError(
            f"{path}: pytest's terminal summary disagrees with the gate's channel ({why}): "
            "the report was rewritten after the tests ran"
        )
