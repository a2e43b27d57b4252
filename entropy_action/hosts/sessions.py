"""One pytest session per group of properties on one host, split into each property's folder.

A manifest that lists its properties groups those whose effective pins and run options are
equal (manifest.groups); each group runs in one pytest session per host over all its
modules (one start-up, one plugin load, one copy of host B's tree), and hosts.split gives
each property the folder a run of it alone leaves. A group whose run options stop pytest
early (-x, --maxfail, --stepwise) would let one module's failure stop another's tests: its
properties run one session each (`sessions`). Two modules of one file name go to different
sessions: in folders without `__init__.py`, pytest's default import mode names both after the
file, and the second stops at "import file mismatch" (tests/unit/test_x.py beside
tests/e2e/test_x.py, in a project that runs each folder in a pytest of its own). The name is
the manifest's, so every host leg and the local gate cut the same sessions.

pytest's own semantics hold inside a session: a test of one module that changes state
another module's tests read (a module-level cache, an environment variable) does so as it
would in any pytest run of both files.
"""

from __future__ import annotations

import dataclasses
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from entropy_action.core.hostinfo import HostInfo
from entropy_action.hosts import launch, split
from entropy_action.hosts.runsettings import RunSettings, timeout_of
from entropy_action.manifest.groups import Group
from entropy_action.manifest.pinfile import LoadedManifest

# run.pytest_args that stop a session before every test ran
STOP_EARLY = (
    *("-x", "--exitfirst", "--maxfail"),
    *("--sw", "--stepwise", "--sw-skip", "--stepwise-skip"),
)
_WITH_VALUE = "kmpcoWrn"  # short options whose value follows in the same argument


def sessions(group: Group) -> list[tuple[LoadedManifest, ...]]:
    """The sessions a group runs in: one, one per property when its options stop early, or
    as few as keep two modules of one file name apart, in the manifest's order."""
    if len(group.views) > 1 and stops_early(group.views[0].manifest.run.pytest_args):
        return [(view,) for view in group.views]
    cut: list[list[LoadedManifest]] = []
    for view in group.views:
        name = PurePosixPath(view.manifest.module).name
        free = (s for s in cut if all(PurePosixPath(m.manifest.module).name != name for m in s))
        session = next(free, None)
        if session is None:
            cut.append(session := [])
        session.append(view)
    return [tuple(members) for members in cut]


def stops_early(args: Sequence[str]) -> bool:
    """Whether pytest arguments stop the run at a failure (-x, -vx, --maxfail=2, ...)."""
    for arg in args:
        if arg.split("=", 1)[0] in STOP_EARLY:
            return True
        if arg.startswith("-") and not arg.startswith("--"):
            flags = re.split(f"[{_WITH_VALUE}]", arg[1:], maxsplit=1)[0]  # -vx, not -kx
            if "x" in flags:
                return True
    return False


def run_session(
    settings: RunSettings, views: Sequence[LoadedManifest], folders: Sequence[Path]
) -> list[HostInfo]:
    """The views' modules in one session on `settings.host`, each view's report in its
    folder (one view: an ordinary host run into its folder). GateError when the session
    could not run; the caller reports it in every folder."""
    if len(views) == 1:
        alone = dataclasses.replace(settings, out=folders[0], loaded=views[0], modules=())
        return [launch.run_host(alone)]
    modules = tuple(view.manifest.module for view in views)
    with tempfile.TemporaryDirectory(prefix=f"entropy-gate-session-{settings.host}-") as tmp:
        shared = dataclasses.replace(
            settings,
            out=Path(tmp) / "session",
            loaded=views[0],
            modules=modules,
            exclude=tuple(folders),  # the properties' folders: the gate's output, as alone
            timeout=timeout_of(settings) * len(views),  # each property's time, as alone
        )
        info = launch.run_host(shared)
        return split.split(shared.out, info, views, folders)
