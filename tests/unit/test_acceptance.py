"""A maintainer's override, decided from values (github.acceptance): who reaches which
permission, and the check run that accepts, with the untrusted text it quotes kept text."""

from __future__ import annotations

import pytest

from entropy_action.github import acceptance
from entropy_action.github.acceptance import GateRun, Permission, Policy, Trigger
from entropy_action.github.pulls import PullRequest
from tests.unit.test_markdown import tokens

HEAD = "a" * 40
PULL = PullRequest(7, "open", HEAD, "fix", "acme/invoices", "main", "b" * 40, None, "alice")
RUN = GateRun(2, "entropy-gate", HEAD, 15368, "github-actions", "completed", "failure",
              "Environment-coupled", "https://github.com/acme/invoices/runs/2")  # fmt: skip


@pytest.mark.parametrize(
    ("answer", "write", "maintain", "admin"),
    [
        (Permission("admin", "admin", True, True), True, True, True),
        (Permission("write", "maintain", True, False), True, True, False),
        (Permission("write", "write", False, False), True, False, False),
        # a custom role: its name says nothing, the flags do
        (Permission("write", "release-manager", True, False), True, True, False),
        (Permission("write", "maintain", None, None), True, False, False),  # flags not given
        (Permission("read", "triage", False, False), False, False, False),
        (Permission("read", "maintain", True, True), False, False, False),  # legacy decides
        (Permission("none", "", None, None), False, False, False),
    ],
)
def test_who_reaches_which_permission(
    answer: Permission, write: bool, maintain: bool, admin: bool
) -> None:
    assert [acceptance.permitted(answer, m) for m in acceptance.MINIMUMS] == [
        write,
        maintain,
        admin,
    ]


def test_the_latest_of_the_gates_runs_is_its_posters_newest() -> None:
    other_app = GateRun(9, "entropy-gate", HEAD, 1, "impostor", "completed", "success", "", "")
    newer = GateRun(
        5, "entropy-gate", HEAD, 15368, "github-actions", "completed", "success", "", ""
    )
    assert acceptance.latest([RUN, other_app, newer], Policy()) == newer
    assert acceptance.latest([other_app], Policy()) is None
    assert acceptance.latest([other_app], Policy(poster=1)) == other_app


def test_an_acceptance_that_stands_is_none() -> None:
    walt = Trigger("action", "walt", "User", check_run=2)
    assert acceptance.refusal(walt, PULL, [PULL], Permission("write"), RUN, RUN, Policy()) is None


def test_the_accepting_check_run_keeps_what_it_quotes_as_text() -> None:
    hostile = "<img src=x onerror=alert(1)> [l](javascript:x) ### injected"
    run = GateRun(2, "entropy-gate", HEAD, 15368, "github-actions", "completed", "failure",
                  hostile, "javascript:alert(1)")  # fmt: skip
    pull = PullRequest(7, "open", HEAD, "<b>fix</b>", "", "main", "b" * 40, None, "alice")
    trigger = Trigger("label", "walt", "User", pull_request=7)
    plan = acceptance.plan(trigger, pull, Permission("write", "write"), run, Policy())
    kinds = {t.type for t in tokens(plan.summary)}
    assert not kinds & {"html_inline", "html_block", "link_open", "image"}
    assert [t.tag for t in tokens(plan.summary) if t.type == "heading_open"] == ["h2"]
    assert plan.head_sha == HEAD
    assert plan.conclusion == "success"
    assert plan.annotations == ()
