"""The trusted workflow's binding of a `workflow_run` to the pull request its hosts ran, from
GitHub's own data (`entropy-gate resolve-run`):

1. the open pull requests whose head is the run's head branch and repository (a fork's too:
   `workflow_run.pull_requests` is empty for forks) and whose head is the run's head_sha;
2. for each, `refs/pull/N/merge` fetched by ref, and the commit the host reports name bound to
   it (trigger.bind: GitHub's merge of that pull request, never a commit of the right shape);
3. the run's workflow file in that merge (the copy GitHub ran: the head merged into the base)
   must be the base branch's own copy, by blob sha through the API: a run of a copy the
   pull request edited, or of another base's, is refused;
4. the pull request's base must not have changed since the run started (its issue events'
   `base_ref_changed`): a run made while it targeted another branch read that branch's copy.

Anything that does not fit is a GateError naming it: no check run is posted.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from entropy_action.core import git
from entropy_action.core.errors import GateError
from entropy_action.github import pulls, trigger
from entropy_action.github.api import ApiSettings, Client, PublishError
from entropy_action.github.pulls import PullRequest
from entropy_action.github.trigger import Resolved, TriggeringRun

MERGE_REF = "refs/entropy-gate/pull/{number}/merge"
NEEDS = "the token needs pull-requests: read and contents: read"


@dataclass(frozen=True)
class Binding:
    """What resolve-run binds, read once by the command."""

    root: Path  # the trusted clone (the default branch)
    run: TriggeringRun
    commit: str  # the commit the host reports name (untrusted)
    base_branch: str  # the branch the pull request must target
    api: ApiSettings
    remote: str = "origin"
    fetch_env: Mapping[str, str] = field(default_factory=dict)  # the token's header for git


def resolve(binding: Binding) -> Resolved:
    """The pull request whose merge the hosts ran, bound and checked; GateError otherwise."""
    client = Client(binding.api, subject="pull request")
    run = binding.run
    try:
        found = pulls.open_for_head(client, run.repository, run.head_owner, run.head_branch)
    except PublishError as exc:
        raise GateError(f"resolve-run: {exc.message} ({NEEDS})") from None
    candidates = [pr for pr in found if pr.head_sha == run.head_sha]
    if not candidates:
        raise GateError(
            f"resolve-run: no open pull request has head {run.head_owner}:{run.head_branch} "
            f"at {run.head_sha[:12]} (it was closed, or pushed to since the run)"
        )
    refused = []
    for pr in candidates:
        try:
            resolved = trigger.bind(
                binding.root, binding.commit, run, pr, _fetch(binding, pr), binding.base_branch
            )
            _same_workflow(client, binding, pr, resolved)
            _base_unchanged(client, run, pr)
        except GateError as exc:
            refused.append(exc.message)
            continue
        return resolved
    raise GateError("; ".join(refused))


def _fetch(binding: Binding, pr: PullRequest) -> str | None:
    """GitHub's merge of the pull request, fetched by its ref (with the base branch's tip):
    the commit `refs/pull/N/merge` names, or None when it cannot be fetched."""
    local = MERGE_REF.format(number=pr.number)
    specs = [
        f"+refs/pull/{pr.number}/merge:{local}",
        f"+refs/heads/{pr.base_ref}:refs/remotes/{binding.remote}/{pr.base_ref}",
    ]
    failed = git.fetch(binding.root, binding.remote, specs, dict(binding.fetch_env))
    if failed is not None:
        print(f"resolve-run: refs/pull/{pr.number}/merge not fetched ({failed})", file=sys.stderr)
        return None
    return git.resolve_ref(binding.root, local)


def _same_workflow(client: Client, binding: Binding, pr: PullRequest, resolved: Resolved) -> None:
    path = binding.run.path
    ran = git.blob_id(binding.root, resolved.commit, path)
    try:
        base = pulls.blob_sha(client, binding.run.repository, path, pr.base_ref)
    except PublishError as exc:
        raise GateError(f"resolve-run: {exc.message} ({NEEDS})") from None
    if ran is None or ran != base:
        raise GateError(
            f"resolve-run: the run's workflow {path} in the merge it ran "
            f"({resolved.commit[:12]}) is blob {ran or 'missing'}, {pr.base_ref}'s own copy is "
            f"{base or 'missing'}: a run of another copy of the workflow (the pull request "
            "edits it, or its base is another branch) is refused"
        )


def _base_unchanged(client: Client, run: TriggeringRun, pr: PullRequest) -> None:
    try:
        changes = pulls.base_changes(client, run.repository, pr.number)
    except PublishError as exc:
        raise GateError(f"resolve-run: {exc.message} ({NEEDS})") from None
    started = _when(run.created_at, "workflow_run.created_at")
    later = [when for when in changes if _when(when, "base_ref_changed") >= started]
    if later:
        raise GateError(
            f"resolve-run: pull request #{pr.number}'s base branch was changed at {later[-1]}, "
            f"after the run started ({run.created_at}): the run may have read another base's "
            "workflow file; re-run the workflow"
        )


def _when(text: str, what: str) -> datetime:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise GateError(f"resolve-run: {what} {text[:40]!r} is not a time") from None
