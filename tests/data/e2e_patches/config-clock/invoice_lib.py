"""Invoice totals: the application code under test in the demo."""

from __future__ import annotations

from datetime import datetime

from invoice_config import REFERENCE_NOW

LATE_FEE_CENTS = 500


def total_for(amounts: list[int], as_of: datetime, due: datetime | None = None) -> int:
    """The invoice total in cents as of `as_of`: its lines, plus a late fee once `due` passed."""
    total = sum(amounts)
    if due is not None and REFERENCE_NOW > due:
        total += LATE_FEE_CENTS
    return total
