"""`entropy-gate app-token` against the local GitHub API: a real JWT over real HTTP.

The server checks the JWT's RS256 signature against the public key of a key pair made here,
and its iss, iat and exp claims, as GitHub does; a good key gets a token, a wrong one is
refused by the server. The token reaches stdout only in the `::add-mask::` line.
"""

from __future__ import annotations

import dataclasses
import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from entropy_action.cli.main import main
from entropy_action.core.errors import GateError
from entropy_action.github import apptoken
from tests.support.github_api import APP_TOKEN, App, GitHubAPI, Reply, serving

APP_ID = "123456"
KEY_ENV = "ENTROPY_GATE_APP_PRIVATE_KEY"


def _key_pair() -> tuple[str, bytes]:
    from cryptography.hazmat.primitives import serialization  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: PLC0415

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode("ascii")
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return private, public


@pytest.fixture(scope="module")
def keys() -> tuple[str, bytes]:
    return _key_pair()


@pytest.fixture
def app_api(keys: tuple[str, bytes]):
    with serving(app=App(app_id=APP_ID, public_key_pem=keys[1])) as api:
        yield api


@pytest.fixture
def output(
    tmp_path: Path, app_api: GitHubAPI, keys: tuple[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A GitHub Actions step pointing at the local server; returns $GITHUB_OUTPUT."""
    target = tmp_path / "github_output"
    for key, value in {
        "GITHUB_ACTIONS": "true",
        "GITHUB_API_URL": app_api.url,
        "GITHUB_REPOSITORY": "octo/widgets",
        "GITHUB_OUTPUT": str(target),
        KEY_ENV: keys[0],
    }.items():
        monkeypatch.setenv(key, value)
    return target


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["app-token", "--app-id", APP_ID, *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def test_a_good_key_gets_a_token_in_the_step_output_and_masked(output, app_api, keys, capsys):
    code, out, err = _run(capsys)
    assert code == 0, err
    assert out == f"::add-mask::{APP_TOKEN}\n"
    assert APP_TOKEN in output.read_text(encoding="utf-8")
    assert output.read_text(encoding="utf-8").startswith("token<<")
    assert APP_TOKEN not in err
    assert keys[0].splitlines()[1] not in out + err
    assert "installation token for octo/widgets (App 123456; checks: write" in err
    assert app_api.calls() == [
        ("GET", "/repos/octo/widgets/installation", 200),
        ("POST", "/app/installations/4242/access_tokens", 201),
    ]
    assert app_api.violations == []
    token_request = app_api.requests[1]
    assert token_request.body == {
        "repositories": ["widgets"],
        "permissions": {"checks": "write", "actions": "read", "contents": "read"},
    }
    assert token_request.headers["authorization"] == "Bearer ***"


def test_a_wrong_key_is_refused_by_the_server_in_one_line(output, app_api, capsys):
    other, _ = _key_pair()
    code, out, err = run_with_key(capsys, other)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert err.startswith("app-token: no installation token for octo/widgets (App 123456): ")
    assert "GET installation: HTTP 401" in err
    assert "the key is not this App's, or the App ID is wrong" in err
    assert app_api.calls() == [("GET", "/repos/octo/widgets/installation", 401)]
    assert other.splitlines()[1] not in err
    assert not output.exists()


def run_with_key(capsys, key: str) -> tuple[int, str, str]:
    import os  # noqa: PLC0415

    os.environ[KEY_ENV] = key  # the fixture's monkeypatch restores it
    return _run(capsys)


def test_a_wrong_app_id_is_refused_by_the_server(output, app_api, capsys):
    capsys.readouterr()
    code = main(["app-token", "--app-id", "999"])
    err = capsys.readouterr().err
    assert code == 2
    assert "HTTP 401" in err
    assert app_api.violations == ["claim iss is '999', not the App's ID '123456'"]


@pytest.mark.parametrize(
    "pem",
    [
        "not a key at all",
        "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n",
        "public",
    ],
)
def test_a_bad_pem_is_one_line_before_any_request(output, app_api, keys, capsys, pem):
    code, out, err = run_with_key(capsys, keys[1].decode() if pem == "public" else pem)
    assert (code, out, app_api.requests) == (2, "", [])
    assert err == (
        f"app-token: ${KEY_ENV} is not an RSA private key in PEM (the .pem file GitHub gives "
        "for the App)\n"
    )


def test_the_key_variable_is_named_by_private_key_env(output, app_api, keys, capsys, monkeypatch):
    monkeypatch.delenv(KEY_ENV)
    code, _, err = _run(capsys)
    assert (code, app_api.requests) == (2, [])
    assert err == f"app-token: ${KEY_ENV} is empty: it must hold the App's private key (PEM)\n"
    monkeypatch.setenv("MY_APP_KEY", keys[0])
    code, out, err = _run(capsys, "--private-key-env", "MY_APP_KEY")
    assert code == 0, err
    assert out == f"::add-mask::{APP_TOKEN}\n"


def test_a_repository_the_app_is_not_installed_on_is_exit_2(output, app_api, capsys, monkeypatch):
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/other")
    code, out, err = _run(capsys)
    assert (code, out) == (2, "")
    assert "GET installation: HTTP 404 'Not Found' - the App is not installed" in err


def test_an_answer_without_an_installation_id_is_exit_2(output, app_api, capsys):
    app_api.script(Reply(200, {"app_id": 1}))
    code, _, err = _run(capsys)
    assert code == 2
    assert err.endswith("GET installation: the answer carried no installation id\n")


def test_an_answer_without_a_token_is_exit_2(output, app_api, capsys):
    app_api.script(200, Reply(201, {"token": ""}))
    code, out, err = _run(capsys)
    assert (code, out) == (2, "")
    assert err.endswith("POST installation token: the answer carried no token\n")


def test_a_network_failure_is_one_line_after_bounded_retries(output, keys):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    environ = {
        "GITHUB_API_URL": f"http://127.0.0.1:{port}",
        "GITHUB_REPOSITORY": "octo/widgets",
        "GITHUB_OUTPUT": str(output),
        KEY_ENV: keys[0],
    }
    sleeps: list[float] = []
    settings = dataclasses.replace(
        apptoken.settings_from(APP_ID, KEY_ENV, environ), sleep=sleeps.append
    )
    with pytest.raises(GateError) as caught:
        apptoken.run(settings)
    assert caught.value.message == (
        "app-token: no installation token for octo/widgets (App 123456): GET installation: "
        "connection failed (ConnectionRefusedError) after 5 attempts"
    )
    assert sleeps == [1.0, 2.0, 4.0, 8.0]


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("GITHUB_API_URL", "file:///etc/passwd", "app-token: GITHUB_API_URL must be an http(s)"),
        ("GITHUB_REPOSITORY", "just-a-name", "app-token: GITHUB_REPOSITORY must be OWNER/NAME"),
        ("GITHUB_OUTPUT", "", "app-token: GITHUB_OUTPUT is unset: the token is written only"),
    ],
)
def test_settings_that_cannot_work_are_exit_2(
    output, app_api, capsys, monkeypatch, variable, value, expected
):
    monkeypatch.setenv(variable, value)
    code, _, err = _run(capsys)
    assert (code, app_api.requests) == (2, [])
    assert err.startswith(expected)


def test_an_app_id_that_is_not_one_is_exit_2(output, app_api, capsys):
    capsys.readouterr()
    assert main(["app-token", "--app-id", "1/../x"]) == 2
    assert "app-token: --app-id must be the App's ID" in capsys.readouterr().err


def test_help_says_the_key_never_comes_from_argv(capsys):
    assert main(["app-token", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "never taken from the command line, never printed" in text
    assert "::add-mask::" in text


@pytest.mark.parametrize(
    ("claims", "problem"),
    [
        ({"iat": -60, "exp": 540, "iss": APP_ID}, None),
        ({"iat": -60, "exp": 900, "iss": APP_ID}, "claim exp is not within the next 10 minutes"),
        ({"iat": -700, "exp": -100, "iss": APP_ID}, "claim exp is not within the next 10 minutes"),
        ({"iat": 300, "exp": 540, "iss": APP_ID}, "claim iat is in the future"),
        ({"iat": -60, "exp": 540, "iss": "7"}, "claim iss is '7', not the App's ID '123456'"),
    ],
)
def test_the_server_checks_the_jwt_claims_as_github_does(keys, claims, problem):
    import jwt  # noqa: PLC0415

    now = 1_000_000
    app = App(app_id=APP_ID, public_key_pem=keys[1], now=lambda: float(now))
    timed = {k: v + now if k in ("iat", "exp") else v for k, v in claims.items()}
    with serving(app=app) as api:
        token = jwt.encode(timed, keys[0], algorithm="RS256")
        request = urllib.request.Request(api.url + "/repos/octo/widgets/installation")
        request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                status = response.status
        except urllib.error.HTTPError as exc:
            status = exc.code
        assert (status, api.violations) == ((200, []) if problem is None else (401, [problem]))
