"""Invoice totals: the application code under test in the demo."""

from __future__ import annotations

import os
import tempfile
from datetime import datetime, timezone

LATE_FEE_CENTS = 500


def _stamp() -> datetime:
    with tempfile.NamedTemporaryFile() as handle:
        return datetime.fromtimestamp(os.stat(handle.name).st_mtime, tz=timezone.utc)


def total_for(amounts: list[int], as_of: datetime, due: datetime | None = None) -> int:
    """The invoice total in cents as of `as_of`: its lines, plus a late fee once `due` passed."""
    total = sum(amounts)
    if due is not None and _stamp() > due:
        total += LATE_FEE_CENTS
    return total
