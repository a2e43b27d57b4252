"""What triggered a trusted run, and which pull request's merge its host reports may speak for.

The trusted workflow (`entropy-gate-trusted.yml`) runs from the default branch on a
`workflow_run` event after the PR's own workflow ran the host jobs. Everything it is handed is
checked before anything is judged: the event must be a `workflow_run` of the caller workflow
(by path, not by name: any workflow can be *named* entropy-gate) for a `pull_request`
(`triggering_run`), and the commit the host reports name must be GitHub's merge of one open
pull request whose head is the run's `head_sha` (`bind`): its `merge_commit_sha` or
`refs/pull/N/merge`, fetched by ref, or — when the base moved on while the hosts ran and
GitHub merged again — a commit whose parents are [a commit of the pull request's base branch,
the head] and whose tree is git's own merge of the two (`git merge-tree`), so no tree of
anyone's choosing. A commit of the right shape and another tree, pushed to any branch, is
refused. The host folders are untrusted data: only their host.json is read, capped and
without following a symlink.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from entropy_action.core import git
from entropy_action.core.errors import GateError
from entropy_action.core.layout import HOST_JSON, PROPERTIES_FOLDER
from entropy_action.evidence import bounded, hostreport
from entropy_action.github.pulls import PullRequest

MAX_EVENT = 64 * 1024 * 1024  # bytes of $GITHUB_EVENT_PATH (as publisher reads it)
CALLER = ".github/workflows/entropy-gate.yml"
SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


@dataclass(frozen=True)
class TriggeringRun:
    """The run a `workflow_run` event names, as its event file says (checked)."""

    id: int
    path: str
    head_sha: str
    head_branch: str
    head_owner: str  # head_repository.owner.login (a fork's owner, or this repository's)
    head_repo: str  # head_repository.full_name
    created_at: str  # when GitHub read its workflow file (ISO 8601)
    repository: str  # this repository, owner/name
    default_branch: str


@dataclass(frozen=True)
class Resolved:
    """The commit the hosts ran (C: GitHub's merge of the pull request), the PR's head (H),
    the base to judge C against (C's first parent), and the pull request."""

    commit: str
    head_sha: str
    base: str
    pull_request: int
    base_branch: str


def triggering_run(event_name: str, event_path: Path | None, caller: str) -> TriggeringRun:
    """The `workflow_run` of `caller` for a pull_request that the event names."""
    if event_name != "workflow_run":
        raise GateError(
            f"resolve-run: the event is {event_name or 'unset'!r} (GITHUB_EVENT_NAME), "
            "not workflow_run: the trusted workflow runs only after the caller workflow"
        )
    if event_path is None:
        raise GateError("resolve-run: GITHUB_EVENT_PATH is not set (no event to check)")
    event = _event(event_path)
    run = event.get("workflow_run")
    if not isinstance(run, dict):
        raise GateError(f"{event_path}: no workflow_run object in the event")
    triggering = run.get("event")
    if triggering != "pull_request":
        raise GateError(
            f"{event_path}: workflow_run.event is {_shown(triggering)}, not pull_request"
        )
    path = run.get("path")
    if path != caller:
        raise GateError(
            f"{event_path}: workflow_run.path is {_shown(path)}, not the caller workflow "
            f"{caller!r} (--caller)"
        )
    head = run.get("head_sha")
    if not isinstance(head, str) or not SHA.match(head):
        raise GateError(f"{event_path}: workflow_run.head_sha is {_shown(head)}, not a commit id")
    return _run(event_path, event, run, caller, head)


def _run(
    where: Path, event: dict[str, object], run: dict[str, object], path: str, head: str
) -> TriggeringRun:
    head_repo = run.get("head_repository")
    owner = head_repo.get("owner") if isinstance(head_repo, dict) else None
    repository = event.get("repository")
    fields = {
        "workflow_run.id": run.get("id"),
        "workflow_run.head_branch": run.get("head_branch"),
        "workflow_run.created_at": run.get("created_at"),
        "workflow_run.head_repository.full_name": _get(head_repo, "full_name"),
        "workflow_run.head_repository.owner.login": _get(owner, "login"),
        "repository.full_name": _get(repository, "full_name"),
        "repository.default_branch": _get(repository, "default_branch"),
    }
    for name, value in fields.items():
        if name == "workflow_run.id":
            if not isinstance(value, int) or isinstance(value, bool):
                raise GateError(f"{where}: {name} is {_shown(value)}, not a run id")
        elif not isinstance(value, str) or not value:
            raise GateError(f"{where}: {name} is {_shown(value)}: the run cannot be bound")
    got = {name.rpartition(".")[2]: value for name, value in fields.items()}
    return TriggeringRun(
        id=int(str(got["id"])),
        path=path,
        head_sha=head,
        head_branch=str(got["head_branch"]),
        head_owner=str(got["login"]),
        head_repo=str(fields["workflow_run.head_repository.full_name"]),
        created_at=str(got["created_at"]),
        repository=str(fields["repository.full_name"]),
        default_branch=str(got["default_branch"]),
    )


def _get(node: object, key: str) -> object:
    return node.get(key) if isinstance(node, dict) else None


def _event(path: Path) -> dict[str, object]:
    return bounded.read_json_object(path, MAX_EVENT, "the event file (GITHUB_EVENT_PATH)")


def _shown(value: object) -> str:
    return "missing" if value is None else repr(value)[:80]


def reported_commit(host_a: Path, host_b: Path) -> str:
    """The commit both hosts' host.json name (untrusted: read as data, never through a link).
    A host of a manifest that lists its properties holds one report per property,
    DIR/properties/ID (its legs' artifacts merged): every host.json there must name the same
    commit; a property without one (its leg failed or uploaded nothing) is left to the
    verdict, which judges it invalid."""
    named: dict[str, list[tuple[Path, str]]] = {}
    for label, folder in (("A", host_a), ("B", host_b)):
        if folder.is_symlink():
            raise GateError(f"{folder}: host {label}'s folder is a symbolic link; never followed")
        named[label] = [(path, _commit(path)) for path in _host_jsons(folder)]
    first_path, first = named["A"][0]
    for label in ("A", "B"):
        for path, commit in named[label]:
            if commit != first:
                raise GateError(f"{path}: host {label} ran commit {commit}, {first_path} {first}")
    return first


def _host_jsons(folder: Path) -> list[Path]:
    """FOLDER/host.json, or each FOLDER/properties/ID/host.json when the folder has none."""
    properties = folder / PROPERTIES_FOLDER
    if (folder / HOST_JSON).exists() or folder.is_symlink() or not properties.is_dir():
        return [folder / HOST_JSON]
    if properties.is_symlink():
        raise GateError(f"{properties}: a symbolic link; never followed")
    found = [
        entry / HOST_JSON
        for entry in sorted(properties.iterdir())
        if not entry.is_symlink() and entry.is_dir() and os.path.lexists(entry / HOST_JSON)
    ]
    if not found:
        raise GateError(f"{properties}: no property's host.json (every leg failed to report)")
    return found


def _commit(path: Path) -> str:
    info = hostreport.read_info(path)
    if info.commit is None:
        raise GateError(f"{path}: names no commit (field 'commit')")
    return info.commit


def bind(root: Path, commit: str, run: TriggeringRun, pr: PullRequest, merge_ref: str | None,
         base_branch: str) -> Resolved:  # fmt: skip
    """The base to judge `commit` against, when it is GitHub's merge of pull request `pr`
    (which must be open, into `base_branch`, from the run's head repository and head) — its
    merge_commit_sha, `merge_ref` (refs/pull/N/merge as fetched), or a re-merge git confirms;
    anything else is refused, naming why."""
    problem = pull_problem(run, pr, base_branch)
    if problem:
        raise GateError(f"resolve-run: {problem}")
    for sha, what in ((run.head_sha, "the run's head_sha"), (commit, "host A's commit")):
        if not git.has_commit(root, sha):
            raise GateError(
                f"resolve-run: {what} {sha} is not in this clone (git fetch origin {sha})"
            )
    parents = git.parents(root, commit)
    if len(parents) != 2 or parents[1] != run.head_sha:
        raise GateError(
            f"resolve-run: host A's report names commit {commit}, not a merge of the run's "
            f"head {run.head_sha} (pull request #{pr.number}'s merge is "
            f"{pr.merge_commit_sha or merge_ref or 'not computed'})"
        )
    if commit not in (pr.merge_commit_sha, merge_ref) and not _remerged(root, commit, parents, pr):
        raise GateError(
            f"resolve-run: host A's report names commit {commit}, which is not GitHub's merge "
            f"of pull request #{pr.number} (merge_commit_sha {pr.merge_commit_sha or 'none'}, "
            f"refs/pull/{pr.number}/merge {merge_ref or 'not fetched'}), and its tree is not "
            f"git's merge of {parents[1][:12]} into {parents[0][:12]} of {base_branch!r}"
        )
    return Resolved(commit, run.head_sha, parents[0], pr.number, base_branch)


def pull_problem(run: TriggeringRun, pr: PullRequest, base_branch: str) -> str | None:
    """Pure: why pull request `pr` is not the one the run's hosts may speak for, or None."""
    number = f"pull request #{pr.number}"
    if pr.state != "open":
        return f"{number} is {pr.state}: nothing is posted for it"
    if pr.head_sha != run.head_sha:
        return (
            f"{number}'s head is now {pr.head_sha[:12]}, not the run's {run.head_sha[:12]}: a "
            "later run judges it"
        )
    if pr.head_repo != run.head_repo:
        return (
            f"{number}'s head repository is {pr.head_repo or 'gone'!r}, the run's {run.head_repo!r}"
        )
    if pr.base_ref != base_branch:
        return (
            f"{number} targets {pr.base_ref!r}, not {base_branch!r}: the trusted workflow "
            "judges pull requests into its base branch only (input base-branch)"
        )
    return None


def _remerged(root: Path, commit: str, parents: list[str], pr: PullRequest) -> bool:
    """Whether `commit` is GitHub's earlier merge of the pull request, as git can confirm it:
    its first parent is on the base branch (an ancestor of its tip, pr.base_sha) and its tree
    is exactly git's merge of the head into that parent."""
    if not git.has_commit(root, pr.base_sha) or not git.is_ancestor(root, parents[0], pr.base_sha):
        return False
    merged = git.merge_tree(root, parents[0], parents[1])
    return merged is not None and merged == git.tree_of(root, commit)


def manifest_in(worktree: Path, manifest: str) -> Path:
    """The manifest's path inside the worktree (`manifest` is repository-relative)."""
    relative = PurePosixPath(manifest.replace("\\", "/"))
    if not manifest or relative.is_absolute() or ".." in relative.parts or ":" in manifest:
        raise GateError(f"--manifest {manifest!r}: give a path relative to the repository root")
    return worktree / relative
