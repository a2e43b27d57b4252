"""A maintainer's override of a rejected verdict, for one head (#36): who may accept, what,
and the check run that says so.

Pure: what the event named (`Trigger`: who pressed the check run's requested action or added
the label, and which check run or pull request) and what GitHub's API answered about it (the
pull request, the sender's permission, the gate's check runs on its head) in; a refusal in
one line, or the plan of the check run that accepts, out. Nothing from the event payload is
believed but the sender's login and the object it names: the check run's head, name and
poster, the pull request's head and author and the permission are GitHub's answers, so a
payload that lies about them changes nothing (gate.accept reads them).

- Only a person (not a bot) with at least `minimum` permission on the repository, who is not
  the pull request's author, accepts; a label only counts as the trusted side reads who added
  it (the `labeled` event's sender).
- Only the gate's own check run (its name, posted by the gate's poster: its GitHub App, or
  GitHub Actions' token) on the pull request's current head, and only while the latest such
  run there is a rejection: the acceptance is a check run of the same name on that head only,
  so the next push is judged again.
- A head another open pull request into another base shares is refused, as publish withholds
  a success there (github.sharing).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from entropy_action.github.pulls import PullRequest
from entropy_action.render import markdown
from entropy_action.render.checkrun import ACCEPT_ACTION, CheckRunPlan

LABEL = ACCEPT_ACTION["label"]  # the button a rejected check run offers (render.checkrun)
IDENTIFIER = ACCEPT_ACTION["identifier"]
DEFAULT_LABEL = "entropy-gate: accept"
ACTIONS_APP = "github-actions"  # the app of check runs posted with a workflow's GITHUB_TOKEN
Minimum = Literal["write", "maintain", "admin"]
MINIMUMS: tuple[Minimum, ...] = ("write", "maintain", "admin")
LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$")


@dataclass(frozen=True)
class Trigger:
    """What the event says happened: who, how, and on what (ids only)."""

    how: Literal["action", "label"]
    sender: str
    sender_type: str  # "User", "Bot", "Organization"
    check_run: int | None = None  # the check run whose action was pressed
    pull_request: int | None = None  # the pull request the label was added to


@dataclass(frozen=True)
class Permission:
    """`GET /repos/{owner}/{repo}/collaborators/{username}/permission`: the legacy base role
    (admin, write, read, none: maintain reads write, triage reads read), the role's name, and
    `user.permissions`' maintain and admin (None: not in the answer)."""

    permission: str
    role_name: str = ""
    maintain: bool | None = None
    admin: bool | None = None

    def level(self) -> str:
        """The highest base level it shows, in words."""
        if self.permission == "admin":
            return "admin"
        if self.permission == "write" and (self.maintain or self.admin):
            return "maintain"
        return self.permission if self.permission in ("write", "read") else "none"


def permitted(permission: Permission, minimum: Minimum) -> bool:
    """Whether the permission reaches `minimum`. Write is the legacy `permission` (maintain
    maps to write there); maintain needs `user.permissions.maintain` (or admin) besides,
    since a custom role's name says nothing of its base; admin, the legacy admin."""
    if permission.permission not in ("write", "admin"):
        return False
    if minimum == "admin":
        return permission.permission == "admin"
    if minimum == "maintain":
        return bool(permission.maintain or permission.admin) or permission.permission == "admin"
    return True


@dataclass(frozen=True)
class GateRun:
    """A check run as `GET .../check-runs/{id}` (or the head's list) answers it."""

    id: int
    name: str
    head_sha: str
    app_id: int | None
    app_slug: str
    status: str
    conclusion: str | None
    title: str
    html_url: str
    pull_requests: tuple[int, ...] = ()


@dataclass(frozen=True)
class Policy:
    """The trusted workflow's inputs."""

    check_name: str = "entropy-gate"
    minimum: Minimum = "write"
    conclusion: Literal["success", "neutral"] = "success"
    poster: int | str = ACTIONS_APP  # the gate's poster: its App's id, else the Actions app
    label: str = DEFAULT_LABEL


def is_posters(run: GateRun, policy: Policy) -> bool:
    if isinstance(policy.poster, int):
        return run.app_id == policy.poster
    return run.app_slug == policy.poster


def the_gates(run: GateRun, policy: Policy) -> bool:
    return run.name == policy.check_name and is_posters(run, policy)


def latest(runs: Sequence[GateRun], policy: Policy) -> GateRun | None:
    """The gate's newest check run among `runs` (the highest id: GitHub numbers them in
    order), or None."""
    own = [run for run in runs if the_gates(run, policy)]
    return max(own, key=lambda run: run.id) if own else None


def refusal(
    trigger: Trigger,
    pull: PullRequest,
    sharing: Sequence[PullRequest],
    permission: Permission | None,
    pressed: GateRun | None,
    newest: GateRun | None,
    policy: Policy,
) -> str | None:
    """Why this acceptance may not stand, or None. `pressed`: the check run whose action was
    pressed (None for a label); `newest`: the gate's latest check run on the pull request's
    head."""
    who = f"@{trigger.sender}"
    if trigger.sender_type != "User" or trigger.sender.endswith("[bot]"):
        kind = trigger.sender_type or "bot"
        return f"{who} is a {kind}, not a person: only a maintainer's review accepts"
    if pull.state != "open":
        return f"pull request #{pull.number} is {pull.state}"
    if pull.author and pull.author.lower() == trigger.sender.lower():
        return (
            f"{who} opened pull request #{pull.number}: its author cannot accept its own "
            "verdict, a maintainer who reviewed it does"
        )
    if permission is None:
        return f"{who} is no collaborator of the repository: accepting needs {policy.minimum}"
    if not permitted(permission, policy.minimum):
        return (
            f"{who} has {permission.level()} permission on the repository; accepting needs "
            f"{policy.minimum}"
        )
    if pressed is not None:
        if not the_gates(pressed, policy):
            return (
                f"check run {pressed.id} ({pressed.name!r}, posted by {pressed.app_slug or '?'}) "
                f"is not the gate's {policy.check_name!r} check run"
            )
        if pressed.head_sha != pull.head_sha:
            return (
                f"check run {pressed.id} judged {pressed.head_sha[:12]}, not the head of pull "
                f"request #{pull.number} ({pull.head_sha[:12]}): a later push is judged again"
            )
    for other in sharing:
        if (
            other.number != pull.number
            and other.state == "open"
            and (other.head_sha == pull.head_sha and other.base_ref != pull.base_ref)
        ):
            return (
                f"{pull.head_sha[:12]} is also the head of pull request #{other.number} into "
                f"{other.base_ref}: an acceptance on the commit would stand for it too"
            )
    if newest is None:
        return f"the gate has no {policy.check_name!r} check run on {pull.head_sha[:12]} yet"
    if newest.status != "completed":
        return f"the gate's check run {newest.id} on {pull.head_sha[:12]} has not completed"
    if newest.conclusion != "failure":
        return (
            f"the gate's latest check run on {pull.head_sha[:12]} ({newest.id}) is "
            f"{newest.conclusion}, not a rejection: nothing to accept"
        )
    return None


def plan(
    trigger: Trigger,
    pull: PullRequest,
    permission: Permission,
    accepted: GateRun,
    policy: Policy,
) -> CheckRunPlan:
    """The check run that accepts `accepted`'s verdict on the pull request's head: who, with
    what permission, how, what was accepted, and that the next push is judged again."""
    who = f"@{trigger.sender}"
    how = (
        f"the check run's **{LABEL}** action"
        if trigger.how == "action"
        else f"the label {markdown.code(policy.label)}"
    )
    role = f", role {markdown.code(permission.role_name)}" if permission.role_name else ""
    was = markdown.text(accepted.title) or "(no title)"
    run = f"check run {accepted.id}"
    run = f"[{run}]({accepted.html_url})" if _safe(accepted.html_url) else run
    summary = "\n".join(
        [
            f"## ✅ entropy-gate: accepted after review by {markdown.text(who)}",
            "",
            f"**{markdown.text(who)}** (permission `{permission.level()}`{role}) accepted the "
            f"rejected verdict on this head through {how}.",
            "",
            f"- **Accepted:** {run}, `{accepted.conclusion}`: {was}",
            f"- **Head:** `{pull.head_sha}` of pull request \\#{pull.number} "
            f"({markdown.code(pull.head_ref)} into {markdown.code(pull.base_ref)}): this "
            "commit only; the next push is judged again.",
            f"- **Why:** a person with {policy.minimum} permission or more, not the pull "
            "request's author, reviewed the gate's verdict and accepted it for this head; the "
            "verdict itself stands as judged (see the accepted check run).",
        ]
    )
    title = f"Accepted after review by {who} (was: {accepted.title})"
    return CheckRunPlan(
        name=policy.check_name,
        head_sha=pull.head_sha,
        conclusion=policy.conclusion,
        title=title[:250],
        summary=summary,
    )


def _safe(url: str) -> bool:
    return url.startswith("https://") and not any(c in url for c in " ()<>[]\"'`\\")
