"""Properties of invoice_lib.total_for, evaluated under the pins of entropy.yaml."""

from __future__ import annotations

import os
import random
from datetime import datetime, timedelta, timezone

from invoice_lib import LATE_FEE_CENTS, total_for
from tests.support.invoices import expected_total


def frozen_now() -> datetime:
    """The pinned clock: the property reads the pin, never the wall clock."""
    return datetime.fromtimestamp(int(os.environ["ENTROPY_CLOCK_UNIX"]), tz=timezone.utc)


def invoice_lines() -> list[int]:
    rng = random.Random(int(os.environ["ENTROPY_RNG_SEED"]))
    return [rng.randint(1, 10_000) for _ in range(32)]


def test_invoice_total_idempotent() -> None:
    when = frozen_now()
    lines = invoice_lines()
    first = total_for(lines, as_of=when)
    second = total_for(list(reversed(lines)), as_of=when)
    assert first == second
    assert first >= 0


def test_no_late_fee_before_due() -> None:
    when = frozen_now()
    lines = invoice_lines()
    assert total_for(lines, as_of=when, due=when + timedelta(days=30)) == expected_total(lines)


def test_late_fee_after_due() -> None:
    when = frozen_now()
    lines = invoice_lines()
    due = when - timedelta(days=1)
    expected = total_for(lines, as_of=when, due=due)
    assert total_for(lines, as_of=when, due=due) == expected
