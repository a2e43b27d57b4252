"""Where the baseline manifest comes from: the base ref in git, never the patch's own tree."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

from entropy_action.core import git
from entropy_action.core.errors import GateError
from entropy_action.manifest import pindiff, pinfile, safe_yaml, salvage

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
    staged: bool = False  # the head is git's index (the pre-commit hook), not the work tree


@dataclass(frozen=True)
class RepoCheck:
    """The pin check of a whole manifest: one PinCheck per property the head lists (each
    over that property's view of both manifests), and the base's properties the head
    dropped (each a rejecting change: its tests would leave the gate)."""

    root: Path
    relative: str
    base_commit: str | None
    checks: tuple[PinCheck, ...]
    dropped: tuple[pindiff.PinChange, ...] = ()
    many: bool = False  # either side lists `properties:`
    notes: tuple[str, ...] = ()

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(_id(check) for check in self.checks)

    @property
    def diff(self) -> pindiff.PinDiff:
        """Every property's pin changes as one diff (a shared key once; a property's own
        named with it), and the dropped properties."""
        first = self.checks[0].diff
        if not self.many:
            return first
        changes: dict[tuple[str, str, int, str], pindiff.PinChange] = {}
        for one in self.checks:
            for given in one.diff.changes:
                shared = given.key.startswith(("constraints.", "manifest", "version"))
                named = f"property {_id(one)!r}: {given.message}"
                change = given if shared else given.model_copy(update={"message": named})
                changes.setdefault((change.kind, change.key, change.line, change.message), change)
        listed = [*changes.values(), *self.dropped]
        return pindiff.PinDiff(
            baseline=first.baseline,
            baseline_found=any(one.diff.baseline_found for one in self.checks),
            changes=sorted(listed, key=lambda c: c.line),
        )

    def select(self, property_id: str | None) -> PinCheck:
        """The one property's check: `property_id`'s, or the only one there is."""
        if property_id is None:
            if len(self.checks) == 1 and not self.dropped:
                return self.checks[0]
            raise GateError(
                f"{self.relative}: lists {len(self.checks)} properties "
                f"({', '.join(self.ids)}); name one with --property ID"
            )
        for one in self.checks:
            if _id(one) == property_id:
                return one
        raise GateError(
            f"{self.relative}: no property {property_id!r} (it lists: {', '.join(self.ids)})"
        )

    def only(self, property_ids: tuple[str, ...]) -> RepoCheck:
        """The same check over the named properties only (`--property`); an unknown id is
        an error naming the ones there are."""
        if not property_ids:
            return self
        picked = tuple(self.select(pid) for pid in dict.fromkeys(property_ids))
        return RepoCheck(
            self.root, self.relative, self.base_commit, picked, (), self.many, self.notes
        )


def _id(check: PinCheck) -> str:
    loaded = check.head or check.base
    return loaded.property_id if loaded is not None else "?"


def check(
    manifest_path: Path,
    base_ref: str | None,
    baseline_file: Path | None,
    property_id: str | None = None,
) -> PinCheck:
    """Load the head manifest and its baseline (from `base_ref`, or `baseline_file`): the
    check of its one property, or of `property_id` in a manifest that lists many."""
    return check_all(manifest_path, base_ref, baseline_file).select(property_id)


def check_all(
    manifest_path: Path,
    base_ref: str | None,
    baseline_file: Path | None,
    *,
    staged: bool = False,
) -> RepoCheck:
    """The pin check of every property in the manifest (see RepoCheck). With `staged`, the
    head is what git's index holds (the manifest's staged bytes), not the work tree."""
    repo = _check_all(manifest_path, base_ref, baseline_file, staged)
    if not staged:
        return repo
    checks = tuple(dataclasses.replace(one, staged=True) for one in repo.checks)
    return dataclasses.replace(repo, checks=checks)


def _check_all(
    manifest_path: Path, base_ref: str | None, baseline_file: Path | None, staged: bool
) -> RepoCheck:
    if (base_ref is None) == (baseline_file is None):
        raise GateError("give exactly one of --base-ref REF or --baseline FILE")
    if baseline_file is not None:
        root = repo_root(manifest_path)
        relative = _relative(root, manifest_path)
        base: pinfile.LoadedFile | None = pinfile.parse_file(
            pinfile.read(baseline_file), str(baseline_file)
        )
        source, commit = str(baseline_file), None
    else:
        assert base_ref is not None
        root = _toplevel(manifest_path)
        relative = git.repo_path(root, manifest_path)
        commit = git.resolve_ref(root, base_ref)
        source = f"{base_ref}:{relative}"
        raw = git.show(root, commit, relative)
        base = None if raw is None else pinfile.parse_file(raw, source)
    notes = _ignored_baseline_note(root, relative)
    first_base = base.views[0] if base is not None else None

    def whole(one: PinCheck, many: bool) -> RepoCheck:
        return RepoCheck(root, relative, commit, (one,), (), many, one.notes)

    raw = _head_bytes(root, relative, staged)
    if base is not None and raw is None:
        assert first_base is not None
        gone = f"deleted or renamed by the patch; it exists at {source}"
        diff = pindiff.diff(first_base, None, relative, source, [(1, gone)])
        return whole(PinCheck(root, relative, None, first_base, commit, diff, notes), base.many)
    if raw is None:
        raw = _missing(root, relative, staged)
    if base is None:
        head_file = pinfile.parse_file(raw, relative, root)
        introduced = (
            f"{source}: no manifest at the base ref; the gate is being introduced, "
            "so there is no baseline to compare the pins with",
        )
        checks = tuple(
            PinCheck(
                root,
                relative,
                view,
                None,
                commit,
                pindiff.PinDiff(baseline=source, baseline_found=False),
                notes + introduced + view.warnings,
            )
            for view in head_file.views
        )
        return RepoCheck(root, relative, commit, checks, (), head_file.many, notes + introduced)
    assert first_base is not None
    if not base.many and not pinfile.lists_properties(raw):
        head, problems = salvage.parse_lenient(raw, relative, root, fallback=first_base.manifest)
        diff = pindiff.diff(first_base, head, relative, source, problems)
        warnings = head.warnings if head is not None else ()
        one = PinCheck(root, relative, head, first_base, commit, diff, notes + warnings)
        return whole(one, False)
    try:
        head_file = pinfile.parse_file(raw, relative, root)
    except safe_yaml.LocatedError as exc:  # a list the patch broke: no property can be run
        diff = pindiff.diff(first_base, None, relative, source, exc.problems)
        return whole(PinCheck(root, relative, None, first_base, commit, diff, notes), True)
    return _paired(root, relative, commit, source, base, head_file, notes)


def _paired(
    root: Path,
    relative: str,
    commit: str | None,
    source: str,
    base: pinfile.LoadedFile,
    head: pinfile.LoadedFile,
    notes: tuple[str, ...],
) -> RepoCheck:
    """Each head property against the base property of the same id. A new property is
    allowed: its pins have no baseline, so it is checked against the base's constraints
    (shared by every property) with its own pins. A base property the head lacks is a
    rejecting change, whatever the head lists instead (a rename drops one, adds another)."""
    checks: list[PinCheck] = []
    constraints = base.views[0].manifest.constraints
    for view in head.views:
        old = base.view(view.property_id)
        extra: tuple[str, ...] = ()
        if old is None:
            old = dataclasses.replace(
                view, manifest=view.manifest.model_copy(update={"constraints": constraints})
            )
            extra = (
                f"property {view.property_id!r} is new at the head: its pins have no baseline "
                "(adding a property is allowed); the base's constraints apply to it",
            )
        diff = pindiff.diff(old, view, relative, source)
        checks.append(
            PinCheck(root, relative, view, old, commit, diff, notes + extra + view.warnings)
        )
    dropped = tuple(
        _dropped(old, head, relative) for old in base.views if head.view(old.property_id) is None
    )
    return RepoCheck(root, relative, commit, tuple(checks), dropped, True, notes)


def _dropped(
    old: pinfile.LoadedManifest, head: pinfile.LoadedFile, relative: str
) -> pindiff.PinChange:
    line = head.located.line_of(("properties",))
    return pindiff.PinChange(
        kind="missing",
        key=f"properties.{old.property_id}",
        old={"property_id": old.property_id, "module": old.manifest.module},
        new=None,
        path=relative,
        line=line,
        message=(
            f"property {old.property_id!r} ({old.manifest.module}, line "
            f"{old.line_of('property_id')} of the baseline) removed from the manifest: its "
            "tests would leave the gate (a rename removes one property and adds another)"
        ),
        rejects=True,
    )


def _head_bytes(root: Path, relative: str, staged: bool) -> bytes | None:
    """The head manifest's bytes (git's index with `staged`, else the work tree), None when
    the head has none there."""
    if not staged:
        return pinfile.read(root / relative, relative) if os.path.lexists(root / relative) else None
    blob_id = git.index_files(root).get(relative)
    if blob_id is None:
        return None
    raw = git.blob(root, blob_id)
    if len(raw) > safe_yaml.MAX_BYTES:
        limit = f"the limit is {safe_yaml.MAX_BYTES} (1 MiB)"
        raise safe_yaml.problem(relative, 1, f"file is {len(raw)} bytes; {limit}")
    return raw


def _missing(root: Path, relative: str, staged: bool) -> bytes:
    """No manifest at the base or the head: the work tree's read says why (no such file, a
    folder); git's index has no file there."""
    if staged:
        raise GateError(
            f"{relative}: not in git's index (stage it, or write one: entropy-gate init drafts one)"
        )
    return pinfile.read(root / relative, relative)


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
