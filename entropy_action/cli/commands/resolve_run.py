"""`entropy-gate resolve-run`: the trusted workflow's first step after the downloads.

It checks what triggered the run (a `workflow_run` of the caller workflow, for a
pull_request), binds the commit the host reports name to GitHub's merge of the one open pull
request the run was for (github.resolve: its merge ref fetched by ref, the run's workflow
file the base's own copy, the base unchanged since the run), and makes a detached worktree of
that commit for `verdict` to read as data (nothing in it is executed).
"""

from __future__ import annotations

import argparse
import base64
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from entropy_action.cli import options
from entropy_action.cli.options import MANIFEST_NAME
from entropy_action.core.errors import GateError

if TYPE_CHECKING:
    from entropy_action.github.resolve import Binding
    from entropy_action.github.trigger import TriggeringRun

NAME = "resolve-run"
HELP = (
    "for the trusted workflow (workflow_run): check the triggering run, bind the hosts' "
    "commit to GitHub's merge of its pull request, make a worktree of it; exit 2 when "
    "anything does not fit"
)
CALLER = ".github/workflows/entropy-gate.yml"  # trigger.CALLER (no model import for --help)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host-a", type=Path, required=True, metavar="DIR", help="host A's folder")
    parser.add_argument("--host-b", type=Path, required=True, metavar="DIR", help="host B's folder")
    parser.add_argument(
        "--caller",
        default=CALLER,
        metavar="PATH",
        help=f"the workflow whose runs may trigger this one (default: {CALLER})",
    )
    parser.add_argument(
        "--base-branch",
        default="",
        metavar="NAME",
        help="the branch the pull request must target (default, or HEAD: the repository's "
        "default branch, from the event)",
    )
    parser.add_argument(
        "--token-env",
        default="GITHUB_TOKEN",
        metavar="NAME",
        help="the environment variable holding the token that reads the pull request "
        "(pull-requests: read, contents: read; default: GITHUB_TOKEN)",
    )
    parser.add_argument(
        "--worktree", type=Path, required=True, metavar="DIR", help="where the worktree goes"
    )
    parser.add_argument(
        "--manifest",
        default=MANIFEST_NAME,
        metavar="PATH",
        help=f"the pin file, relative to the repository (default: {MANIFEST_NAME})",
    )
    parser.add_argument(
        "--github-output",
        action="store_true",
        help="set the step outputs commit, base, head-sha, manifest, pull-request and "
        "base-branch (via $GITHUB_OUTPUT)",
    )


def run(args: argparse.Namespace) -> int:
    from entropy_action.core import git  # noqa: PLC0415 (--help imports no model)
    from entropy_action.github import resolve, trigger  # noqa: PLC0415 (--help imports no model)

    environ = args.environ
    if args.github_output and not environ.get("GITHUB_OUTPUT"):
        raise GateError("--github-output: $GITHUB_OUTPUT is not set (not in a workflow step?)")
    event_path = environ.get("GITHUB_EVENT_PATH")
    run = trigger.triggering_run(
        environ.get("GITHUB_EVENT_NAME", ""), Path(event_path) if event_path else None, args.caller
    )
    worktree = Path.cwd() / args.worktree
    manifest = trigger.manifest_in(worktree, args.manifest)
    commit = trigger.reported_commit(args.host_a, args.host_b)
    root = git.toplevel(Path.cwd())
    resolved = resolve.resolve(_binding(args, environ, root, run, commit))
    git.add_worktree(root, resolved.commit, worktree)
    print(
        f"resolve-run: the hosts ran {resolved.commit}, GitHub's merge of pull request "
        f"#{resolved.pull_request} ({resolved.head_sha[:12]} into {resolved.base_branch} at "
        f"{resolved.base[:12]}); judged against that base",
        file=sys.stderr,
    )
    if args.github_output:
        outputs = {
            "commit": resolved.commit,
            "base": resolved.base,
            "head-sha": resolved.head_sha,
            "manifest": str(manifest),
            "pull-request": str(resolved.pull_request),
            "base-branch": resolved.base_branch,
        }
        for name, value in outputs.items():
            options.set_output(environ, name, value)
    return 0


def _binding(
    args: argparse.Namespace,
    environ: Mapping[str, str],
    root: Path,
    run: TriggeringRun,
    commit: str,
) -> Binding:
    from entropy_action.github import publish  # noqa: PLC0415 (--help imports no model)
    from entropy_action.github.api import ApiSettings, Secret  # noqa: PLC0415
    from entropy_action.github.resolve import Binding  # noqa: PLC0415

    token = environ.get(args.token_env, "")
    if not token:
        raise GateError(
            f"resolve-run: no token in ${args.token_env}: the pull request is read through "
            "GitHub's API (pull-requests: read, contents: read)"
        )
    repository = publish.repository(environ.get("GITHUB_REPOSITORY", ""), NAME)
    if repository != run.repository:
        raise GateError(
            f"resolve-run: the event is of {run.repository!r}, this job of {repository!r}"
        )
    api = ApiSettings(
        api_url=publish.api_url(environ.get("GITHUB_API_URL") or publish.DEFAULT_API, NAME),
        repository=repository,
        token=Secret(token),
    )
    branch = args.base_branch if args.base_branch not in ("", "HEAD") else run.default_branch
    return Binding(root, run, commit, branch, api, fetch_env=fetch_env(environ, token))


def fetch_env(environ: Mapping[str, str], token: str) -> dict[str, str]:
    """git's configuration for the fetch, by environment (never argv): the token as the
    Authorization header for the server's https URLs, as actions/checkout sets it."""
    server = (environ.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/")
    if not server.startswith("https://"):
        return {}
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": f"http.{server}/.extraheader",
        "GIT_CONFIG_VALUE_0": f"AUTHORIZATION: basic {basic}",
        "GIT_TERMINAL_PROMPT": "0",
    }
