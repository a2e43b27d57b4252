"""A pull request as GitHub holds it, for the tests of the trusted side: a bare "origin"
holding the branches and GitHub's refs (`refs/pull/N/head`, `refs/pull/N/merge`: the merge
commit GitHub makes of the head into the base's tip, made here with git's own merge), and the
API's view of it (tests.support.github_reads: `pull_object`). The trusted clone fetches from
the origin as the workflow does on GitHub; under act the sample's `origin` URL is pointed at
it with `url.<origin>.insteadOf`.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from tests.support.github_reads import pull_object

IDENTITY = ["-c", "user.name=GitHub", "-c", "user.email=noreply@github.invalid"]


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *IDENTITY, *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout.strip()


def merge(repo: Path, base: str, head: str) -> str:
    """GitHub's test merge of `head` into `base`: parents [base, head], git's merged tree."""
    tree = git(repo, "merge-tree", "--write-tree", base, head).split()[0]
    return git(repo, "commit-tree", tree, "-p", base, "-p", head, "-m", f"Merge {head} into {base}")


def commit_tree(repo: Path, tree_from: str, base: str, head: str, message: str) -> str:
    """A commit of the right shape (parents [base, head]) whose tree is `tree_from`'s: what
    anyone who can push a branch can make."""
    tree = git(repo, "rev-parse", f"{tree_from}^{{tree}}")
    return git(repo, "commit-tree", tree, "-p", base, "-p", head, "-m", message)


def bare(source: Path, target: Path) -> Path:
    subprocess.run(["git", "clone", "-q", "--bare", str(source), str(target)], check=True)
    return target


def push(repo: Path, remote: Path, refs: dict[str, str]) -> None:
    """Set `refs` (name -> commit of `repo`) in the bare `remote`."""
    git(repo, "push", "-q", "--force", str(remote), *(f"{sha}:{ref}" for ref, sha in refs.items()))


def pull_request(
    repo: str, number: int, *, head: str, head_ref: str, base: str, base_ref: str = "main",
    merge_commit: str | None, head_repo: str | None = None, state: str = "open",
    author: str = "octocat",
) -> dict[str, Any]:  # fmt: skip
    return pull_object(
        repo, number, head_sha=head, head_ref=head_ref, base_sha=base, base_ref=base_ref,
        merge_commit_sha=merge_commit, head_repo=head_repo, state=state, author=author,
    )  # fmt: skip


def requested_action(
    repository: str, *, check_run: int, head: str, sender: str, sender_type: str = "User",
    identifier: str = "entropy-gate-accept", name: str = "entropy-gate",
) -> dict[str, Any]:  # fmt: skip
    """A `check_run` requested_action payload as GitHub sends it when someone presses a
    check run's button (the fields the override reads, and a few it must not believe)."""
    return {
        "action": "requested_action",
        "check_run": {"id": check_run, "head_sha": head, "name": name, "status": "completed",
                      "conclusion": "failure", "pull_requests": []},
        "requested_action": {"identifier": identifier},
        "repository": {"full_name": repository},
        "sender": {"login": sender, "type": sender_type},
    }  # fmt: skip


def labeled(
    repository: str, *, number: int, head: str, sender: str, label: str = "entropy-gate: accept",
    author: str = "octocat", sender_type: str = "User",
) -> dict[str, Any]:  # fmt: skip
    """A `pull_request_target` labeled payload: who added which label to which pull request."""
    return {
        "action": "labeled",
        "number": number,
        "label": {"name": label},
        "pull_request": {"number": number, "head": {"sha": head}, "user": {"login": author}},
        "repository": {"full_name": repository},
        "sender": {"login": sender, "type": sender_type},
    }  # fmt: skip


def workflow_run(
    repository: str, *, head: str, head_branch: str, path: str, head_repo: str | None = None,
    created_at: str = "2026-01-10T00:00:00Z", run_id: int = 1,
    pull_requests: list[dict[str, Any]] | None = None, default_branch: str = "main",
) -> dict[str, Any]:  # fmt: skip
    """A `workflow_run` (completed) payload as GitHub sends it to the trusted workflow; a
    fork's run has no `pull_requests`."""
    head_repo = head_repo or repository
    run = {
        "id": run_id, "name": "entropy-gate hosts", "event": "pull_request", "path": path,
        "head_sha": head, "head_branch": head_branch, "status": "completed",
        "conclusion": "success", "created_at": created_at, "run_started_at": created_at,
        "pull_requests": pull_requests if pull_requests is not None else [],
        "head_repository": {"full_name": head_repo, "owner": {"login": head_repo.split("/")[0]}},
        "repository": {"full_name": repository},
    }  # fmt: skip
    return {
        "action": "completed",
        "workflow_run": run,
        "repository": {"full_name": repository, "default_branch": default_branch},
    }


def gitconfig(folder: Path, origin: Path, repository: str) -> Path:
    """A global git configuration for an act run's jobs (`--env GIT_CONFIG_GLOBAL=`): GitHub's
    URL of `repository` is the bare `origin` (`url.<origin>.insteadOf`), for the jobs only —
    act itself reads the working copy's own URL to name the repository."""
    path = folder / "gitconfig"
    url = f"https://github.com/{repository}.git"
    path.write_text(f'[url "{origin}"]\n\tinsteadOf = {url}\n', encoding="utf-8")
    return path
