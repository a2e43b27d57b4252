"""The GitHub API stand-in's reads that bind a verdict to a pull request (the endpoints
entropy_action.github.pulls calls), answered from a `World` of pull requests in GitHub's
shape (`pull_object`, `event_object`) and, for contents, from a real git repository.

Shapes as docs.github.com/rest documents them: a pull request (`pulls/pulls#get-a-pull-
request`), a list of them (`#list-pull-requests`, filtered by `state` and `head` =
`owner:branch`, the head's `label`), the pull requests a commit heads (`commits/commits#list-
pull-requests-associated-with-a-commit`), a file's contents (`repos/contents`: `type`, `sha`,
base64 `content`), a pull request's issue events (`issues/events`). Lists are paginated by
`per_page` (default 30) and `page`.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

Answer = tuple[int, Any, dict[str, str]]

_PULL = re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/pulls/(?P<n>[0-9]+)$")
_PULLS = re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/pulls$")
_COMMIT_PULLS = re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/commits/(?P<sha>[0-9a-f]+)/pulls$")
_EVENTS = re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/issues/(?P<n>[0-9]+)/events$")
_CONTENTS = re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/contents/(?P<path>.+)$")
_PULLS_DOCS = "https://docs.github.com/rest/pulls/pulls"


def pull_object(
    repo: str,
    number: int,
    *,
    head_sha: str,
    head_ref: str,
    base_sha: str,
    base_ref: str,
    merge_commit_sha: str | None,
    head_repo: str | None = None,
    state: str = "open",
    author: str = "octocat",
) -> dict[str, Any]:
    """A pull request as `GET /repos/{owner}/{repo}/pulls/{n}` returns it (the fields the
    docs list that a reader may use; `head_repo`: a fork's owner/name; `author`: who opened
    it, `user.login`)."""  # fmt: skip
    head_repo = head_repo or repo

    def side(full_name: str, ref: str, sha: str) -> dict[str, Any]:
        owner, _, name = full_name.partition("/")
        repository = {
            "id": abs(hash(full_name)) % 10**6,
            "name": name,
            "full_name": full_name,
            "owner": {"login": owner, "type": "User"},
            "fork": full_name != repo,
        }
        return {"label": f"{owner}:{ref}", "ref": ref, "sha": sha, "repo": repository,
                "user": {"login": owner}}  # fmt: skip

    return {
        "url": f"https://api.github.invalid/repos/{repo}/pulls/{number}",
        "id": 1000 + number, "node_id": f"PR_{number}", "number": number, "state": state,
        "locked": False, "title": f"pull request {number}", "user": {"login": author},
        "html_url": f"https://github.invalid/{repo}/pull/{number}", "draft": False,
        "merged": False, "mergeable": merge_commit_sha is not None,
        "merge_commit_sha": merge_commit_sha,
        "head": side(head_repo, head_ref, head_sha), "base": side(repo, base_ref, base_sha),
    }  # fmt: skip


def event_object(number: int, event: str, created_at: str) -> dict[str, Any]:
    """An issue event as `GET /repos/{owner}/{repo}/issues/{n}/events` lists it."""
    return {"id": abs(hash((number, event, created_at))) % 10**9, "node_id": "E", "url": "",
            "actor": {"login": "octocat"}, "event": event, "commit_id": None,
            "commit_url": None, "created_at": created_at}  # fmt: skip


@dataclass
class World:
    """The pull requests and their issue events a GitHub repository holds; the people and
    their role on it (`permissions`: login -> admin, maintain, write, triage or read; anyone
    else is no collaborator); the check runs already on its commits (`check_runs`: as
    tests.support.github_checks.stored_run makes them)."""

    pulls: list[dict[str, Any]] = field(default_factory=list)
    events: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    permissions: dict[str, str] = field(default_factory=dict)
    check_runs: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def read(cls, path: Path) -> World:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            list(data.get("pulls", [])),
            dict(data.get("events", {})),
            dict(data.get("permissions", {})),
            list(data.get("check_runs", [])),
        )

    def write(self, path: Path) -> Path:
        data = {"pulls": self.pulls, "events": self.events, "permissions": self.permissions,
                "check_runs": self.check_runs}  # fmt: skip
        path.write_text(json.dumps(data), "utf-8")
        return path


def answer(world: World | None, git: Path | None, method: str, url: str) -> Answer | None:
    """The answer to a read of these endpoints (None: not one of them)."""
    if method != "GET":
        return None
    path, _, query = url.partition("?")
    params = dict(p.partition("=")[::2] for p in query.split("&") if p)
    not_found: Answer = (404, {"message": "Not Found", "documentation_url": _PULLS_DOCS}, {})
    world = world or World()
    if (found := _CONTENTS.match(path)) is not None:
        return _contents(git, unquote(found["path"]), unquote(params.get("ref", "HEAD")))
    if (found := _PULL.match(path)) is not None:
        pulls = [p for p in world.pulls if p["number"] == int(found["n"])]
        return (200, pulls[0], {}) if pulls else not_found
    listed: list[dict[str, Any]] | None = None
    if _PULLS.match(path):
        state, head = params.get("state", "open"), unquote(params.get("head", ""))
        listed = [p for p in world.pulls if state in ("all", p["state"])]
        listed = [p for p in listed if not head or p["head"]["label"] == head]
    elif (found := _COMMIT_PULLS.match(path)) is not None:
        listed = [p for p in world.pulls if p["head"]["sha"] == found["sha"]]
    elif (found := _EVENTS.match(path)) is not None:
        listed = world.events.get(found["n"], [])
    if listed is None:
        return None
    per_page, page = int(params.get("per_page", "30")), int(params.get("page", "1"))
    return 200, listed[(page - 1) * per_page : page * per_page], {}


def _contents(git: Path | None, path: str, ref: str) -> Answer:
    missing: Answer = (404, {"message": "Not Found", "documentation_url": _PULLS_DOCS}, {})
    if git is None:
        return missing
    spec = ["git", "-C", str(git), "rev-parse", "--verify", "--quiet", f"{ref}:{path}"]
    done = subprocess.run(spec, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return missing
    sha = done.stdout.strip()
    blob = ["git", "-C", str(git), "cat-file", "blob", sha]
    content = subprocess.run(blob, capture_output=True, check=True).stdout
    name = path.rsplit("/", 1)[-1]
    return 200, {
        "type": "file", "encoding": "base64", "size": len(content), "name": name, "path": path,
        "sha": sha, "content": base64.b64encode(content).decode(), "url": "", "git_url": "",
        "html_url": "", "download_url": "", "_links": {},
    }, {}  # fmt: skip
