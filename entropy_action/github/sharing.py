"""Which merge a check run on a commit speaks for, and when a success there would speak for
one the verdict did not judge.

A check run is bound to a commit, a verdict to a pair: the pull request's head merged into
its base. Every pull request whose head is that commit shows the check run, and a required
status is satisfied by any check of its name on the head: a success judged for one pull
request (its head into a branch that holds the fix) would pass another with the same head
into a branch that does not. So before `publish` posts a success it asks GitHub (the token
needs `pull-requests: read`):

- the judged pull request must still be open and still target the judged base branch (one
  retargeted since is not the pair that was judged);
- every other open pull request whose head is the commit must target the same base branch
  (two pull requests of one head into one base merge the same way).

Anything else, or an answer it cannot read, withholds the success: the check run says
`failure`, naming why, and `publish` exits 1. A merge group's head is a commit of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from entropy_action.github import pulls
from entropy_action.github.api import ApiSettings, Client, PublishError
from entropy_action.github.pulls import PullRequest
from entropy_action.render.checkrun import JudgedMerge


def withheld(api: ApiSettings, judged: JudgedMerge) -> str | None:
    """Why a success on `judged.head_sha` would stand for a merge not judged, or None."""
    if judged.pull_request is None:
        return None
    client = Client(api, subject="pull request")
    try:
        current = pulls.pull(client, api.repository, judged.pull_request)
        sharing = pulls.of_commit(client, api.repository, judged.head_sha)
    except PublishError as exc:
        return (
            f"the pull requests {judged.head_sha[:12]} heads cannot be read ({exc.message}): "
            "grant the job pull-requests: read"
        )
    return decide(judged, current, sharing)


def decide(judged: JudgedMerge, current: PullRequest, sharing: Sequence[PullRequest]) -> str | None:
    """Pure: the reason to withhold the success, from GitHub's answers, or None."""
    number = f"pull request #{judged.pull_request}"
    if current.state != "open":
        return f"{number} is {current.state}"
    if current.base_ref != judged.base_ref:
        return (
            f"{number} now targets {current.base_ref}, not {judged.base_ref}, the base this "
            "verdict judged"
        )
    for other in sharing:
        if (
            other.number != judged.pull_request
            and other.state == "open"
            and other.head_sha == judged.head_sha
            and other.base_ref != judged.base_ref
        ):
            return (
                f"{judged.head_sha[:12]} is also the head of pull request #{other.number} into "
                f"{other.base_ref}, whose merge this verdict did not judge: a success on the "
                "commit would stand for it too"
            )
    return None
