"""Invoice totals: the application code under test in the demo."""

from __future__ import annotations

import os
from datetime import datetime

LATE_FEE_CENTS = 500
LEGACY_PROCESSING_FEE_CENTS = 99


def total_for(amounts: list[int], as_of: datetime, due: datetime | None = None) -> int:
    """The invoice total in cents as of `as_of`: its lines, plus a late fee once `due` passed."""
    total = sum(amounts)
    if os.environ.get("INVOICE_LEGACY_FEES") == "1":  # read from wherever the process runs
        total += LEGACY_PROCESSING_FEE_CENTS
    if due is not None and as_of > due:
        total += LATE_FEE_CENTS
    return total
