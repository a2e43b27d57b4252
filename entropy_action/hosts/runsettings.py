"""What one host run is asked for (RunSettings), and everything its pytest process is
started with (Launch)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from entropy_action.core.hostinfo import ReplayPlan
from entropy_action.hosts import isolate, supervise, temproot
from entropy_action.manifest.pinfile import LoadedManifest

DEFAULT_TIMEOUT = 1800.0


@dataclass(frozen=True)
class RunSettings:
    """One host run, as the `run` and `gate` commands ask for it."""

    host: Literal["a", "b"]
    out: Path  # DIR: junit.xml, host.json and pytest.log are written here
    root: Path  # repository work tree to run in (copied elsewhere when isolated)
    loaded: LoadedManifest  # the manifest; its raw bytes' sha256 goes into host.json
    environ: Mapping[str, str]  # the caller's environment (host A inherits it)
    isolate: bool = False
    python: str | None = None  # interpreter for pytest; default sys.executable
    progress: Callable[[str], None] | None = None  # one-line status updates
    namespaces: bool = True  # False: never unshare (in-process network block, temp_root lock)
    timeout: float | None = None  # seconds; None: run.timeout_seconds, else DEFAULT_TIMEOUT
    audit: bool = True  # record live reads from code under test (audit.py in the test process)
    revert: frozenset[str] = frozenset()  # host B perturbations left out (isolate.REVERTIBLE)
    keep_env: tuple[str, ...] = ()  # caller variables host B keeps (bisecting the environment)
    select: tuple[str, ...] = ()  # test ids to run instead of the whole module
    # a run of the base ref's module in a worktree: the head checkout, whose code (which an
    # editable install points at) is imported from the same place in `root` instead
    checkout: Path | None = None
    count_assertions: bool = True  # count each test's assertions (assertcount.py)
    cancel: threading.Event | None = None  # set by another thread: kill this run (supervise)
    # one session over several properties' modules (hosts.sessions): pytest runs them all and
    # the plugin, audit and provenance treat each as a property module; () = loaded's module
    modules: tuple[str, ...] = ()
    exclude: tuple[Path, ...] = ()  # more of the gate's output left out of host B's copy
    test_progress: bool = False  # tell `progress` how many tests ran, every few seconds
    order: tuple[str, ...] = ()  # run exactly these node ids in this order (testproc.order)
    # host B's values for the unpinned sources from a report (`entropy-gate replay`): applied
    # instead of the ones this machine would pick (hosts.replayplan)
    replay: ReplayPlan | None = None

    @property
    def property_modules(self) -> tuple[str, ...]:
        """The property modules this run's session holds."""
        return self.modules or (self.loaded.manifest.module,)


@dataclass
class Launch:
    """Everything the pytest subprocess is started with, decided before it starts."""

    argv: list[str]
    pytest_args: list[str]  # after `python -m pytest`
    env: dict[str, str]
    cwd: Path
    umask: int  # -1: inherit
    expected: list[tuple[str, str, str]]  # (pin, variable, value) the test process must see
    temp_root: temproot.Claim | None
    hostb: isolate.HostB | None = None
    notes: list[str] = field(default_factory=list)
    scratch: Path = Path()  # the run's private directory (plugin, children's reports)
    marker: str = field(default_factory=supervise.new_marker)  # in the env of all it starts
    channel: list[int] = field(default_factory=lambda: [-1, -1])  # (read, write); -1: handed on
    pid_namespace: bool = False  # nsinit is PID 1 of the run's own PID namespace


def timeout_of(settings: RunSettings) -> float:
    """--timeout, else run.timeout_seconds, else DEFAULT_TIMEOUT."""
    if settings.timeout is not None:
        return settings.timeout
    return float(settings.loaded.manifest.run.timeout_seconds or DEFAULT_TIMEOUT)
