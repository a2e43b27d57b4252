"""`entropy-gate publish`: the verdict as a check run on the PR's head commit.

Exit 0 once the verdict is published, by check run or by the fallback (job summary plus
workflow-command annotations) when the token cannot write checks or the API keeps failing;
the job's pass/fail comes from the verdict step, not from here — except for a merge
candidate posted as `failure` because a success on the commit would stand for a merge the
verdict did not judge (github.sharing): exit 1. Exit 2 for a verdict file
that is not a verdict (hand-written: no tests and no inputs; an inputs_sha256 that is not
the digest of its inputs; report digests that do not match the host folders beside it), or
settings that cannot work (no repository, no head commit).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from entropy_action.cli.options import MANIFEST_NAME

NAME = "publish"
HELP = (
    "post the verdict JSON as a check run on the PR's head commit (falls back to the job "
    "summary and annotations when checks cannot be written); exit 0 once published"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--verdict", type=Path, required=True, metavar="FILE", help="the verdict JSON to publish"
    )
    for label in ("a", "b"):
        parser.add_argument(
            f"--host-{label}",
            type=Path,
            metavar="DIR",
            help=f"host {label.upper()}'s report folder the verdict was judged from (default: "
            f"host-{label}/ beside the verdict file); publish refuses a verdict whose "
            f"inputs.reports_{label} is not this folder's digest",
        )
    parser.add_argument(
        "--check-name",
        default="entropy-gate",
        metavar="NAME",
        help="the check run's name (default: entropy-gate); make it a required status",
    )
    parser.add_argument(
        "--manifest",
        default=MANIFEST_NAME,
        metavar="PATH",
        help="the manifest, repository-relative: failing tests without a path are annotated "
        f"on its line 1 (default: {MANIFEST_NAME})",
    )
    parser.add_argument(
        "--token-env",
        default="GITHUB_TOKEN",
        metavar="NAME",
        help="the environment variable holding the token (default: GITHUB_TOKEN); "
        "a token is never taken from the command line",
    )
    parser.add_argument(
        "--head-sha",
        metavar="SHA",
        help="the commit to attach the check run to (default: the pull request's head from "
        "GITHUB_EVENT_PATH, else GITHUB_SHA)",
    )
    parser.add_argument(
        "--pull-request",
        type=int,
        metavar="N",
        help="the pull request the verdict judged (default: the event's); a success is "
        "posted only while it targets --base-branch and no other open pull request with the "
        "same head targets another branch",
    )
    parser.add_argument(
        "--base-branch",
        metavar="NAME",
        help="the base branch the verdict judged against (default: the event's)",
    )
    parser.add_argument(
        "--base-sha", metavar="SHA", help="the base commit judged (default: the event's)"
    )
    parser.add_argument(
        "--merge-commit",
        metavar="SHA",
        help="the commit the hosts ran, named in the check run (default: GITHUB_SHA)",
    )
    parser.add_argument(
        "--accept-action",
        action="store_true",
        help="a rejection offers the maintainer's 'Accept after review' action (GitHub sends "
        "its check_run requested_action to workflows only for check runs an App posted, not "
        "GitHub Actions' token: the action passes it with app-id)",
    )
    parser.add_argument(
        "--read-token-env",
        default="GITHUB_TOKEN",
        metavar="NAME",
        help="the environment variable holding the token that reads the pull requests "
        "(pull-requests: read; default: GITHUB_TOKEN)",
    )


def run(args: argparse.Namespace) -> int:
    from entropy_action.github import publish  # noqa: PLC0415 (--help imports no model)

    return publish.publish(publish.settings_from(args, args.environ))
