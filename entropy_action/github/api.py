"""The only module that talks to GitHub's REST API: it sends a CheckRunPlan, and trades a
GitHub App's JWT for an installation token (`installation_token`), nothing more.

A small client over `urllib.request` rather than PyGithub: two endpoints (create and update a
check run) do not need a client library, and PyGithub would bring requests, PyJWT, PyNaCl and
cryptography into the action's hashed lock file, sleep inside urllib3's retry (tests could
only avoid real waits by monkeypatching), and have its own idea of which errors to retry.
Here the retry decision is a pure function (`wait_before_retry`) and the sleep and the clock
are settings, so tests inject them.

Retries: 5xx, timeouts and connection errors back off exponentially (1, 2, 4, 8 s, capped);
rate limits (403/429 with `retry-after`, or `x-ratelimit-remaining: 0` with
`x-ratelimit-reset`) wait as told, unless that is longer than `max_wait`: then the job does
not hang, the send gives up and the caller falls back. 403 and 404 without rate-limit headers
mean the token cannot write checks (the read-only token of a fork's pull request): no retry.

A POST whose answer timed out may still have created the check run; its retry then creates a
second one with the same content (GitHub shows the latest per name). Retrying is preferred to
leaving the pull request without a check.

The token is held in a `Secret` whose repr and str are masked; it is sent only in the
Authorization header and never appears in a message this module produces.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from entropy_action import __version__
from entropy_action.render.checkrun import CheckRunPlan

MAX_RESPONSE = 1024 * 1024  # bytes of a response body read
MAX_SHOWN = 200  # characters of GitHub's error message quoted
RETRYABLE_STATUS = frozenset({500, 502, 503, 504})
Failure = Literal["forbidden", "exhausted", "rejected", "rate_limited"]


class Secret:
    """A token that never prints itself."""

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__


@dataclass(frozen=True)
class ApiSettings:
    """Where and how to send; built once by the command from the environment."""

    api_url: str  # GITHUB_API_URL, no trailing slash
    repository: str  # owner/name
    token: Secret = field(repr=False)
    timeout: float = 15.0  # seconds per request
    attempts: int = 5  # requests per call, the first included
    backoff: float = 1.0  # seconds before the first retry; doubles each time
    max_backoff: float = 30.0
    max_wait: float = 120.0  # longest rate-limit wait honoured; beyond it, give up
    sleep: Callable[[float], None] = time.sleep
    now: Callable[[], float] = time.time


class PublishError(Exception):
    """The check run could not be written; `failure` says why, `message` in words."""

    def __init__(self, failure: Failure, message: str, *, created: int | None = None) -> None:
        super().__init__(message)
        self.failure = failure
        self.message = message
        self.created = created  # the check run's id when the POST had succeeded


@dataclass(frozen=True)
class Answer:
    status: int  # 0: no HTTP answer (timeout, connection refused)
    headers: Mapping[str, str]
    body: Any
    problem: str = ""  # the transport error, in words


@dataclass(frozen=True)
class Sent:
    """What was published."""

    id: int
    html_url: str
    requests: int
    annotations: int


def backoff_schedule(attempt: int, *, base: float, cap: float) -> float:
    """Seconds to wait after failed attempt number `attempt` (0-based): base * 2**attempt."""
    return float(min(cap, base * (2**attempt)))


def _rate_limit_wait(headers: Mapping[str, str], now: float) -> float | None:
    retry_after = headers.get("retry-after", "").strip()
    if retry_after.isdigit():
        return float(retry_after)
    if headers.get("x-ratelimit-remaining", "").strip() == "0":
        reset = headers.get("x-ratelimit-reset", "").strip()
        if reset.isdigit():
            return max(0.0, float(reset) - now) + 1.0
    return None


def wait_before_retry(
    answer: Answer, attempt: int, settings: ApiSettings
) -> tuple[float | None, Failure]:
    """Pure: how long to wait before the next attempt (None: do not retry), and the failure
    to report if no retry follows."""
    limited = _rate_limit_wait(answer.headers, settings.now())
    if answer.status in (403, 429) and limited is not None:
        return (limited if limited <= settings.max_wait else None), "rate_limited"
    if answer.status in (403, 404):
        return None, "forbidden"
    if answer.status == 0 or answer.status in RETRYABLE_STATUS or answer.status == 429:
        delay = backoff_schedule(attempt, base=settings.backoff, cap=settings.max_backoff)
        return delay, "exhausted"
    return None, "rejected"


class Client:
    """Requests with retries; `call` returns the JSON of a 2xx answer or raises PublishError.
    `subject` names what the requests are about in its messages."""

    def __init__(self, settings: ApiSettings, subject: str = "check run") -> None:
        self.settings = settings
        self.subject = subject
        self.requests = 0

    def call(self, method: str, path: str, body: Mapping[str, Any] | None) -> Any:
        settings = self.settings
        for attempt in range(settings.attempts):
            answer = self._once(method, path, body)
            if 200 <= answer.status < 300:
                return answer.body
            delay, failure = wait_before_retry(answer, attempt, settings)
            if delay is None or attempt == settings.attempts - 1:
                what = f"{method} {self.subject}"
                raise PublishError(failure, _describe(what, answer, delay, attempt + 1))
            settings.sleep(delay)
        raise AssertionError("unreachable: attempts >= 1")  # pragma: no cover

    def _once(self, method: str, path: str, body: Mapping[str, Any] | None) -> Answer:
        self.requests += 1
        request = urllib.request.Request(  # noqa: S310 - GITHUB_API_URL, http(s) checked by publish
            self.settings.api_url + path,
            data=None if body is None else json.dumps(body).encode("utf-8"),
            method=method,
            headers={
                "Accept": "application/vnd.github+json",
                "Authorization": f"Bearer {self.settings.token.reveal()}",
                "Content-Type": "application/json",
                "User-Agent": f"entropy-gate/{__version__}",
                "X-GitHub-Api-Version": "2022-11-28",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.settings.timeout) as response:  # noqa: S310
                return Answer(response.status, _headers(response.headers), _json(response))
        except urllib.error.HTTPError as exc:
            return Answer(exc.code, _headers(exc.headers), _json(exc))
        except OSError as exc:  # URLError, timeouts, refused connections
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError):
                return Answer(0, {}, None, f"no answer within {self.settings.timeout:g} s")
            return Answer(0, {}, None, f"connection failed ({type(reason).__name__})")


def _describe(request: str, answer: Answer, delay: float | None, tries: int) -> str:
    said = _message(answer.body)
    what = answer.problem or f"HTTP {answer.status}" + (f" {said}" if said else "")
    if delay is not None:
        return f"{request}: {what} after {tries} attempts"
    if _rate_limit_wait(answer.headers, 0.0) is not None and answer.status in (403, 429):
        return f"{request}: rate limited ({what}) for longer than the job waits"
    return f"{request}: {what}"


def _headers(headers: Any) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in (headers.items() if headers else [])}


def _json(response: Any) -> Any:
    try:
        data = response.read(MAX_RESPONSE + 1)
    except OSError:
        return None
    if len(data) > MAX_RESPONSE:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def _message(body: Any) -> str:
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(message, str):
        return ""
    flat = " ".join(message.split())
    return repr(flat[:MAX_SHOWN])


def send(plan: CheckRunPlan, settings: ApiSettings) -> Sent:
    """Create the check run with the first batch, then PATCH the others onto it."""
    client = Client(settings)
    base = f"/repos/{settings.repository}/check-runs"
    created = client.call("POST", base, plan.create_body())
    run_id = created.get("id") if isinstance(created, dict) else None
    if not isinstance(run_id, int) or isinstance(run_id, bool):
        raise PublishError("rejected", "POST check run: the answer carried no check run id")
    for body in plan.update_bodies():
        try:
            client.call("PATCH", f"{base}/{run_id}", body)
        except PublishError as exc:
            raise PublishError(exc.failure, exc.message, created=run_id) from None
    html_url = created.get("html_url")
    return Sent(
        id=run_id,
        html_url=html_url if isinstance(html_url, str) else "",
        requests=client.requests,
        annotations=len(plan.annotations),
    )


TOKEN_PERMISSIONS = {"checks": "write", "actions": "read", "contents": "read"}


def installation_token(settings: ApiSettings) -> tuple[Secret, str]:
    """The App's installation token for `settings.repository` (checks: write, actions and
    contents: read), and when it expires; `settings.token` is the App's JWT."""
    client = Client(settings, subject="installation")
    found = client.call("GET", f"/repos/{settings.repository}/installation", None)
    installation = found.get("id") if isinstance(found, dict) else None
    if not isinstance(installation, int) or isinstance(installation, bool):
        raise PublishError("rejected", "GET installation: the answer carried no installation id")
    body = {
        "repositories": [settings.repository.partition("/")[2]],
        "permissions": TOKEN_PERMISSIONS,
    }
    client.subject = "installation token"
    answer = client.call("POST", f"/app/installations/{installation}/access_tokens", body)
    token = answer.get("token") if isinstance(answer, dict) else None
    if not isinstance(token, str) or not token or not token.isascii() or not token.isprintable():
        raise PublishError("rejected", "POST installation token: the answer carried no token")
    expires = answer.get("expires_at")
    return Secret(token), expires if isinstance(expires, str) else ""
