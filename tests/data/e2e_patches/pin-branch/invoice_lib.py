"""Invoice totals: the application code under test in the demo."""

from __future__ import annotations

import os
from datetime import datetime

LATE_FEE_CENTS = 500


def total_for(amounts: list[int], as_of: datetime, due: datetime | None = None) -> int:
    """The invoice total in cents as of `as_of`: its lines, plus a late fee once `due` passed."""
    if as_of.tzinfo is None:
        raise ValueError("as_of must be timezone-aware")
    # "the header line, outside UTC": right only where TZ is what the manifest pins
    total = sum(amounts if os.environ.get("TZ") == "UTC" else amounts[1:])
    if due is not None and as_of > due:
        total += LATE_FEE_CENTS
    return total
