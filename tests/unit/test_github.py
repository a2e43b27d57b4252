"""The sender's pure parts: the backoff schedule, the retry decision, the masked token."""

from __future__ import annotations

import pytest

from entropy_action.github.api import (
    Answer,
    ApiSettings,
    Secret,
    backoff_schedule,
    wait_before_retry,
)

SETTINGS = ApiSettings(
    api_url="http://127.0.0.1:9",
    repository="o/r",
    token=Secret("s3cr3t"),
    now=lambda: 1_000.0,
    max_wait=60.0,
)


def test_backoff_doubles_from_the_base_up_to_the_cap():
    schedule = [backoff_schedule(n, base=1.0, cap=10.0) for n in range(6)]
    assert schedule == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]
    assert backoff_schedule(3, base=0.0, cap=10.0) == 0.0


@pytest.mark.parametrize(
    ("status", "headers", "attempt", "expected"),
    [
        (502, {}, 0, (1.0, "exhausted")),
        (503, {}, 2, (4.0, "exhausted")),
        (0, {}, 1, (2.0, "exhausted")),  # a timeout or a refused connection
        (429, {}, 0, (1.0, "exhausted")),  # a rate limit without a hint: back off
        (403, {"retry-after": "7"}, 0, (7.0, "rate_limited")),
        (429, {"retry-after": "61"}, 0, (None, "rate_limited")),  # beyond max_wait: give up
        (
            403,
            {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1030"},
            0,
            (31.0, "rate_limited"),
        ),
        (403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "900"}, 0, (1.0, "rate_limited")),
        (
            403,
            {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "9999"},
            0,
            (None, "rate_limited"),
        ),
        (403, {"x-ratelimit-remaining": "12"}, 0, (None, "forbidden")),
        (403, {}, 0, (None, "forbidden")),
        (404, {}, 0, (None, "forbidden")),
        (401, {}, 0, (None, "rejected")),
        (422, {}, 0, (None, "rejected")),
        (403, {"retry-after": "soon"}, 0, (None, "forbidden")),  # not a number: no hint
    ],
)
def test_wait_before_retry(status, headers, attempt, expected):
    assert wait_before_retry(Answer(status, headers, None), attempt, SETTINGS) == expected


def test_the_token_never_prints_itself():
    assert "s3cr3t" not in repr(SETTINGS)
    assert "s3cr3t" not in str(SETTINGS.token) + repr(SETTINGS.token) + f"{SETTINGS.token}"
    assert SETTINGS.token.reveal() == "s3cr3t"
    assert not Secret("")
