"""render/backtest.py and verdict/backtest.py: the table, the summary line, the JSON, and the
deciding finding of each classification (pure, exact output)."""

from __future__ import annotations

import json

from entropy_action.core.findings import Finding
from entropy_action.render import backtest as shown
from entropy_action.verdict.backtest import Commit, Row, summary
from entropy_action.verdict.classify import Evidence, classify
from entropy_action.verdict.model import TestResult

SKIP = Finding(
    kind="skip_marker",
    path="tests/test_fees.py",
    line=6,
    message="skip marker 'skip' on property test_fee",
    test="TestFees::test_fee",
)
OLD = Finding(kind="skip_call", path="tests/test_fees.py", line=9, message="old", introduced=False)


def commit(sha: str, subject: str) -> Commit:
    return Commit(sha * 40, "0" * 40, subject, 1768003200)


def test_the_table_and_its_summary() -> None:
    rows = [
        Row(commit("a", "docs: say the unit"), 12.34, classify(Evidence("pass", "pass"))),
        Row(
            commit("b", "tests: skip the flaky one, and a subject longer than the column is"),
            3.0,
            classify(Evidence("pass", "pass", findings=(SKIP, OLD, SKIP))),
        ),
        Row(
            commit("c", "the first commit"),
            0.05,
            error="a root commit: no parent to judge it against",
        ),
    ]
    assert shown.table(rows) == (
        "commit        subject                                   classification    seconds  "
        "deciding finding\n"
        "aaaaaaaaaaaa  docs: say the unit                        merge_candidate      12.3  —\n"
        "bbbbbbbbbbbb  tests: skip the flaky one, and a subjec…  entropy_silenced      3.0  "
        "skip_marker tests/test_fees.py:6 (test_fee) (+1 more)\n"
        "cccccccccccc  the first commit                          error                 0.1  "
        "a root commit: no parent to judge it against\n"
        "3 commits: 1 merge_candidate, 1 entropy_silenced, 1 error\n"
    )


def test_the_summary_orders_best_first() -> None:
    def row(kind: str) -> Row:
        evidence = {
            "merge_candidate": Evidence("pass", "pass"),
            "invalid": Evidence("missing", "missing", invalid=("x",)),
            "env_coupled": Evidence("pass", "fail"),
        }[kind]
        return Row(commit("d", "s"), 1.0, classify(evidence))

    rows = [row("invalid"), row("merge_candidate"), row("env_coupled"), row("merge_candidate")]
    assert summary(rows) == "4 commits: 2 merge_candidate, 1 env_coupled, 1 invalid"
    assert summary([]) == "0 commits"
    assert summary(rows[1:2]) == "1 commit: 1 merge_candidate"


def test_what_decided_each_classification() -> None:
    invalid = classify(Evidence("missing", "missing", invalid=("host B: no report",)))
    assert shown.deciding(invalid) == "host B: no report"
    pins = classify(
        Evidence("pass", "pass", pins_intact=False, pin_changes={"missing": ["rng_seed"]})
    )
    assert shown.deciding(pins) == "pins missing: rng_seed"
    config = Finding(
        kind="gate_config_changed", path=".github/workflows/ci.yml", line=12, message="m"
    )
    assert shown.deciding(classify(Evidence("pass", "pass", findings=(config,)))) == (
        "gate_config_changed .github/workflows/ci.yml:12"
    )
    failing = TestResult(
        id="tests/test_x.py::test_a",
        raw_ids=["tests/test_x.py::test_a"],
        host_a="passed",
        host_b="failed",
    )
    coupled = classify(Evidence("pass", "fail", tests=(failing,))).model_copy(
        update={"coupled_to": ["clock"]}
    )
    assert shown.deciding(coupled) == "tests/test_x.py::test_a failed on host B; follows clock"


def test_the_json_holds_every_row_with_its_verdict() -> None:
    rows = [
        Row(commit("a", "docs"), 1.26, classify(Evidence("pass", "pass")), manifest="draft"),
        Row(commit("c", "root"), 0.0, error="a root commit: no parent to judge it against"),
    ]
    data = json.loads(shown.document(rows, {"repository": "/r", "range": "--last 2"}))
    assert data["repository"] == "/r"
    assert data["summary"] == {
        "line": "2 commits: 1 merge_candidate, 1 error",
        "commits": 2,
        "counts": {"merge_candidate": 1, "error": 1},
        "seconds": 1.3,
    }
    first, second = data["commits"]
    assert (first["commit"], first["manifest"], first["deciding"]) == ("a" * 40, "draft", "—")
    assert first["verdict"]["classification"] == "merge_candidate"
    assert (second["classification"], second["verdict"], second["error"]) == (
        "error",
        None,
        "a root commit: no parent to judge it against",
    )
