"""The base run: the base ref's property module, under the base's manifest, in a git worktree
of the base commit, on host A or host B — from the base evidence cache when a sound entry
matches. One implementation for the local gate (`gate`) and the host jobs (`run --base-ref`);
whether its result can change a verdict is verdict.basepolicy's question, not this module's.

Its report folder is `OUT/base-a` or `OUT/base-b` (`folder`); the host jobs move it to
`DIR/base` (core.layout.BASE_FOLDER), where `verdict` and `compare` read it.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from entropy_action.core import git
from entropy_action.core.errors import GateError
from entropy_action.evidence import basecache
from entropy_action.hosts import environments, launch, runsettings, sessions
from entropy_action.manifest import groups
from entropy_action.manifest.baseline import PinCheck
from entropy_action.manifest.pinfile import LoadedManifest

Host = Literal["a", "b"]


@dataclass(frozen=True)
class BaseRun:
    """How the base run is made on this machine (the gate's settings, or `run`'s options)."""

    environ: Mapping[str, str]
    python_a: str | None = None  # host A's interpreter (default: this one)
    python_b: str | None = None  # host B's interpreter
    namespaces: bool = True
    timeout: float | None = None
    progress: Callable[[str], None] = field(default=lambda line: None)
    cache_dir: Path | None = None  # the base evidence cache (None: no cache)

    def python(self, host: Host) -> str | None:
        return self.python_b if host == "b" else self.python_a


def folder(out: Path, host: Host) -> Path:
    """Where the base run on `host` leaves its report under `out`."""
    return out / f"base-{host}"


def run(
    base: BaseRun,
    check: PinCheck,
    out: Path,
    host: Host,
    cancel: threading.Event | None = None,
) -> Path:
    """The base's module on `host`, its report in `folder(out, host)`: from the evidence cache
    when a sound entry matches; not started, or killed while it runs, once `cancel` is set (a
    host run was invalid). GateError when it cannot run."""
    target = folder(out, host)
    if cancel is not None and cancel.is_set():
        return target
    if base.cache_dir is None or check.base is None or check.base_commit is None:
        _run_in_worktree(base, check, out, host, cancel)
        return target
    cache = basecache.EvidenceCache(base.cache_dir)
    key = cache_key(base, check, host)
    label = f"base run on host {host.upper()}"
    hit, notes = cache.restore(key, target)
    for note in notes:
        base.progress(f"{label}: {note}")
    if hit:
        base.progress(f"{label}: reused from the cache ({key.digest[:12]})")
        return target
    _run_in_worktree(base, check, out, host, cancel)
    if cancel is None or not cancel.is_set():  # killed: nothing worth caching
        for note in cache.store(key, target):
            base.progress(f"{label}: {note}")
    return target


def run_many(
    base: BaseRun,
    checks: Sequence[PinCheck],
    outs: Sequence[Path],
    host: Host,
    cancel: threading.Event | None = None,
) -> list[str | None]:
    """Many properties' base runs on `host`, each into `folder(outs[i], host)`: each from the
    evidence cache where its own entry matches, the others in one worktree of the base commit,
    one pytest session per group of their base views (hosts.sessions), each kept in the cache
    under its own key. The GateError message of each that could not run (None: it ran)."""
    errors: list[str | None] = [None] * len(checks)
    todo = [
        index
        for index, (check, out) in enumerate(zip(checks, outs, strict=True))
        if not (cancel is not None and cancel.is_set()) and not _restored(base, check, out, host)
    ]
    if not todo or (cancel is not None and cancel.is_set()):
        return errors
    first = checks[todo[0]]
    assert first.base_commit is not None
    tree = outs[todo[0]] / f"base-tree-{host}"
    if tree.exists():
        shutil.rmtree(tree)
    _worktree(first.root, first.base_commit, tree)
    try:
        by_id = {_base_view(checks[i]).property_id: i for i in todo}
        for group in groups.groups([_base_view(checks[i]) for i in todo]):
            for members in sessions.sessions(group):
                chosen = [by_id[view.property_id] for view in members]
                folders = [folder(outs[i], host) for i in chosen]
                made = settings(base, members[0], first.root, tree, folders[0], host, cancel)
                try:
                    sessions.run_session(made, members, folders)
                except GateError as exc:
                    for index in chosen:
                        errors[index] = exc.message.splitlines()[0]
                    continue
                for index in chosen if cancel is None or not cancel.is_set() else ():
                    _store(base, checks[index], outs[index], host)
    finally:
        git.remove_worktree(first.root, tree)
    return errors


def _worktree(root: Path, commit: str, tree: Path) -> None:
    """A worktree of the base commit at `tree`, with what the install generated inside the
    checkout's packages (a `_version.py` git ignores: hosts.environments.generated), which a
    checkout of a commit lacks."""
    git.add_worktree(root, commit, tree)
    environments.copy_generated(root, tree)


def _base_view(check: PinCheck) -> LoadedManifest:
    assert check.base is not None
    return check.base


def _restored(base: BaseRun, check: PinCheck, out: Path, host: Host) -> bool:
    """Whether the check's base run came from the evidence cache into its folder."""
    if base.cache_dir is None or check.base is None or check.base_commit is None:
        return False
    key = cache_key(base, check, host)
    hit, notes = basecache.EvidenceCache(base.cache_dir).restore(key, folder(out, host))
    for note in notes:
        base.progress(f"base run on host {host.upper()}: {note}")
    if hit:
        base.progress(f"base run on host {host.upper()}: reused from the cache ({key.digest[:12]})")
    return hit


def _store(base: BaseRun, check: PinCheck, out: Path, host: Host) -> None:
    if base.cache_dir is None or check.base is None or check.base_commit is None:
        return
    cache = basecache.EvidenceCache(base.cache_dir)
    for note in cache.store(cache_key(base, check, host), folder(out, host)):
        base.progress(f"base run on host {host.upper()}: {note}")


def cache_key(base: BaseRun, check: PinCheck, host: Host) -> basecache.CacheKey:
    """The evidence cache's key of the base run on `host` (`entropy-gate cache-key` prints its
    digest for the Action's actions/cache): the interpreter is the one that host runs."""
    assert check.base is not None
    assert check.base_commit is not None
    return basecache.base_run_key(
        base_commit=check.base_commit,
        manifest_sha256=check.base.sha256,
        host=host,
        python=base.python(host),
    )


def _run_in_worktree(
    base: BaseRun, check: PinCheck, out: Path, host: Host, cancel: threading.Event | None
) -> None:
    """The base ref's module in a temporary git worktree, under the base's manifest."""
    assert check.base is not None
    with worktree(check, out, host) as tree:
        launch.run_host(
            settings(base, check.base, check.root, tree, folder(out, host), host, cancel)
        )


@contextlib.contextmanager
def worktree(check: PinCheck, out: Path, host: Host) -> Iterator[Path]:
    """A git worktree of the base commit under `out`, removed after."""
    assert check.base_commit is not None
    tree = out / f"base-tree-{host}"
    if tree.exists():
        shutil.rmtree(tree)
    _worktree(check.root, check.base_commit, tree)
    try:
        yield tree
    finally:
        git.remove_worktree(check.root, tree)


def settings(
    base: BaseRun,
    loaded: LoadedManifest,
    checkout: Path,
    tree: Path,
    out: Path,
    host: Host,
    cancel: threading.Event | None = None,
) -> runsettings.RunSettings:
    """A run of the base's module in `tree` (a `worktree` of `checkout`), under the base's
    manifest (`loaded`)."""
    label = f"base run on host {host.upper()}"
    return runsettings.RunSettings(
        host=host,
        out=out,
        root=tree,
        loaded=loaded,
        environ=base.environ,
        isolate=host == "b",
        python=base.python(host),
        namespaces=base.namespaces,
        progress=lambda line: base.progress(f"{label}: {line}"),
        timeout=base.timeout,
        checkout=checkout,  # the base's code, not the head's through an editable install
        cancel=cancel,
    )
