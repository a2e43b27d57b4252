"""Replay a repository's own history as pull requests: each commit judged against its parent.

What a maintainer runs before making the check required ("what would it have said on my last
30 merges?"). Each first-parent commit is judged by the local gate (gate/local.py, hence the
one `judge`) as the pull request that brought it: the parent is the base, with the manifest
as it stood there — or, where the parent had none, `init`'s draft for `--module` (committed
on top of the parent as the base, and beside the commit's tree as the head); without
`--module`, for the module the checkout's own manifest names. Everything
happens in a temporary `git worktree`; the user's checkout is never touched (its work tree,
index, branches and stash stay as they are). The base run's evidence cache is the gate's own
(`gate` reuses what a backtest ran and the other way round): the commits a backtest makes are
dated from the commits they stand for, so a second backtest of the same range makes the same
commits and reuses every base run.

A commit whose setup fails (no parent, a parent without a manifest and no `--module`, a draft
that cannot be made) is that commit's `error`, never the end of the run.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from entropy_action.core import git
from entropy_action.core.errors import GateError
from entropy_action.gate import drafting, local
from entropy_action.hosts import environments
from entropy_action.manifest import pinfile
from entropy_action.verdict.backtest import Commit, Row
from entropy_action.verdict.model import Verdict

DAY = 86_400
DRAFT_MESSAGE = "entropy-gate backtest: entropy.yaml as `init --module {module}` drafts it"


@dataclass(frozen=True)
class Settings:
    """A backtest, parsed once by the CLI."""

    root: Path  # the user's checkout: read, never written
    manifest: str  # repository-relative path of entropy.yaml
    environ: Mapping[str, str]
    module: str | None = None  # draft a manifest for it where the parent has none
    python: str | None = None  # host B's interpreter
    timeout: float | None = None
    namespaces: bool = True
    cache_dir: Path | None = None
    progress: Callable[[str], None] = field(default=lambda line: None)
    gate_progress: bool = False  # pass the gate's own progress lines on
    keep: Path | None = None  # keep each commit's reports in KEEP/SHA12


def commits(root: Path, last: int | None, span: str | None) -> list[Commit]:
    """The commits to judge, oldest first: the last `last` first-parent commits of HEAD, or
    the first-parent commits of `span` (`A..B`). GateError (exit 2) for a range that does not
    resolve or holds no commit."""
    if span is not None:
        shas = git.rev_list(root, ["--first-parent", "--reverse", _range(root, span)])
        if not shas:
            raise GateError(f"backtest: {span!r} holds no commits (is the older one first?)")
    else:
        assert last is not None
        if git.head_commit(root) is None:
            raise GateError("backtest: the repository has no commit yet")
        shas = list(reversed(git.rev_list(root, ["--first-parent", "-n", str(last), "HEAD"])))
    return [_commit(root, sha) for sha in shas]


def _range(root: Path, span: str) -> str:
    old, dots, new = span.partition("..")
    if not dots or new.startswith(".") or not old or not new:
        raise GateError(f"backtest: {span!r} is not a range; give OLD..NEW (or --last N)")
    for ref in (old, new):
        try:
            git.resolve_ref(root, ref)
        except GateError:
            raise GateError(f"backtest: {span!r}: {ref!r} is not a commit in this clone") from None
    return f"{git.resolve_ref(root, old)}..{git.resolve_ref(root, new)}"


def _commit(root: Path, sha: str) -> Commit:
    parents = git.parents(root, sha)
    subject, date = git.commit_info(root, sha)
    return Commit(sha, parents[0] if parents else None, subject, date)


def check_inputs(settings: Settings, picked: Sequence[Commit]) -> Settings:
    """What makes the whole backtest unusable, one line (exit 2): a `--module` neither the
    newest commit nor any judged commit's parent has (a commit that moves the module is judged
    at its parent), or no manifest at any parent and no module to draft one for. Without
    `--module`, the module the checkout's own manifest names stands in for it: right after
    adoption no parent has a manifest, and a maintainer asks what the gate would have said of
    the merges before it on the property just adopted."""
    if settings.module is None and (own := _own_module(settings)) is not None:
        settings = replace(settings, module=own)
        settings.progress(
            f"a parent without {settings.manifest} is judged against init's draft for {own}, "
            f"the module this checkout's {settings.manifest} names"
        )
    newest = picked[-1].sha
    if settings.module is not None and not any(
        git.show(settings.root, sha, settings.module) is not None
        for sha in (newest, *(c.parent for c in reversed(picked) if c.parent is not None))
    ):
        raise GateError(
            f"--module {settings.module}: no such file at {newest[:12]} (the newest commit "
            "judged) nor at a parent of one; name the module by its path from the repository root"
        )
    if settings.module is None and not any(
        c.parent is not None and git.show(settings.root, c.parent, settings.manifest) is not None
        for c in picked
    ):
        raise GateError(
            f"{settings.manifest}: at none of the parents of the commits judged; give "
            "--module PATH to judge each against init's draft for that module"
        )
    return settings


def _own_module(settings: Settings) -> str | None:
    """The module of the checkout's manifest, where it has one property; else None (a
    manifest that lists properties, or none, or one that does not load, names no one module:
    the commits then need `--module` as before)."""
    path = settings.root / settings.manifest
    try:
        raw = path.read_bytes()
        if pinfile.lists_properties(raw):
            return None
        return pinfile.parse(raw, settings.manifest, settings.root).manifest.module
    except (OSError, GateError):
        return None


def run(settings: Settings, picked: Sequence[Commit]) -> list[Row]:
    """Judge each commit in turn; a commit that cannot be set up is that commit's error."""
    rows: list[Row] = []
    scratch = Path(tempfile.mkdtemp(prefix="entropy-gate-backtest-"))
    try:
        for number, commit in enumerate(picked, 1):
            label = f"[{number}/{len(picked)}] {commit.sha[:12]}"
            settings.progress(f"{label} {_short(commit.subject)}: judging…")
            row = _judged(settings, commit, scratch / commit.sha[:12], label)
            rows.append(row)
            said = row.error if row.error is not None else row.classification
            settings.progress(f"{label}: {said} ({row.seconds:.1f} s)")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return rows


def _judged(settings: Settings, commit: Commit, work: Path, label: str) -> Row:
    started = time.monotonic()
    used = {"manifest": "parent"}
    try:
        verdict = _judge(settings, commit, work, label, used)
    except GateError as exc:
        error = exc.message.splitlines()[0] if exc.message else "failed"
        return Row(commit, time.monotonic() - started, error=error, manifest=used["manifest"])
    except Exception as exc:  # a bug: this commit's error, and the run goes on (exit 3)
        error = f"internal error: {type(exc).__name__}: {exc} (a bug in entropy-gate)"
        return Row(commit, time.monotonic() - started, error=error, internal=True)
    finally:
        _keep(settings, commit, work)
    return Row(commit, time.monotonic() - started, verdict, manifest=used["manifest"])


def _judge(
    settings: Settings, commit: Commit, work: Path, label: str, used: dict[str, str]
) -> Verdict:
    """The commit as a pull request on its parent, in a worktree under `work`."""
    if commit.parent is None:
        raise GateError("a root commit: no parent to judge it against")
    work.mkdir(parents=True)
    tree = work / "tree"
    root = settings.root
    at_parent = git.show(root, commit.parent, settings.manifest) is not None
    # the commit that adds the manifest is judged as `gate` judges that pull request: the
    # gate being introduced, no baseline (a draft at its parent would differ from the pins
    # it adds, a pin_mutation `gate` never says)
    adds = not at_parent and git.show(root, commit.sha, settings.manifest) is not None
    drafted = not at_parent and not adds
    git.add_worktree(root, commit.parent if drafted else commit.sha, tree)
    try:
        environments.copy_generated(root, tree)  # what the install generated (_version.py)
        base = commit.parent
        if adds:
            used["manifest"] = "added"
        if drafted:
            used["manifest"] = "draft"
            base = _draft_base(settings, commit, tree, label)
        gate = local.GateSettings(
            manifest=tree / settings.manifest,
            base_ref=base,
            environ=settings.environ,
            out=work / "out",
            python=settings.python,
            namespaces=settings.namespaces,
            timeout=settings.timeout,
            cache_dir=settings.cache_dir,
            progress=_relay(settings, label),
        )
        return local.run_gate(gate).verdict
    finally:
        git.remove_worktree(root, tree)


def _draft_base(settings: Settings, commit: Commit, tree: Path, label: str) -> str:
    """init's draft for `--module` at the parent, committed on it as the base; the commit's
    tree with the same draft beside it as the head. The base commit id."""
    assert commit.parent is not None
    module = settings.module
    if module is None:
        raise GateError(
            f"no {settings.manifest} at the parent {commit.parent[:12]}; give --module PATH "
            "to judge the commit against init's draft"
        )
    if not (tree / module).is_file():
        raise GateError(f"--module {module}: no such file at the parent {commit.parent[:12]}")
    parent_date = git.commit_info(settings.root, commit.parent)[1]
    settings.progress(f"{label}: drafting {settings.manifest} for {module} at the parent…")
    try:
        drafted, _ = drafting.draft_one(
            tree, module, settings.environ, parent_date // DAY * DAY, _relay(settings, label)
        )
    except GateError as exc:
        raise GateError(f"cannot draft a manifest at the parent: {exc.message}") from None
    manifest = tree / settings.manifest
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(drafted.text, encoding="utf-8")
    message = DRAFT_MESSAGE.format(module=module)
    base = git.commit_all(tree, message, date=parent_date, paths=(settings.manifest,))
    git.checkout_detached(tree, commit.sha)
    if not manifest.exists():  # the commit did not add one of its own: the draft stands
        manifest.parent.mkdir(parents=True, exist_ok=True)
        manifest.write_text(drafted.text, encoding="utf-8")
        subject = f"{commit.subject} (with the base's draft of {settings.manifest})"
        git.commit_all(tree, subject, date=commit.date, paths=(settings.manifest,))
    return base


def _relay(settings: Settings, label: str) -> Callable[[str], None]:
    if not settings.gate_progress:
        return lambda line: None
    return lambda line: settings.progress(f"{label}: {line}")


def _keep(settings: Settings, commit: Commit, work: Path) -> None:
    """With --keep, the commit's reports (the worktree itself is gone) in KEEP/SHA12."""
    if settings.keep is None or not (work / "out").is_dir():
        return
    target = settings.keep / commit.sha[:12]
    shutil.rmtree(target, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(work / "out", target, symlinks=True)


def _short(subject: str, width: int = 60) -> str:
    return subject if len(subject) <= width else subject[: width - 1] + "…"
