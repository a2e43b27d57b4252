"""Where the baseline manifest comes from: the base ref in git, never the patch's own tree."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from entropy_action.core import git
from entropy_action.core.errors import GateError
from entropy_action.manifest import pindiff, pinfile, salvage

IGNORED_BASELINE = "entropy.baseline.yaml"


@dataclass(frozen=True)
class PinCheck:
    """The head manifest, its baseline and the diff between them."""

    root: Path  # the repository's work tree
    relative: str  # the manifest, repository-relative
    head: pinfile.LoadedManifest | None  # None only when the patch made it unreadable
    base: pinfile.LoadedManifest | None
    base_commit: str | None
    diff: pindiff.PinDiff
    notes: tuple[str, ...] = ()


def check(manifest_path: Path, base_ref: str | None, baseline_file: Path | None) -> PinCheck:
    """Load the head manifest and its baseline (from `base_ref`, or `baseline_file`)."""
    if (base_ref is None) == (baseline_file is None):
        raise GateError("give exactly one of --base-ref REF or --baseline FILE")
    if baseline_file is not None:
        root = repo_root(manifest_path)
        relative = _relative(root, manifest_path)
        base: pinfile.LoadedManifest | None = pinfile.load(baseline_file, name=str(baseline_file))
        source, commit = str(baseline_file), None
    else:
        assert base_ref is not None
        root = _toplevel(manifest_path)
        relative = git.repo_path(root, manifest_path)
        commit = git.resolve_ref(root, base_ref)
        source = f"{base_ref}:{relative}"
        raw = git.show(root, commit, relative)
        base = None if raw is None else pinfile.parse(raw, source)
    notes = _ignored_baseline_note(root, relative)
    if base is not None and not os.path.lexists(root / relative):
        gone = f"deleted or renamed by the patch; it exists at {source}"
        diff = pindiff.diff(base, None, relative, source, [(1, gone)])
        return PinCheck(root, relative, None, base, commit, diff, notes)
    raw = pinfile.read(root / relative, relative)
    if base is None:
        head: pinfile.LoadedManifest | None = pinfile.parse(raw, relative, root)
        diff = pindiff.PinDiff(baseline=source, baseline_found=False)
        notes += (
            f"{source}: no manifest at the base ref; the gate is being introduced, "
            "so there is no baseline to compare the pins with",
        )
    else:
        head, problems = salvage.parse_lenient(raw, relative, root, fallback=base.manifest)
        diff = pindiff.diff(base, head, relative, source, problems)
    warnings = head.warnings if head is not None else ()
    return PinCheck(root, relative, head, base, commit, diff, notes + warnings)


def repo_root(manifest_path: Path) -> Path:
    """The git work tree holding the manifest, or its folder when there is no git."""
    try:
        return git.toplevel(manifest_path.parent if manifest_path.parent.parts else Path.cwd())
    except GateError:
        return (manifest_path.parent if manifest_path.parent.parts else Path.cwd()).resolve()


def _toplevel(manifest_path: Path) -> Path:
    try:
        return git.toplevel(manifest_path.parent if manifest_path.parent.parts else Path.cwd())
    except GateError as exc:
        if "not inside a git work tree" not in exc.message:
            raise
        raise GateError(
            f"{manifest_path}: not inside a git work tree, so no base ref can be read "
            "(check-pins takes --baseline FILE without git)"
        ) from None


def _relative(root: Path, path: Path) -> str:
    try:
        return git.repo_path(root, path)
    except GateError:
        raise GateError(f"{path}: the manifest must lie inside the repository {root}") from None


def _ignored_baseline_note(root: Path, relative: str) -> tuple[str, ...]:
    candidate = (root / relative).parent / IGNORED_BASELINE
    if not candidate.exists():
        return ()
    shown = candidate.relative_to(root).as_posix()
    return (
        f"{shown}: ignored; the baseline is read from the base ref, never from the patch's tree",
    )
