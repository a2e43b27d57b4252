"""What triggered a trusted run, and which commit its host reports may speak for.

The trusted workflow (`entropy-gate-trusted.yml`) runs from the default branch on a
`workflow_run` event after the PR's own workflow ran the host jobs. Everything it is handed is
checked here before anything is judged: the event must be a `workflow_run` of the caller
workflow (by path, not by name: any workflow can be *named* entropy-gate) for a
`pull_request`, and the commit host A's report names must be the run's `head_sha`, or
GitHub's merge of it into the base branch (`refs/pull/N/merge`: parents [P1, head], P1 on the
base branch). The host folders are untrusted data: only their host.json is read, capped and
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

MAX_EVENT = 64 * 1024 * 1024  # bytes of $GITHUB_EVENT_PATH (as publisher reads it)
CALLER = ".github/workflows/entropy-gate.yml"
SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


@dataclass(frozen=True)
class Resolved:
    """The commit the hosts ran (C), the PR's head (H) and the base to judge C against."""

    commit: str
    head_sha: str
    base: str


def trusted_head(event_name: str, event_path: Path | None, caller: str) -> str:
    """`workflow_run.head_sha` of a `workflow_run` event of `caller` for a pull_request."""
    if event_name != "workflow_run":
        raise GateError(
            f"resolve-run: the event is {event_name or 'unset'!r} (GITHUB_EVENT_NAME), "
            "not workflow_run: the trusted workflow runs only after the caller workflow"
        )
    if event_path is None:
        raise GateError("resolve-run: GITHUB_EVENT_PATH is not set (no event to check)")
    run = _event(event_path).get("workflow_run")
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
    return head


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


def bind(root: Path, commit: str, head: str, base_branch: str) -> Resolved:
    """The base to judge `commit` against, when `commit` is the run's head or GitHub's merge
    of it into the base branch; anything else is refused."""
    for sha, what in ((head, "the run's head_sha"), (commit, "host A's commit")):
        if not git.has_commit(root, sha):
            raise GateError(
                f"resolve-run: {what} {sha} is not in this clone (git fetch origin {sha})"
            )
    tip = git.resolve_ref(root, base_branch)
    if commit == head:
        base = git.merge_base(root, head, tip)
        if base is None:
            raise GateError(f"resolve-run: {head} shares no history with {base_branch!r}")
        return Resolved(commit, head, base)
    parents = git.parents(root, commit)
    if len(parents) == 2 and parents[1] == head and git.is_ancestor(root, parents[0], tip):
        return Resolved(commit, head, parents[0])
    raise GateError(
        f"resolve-run: host A's report names commit {commit}, the run was for {head} "
        f"(neither that commit nor its merge into {base_branch!r})"
    )


def manifest_in(worktree: Path, manifest: str) -> Path:
    """The manifest's path inside the worktree (`manifest` is repository-relative)."""
    relative = PurePosixPath(manifest.replace("\\", "/"))
    if not manifest or relative.is_absolute() or ".." in relative.parts or ":" in manifest:
        raise GateError(f"--manifest {manifest!r}: give a path relative to the repository root")
    return worktree / relative
