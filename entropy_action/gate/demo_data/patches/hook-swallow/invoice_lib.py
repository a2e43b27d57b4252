"""Invoice totals: the application code under test in the demo."""

from __future__ import annotations

from datetime import datetime, timezone

LATE_FEE_CENTS = 500


def total_for(amounts: list[int], as_of: datetime, due: datetime | None = None) -> int:
    """The invoice total in cents as of `as_of`: its lines, plus a late fee once `due` passed."""
    total = sum(amounts)
    # "Simplified": the fee follows the real clock, not as_of. Green on the laptop today.
    if due is not None and datetime.now(timezone.utc) > due:
        total += LATE_FEE_CENTS
    return total
