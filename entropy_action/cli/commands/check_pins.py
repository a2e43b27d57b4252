"""`entropy-gate check-pins`: the baseline manifest against the working tree's."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from entropy_action.cli import options
from entropy_action.core.errors import ExitCode
from entropy_action.github import workflow

if TYPE_CHECKING:
    from entropy_action.manifest.pindiff import PinDiff

NAME = "check-pins"
HELP = "compare entropy.yaml with its baseline at the base ref; exit 1 on any pin mutation"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_manifest(parser)
    options.add_base(parser, required=True)


def run(args: argparse.Namespace) -> int:
    from entropy_action.manifest import baseline  # noqa: PLC0415 (--help imports no model)

    repo = baseline.check_all(args.manifest, args.base_ref, args.baseline)
    notes = (*repo.notes, *(note for one in repo.checks for note in one.notes))
    for note in dict.fromkeys(notes):
        print(note, file=sys.stderr)
    diff = repo.diff
    print(render(diff), end="")
    if args.environ.get("GITHUB_ACTIONS") == "true":
        print(workflow_annotations(diff), end="")
    return int(ExitCode.OK if diff.intact else ExitCode.REJECTED)


def render(diff: PinDiff) -> str:
    """The pin check as text: one line per change, then the outcome."""
    if not diff.baseline_found:
        return f"no baseline manifest at {diff.baseline}: nothing to compare (gate introduced)\n"
    lines = [f"{c.path}:{c.line}: {c.message}" for c in diff.changes]
    rejecting = sum(c.rejects for c in diff.changes)
    if rejecting:
        lines.append(
            f"pin mutation: {rejecting} change(s) against {diff.baseline} reject the patch"
        )
    else:
        added = len(diff.changes)
        lines.append(
            f"pins intact against {diff.baseline}" + (f" ({added} added)" if added else "")
        )
    return "\n".join(lines) + "\n"


def workflow_annotations(diff: PinDiff) -> str:
    """Each pin change as a workflow-command annotation on its entropy.yaml line."""
    lines = [
        workflow.annotation(
            "error" if change.rejects else "notice",
            change.message,
            file=change.path,
            line=change.line,
            title=f"entropy-gate: pin {change.kind}",
        )
        for change in diff.changes
    ]
    return "".join(line + "\n" for line in lines)
