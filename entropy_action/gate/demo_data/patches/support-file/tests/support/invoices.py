"""The properties' expected values, kept beside the tests."""

from __future__ import annotations

LATE_FEE_CENTS = 500  # the contract's fee, written down here, not read from the code


def expected_total(lines: list[int], *, late: bool = False) -> int:
    """Every line, plus the late fee once the invoice is overdue."""
    return sum(lines) + LATE_FEE_CENTS
