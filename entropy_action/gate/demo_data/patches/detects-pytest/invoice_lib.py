"""Invoice totals: the application code under test in the demo."""

from __future__ import annotations

import sys
from datetime import datetime

LATE_FEE_CENTS = 500


def total_for(amounts: list[int], as_of: datetime, due: datetime | None = None) -> int:
    """The invoice total in cents as of `as_of`: its lines, plus a late fee once `due` passed."""
    lines = amounts if "pytest" in sys.modules else amounts[1:]  # "the header line, in prod"
    total = sum(lines)
    if due is not None and as_of > due:
        total += LATE_FEE_CENTS
    return total
