"""A backtest's result as values: one row per commit judged (gate/backtest.py makes them,
render/backtest.py shows them), and the summary over them (pure)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from entropy_action.verdict.model import Verdict
from entropy_action.verdict.rollup import SEVERITY

ERROR = "error"  # the row of a commit that could not be judged
# Best first, as a maintainer reads the summary: how many would have merged, then the rest.
ORDER: tuple[str, ...] = (*reversed(SEVERITY), ERROR)


@dataclass(frozen=True)
class Commit:
    sha: str
    parent: str | None  # the first parent; None for a root commit
    subject: str
    date: int  # committer date, Unix seconds


@dataclass(frozen=True)
class Row:
    """One commit's result: its verdict, or why it could not be judged."""

    commit: Commit
    seconds: float
    verdict: Verdict | None = None
    error: str | None = None
    # "parent": as it stood there; "draft": init's draft; "added": the commit adds it (no
    # baseline, as `gate` judges the pull request that introduces the gate)
    manifest: str = "parent"
    internal: bool = False  # the error is a bug in entropy-gate

    @property
    def classification(self) -> str:
        return self.verdict.classification if self.verdict is not None else ERROR


def summary(rows: Sequence[Row]) -> str:
    """`30 commits: 28 merge_candidate, 1 entropy_silenced, 1 env_coupled` (best first)."""
    counts = Counter(row.classification for row in rows)
    parts = [f"{counts[name]} {name}" for name in ORDER if counts[name]]
    noun = "commit" if len(rows) == 1 else "commits"
    return f"{len(rows)} {noun}: {', '.join(parts)}" if parts else f"0 {noun}"
