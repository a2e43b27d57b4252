"""The GitHub API stand-in's reads of check runs and of a person's permission: what a
maintainer's override (entropy_action.github.accept) asks before it posts.

Shapes as docs.github.com/rest documents them: a check run (`checks/runs#get-a-check-run`:
`id`, `head_sha`, `name`, `status`, `conclusion`, `output.title`, `html_url`, `app` — the
GitHub App that created it: GitHub Actions for a workflow's token, the App for its
installation token — and `pull_requests`, the open pull requests of this repository whose
head is the commit: a fork's are never listed), the check runs of a commit
(`checks/runs#list-check-runs-for-a-git-reference`, filtered by `check_name`, newest first),
and a collaborator's permission (`collaborators/collaborators#get-repository-permissions-for-
a-user`: the legacy `permission` — maintain reads write, triage reads read —, `role_name`,
and `user.permissions`; 404 for a login that is no collaborator).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from tests.support.github_reads import World

Answer = tuple[int, Any, dict[str, str]]
ACTIONS_APP = {"id": 15368, "slug": "github-actions", "name": "GitHub Actions"}
APP_SLUG = "entropy-gate-test"  # the stand-in App's slug
_RUN = re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/check-runs/(?P<id>[0-9]+)$")
_COMMIT_RUNS = re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/commits/(?P<sha>[0-9a-f]+)/check-runs$")
_PERMISSION = re.compile(r"^/repos/[^/]+/[^/]+/collaborators/(?P<login>[^/]+)/permission$")
_DOCS = "https://docs.github.com/rest/checks/runs"
_LEGACY = {
    "admin": "admin",
    "maintain": "write",
    "write": "write",
    "triage": "read",
    "read": "read",
}
_RANK = ("read", "triage", "write", "maintain", "admin")


def app_of(credential: str, app_id: str | None) -> dict[str, Any]:
    """The app a check run created with this credential belongs to."""
    if credential == "app" and app_id is not None:
        return {"id": int(app_id), "slug": APP_SLUG, "name": "entropy-gate (test App)"}
    return dict(ACTIONS_APP)


def stored_run(
    run_id: int,
    repo: str,
    head_sha: str,
    *,
    name: str = "entropy-gate",
    conclusion: str = "failure",
    title: str = "Environment-coupled: passes on host A, fails on host B",
    app: Mapping[str, Any] = ACTIONS_APP,
    head_branch: str = "",
) -> dict[str, Any]:
    """A check run already on a commit (World.check_runs); `head_branch`: its check suite's."""
    output = {"title": title, "summary": title}
    fields = {"name": name, "head_sha": head_sha, "status": "completed",
              "conclusion": conclusion, "output": output, "head_branch": head_branch}  # fmt: skip
    return {"id": run_id, "repo": repo, "app": dict(app), "fields": fields}


def run_object(
    run_id: int,
    repo: str,
    fields: Mapping[str, Any],
    app: Mapping[str, Any],
    world: World,
    base: str,
) -> dict[str, Any]:
    """A check run as `GET .../check-runs/{id}` answers it."""
    head = fields.get("head_sha")
    output = fields.get("output") or {}
    linked = [
        {"number": p["number"], "head": {"sha": p["head"]["sha"], "ref": p["head"]["ref"]},
         "base": {"sha": p["base"]["sha"], "ref": p["base"]["ref"]}}
        for p in world.pulls
        if p["state"] == "open" and not p["head"]["repo"]["fork"]
        if p["head"]["sha"] == head or p["head"]["ref"] == fields.get("head_branch")
    ]  # fmt: skip
    url = f"{base}/repos/{repo}/check-runs/{run_id}"
    return {
        "id": run_id, "head_sha": head, "name": fields.get("name"), "url": url,
        "html_url": f"https://github.invalid/{repo}/runs/{run_id}",
        "status": fields.get("status", "queued"), "conclusion": fields.get("conclusion"),
        "output": {"title": output.get("title"), "summary": output.get("summary")},
        "app": dict(app), "pull_requests": linked,
    }  # fmt: skip


def answer(
    method: str,
    url: str,
    runs: Mapping[int, tuple[str, Mapping[str, Any], Mapping[str, Any]]],
    world: World,
    base: str,
) -> Answer | None:
    """The answer to a read of these endpoints (None: not one of them). `runs`: id -> (repo,
    fields, app) of every check run the stand-in holds."""
    if method != "GET":
        return None
    path, _, query = url.partition("?")
    params = dict(p.partition("=")[::2] for p in query.split("&") if p)
    not_found: Answer = (404, {"message": "Not Found", "documentation_url": _DOCS}, {})
    if (found := _RUN.match(path)) is not None:
        held = runs.get(int(found["id"]))
        if held is None or held[0] != found["repo"]:
            return not_found
        return 200, run_object(int(found["id"]), held[0], held[1], held[2], world, base), {}
    if (found := _COMMIT_RUNS.match(path)) is not None:
        name = unquote(params.get("check_name", ""))
        listed = [
            run_object(i, repo, fields, app, world, base)
            for i, (repo, fields, app) in sorted(runs.items(), reverse=True)
            if repo == found["repo"] and fields.get("head_sha") == found["sha"]
            if not name or fields.get("name") == name
        ]
        return 200, {"total_count": len(listed), "check_runs": listed}, {}
    if (found := _PERMISSION.match(path)) is not None:
        return _permission(unquote(found["login"]), world)
    return None


def _permission(login: str, world: World) -> Answer:
    role = world.permissions.get(login)
    if role is None:
        return 404, {"message": "Not Found", "documentation_url": _DOCS}, {}
    rank = _RANK.index(role)
    flags = {"pull": True, "triage": rank >= 1, "push": rank >= 2, "maintain": rank >= 3,
             "admin": rank >= 4}  # fmt: skip
    user = {"login": login, "id": abs(hash(login)) % 10**6, "type": "User", "permissions": flags}
    return 200, {"permission": _LEGACY[role], "role_name": role, "user": user}, {}
