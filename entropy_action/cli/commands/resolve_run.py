"""`entropy-gate resolve-run`: the trusted workflow's first step after the downloads.

It checks what triggered the run (a `workflow_run` of the caller workflow, for a
pull_request), binds the commit host A's report names to the run's `head_sha`, and makes a
detached worktree of that commit for `verdict` to read as data (nothing in it is executed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from entropy_action.cli import options
from entropy_action.cli.options import MANIFEST_NAME
from entropy_action.core.errors import GateError

NAME = "resolve-run"
HELP = (
    "for the trusted workflow (workflow_run): check the triggering run, bind host A's commit "
    "to its head_sha, make a worktree of it; exit 2 when anything does not fit"
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
        default="HEAD",
        metavar="REF",
        help="the base branch's tip in this (trusted) checkout (default: HEAD)",
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
        help="set the step outputs commit, base, head-sha and manifest (via $GITHUB_OUTPUT)",
    )


def run(args: argparse.Namespace) -> int:
    from entropy_action.core import git  # noqa: PLC0415 (--help imports no model)
    from entropy_action.github import trigger  # noqa: PLC0415 (--help imports no model)

    environ = args.environ
    if args.github_output and not environ.get("GITHUB_OUTPUT"):
        raise GateError("--github-output: $GITHUB_OUTPUT is not set (not in a workflow step?)")
    event_path = environ.get("GITHUB_EVENT_PATH")
    head = trigger.trusted_head(
        environ.get("GITHUB_EVENT_NAME", ""), Path(event_path) if event_path else None, args.caller
    )
    worktree = Path.cwd() / args.worktree
    manifest = trigger.manifest_in(worktree, args.manifest)
    commit = trigger.reported_commit(args.host_a, args.host_b)
    root = git.toplevel(Path.cwd())
    resolved = trigger.bind(root, commit, head, args.base_branch)
    git.add_worktree(root, resolved.commit, worktree)
    print(
        f"resolve-run: the hosts ran {resolved.commit} for head {resolved.head_sha}; "
        f"judged against base {resolved.base}",
        file=sys.stderr,
    )
    if args.github_output:
        outputs = {
            "commit": resolved.commit,
            "base": resolved.base,
            "head-sha": resolved.head_sha,
            "manifest": str(manifest),
        }
        for name, value in outputs.items():
            options.set_output(environ, name, value)
    return 0
