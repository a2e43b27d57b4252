"""The gate's protected configuration: files a patch may not change in the change it is judged by.

What decides the gate's run — the workflows that call entropy-gate (their inputs, their
events), CODEOWNERS — lies in the repository, so a pull request could change it in the very
patch the gate judges. Every file under the base manifest's `constraints.protected_paths`
that the patch added, modified, deleted or renamed is a `gate_config_changed` finding. Both
sides are read as the pin check reads them: the base from git objects, the head from the
work tree (`git.changed_files`), or from git's index for a staged check (the pre-commit hook).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from entropy_action.core import git
from entropy_action.core.findings import Finding
from entropy_action.manifest.baseline import PinCheck

WORKFLOWS = ".github/workflows/"
_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)
_CALLER = re.compile(rb"^\s*(?:-\s*)?uses\s*:.*entropy-gate", re.MULTILINE)


@dataclass(frozen=True)
class Protected:
    findings: tuple[Finding, ...] = ()
    notes: tuple[str, ...] = ()


def check(pins: PinCheck) -> Protected:
    """The patch's changes to the base manifest's protected paths, one finding per file."""
    if pins.base is None or pins.base_commit is None:
        return Protected()  # the gate is being introduced: nothing protected it yet
    entries = pins.base.manifest.constraints.protected_paths
    staged = pins.staged
    listed = git.changed_files(pins.root, pins.base_commit, staged=staged)
    changed = [p for p in listed if matches(p, entries)]
    if not changed:
        return Protected()
    at_base = set(git.list_tree(pins.root, pins.base_commit))
    introduced: list[str] = []
    if not _has_caller(pins.root, pins.base_commit, at_base):
        introduced = [p for p in changed if p not in at_base and _is_workflow(p)]
    findings = [
        _finding(path, _line(pins.root, pins.base_commit, path, path in at_base, staged))
        for path in changed
        if path not in introduced
    ]
    return Protected(tuple(findings), _introduced_note(introduced))


def matches(path: str, entries: Iterable[str]) -> bool:
    """Whether `path` is one of `entries` or lies in one ending in '/'."""
    return any(path.startswith(e) if e.endswith("/") else path == e for e in entries)


def first_head_line(diff: bytes) -> int:
    """The first line the head side of a `--unified=0` diff changed (1 when none is named)."""
    hunk = _HUNK.search(diff)
    if hunk is None:
        return 1  # binary, mode-only, or no textual change
    return max(int(hunk.group(1)), 1)  # a pure removal names the line before it (0: the top)


def _line(root: Path, commit: str, path: str, existed: bool, staged: bool) -> int:
    if not existed or not _readable(root, path, staged):
        return 1  # added, deleted, replaced by a folder, or a name git would mangle
    return first_head_line(git.diff_zero_context(root, commit, path, staged=staged))


def _readable(root: Path, path: str, staged: bool) -> bool:
    if not _decodable(path):
        return False
    if staged:
        return path in git.index_files(root)
    target = root / path
    return os.path.lexists(target) and not target.is_dir()


def _decodable(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _has_caller(root: Path, commit: str, at_base: set[str]) -> bool:
    """Whether a workflow at the base calls entropy-gate (a `uses:` line naming it)."""
    for path in sorted(at_base):
        if _is_workflow(path) and _CALLER.search(git.show(root, commit, path) or b""):
            return True
    return False


def _is_workflow(path: str) -> bool:
    return path.startswith(WORKFLOWS) and path.endswith((".yml", ".yaml"))


def _shown(path: str) -> str:
    return (
        path
        if _decodable(path)
        else path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    )


def _finding(path: str, line: int) -> Finding:
    shown = _shown(path)
    return Finding(
        kind="gate_config_changed",
        path=shown,
        line=line,
        message=f"{shown} is the gate's own configuration (constraints.protected_paths) and "
        "the patch changes it: what decides the gate's run (the workflows that call "
        "entropy-gate, CODEOWNERS) has to be landed by a maintainer in a change of its own, "
        "not in the patch the gate judges",
    )


def _introduced_note(paths: Sequence[str]) -> tuple[str, ...]:
    if not paths:
        return ()
    listed = ", ".join(_shown(p) for p in paths)
    return (
        f"{listed}: added by the patch while no workflow at the base calls entropy-gate; "
        "introducing the gate's caller is allowed (constraints.protected_paths protects it "
        "from the next change on)",
    )
