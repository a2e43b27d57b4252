"""Pull requests as GitHub's REST API reports them, and the few reads that bind a verdict to
one: a pull request (its head, base and `merge_commit_sha`), the open ones of a head branch,
the ones a commit heads, a file's blob sha on a branch, and when a pull request's base
changed. Every answer is untrusted data: parsed strictly, a shape GitHub does not send is a
`PublishError("rejected")`.

Endpoints (docs.github.com/rest): `GET /repos/{o}/{r}/pulls/{n}`, `GET /repos/{o}/{r}/pulls
?state=open&head={owner}:{branch}`, `GET /repos/{o}/{r}/commits/{sha}/pulls`, `GET
/repos/{o}/{r}/contents/{path}?ref={ref}` and `GET /repos/{o}/{r}/issues/{n}/events` (its
`base_ref_changed` events). The token needs `pull-requests: read` and `contents: read`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from entropy_action.github.api import Client, PublishError

PER_PAGE = 100
MAX_PAGES = 10  # 1,000 entries of a list: past it the answer is refused as incomplete
SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


@dataclass(frozen=True)
class PullRequest:
    number: int
    state: str  # open, closed
    head_sha: str
    head_ref: str
    head_repo: str  # owner/name ("" when the fork was deleted)
    base_ref: str
    base_sha: str
    merge_commit_sha: str | None  # GitHub's test merge while open (None: not computed yet)
    author: str = ""  # the login that opened it (`user.login`; "" when GitHub gave none)


def pull(client: Client, repository: str, number: int) -> PullRequest:
    return parse(client.call("GET", f"/repos/{repository}/pulls/{number}", None))


def open_for_head(client: Client, repository: str, owner: str, branch: str) -> list[PullRequest]:
    """The open pull requests whose head is `owner:branch` (a fork's or this repository's)."""
    head = quote(f"{owner}:{branch}", safe=":")
    return [
        parse(item) for item in _pages(client, f"/repos/{repository}/pulls?state=open&head={head}")
    ]


def of_commit(client: Client, repository: str, sha: str) -> list[PullRequest]:
    """The pull requests GitHub associates with commit `sha` (the ones it heads among them)."""
    return [parse(item) for item in _pages(client, f"/repos/{repository}/commits/{sha}/pulls")]


def blob_sha(client: Client, repository: str, path: str, ref: str) -> str | None:
    """The git blob id of `path` on `ref` (None: no such file there)."""
    where = f"/repos/{repository}/contents/{quote(path)}?ref={quote(ref, safe='')}"
    try:
        found = client.call("GET", where, None)
    except PublishError as exc:
        if "HTTP 404" in exc.message:
            return None
        raise
    sha = found.get("sha") if isinstance(found, dict) else None
    if not isinstance(found, dict) or found.get("type") != "file" or not _is_sha(sha):
        raise PublishError("rejected", f"GET contents {path}: the answer is not a file's")
    return str(sha)


def base_changes(client: Client, repository: str, number: int) -> list[str]:
    """When the pull request's base branch was changed (ISO 8601, GitHub's `created_at`)."""
    found = []
    for event in _pages(client, f"/repos/{repository}/issues/{number}/events"):
        if event.get("event") == "base_ref_changed":
            when = event.get("created_at")
            if not isinstance(when, str) or not when:
                raise PublishError("rejected", "GET issue events: an event without created_at")
            found.append(when)
    return found


def _pages(client: Client, path: str) -> list[dict[str, Any]]:
    joiner = "&" if "?" in path else "?"
    endpoint = path.partition("?")[0]
    items: list[dict[str, Any]] = []
    for page in range(1, MAX_PAGES + 1):
        answer = client.call("GET", f"{path}{joiner}per_page={PER_PAGE}&page={page}", None)
        if not isinstance(answer, list) or not all(isinstance(i, dict) for i in answer):
            raise PublishError("rejected", f"GET {endpoint}: the answer is not a list")
        items += answer
        if len(answer) < PER_PAGE:
            return items
    raise PublishError("rejected", f"GET {endpoint}: more than {len(items)} entries")


def parse(found: Any) -> PullRequest:
    """A pull request object of GitHub's answer, or PublishError("rejected")."""
    if not isinstance(found, dict):
        raise PublishError("rejected", "GET pull request: the answer is not an object")
    head, base = found.get("head"), found.get("base")
    number, state, merge = found.get("number"), found.get("state"), found.get("merge_commit_sha")
    if not (isinstance(head, dict) and isinstance(base, dict)) or not isinstance(number, int):
        raise PublishError("rejected", "GET pull request: no number, head or base")
    if isinstance(number, bool) or number < 1:
        raise PublishError("rejected", f"GET pull request: number {number!r}")
    fields = (head.get("sha"), head.get("ref"), base.get("sha"), base.get("ref"))
    if not (_is_sha(fields[0]) and _is_sha(fields[2])) or not all(
        isinstance(f, str) and f for f in fields
    ):
        raise PublishError(
            "rejected", f"GET pull request #{number}: a head or base without sha or ref"
        )
    if not isinstance(state, str) or (merge is not None and not _is_sha(merge)):
        raise PublishError(
            "rejected", f"GET pull request #{number}: no state, or a bad merge_commit_sha"
        )
    return PullRequest(
        number=number,
        state=state,
        head_sha=str(fields[0]),
        head_ref=str(fields[1]),
        head_repo=_repo(head),
        base_ref=str(fields[3]),
        base_sha=str(fields[2]),
        merge_commit_sha=merge,
        author=_login(found.get("user")),
    )


def _login(user: Any) -> str:
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) and len(login) <= 100 else ""


def _repo(side: dict[str, Any]) -> str:
    repo = side.get("repo")
    name = repo.get("full_name") if isinstance(repo, dict) else None
    return name if isinstance(name, str) else ""


def _is_sha(value: object) -> bool:
    return isinstance(value, str) and SHA.match(value) is not None
