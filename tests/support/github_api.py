"""A local HTTP server that speaks GitHub's check-run endpoints, for tests.

Real HTTP on 127.0.0.1 (a random port, one thread per request), not a mock of a client
library: whatever `entropy-gate publish` sends goes over the wire and is recorded here.

- `POST /repos/{owner}/{repo}/check-runs` answers 201 with an id;
  `PATCH /repos/{owner}/{repo}/check-runs/{id}` answers 200 (404 for an unknown id).
- Every request body is validated against the request schema of GitHub's own REST description
  (tests/support/openapi.py: `$ref`s resolved, plus the limits GitHub documents only in prose). An
  invalid body gets 422 and is recorded as a violation.
- `Authorization` must be `Bearer <token>` or `token <token>` with the expected token (401
  otherwise). Recorded headers never hold the token's value.
- With an `App`, `GET /repos/{owner}/{repo}/installation` and
  `POST /app/installations/{id}/access_tokens` check the App's JWT (RS256 against the public
  key the test passes; iss, iat, exp) and answer with an installation token (see `App`),
  which every other endpoint then accepts beside the workflow's token; each request records
  whose it carried (`credential`: workflow, app), never its value.
- Faults are scripted as a queue of `Reply`s, one per request, before normal handling: a
  status sequence (502 then 201), 403 "Resource not accessible by integration", rate limits
  (`retry-after`, or `x-ratelimit-remaining: 0` with `x-ratelimit-reset`), and delays longer
  than the client's timeout. `persistent` answers every request with one fault.

- With `pulls=WORLD` (`--pulls FILE`, JSON `{"pulls": [...], "events": {"N": [...]}}`: pull
  request objects as `pull_object` builds them, in GitHub's shape), the reads that bind a
  verdict to a pull request (entropy_action.github.pulls): `GET .../pulls/{n}`, `GET
  .../pulls?state=&head=owner:branch` (filtered as GitHub filters: by `head.label`), `GET
  .../commits/{sha}/pulls` (the pull requests it heads), `GET .../issues/{n}/events`, each list
  paginated by `per_page` and `page`; with `git=DIR` (`--git DIR`, a repository: the one act's
  "origin" stands for), `GET .../contents/{path}?ref=REF` answers the file's real blob sha
  (`git rev-parse REF:PATH`), 404 when there is none.
- Check runs and permissions (tests/support/github_checks.py): `GET .../check-runs/{id}`
  (with the `app` whose token created it: GitHub Actions for the workflow's, the App for its
  installation token, and the open same-repository pull requests of its head), `GET
  .../commits/{sha}/check-runs?check_name=`, and `GET .../collaborators/{login}/permission`
  from the World's `permissions` (404 for anyone else); the World's `check_runs` are held
  from the start, as if posted before.
- With `artifacts=DIR` (`--artifacts DIR`: act's `--artifact-server-path` of an earlier run,
  `DIR/<run_id>/<name>/*.zip`), the two calls actions/download-artifact v4 makes for
  `run-id:` + `name:` (read from its bundled dist): `GET /repos/{o}/{r}/actions/runs/{run_id}/
  artifacts?name=NAME` (listed by name), then `GET /repos/{o}/{r}/actions/artifacts/{id}/zip`
  answered 302 to `/_blobs/{id}`, which serves the zip without a token (blob storage).

In tests use the `github_api` fixture (tests/conftest.py). In another process (the act
end-to-end test):

    python -m tests.support.github_api --port-file PORT --log REQUESTS.jsonl [--token T]
        [--fault 502 --fault 201 ...] [--fail-status 403]
        [--app-id ID --app-public-key PEM --app-installed OWNER/REPO]

writes the port to PORT once it listens, appends one JSON line per request to the log
(`method`, `path`, `headers`, `body`, `status`, `violations`), and serves until SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType
from typing import Any

from tests.support import github_checks, github_reads
from tests.support.github_reads import World, event_object, pull_object
from tests.support.openapi import OPENAPI, VENDORED, load_schemas, violations

__all__ = [
    "APP_TOKEN",
    "FORBIDDEN_MESSAGE",
    "OPENAPI",
    "VENDORED",
    "App",
    "GitHubAPI",
    "Reply",
    "World",
    "event_object",
    "load_schemas",
    "pull_object",
    "serving",
    "violations",
]

FORBIDDEN_MESSAGE = "Resource not accessible by integration"
MAX_BODY = 10 * 1024 * 1024
_CREATE = re.compile(r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/check-runs$")
_UPDATE = re.compile(r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/check-runs/(?P<id>[0-9]+)$")
_DOCS = "https://docs.github.com/rest/checks/runs"
_INSTALLATION = re.compile(r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/installation$")
_ACCESS_TOKENS = re.compile(r"^/app/installations/(?P<id>[0-9]+)/access_tokens$")
_APP_DOCS = "https://docs.github.com/rest/apps/apps"
APP_TOKEN = "ghs_testInstallationToken0123456789abcdef"
_RUN_ARTIFACTS = re.compile(
    r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/actions/runs/(?P<run>[0-9]+)/artifacts(?:\?(?P<query>.*))?$"
)
_ARTIFACT_ZIP = re.compile(r"^/repos/[^/]+/[^/]+/actions/artifacts/(?P<id>[0-9]+)/zip$")
_BLOB = re.compile(r"^/_blobs/(?P<id>[0-9]+)$")


@dataclass(frozen=True)
class Reply:
    """One scripted answer. `status=None` handles the request normally (after `delay`)."""

    status: int | None = None
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering (released early when stopped)

    @classmethod
    def error(cls, status: int) -> Reply:
        return cls(status, {"message": f"scripted {status}", "documentation_url": _DOCS})

    @classmethod
    def forbidden(cls) -> Reply:
        """What a read-only GITHUB_TOKEN (a fork's pull request) gets from the checks API."""
        return cls(403, {"message": FORBIDDEN_MESSAGE, "documentation_url": _DOCS})

    @classmethod
    def retry_after(cls, seconds: int, status: int = 403) -> Reply:
        """A secondary rate limit."""
        body = {"message": "You have exceeded a secondary rate limit.", "documentation_url": _DOCS}
        return cls(status, body, {"retry-after": str(seconds)})

    @classmethod
    def rate_limit_reset(cls, reset_epoch: int, status: int = 403) -> Reply:
        """The primary rate limit: nothing left until `reset_epoch` (Unix seconds)."""
        headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset_epoch)}
        return cls(
            status, {"message": "API rate limit exceeded", "documentation_url": _DOCS}, headers
        )

    @classmethod
    def slow(cls, seconds: float) -> Reply:
        return cls(None, delay=seconds)


@dataclass
class Request:
    """One request as it arrived, the token's value removed."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # the parsed JSON, or the raw text when it was not JSON
    status: int = 0  # what the server answered
    violations: list[str] = field(default_factory=list)
    # Whose token it carried: "workflow" (the job's), "app" (an App's installation token),
    # "" (none the server knows, or an App's JWT).
    credential: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "headers": self.headers,
            "body": self.body,
            "status": self.status,
            "violations": self.violations,
            "credential": self.credential,
        }


@dataclass
class CheckRun:
    """The state of one check run as GitHub would hold it: annotations accumulate."""

    id: int
    repo: str
    fields: dict[str, Any]
    annotations: list[dict[str, Any]] = field(default_factory=list)
    app: dict[str, Any] = field(default_factory=lambda: dict(github_checks.ACTIONS_APP))

    def apply(self, body: Mapping[str, Any]) -> None:
        output = dict(body.get("output") or {})
        self.annotations.extend(output.pop("annotations", []))
        merged = {**self.fields.get("output", {}), **output}
        self.fields.update({k: v for k, v in body.items() if k != "output"})
        self.fields["output"] = merged


class GitHubAPI:
    """The server. Use as a context manager, or `start()`/`stop()`."""

    def __init__(
        self,
        *,
        token: str = "test-token-3f9a",
        schemas: Mapping[str, Any] | None = None,
        log: Path | None = None,
        persistent: Reply | None = None,
        app: App | None = None,
        artifacts: Path | None = None,
        pulls: World | None = None,
        git: Path | None = None,
    ) -> None:
        self.token = token
        self.app = app
        self.artifacts = artifacts
        self.world = pulls
        self.git = git
        self.schemas = dict(schemas) if schemas is not None else load_schemas()
        self.log = log
        self.persistent = persistent
        self.requests: list[Request] = []
        self.check_runs: dict[int, CheckRun] = {
            run["id"]: CheckRun(run["id"], run["repo"], dict(run["fields"]), app=dict(run["app"]))
            for run in (pulls.check_runs if pulls is not None else [])
        }
        self._script: list[Reply] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- control ------------------------------------------------------------------------------

    def script(self, *replies: Reply | int) -> None:
        """Queue answers for the next requests; an int is a status (2xx: handle normally)."""
        with self._lock:
            for item in replies:
                if isinstance(item, int):
                    item = Reply() if 200 <= item < 300 else Reply.error(item)  # noqa: PLW2901
                self._script.append(item)

    @property
    def url(self) -> str:
        assert self._server is not None, "not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def port(self) -> int:
        assert self._server is not None, "not started"
        return int(self._server.server_address[1])

    @property
    def violations(self) -> list[str]:
        with self._lock:
            return [v for request in self.requests for v in request.violations]

    def calls(self) -> list[tuple[str, str, int]]:
        """`(method, path, status)` of every request, in order."""
        with self._lock:
            return [(r.method, r.path, r.status) for r in self.requests]

    def start(self) -> GitHubAPI:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_class(self))
        server.daemon_threads = True
        server.block_on_close = False
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> GitHubAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- handling (called from the handler threads) ---------------------------------------

    def _next_reply(self) -> Reply | None:
        with self._lock:
            if self._script:
                return self._script.pop(0)
        return self.persistent

    def _record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)
            if self.log is not None:
                with self.log.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(request.as_json()) + "\n")

    def _stored(self) -> list[tuple[int, str, str, Path]]:
        """(id, run id, name, zip) of every artifact under `artifacts`, ids in sorted order."""
        if self.artifacts is None:
            return []
        zips = sorted(self.artifacts.glob("*/*/*.zip"))
        return [(i, z.parent.parent.name, z.parent.name, z) for i, z in enumerate(zips, 1)]

    def blob(self, path: str) -> bytes | None:
        """The zip `/_blobs/{id}` names (storage: no token), else None."""
        match = _BLOB.match(path)
        found = [z for i, _, _, z in self._stored() if match and i == int(match["id"])]
        return found[0].read_bytes() if found else None

    def _artifacts(self, request: Request) -> tuple[int, Any, Mapping[str, str]] | None:
        listing, download = _RUN_ARTIFACTS.match(request.path), _ARTIFACT_ZIP.match(request.path)
        if request.method != "GET" or not (listing or download):
            return None
        stored = self._stored()
        if download:
            if not any(i == int(download["id"]) for i, _, _, _ in stored):
                return 404, {"message": "Not Found"}, {}
            return 302, None, {"location": f"{self.url}/_blobs/{download['id']}"}
        assert listing is not None
        query = dict(p.partition("=")[::2] for p in (listing["query"] or "").split("&") if p)
        found = [
            {"id": i, "name": name, "size_in_bytes": z.stat().st_size, "expired": False,
             "created_at": "2026-01-10T00:00:00Z", "digest": None}
            for i, run, name, z in stored
            if run == listing["run"] and query.get("name", name) == name
        ]  # fmt: skip
        return 200, {"total_count": len(found), "artifacts": found}, {}

    def handle(self, request: Request, authorization: str) -> tuple[int, Any, Mapping[str, str]]:
        reply = self._next_reply()
        if reply is not None and reply.delay:
            self._stopping.wait(reply.delay)
        if reply is not None and reply.status is not None:
            return reply.status, reply.body, reply.headers
        if self.app is not None and (
            _INSTALLATION.match(request.path) or _ACCESS_TOKENS.match(request.path)
        ):
            return self.app.handle(request, authorization)
        request.credential = self._credential(authorization)
        if not request.credential:
            return 401, {"message": "Bad credentials", "documentation_url": _DOCS}, {}
        reads = github_reads.answer(self.world, self.git, request.method, request.path)
        with self._lock:
            held = {i: (r.repo, dict(r.fields), dict(r.app)) for i, r in self.check_runs.items()}
        checks = github_checks.answer(
            request.method, request.path, held, self.world or World(), self.url
        )
        return self._artifacts(request) or reads or checks or self._route(request)

    def _credential(self, authorization: str) -> str:
        """Whose token `authorization` carries: the workflow's, the App's installation token
        (with an App), or "" (refused)."""
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() not in ("bearer", "token"):
            return ""
        if value == self.token:
            return "workflow"
        return "app" if self.app is not None and value == self.app.token else ""

    def _route(self, request: Request) -> tuple[int, Any, Mapping[str, str]]:
        create, update = _CREATE.match(request.path), _UPDATE.match(request.path)
        if request.method == "POST" and create:
            repo, run_id = f"{create['owner']}/{create['repo']}", None
        elif request.method == "PATCH" and update:
            repo, run_id = f"{update['owner']}/{update['repo']}", int(update["id"])
        else:
            return 404, {"message": "Not Found", "documentation_url": _DOCS}, {}
        if not isinstance(request.body, dict):
            request.violations.append("(body): not a JSON object")
            return 400, {"message": "Problems parsing JSON"}, {}
        request.violations.extend(violations(self.schemas[request.method], request.body))
        if request.violations:
            errors = [{"message": v} for v in request.violations]
            return 422, {"message": "Invalid request.", "errors": errors}, {}
        return self._store(repo, run_id, request.body, request.credential)

    def _store(
        self, repo: str, run_id: int | None, body: dict[str, Any], credential: str = "workflow"
    ) -> tuple[int, Any, Mapping[str, str]]:
        with self._lock:
            if run_id is None:
                app = github_checks.app_of(credential, self.app.app_id if self.app else None)
                new_id = max(self.check_runs, default=0) + 1
                run = CheckRun(id=new_id, repo=repo, fields={}, app=app)
                self.check_runs[run.id] = run
                status = 201
            elif run_id in self.check_runs and self.check_runs[run_id].repo == repo:
                run, status = self.check_runs[run_id], 200
            else:
                return 404, {"message": "Not Found", "documentation_url": _DOCS}, {}
            run.apply(body)
            return status, _response(run, self.url), {}


@dataclass
class App:
    """A GitHub App as the two installation endpoints see it: its public key checks the
    JWT's RS256 signature and claims (iss, iat, exp), then it answers with a token.

    - `GET /repos/{owner}/{repo}/installation` answers `{"id": installation}` for a repository
      in `installed` (404 otherwise).
    - `POST /app/installations/{id}/access_tokens` answers 201 with `token` (`APP_TOKEN`).
    A bad signature or a JWT that is not one is 401, as GitHub answers; claims GitHub would
    refuse (iss, an iat in the future, an exp past 10 minutes) are 401 and violations.
    """

    app_id: str
    public_key_pem: bytes
    installed: frozenset[str] = frozenset({"octo/widgets"})
    installation: int = 4242
    token: str = APP_TOKEN
    now: Any = None  # Callable[[], float]; None: time.time

    def handle(self, request: Request, authorization: str) -> tuple[int, Any, Mapping[str, str]]:
        scheme, _, jwt = authorization.partition(" ")
        problem = _jwt_problem(jwt, self) if scheme.lower() == "bearer" else "not a Bearer JWT"
        if problem is not None:
            if problem.startswith("claim"):
                request.violations.append(problem)
            return 401, {"message": f"A JSON web token could not be decoded ({problem})"}, {}
        installation = _INSTALLATION.match(request.path)
        if request.method == "GET" and installation:
            if f"{installation['owner']}/{installation['repo']}" not in self.installed:
                return 404, {"message": "Not Found", "documentation_url": _APP_DOCS}, {}
            return 200, {"id": self.installation, "app_id": self.app_id}, {}
        tokens = _ACCESS_TOKENS.match(request.path)
        if request.method != "POST" or not tokens or int(tokens["id"]) != self.installation:
            return 404, {"message": "Not Found", "documentation_url": _APP_DOCS}, {}
        request.violations.extend(_token_body_problems(request.body))
        if request.violations:
            return 422, {"message": "Invalid request.", "errors": request.violations}, {}
        body = request.body
        answer = {
            "token": self.token,
            "expires_at": "2030-01-01T01:00:00Z",
            "permissions": body.get("permissions", {}),
            "repository_selection": "selected",
        }
        return 201, answer, {}


def _b64(part: str) -> bytes:
    import base64  # noqa: PLC0415

    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def _jwt_problem(jwt: str, app: App) -> str | None:
    """Why GitHub would refuse this JWT for `app`, or None."""
    import time  # noqa: PLC0415

    from cryptography.exceptions import InvalidSignature  # noqa: PLC0415
    from cryptography.hazmat.primitives import hashes, serialization  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric import padding, rsa  # noqa: PLC0415

    try:
        header_b64, payload_b64, signature_b64 = jwt.split(".")
        header, claims = json.loads(_b64(header_b64)), json.loads(_b64(payload_b64))
        signature = _b64(signature_b64)
    except ValueError:
        return "not a JWT"
    if not isinstance(header, dict) or header.get("alg") != "RS256":
        return "not RS256"
    key = serialization.load_pem_public_key(app.public_key_pem)
    assert isinstance(key, rsa.RSAPublicKey)
    signed = f"{header_b64}.{payload_b64}".encode("ascii")
    try:
        key.verify(signature, signed, padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature:
        return "the signature does not match the App's public key"
    now = (app.now or time.time)()
    iat, exp = claims.get("iat"), claims.get("exp")
    if claims.get("iss") != app.app_id:
        return f"claim iss is {claims.get('iss')!r}, not the App's ID {app.app_id!r}"
    if not isinstance(iat, int) or not isinstance(exp, int):
        return "claim iat or exp is not an integer"
    if iat > now + 5:
        return "claim iat is in the future"
    if exp <= now or exp > now + 600 or exp <= iat:
        return "claim exp is not within the next 10 minutes"
    return None


def _token_body_problems(body: Any) -> list[str]:
    if not isinstance(body, dict):
        return ["(body): not a JSON object"]
    problems = []
    repos = body.get("repositories")
    if not isinstance(repos, list) or not all(isinstance(r, str) and "/" not in r for r in repos):
        problems.append("repositories: must be a list of repository names (no owner)")
    permissions = body.get("permissions")
    if not isinstance(permissions, dict) or not all(
        v in ("read", "write") for v in permissions.values()
    ):
        problems.append("permissions: must map permission names to read or write")
    return problems


def _response(run: CheckRun, base: str) -> dict[str, Any]:
    url = f"{base}/repos/{run.repo}/check-runs/{run.id}"
    output = run.fields.get("output", {})
    return {
        "id": run.id,
        "head_sha": run.fields.get("head_sha"),
        "name": run.fields.get("name"),
        "url": url,
        "html_url": f"https://github.invalid/{run.repo}/runs/{run.id}",
        "status": run.fields.get("status", "queued"),
        "conclusion": run.fields.get("conclusion"),
        "output": {
            "title": output.get("title"),
            "summary": output.get("summary"),
            "text": output.get("text"),
            "annotations_count": len(run.annotations),
            "annotations_url": f"{url}/annotations",
        },
    }


def _redacted(headers: Mapping[str, str]) -> dict[str, str]:
    out = {key.lower(): value for key, value in headers.items()}
    if "authorization" in out:
        scheme, _, secret = out["authorization"].partition(" ")
        out["authorization"] = f"{scheme} ***" if secret else "***"
    return out


def _handler_class(api: GitHubAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self._serve()

        def do_PATCH(self) -> None:
            self._serve()

        def do_GET(self) -> None:
            self._serve()

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _serve(self) -> None:
            length = min(int(self.headers.get("content-length") or 0), MAX_BODY)
            raw = self.rfile.read(length).decode("utf-8", "replace") if length else ""
            try:
                body: Any = json.loads(raw) if raw else None
            except json.JSONDecodeError:
                body = raw
            request = Request(self.command, self.path, _redacted(dict(self.headers.items())), body)
            blob = api.blob(self.path) if self.command == "GET" else None
            if blob is not None:
                request.status = 200
                api._record(request)
                self._send_bytes(blob)
                return
            status, answer, headers = api.handle(request, self.headers.get("authorization", ""))
            request.status = status
            api._record(request)
            self._send(status, answer, headers)

        def _send_bytes(self, data: bytes) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/zip")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _send(self, status: int, answer: Any, headers: Mapping[str, str]) -> None:
            data = json.dumps(answer).encode("utf-8") if answer is not None else b""
            try:
                self.send_response(status)
                if data:  # an empty 302 with a JSON type makes octokit parse nothing
                    self.send_header("content-type", "application/json; charset=utf-8")
                self.send_header("content-length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                pass

    return Handler


@contextmanager
def serving(**kwargs: Any) -> Iterator[GitHubAPI]:
    """The server for the duration of a `with` block (the pytest fixture uses it)."""
    api = GitHubAPI(**kwargs).start()
    try:
        yield api
    finally:
        api.stop()


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.support.github_api", description=__doc__)
    parser.add_argument("--port-file", type=Path, required=True, help="write the port here")
    parser.add_argument("--log", type=Path, required=True, help="append one JSON line a request")
    parser.add_argument("--token", default=os.environ.get("GITHUB_API_TOKEN", "test-token-3f9a"))
    parser.add_argument(
        "--fault",
        type=int,
        action="append",
        default=[],
        metavar="STATUS",
        help="answer the next request with STATUS (repeat for a sequence; 2xx: normal)",
    )
    parser.add_argument(
        "--fail-status",
        type=int,
        metavar="STATUS",
        help="answer every request with STATUS (403: 'Resource not accessible by integration')",
    )
    parser.add_argument(
        "--artifacts", type=Path, metavar="DIR", help="serve act's stored artifacts from DIR"
    )
    parser.add_argument(
        "--pulls", type=Path, metavar="FILE", help="serve the pull requests of FILE (World)"
    )
    parser.add_argument(
        "--git", type=Path, metavar="DIR", help="serve contents' blob shas from repository DIR"
    )
    parser.add_argument("--app-id", help="a GitHub App (with --app-public-key): its ID")
    parser.add_argument(
        "--app-public-key", type=Path, metavar="PEM", help="the App's public key (PEM file)"
    )
    parser.add_argument(
        "--app-installed", action="append", default=[], metavar="OWNER/REPO",
        help="a repository the App is installed on (repeat)",
    )  # fmt: skip
    return parser.parse_args(argv)


def _app(args: argparse.Namespace) -> App | None:
    if not args.app_id:
        return None
    return App(
        app_id=args.app_id,
        public_key_pem=args.app_public_key.read_bytes(),
        installed=frozenset(args.app_installed),
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    persistent = None
    if args.fail_status is not None:
        persistent = Reply.forbidden() if args.fail_status == 403 else Reply.error(args.fail_status)
    api = GitHubAPI(
        token=args.token,
        log=args.log,
        persistent=persistent,
        artifacts=args.artifacts,
        pulls=World.read(args.pulls) if args.pulls else None,
        git=args.git,
        app=_app(args),
    )
    api.script(*args.fault)
    stop = threading.Event()

    def _on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    with api.start():
        partial = args.port_file.with_name(args.port_file.name + ".partial")
        partial.write_text(str(api.port), encoding="utf-8")
        partial.replace(args.port_file)  # readers never see a half-written port
        print(f"github_api: listening on {api.url}", file=sys.stderr, flush=True)
        while not stop.wait(0.2):
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
