"""trigger.pull_problem (pure): the pull request a run's hosts may speak for, and the GitHub
answers pulls.parse refuses."""

from __future__ import annotations

from typing import Any

import pytest

from entropy_action.github.api import PublishError
from entropy_action.github.pulls import parse
from entropy_action.github.trigger import TriggeringRun, pull_problem
from tests.support.github_reads import pull_object

HEAD, BASE = "1" * 40, "2" * 40
RUN = TriggeringRun(1, ".github/workflows/x.yml", HEAD, "fix", "acme", "acme/invoices",
                    "2026-01-10T00:00:00Z", "acme/invoices", "main")  # fmt: skip


def pull(**changes: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {"head_sha": HEAD, "head_ref": "fix", "base_sha": BASE,
                              "base_ref": "main", "merge_commit_sha": None}  # fmt: skip
    fields.update(changes)
    return pull_object("acme/invoices", 7, **fields)


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({}, None),
        ({"state": "closed"}, "pull request #7 is closed: nothing is posted for it"),
        ({"head_sha": "3" * 40}, "pull request #7's head is now 333333333333, not the run's"),
        (
            {"head_repo": "forker/invoices"},
            "pull request #7's head repository is 'forker/invoices'",
        ),
        ({"base_ref": "evil"}, "pull request #7 targets 'evil', not 'main'"),
    ],
)
def test_the_pull_request_of_the_run_row_by_row(
    changes: dict[str, Any], reason: str | None
) -> None:
    found = pull_problem(RUN, parse(pull(**changes)), "main")
    assert (found is None) if reason is None else (found is not None and found.startswith(reason))


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p.pop("head"),
        lambda p: p.update(number=True),
        lambda p: p.update(number=0),
        lambda p: p["base"].update(sha="main"),
        lambda p: p.update(merge_commit_sha="HEAD"),
        lambda p: p.update(state=None),
    ],
)
def test_an_answer_github_does_not_send_is_refused(damage: Any) -> None:
    answer = pull()
    damage(answer)
    with pytest.raises(PublishError) as caught:
        parse(answer)
    assert caught.value.failure == "rejected"
