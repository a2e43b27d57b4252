"""Reporters over a backtest's rows (verdict/backtest.py): the table, the summary line and the
JSON document. Rendering only: each row's classification is its verdict's."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from entropy_action.core.findings import Finding
from entropy_action.verdict.backtest import Row, summary
from entropy_action.verdict.model import FAILING, Verdict

SUBJECT_WIDTH = 40
DECIDING_WIDTH = 110
NONE = "—"


def deciding(verdict: Verdict) -> str:
    """The one fact that decided the verdict, in a table cell: the first invalid cause, the
    pin change or protected file, the first counted finding, the first failing test."""
    kind = verdict.classification
    if kind == "merge_candidate":
        return NONE
    if kind == "invalid":
        causes = [r.removeprefix("invalid input: ") for r in verdict.reasons if "invalid" in r]
        return causes[0] if causes else "invalid input"
    counted = [
        f
        for f in verdict.findings
        if f.level == "error" and (f.introduced or verdict.strict_baseline)
    ]
    if kind == "pin_mutation":
        changes = verdict.pin_changes.items()
        changed = [f"{k}: {', '.join(v)}" for k, v in changes if v and k != "added"]
        config = [f for f in counted if f.kind == "gate_config_changed"]
        return f"pins {'; '.join(changed)}" if changed else _finding(config[0]) if config else kind
    silencing = [f for f in counted if f.kind != "gate_config_changed"]
    if kind in ("entropy_silenced", "masked_defect") and silencing:
        more = f" (+{len(silencing) - 1} more)" if len(silencing) > 1 else ""
        return _finding(silencing[0]) + more
    return _failing(verdict) or kind


def _finding(finding: Finding) -> str:
    test = f" ({finding.test.split('::')[-1]})" if finding.test else ""
    return f"{finding.kind} {finding.path}:{finding.line}{test}"


def _failing(verdict: Verdict) -> str:
    """The first test that failed on a host, with the host and what the failure follows."""
    for test in verdict.tests:
        hosts = [name for name, got in (("A", test.host_a), ("B", test.host_b)) if got in FAILING]
        if hosts:
            where = " and ".join(f"host {h}" for h in hosts)
            follows = f"; follows {', '.join(verdict.coupled_to)}" if verdict.coupled_to else ""
            return f"{test.id} failed on {where}{follows}"
    return ""


def cell(row: Row) -> str:
    """A row's deciding-finding cell: the verdict's, or the commit's error."""
    if row.verdict is None:
        return row.error or "could not be judged"
    return deciding(row.verdict)


def table(rows: Sequence[Row]) -> str:
    """One line per commit (oldest first), then the summary line."""
    width = max([len(r.classification) for r in rows] + [len("classification")])
    head = f"{'commit':<12}  {'subject':<{SUBJECT_WIDTH}}  {'classification':<{width}}  seconds"
    lines = [f"{head}  deciding finding"]
    for row in rows:
        subject = _cut(row.commit.subject, SUBJECT_WIDTH)
        lines.append(
            f"{row.commit.sha[:12]}  {subject:<{SUBJECT_WIDTH}}  {row.classification:<{width}}  "
            f"{row.seconds:7.1f}  {_cut(cell(row), DECIDING_WIDTH)}"
        )
    return "\n".join([*lines, summary(rows)]) + "\n"


def document(rows: Sequence[Row], about: Mapping[str, Any]) -> str:
    """The JSON a backtest writes (`--json`): what was asked, a row per commit with its whole
    verdict, and the summary."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.classification] = counts.get(row.classification, 0) + 1
    data = {
        **about,
        "commits": [_row(row) for row in rows],
        "summary": {
            "line": summary(rows),
            "commits": len(rows),
            "counts": counts,
            "seconds": round(sum(r.seconds for r in rows), 1),
        },
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _row(row: Row) -> dict[str, Any]:
    commit = row.commit
    return {
        "commit": commit.sha,
        "parent": commit.parent,
        "subject": commit.subject,
        "classification": row.classification,
        "seconds": round(row.seconds, 1),
        "manifest": row.manifest,
        "deciding": cell(row),
        "error": row.error,
        "verdict": None if row.verdict is None else row.verdict.model_dump(mode="json"),
    }


def _cut(text: str, width: int) -> str:
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= width else line[: width - 1] + "…"
