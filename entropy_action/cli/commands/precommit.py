"""`entropy-gate pre-commit`: the hook's check of the staged change, before the push.

What the gate decides from git objects alone, on what the next commit holds: the pin check
of the staged entropy.yaml against HEAD's, and the silencing scan of the staged files (the
property module, its conftests and what they reach, pytest's configuration, the production
files and protected paths the change touches), read from git's index, never from the work
tree (unstaged edits and untracked files are not in the commit). No test runs: that is
`entropy-gate gate` and CI. One line per finding, `path:line: message`; exit 1 on any.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from entropy_action.cli import options
from entropy_action.core.errors import ExitCode, GateError

if TYPE_CHECKING:
    from entropy_action.manifest.baseline import RepoCheck

NAME = "pre-commit"
HELP = (
    "the pre-commit hook: the staged entropy.yaml's pins against HEAD and the silencing scan "
    "of the staged files (git's index, not the work tree); no test runs; exit 1 on a finding"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_manifest(parser)


def run(args: argparse.Namespace) -> int:
    from entropy_action.core import git  # noqa: PLC0415 (--help imports no model)
    from entropy_action.manifest import baseline  # noqa: PLC0415

    root = git.toplevel(args.manifest.parent if args.manifest.parent.parts else Path.cwd())
    if git.head_commit(root) is None:
        print(
            "entropy-gate pre-commit: no commit yet, so nothing to compare the staged change "
            "with (the first commit brings the baseline)",
            file=sys.stderr,
        )
        return int(ExitCode.OK)
    with git.memo():
        repo = baseline.check_all(args.manifest, "HEAD", None, staged=True)
        for note in dict.fromkeys((*repo.notes, *(n for c in repo.checks for n in c.notes))):
            print(note, file=sys.stderr)
        lines = [f"{c.path}:{c.line}: {c.message}" for c in repo.diff.changes if c.rejects]
        lines += findings(repo)
    for line in lines:
        print(line)
    if not lines:
        return int(ExitCode.OK)
    print(
        f"entropy-gate pre-commit: {len(lines)} finding(s) in the staged change; "
        "`entropy-gate gate --base-ref HEAD` runs the whole gate",
        file=sys.stderr,
    )
    return int(ExitCode.REJECTED)


def findings(repo: RepoCheck) -> list[str]:
    """Each finding of the staged change that counts (`verdict.classify.counts`), one line
    each, a file two properties share once."""
    from entropy_action.scan import scan  # noqa: PLC0415 (--help imports no model)
    from entropy_action.verdict.classify import counts  # noqa: PLC0415

    lines: dict[str, None] = {}
    for check in repo.checks:
        if check.head is None:
            continue  # the staged change broke or removed the manifest: a pin change says so
        result = scan(check)
        if result.errors:
            more = f" (and {len(result.errors) - 1} more)" if len(result.errors) > 1 else ""
            raise GateError(f"{result.errors[0]}{more}; the scan cannot check the staged change")
        strict = (check.base or check.head).manifest.constraints.strict_baseline
        lines.update(
            (f.render(), None) for f in result.findings if counts(f, strict_baseline=strict)
        )
    return list(lines)
