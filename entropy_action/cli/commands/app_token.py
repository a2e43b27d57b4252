"""`entropy-gate app-token`: a GitHub App's installation token for the trusted publish."""

from __future__ import annotations

import argparse

NAME = "app-token"
HELP = (
    "trade a GitHub App's private key (from an environment variable) for an installation "
    "token of GITHUB_REPOSITORY (checks: write), written to the step output `token`"
)
DEFAULT_KEY_ENV = "ENTROPY_GATE_APP_PRIVATE_KEY"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--app-id", required=True, metavar="ID", help="the GitHub App's ID")
    parser.add_argument(
        "--private-key-env",
        default=DEFAULT_KEY_ENV,
        metavar="NAME",
        help=f"the environment variable holding the App's private key, PEM (default: "
        f"{DEFAULT_KEY_ENV}); the key is never taken from the command line, never printed",
    )
    parser.epilog = (
        "Under GitHub Actions it prints ::add-mask:: for the token, then writes it to "
        "$GITHUB_OUTPUT (the token is never printed otherwise). Honours GITHUB_API_URL and "
        "GITHUB_REPOSITORY as publish does. Exit 0 with a token, 2 for any failure.\n\n"
        + (parser.epilog or "")
    )


def run(args: argparse.Namespace) -> int:
    from entropy_action.github import apptoken  # noqa: PLC0415 (--help imports no model)

    return apptoken.run(apptoken.settings_from(args.app_id, args.private_key_env, args.environ))
