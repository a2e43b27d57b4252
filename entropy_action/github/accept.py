"""`entropy-gate accept`: a maintainer's override of the gate's rejection, for one head, in
the trusted workflow (entropy-gate-accept.yml: `check_run` requested_action and
`pull_request_target` labeled, both run from the default branch; it checks nothing out).

The event payload is data from GitHub, read with a cap, and only three things of it are
used: what happened (the requested action's identifier, the label's name), who did it (the
sender's login and type) and the object named (the check run's id, the pull request's
number). Everything the decision rests on is read again through the API: the check run (its
name, poster and head), the pull request (its current head, author and base), the other
open pull requests of that head, the sender's permission
(`GET /repos/{owner}/{repo}/collaborators/{username}/permission`) and the gate's latest check
run on the head. github.acceptance decides; the acceptance is a check run of the gate's name
on that head, posted with the poster's token (its App's, for a required check bound to it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from entropy_action.core.errors import GateError
from entropy_action.evidence.bounded import read_capped
from entropy_action.github import acceptance, api, pulls
from entropy_action.github.acceptance import GateRun, Permission, Policy, Trigger
from entropy_action.github.api import ApiSettings, Client, PublishError
from entropy_action.github.pulls import PullRequest

MAX_EVENT = 25 * 1024 * 1024  # GitHub caps a webhook payload at 25 MB
EVENTS = ("check_run", "pull_request_target")
WRONG_EVENT = (
    "accept: runs on a check_run (requested_action) or pull_request_target (labeled) event "
    "in a workflow of the default branch, not on {event!r}: nothing a pull request's own "
    "workflow sends is an acceptance"
)


@dataclass(frozen=True)
class AcceptSettings:
    """What `accept` needs, read once by the command."""

    event_name: str
    event: Mapping[str, Any]
    policy: Policy
    post: ApiSettings  # the token that posts (the App's, or the workflow's)
    read: ApiSettings  # the token that reads pull requests, check runs, permissions


@dataclass(frozen=True)
class Outcome:
    """What happened, in one line; `posted` the new check run's id (None: nothing posted)."""

    line: str
    posted: int | None = None


def read_event(path: Path) -> dict[str, Any]:
    try:
        loaded = json.loads(read_capped(path, MAX_EVENT).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise GateError(f"{path}: the event file (GITHUB_EVENT_PATH) is not JSON") from None
    if not isinstance(loaded, dict):
        raise GateError(f"{path}: the event file (GITHUB_EVENT_PATH) is not a JSON object")
    return loaded


def trigger_of(event_name: str, event: Mapping[str, Any], policy: Policy) -> Trigger | str:
    """The trigger the event names, or why there is nothing to do (another label or action);
    GateError for an event that can never accept."""
    if event_name not in EVENTS:
        raise GateError(WRONG_EVENT.format(event=event_name))
    sender = event.get("sender")
    login = sender.get("login") if isinstance(sender, dict) else None
    kind = sender.get("type") if isinstance(sender, dict) else None
    if not isinstance(login, str) or not acceptance.LOGIN.match(login):
        raise GateError("accept refused: the event names no sender GitHub could have sent")
    kind = kind if isinstance(kind, str) else ""
    if event_name == "check_run":
        asked = _at(event, "requested_action", "identifier")
        if event.get("action") != "requested_action" or asked != acceptance.IDENTIFIER:
            return f"check_run {event.get('action')!r} ({asked!r}): not the gate's action"
        run = _at(event, "check_run", "id")
        if not isinstance(run, int) or isinstance(run, bool) or run < 1:
            raise GateError("accept refused: the requested action names no check run")
        return Trigger("action", login, kind, check_run=run)
    label = _at(event, "label", "name")
    if event.get("action") != "labeled" or label != policy.label:
        return f"pull_request_target {event.get('action')!r} ({label!r}): not the accept label"
    number = _at(event, "pull_request", "number")
    if not isinstance(number, int) or isinstance(number, bool) or number < 1:
        raise GateError("accept refused: the labeled event names no pull request")
    return Trigger("label", login, kind, pull_request=number)


def _at(event: Mapping[str, Any], outer: str, inner: str) -> object:
    node = event.get(outer)
    return node.get(inner) if isinstance(node, dict) else None


def accept(settings: AcceptSettings) -> Outcome:
    """Read, decide, and post the acceptance; GateError (one line) when refused."""
    policy = settings.policy
    found = trigger_of(settings.event_name, settings.event, policy)
    if isinstance(found, str):
        return Outcome(f"entropy-gate accept: nothing to do: {found}")
    client = Client(settings.read, subject="read")
    repository = settings.read.repository
    try:
        pressed = check_run(client, repository, found.check_run) if found.check_run else None
        pull = _pull(client, repository, found, pressed)
        sharing = pulls.of_commit(client, repository, pull.head_sha)
        permission = permission_of(client, repository, found.sender)
        newest = acceptance.latest(runs_on(client, repository, pull.head_sha, policy), policy)
    except PublishError as exc:
        raise GateError(f"accept: cannot read what it needs: {exc.message}") from None
    refused = acceptance.refusal(found, pull, sharing, permission, pressed, newest, policy)
    if refused is not None:
        raise GateError(f"accept refused: {refused}")
    assert permission is not None, "refusal() refuses a sender without permission"
    assert newest is not None, "refusal() refuses a head the gate has not judged"
    plan = acceptance.plan(found, pull, permission, newest, policy)
    try:
        sent = api.send(plan, settings.post)
    except PublishError as exc:
        raise GateError(f"accept: the check run could not be written: {exc.message}") from None
    return Outcome(
        f"entropy-gate accept: @{found.sender} ({permission.level()}) accepted check run "
        f"{newest.id} ({newest.conclusion}) on {pull.head_sha[:12]} of pull request "
        f"#{pull.number}: posted {policy.conclusion} (check run {sent.id})",
        posted=sent.id,
    )


def _pull(client: Client, repository: str, found: Trigger, pressed: GateRun | None) -> PullRequest:
    """The pull request the label names, or the one the pressed check run's head heads."""
    if found.pull_request is not None:
        return pulls.pull(client, repository, found.pull_request)
    assert pressed is not None
    numbers = pressed.pull_requests or tuple(
        p.number for p in pulls.of_commit(client, repository, pressed.head_sha)
    )
    candidates = [pulls.pull(client, repository, n) for n in dict.fromkeys(numbers)]
    open_ = [p for p in candidates if p.state == "open"]
    if not open_:
        raise GateError(f"accept refused: check run {pressed.id} belongs to no open pull request")
    heading = [p for p in open_ if p.head_sha == pressed.head_sha]
    return heading[0] if heading else open_[0]  # refusal() names a head that moved on


def check_run(client: Client, repository: str, run_id: int) -> GateRun:
    return parse_run(client.call("GET", f"/repos/{repository}/check-runs/{run_id}", None))


def runs_on(client: Client, repository: str, sha: str, policy: Policy) -> list[GateRun]:
    """The check runs of the gate's name on `sha` (the newest 100: GitHub lists the latest
    first, and one head rarely gets more runs of one name)."""
    name = quote(policy.check_name, safe="")
    path = f"/repos/{repository}/commits/{sha}/check-runs?check_name={name}&per_page=100"
    found = client.call("GET", path, None)
    runs = found.get("check_runs") if isinstance(found, dict) else None
    if not isinstance(runs, list):
        raise PublishError("rejected", "GET check runs: the answer lists none")
    return [parse_run(run) for run in runs]


def permission_of(client: Client, repository: str, login: str) -> Permission | None:
    """The sender's permission; None when GitHub says they are no collaborator (404)."""
    path = f"/repos/{repository}/collaborators/{quote(login, safe='')}/permission"
    try:
        found = client.call("GET", path, None)
    except PublishError as exc:
        if "HTTP 404" in exc.message:
            return None
        raise
    if not isinstance(found, dict) or not isinstance(found.get("permission"), str):
        raise PublishError("rejected", "GET permission: the answer carries no permission")
    user = found.get("user")
    flags = user.get("permissions") if isinstance(user, dict) else None
    flags = flags if isinstance(flags, dict) else {}
    role = found.get("role_name")
    return Permission(
        permission=str(found["permission"]),
        role_name=role if isinstance(role, str) else "",
        maintain=flags.get("maintain") if isinstance(flags.get("maintain"), bool) else None,
        admin=flags.get("admin") if isinstance(flags.get("admin"), bool) else None,
    )


def parse_run(found: Any) -> GateRun:
    """A check run of GitHub's answer (untrusted: typed, or PublishError("rejected"))."""
    if not isinstance(found, dict):
        raise PublishError("rejected", "GET check run: the answer is not an object")
    run_id, head, name = found.get("id"), found.get("head_sha"), found.get("name")
    if not isinstance(run_id, int) or isinstance(run_id, bool) or not isinstance(name, str):
        raise PublishError("rejected", "GET check run: no id or name")
    if not isinstance(head, str) or not pulls.SHA.match(head):
        raise PublishError("rejected", f"GET check run {run_id}: no head_sha")
    app = _object(found.get("app"))
    app_id, slug = app.get("id"), app.get("slug")
    title = _object(found.get("output")).get("title")
    linked = found.get("pull_requests")
    linked = linked if isinstance(linked, list) else []
    return GateRun(
        id=run_id,
        name=name,
        head_sha=head,
        app_id=app_id if isinstance(app_id, int) and not isinstance(app_id, bool) else None,
        app_slug=slug if isinstance(slug, str) else "",
        status=str(found.get("status") or ""),
        conclusion=found.get("conclusion") if isinstance(found.get("conclusion"), str) else None,
        title=title[:300] if isinstance(title, str) else "",
        html_url=str(found.get("html_url") or ""),
        pull_requests=tuple(
            p["number"] for p in linked if isinstance(p, dict) and isinstance(p.get("number"), int)
        ),
    )


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
