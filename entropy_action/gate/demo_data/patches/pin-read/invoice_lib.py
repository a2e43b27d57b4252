"""Invoice totals: the application code under test in the demo."""

from __future__ import annotations

import os
import time
from datetime import datetime, timezone

LATE_FEE_CENTS = 500


def _now() -> datetime:
    # "Deterministic under the gate": the pinned clock when it is set, the real one otherwise.
    seconds = float(os.environ.get("ENTROPY_CLOCK_UNIX") or time.time())
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


def total_for(amounts: list[int], as_of: datetime, due: datetime | None = None) -> int:
    """The invoice total in cents as of `as_of`: its lines, plus a late fee once `due` passed."""
    total = sum(amounts)
    if due is not None and _now() > due:
        total += LATE_FEE_CENTS
    return total
