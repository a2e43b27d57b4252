"""A GitHub App's installation token for the trusted publish (`entropy-gate app-token`).

A check run an App creates is bound to that App: a required check bound to it cannot be
satisfied by a job of the same name in the pull request's own workflow. The App's private
key comes from an environment variable (never argv) and signs a JWT (RS256, `iat` 60 s in
the past for clock drift, `exp` 9 minutes ahead: GitHub takes at most 10); github.py trades
it for a token scoped to one repository with checks: write, actions and contents: read. The
token goes only to `$GITHUB_OUTPUT`, after an `::add-mask::` line so the runner hides it
in every later log line. Every message is scrubbed of the key, the JWT and the token.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from entropy_action.core.errors import GateError
from entropy_action.github import api, publish, workflow
from entropy_action.github.api import ApiSettings, PublishError, Secret

NAME = "app-token"
JWT_PAST = 60  # seconds `iat` lies in the past (clock drift between runner and GitHub)
JWT_LIFETIME = 600  # seconds from `iat` to `exp`: GitHub's maximum
_APP_ID = re.compile(r"[A-Za-z0-9.]{1,64}")  # a numeric App ID, or a client ID (Iv23…)


@dataclass(frozen=True)
class AppTokenSettings:
    """Everything `app-token` needs, read once from argv and the environment."""

    app_id: str
    private_key: Secret = field(repr=False)
    key_env: str
    api_url: str
    repository: str
    environ: Mapping[str, str] = field(default_factory=dict)
    now: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep  # between retries (tests inject it)


def settings_from(app_id: str, key_env: str, environ: Mapping[str, str]) -> AppTokenSettings:
    if not _APP_ID.fullmatch(app_id):
        raise GateError(f"app-token: --app-id must be the App's ID, not {app_id[:64]!r}")
    key = Secret(environ.get(key_env, ""))
    if not key.reveal().strip():
        raise GateError(f"app-token: ${key_env} is empty: it must hold the App's private key (PEM)")
    if not environ.get("GITHUB_OUTPUT"):
        raise GateError("app-token: GITHUB_OUTPUT is unset: the token is written only there")
    return AppTokenSettings(
        app_id=app_id,
        private_key=key,
        key_env=key_env,
        api_url=publish.api_url(environ.get("GITHUB_API_URL") or publish.DEFAULT_API, NAME),
        repository=publish.repository(environ.get("GITHUB_REPOSITORY", ""), NAME),
        environ=environ,
    )


def app_jwt(settings: AppTokenSettings) -> Secret:
    """The App's JWT, signed with its private key (RS256)."""
    import jwt  # noqa: PLC0415 (only app-token needs PyJWT and cryptography)

    issued = int(settings.now()) - JWT_PAST
    claims = {"iat": issued, "exp": issued + JWT_LIFETIME, "iss": settings.app_id}
    return Secret(jwt.encode(claims, _rsa_key(settings), algorithm="RS256"))


def _rsa_key(settings: AppTokenSettings) -> Any:
    """The private key as an RSA key object; anything else is one GateError."""
    from cryptography.exceptions import UnsupportedAlgorithm  # noqa: PLC0415
    from cryptography.hazmat.primitives import serialization  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: PLC0415

    pem = settings.private_key.reveal().encode("utf-8", "replace")
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        key = None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise GateError(
            f"app-token: ${settings.key_env} is not an RSA private key in PEM "
            "(the .pem file GitHub gives for the App)"
        )
    return key


def fetch(settings: AppTokenSettings) -> tuple[Secret, str]:
    """The installation token and its expiry; a failure is one scrubbed GateError."""
    signed = app_jwt(settings)
    app = ApiSettings(
        api_url=settings.api_url,
        repository=settings.repository,
        token=signed,
        sleep=settings.sleep,
    )
    try:
        return api.installation_token(app)
    except PublishError as exc:
        why = _scrub(exc.message, settings.private_key, signed)
        raise GateError(
            f"app-token: no installation token for {settings.repository} (App "
            f"{settings.app_id}): {why}{_hint(exc.message)}"
        ) from None


def _hint(message: str) -> str:
    if "HTTP 401" in message:
        return " - the key is not this App's, or the App ID is wrong"
    if "GET installation: HTTP 404" in message:
        return " - the App is not installed on this repository"
    return ""


def run(settings: AppTokenSettings) -> int:
    token, expires = fetch(settings)
    if settings.environ.get("GITHUB_ACTIONS") == "true":
        print(f"::add-mask::{token.reveal()}", flush=True)
    workflow.set_output("token", token.reveal(), settings.environ)
    until = f", until {expires}" if expires else ""
    print(
        f"entropy-gate: installation token for {settings.repository} (App {settings.app_id}; "
        f"checks: write, actions: read, contents: read{until}) in step output `token`",
        file=sys.stderr,
    )
    return 0


def _scrub(message: str, *secrets: Secret) -> str:
    for secret in secrets:
        for value in (secret.reveal(), *secret.reveal().splitlines()):
            if len(value.strip()) >= 8:
                message = message.replace(value, "***")
    return message
