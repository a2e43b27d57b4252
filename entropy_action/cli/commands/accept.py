"""`entropy-gate accept`: a maintainer's override of the gate's rejection, for one head.

Run by the trusted workflow (entropy-gate-accept.yml) on a `check_run` requested_action
("Accept after review") or a `pull_request_target` labeled event. Exit 0 once the acceptance
is posted, or when the event is another action or label (nothing to do); exit 2 with one
line, nothing posted, when it is refused (docs/ci.md, *A maintainer's override*).
"""

from __future__ import annotations

import argparse
import sys

NAME = "accept"
HELP = (
    "a maintainer's acceptance of the gate's rejected check run on a pull request's head "
    "(the trusted workflow, on a check_run requested_action or a pull_request_target labeled "
    "event): the sender's permission read through the API; exit 0 once posted, 2 when refused"
)


# github.acceptance's, spelled here so that building the parser imports no model
# (tests/unit/test_acceptance.py checks they agree)
DEFAULT_LABEL = "entropy-gate: accept"
MINIMUMS = ("write", "maintain", "admin")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--check-name", default="entropy-gate", metavar="NAME", help="the gate's check name"
    )
    parser.add_argument(
        "--permission",
        choices=MINIMUMS,
        default="write",
        help="the least permission on the repository that may accept (default: write)",
    )
    parser.add_argument(
        "--conclusion",
        choices=("success", "neutral"),
        default="success",
        help="the accepted check run's conclusion (default: success)",
    )
    parser.add_argument(
        "--label", default=DEFAULT_LABEL, metavar="NAME", help="the label that accepts"
    )
    parser.add_argument(
        "--app-id",
        default="",
        metavar="ID",
        help="the GitHub App that posts the gate's check runs (default: GitHub Actions' token)",
    )
    for flag, what in (("--token-env", "posts the check run"), ("--read-token-env", "reads")):
        parser.add_argument(
            flag,
            default="GITHUB_TOKEN",
            metavar="NAME",
            help=f"the variable holding the token that {what} (default: GITHUB_TOKEN)",
        )


def run(args: argparse.Namespace) -> int:
    from pathlib import Path  # noqa: PLC0415 (--help imports no model)

    from entropy_action.core.errors import GateError  # noqa: PLC0415
    from entropy_action.github import accept, publish  # noqa: PLC0415
    from entropy_action.github.acceptance import ACTIONS_APP, Policy  # noqa: PLC0415

    environ = args.environ
    if not args.app_id.isdigit() and args.app_id:
        raise GateError(f"--app-id {args.app_id!r}: a GitHub App's id is a number")
    name, path = environ.get("GITHUB_EVENT_NAME", ""), environ.get("GITHUB_EVENT_PATH", "")
    if not name or not path:
        raise GateError(
            "accept: no event (GITHUB_EVENT_NAME, GITHUB_EVENT_PATH): run it in the workflow"
        )
    apis = []
    for variable in (args.token_env, args.read_token_env):
        found = publish.api_settings(environ, variable)
        if found is None:
            raise GateError(f"accept: no token in {variable}")
        apis.append(found)
    policy = Policy(
        check_name=args.check_name,
        minimum=args.permission,
        conclusion=args.conclusion,
        poster=int(args.app_id) if args.app_id else ACTIONS_APP,
        label=args.label,
    )
    outcome = accept.accept(
        accept.AcceptSettings(name, accept.read_event(Path(path)), policy, apis[0], apis[1])
    )
    print(outcome.line)
    sys.stdout.flush()
    return 0
