"""Host B on this machine: what makes an isolated run differ from host A, and what could not.

Every unpinned entropy source differs from host A's, so code that reads one diverges:

- the environment is scrubbed to ALLOWED_ENV plus the pins, and HOME is a fresh empty directory;
- the live wall clock runs CLOCK_SHIFT ahead (time-machine, started by the plugin before test
  modules import; libfaketime only when time-machine is missing and timed waits survive it);
- fresh network and UTS namespaces (`unshare`) give loopback only and another hostname;
  without them the plugin refuses non-loopback sockets and reports another hostname in-process;
- the tests run in a copy of the tree at another absolute path;
- unpinned TZ, umask and TMPDIR get values a laptop rarely has.

Whatever the machine cannot do becomes a note, never silence.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import platform
import secrets
import shutil
import stat
import subprocess
import sys
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from entropy_action.core import git
from entropy_action.core.errors import GateError
from entropy_action.hosts import environments
from entropy_action.manifest.pinfile import Pins
from entropy_action.testproc import protocol

CLOCK_SHIFT = timedelta(days=1843, hours=7, minutes=13)  # ~5 years: year, weekday, hour differ
SHIFT_SECONDS = int(CLOCK_SHIFT.total_seconds())
HOSTNAME_PREFIX = "entropy-gate-b-"
# Host B's perturbations that one run can leave out (`prepare(revert=...)`, RunSettings.revert);
# "python" is the gate's: host B then runs on host A's interpreter. The ones built so far of
# core.variations.REVERTIBLE (tests/unit/test_variations.py holds them together).
REVERTIBLE = (
    "clock",
    "env",
    "network",
    "path",
    "python",
    "test_order",
    "hash_seed",
    "file_order",
    "cpu_count",
)
_NEVER_PASSED = frozenset({*protocol.PYTEST_CONFIG_ENV, *protocol.GATE_ENV})

# What survives the scrub besides the pins: what finds programs and what interpreters need to
# start (a shared libpython, Windows' system variables). VIRTUAL_ENV only when the interpreter
# lives in it. Everything else from the caller's shell is gone.
ALLOWED_ENV = (
    "PATH",
    "LD_LIBRARY_PATH",
    "SYSTEMROOT",
    "SystemRoot",
    "COMSPEC",
    "PATHEXT",
    "WINDIR",
    # Whether this is a CI machine: test tools switch on it (hypothesis loads its "ci" profile:
    # derandomize, no deadline, no database), so a host B without it would run the properties
    # under other tool settings than host A, and disagree for a reason no pin names.
    "CI",
)
UNPINNED_TZ = ("Pacific/Chatham", "Asia/Kathmandu")  # +12:45/+13:45 and +05:45: odd offsets
UNPINNED_UMASK = (0o077, 0o022)
UNPINNED_LANG = ("C.UTF-8", "C")  # present everywhere; C turns off Python's UTF-8 coercion
HOST_A_RNG_SEED = 0  # host A's base seed when rng_seed is unpinned
UNPINNED_RNG_SEED = 1843  # host B's: another value, so a test coupled to its seed diverges
HOST_A_HASH_SEED = 0  # host A's PYTHONHASHSEED when hash_seed is unpinned
UNPINNED_HASH_SEED = 2767  # host B's: another value, so set and dict-of-str order differs
UNPINNED_CPU_COUNT = (3, 5)  # odd counts a laptop or a runner rarely has; never host A's
SKIP_DIRS = frozenset({".git", ".venv", ".tox", *git.CACHE_DIRS})
LIBFAKETIME = (
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
    "/usr/local/lib/faketime/libfaketime.so.1",
    "/usr/lib64/faketime/libfaketime.so.1",
)
_PROBE_TIMEOUT = 60


@dataclass(frozen=True)
class Interpreter:
    """The Python that runs pytest, as seen before the run."""

    path: str
    version: str
    implementation: str
    has_pytest: bool
    has_time_machine: bool


_INTERPRETER_PROBE = """\
import importlib.util as u, json, platform
print(json.dumps({"version": platform.python_version(),
    "implementation": platform.python_implementation(),
    "pytest": u.find_spec("pytest") is not None,
    "time_machine": u.find_spec("time_machine") is not None}))
"""


def inspect_interpreter(python: str, environ: Mapping[str, str]) -> Interpreter:
    """What `python` offers; a GateError when it cannot run or has no pytest."""
    if python == sys.executable:
        found = importlib.util.find_spec
        return Interpreter(
            python,
            platform.python_version(),
            platform.python_implementation(),
            has_pytest=found("pytest") is not None,
            has_time_machine=found("time_machine") is not None,
        )
    try:
        proc = subprocess.run(
            [python, "-c", _INTERPRETER_PROBE],
            env=dict(environ),
            capture_output=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except OSError as exc:
        raise GateError(f"--python {python}: cannot run it: {exc.strerror}") from None
    except subprocess.TimeoutExpired:
        raise GateError(f"--python {python}: no answer after {_PROBE_TIMEOUT} s") from None
    try:
        seen = json.loads(proc.stdout.decode("utf-8", "replace").strip().splitlines()[-1])
        interpreter = Interpreter(
            python,
            str(seen["version"]),
            str(seen["implementation"]),
            seen["pytest"] is True,
            seen["time_machine"] is True,
        )
    except (ValueError, LookupError, TypeError):
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        why = f"exit {proc.returncode}" + (f": {err[-1]}" if err else "")
        raise GateError(
            f"--python {python}: does not answer like a Python interpreter ({why})"
        ) from None
    if not interpreter.has_pytest:
        raise GateError(
            f"--python {python}: pytest is not installed for that interpreter (Python "
            f"{interpreter.version}); install it there: {python} -m pip install pytest"
        )
    return interpreter


# --- namespaces ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Namespaces:
    """What `unshare` can give a run here. `reason` says why not when `usable` is False."""

    unshare: str | None
    as_root: bool
    reason: str | None
    pid: bool = False  # a PID namespace too (nsinit is its PID 1), with its own /proc

    @property
    def usable(self) -> bool:
        return self.unshare is not None and self.reason is None

    def prefix(self, *, network: bool) -> list[str]:
        """argv before the command: a private mount namespace, a PID namespace where there
        is one, and for host B net + UTS."""
        assert self.unshare is not None
        user = [] if self.as_root else ["--user", "--map-root-user"]
        extra = ["--net", "--uts"] if network else []
        pid = list(_PID_FLAGS) if self.pid else []
        return [self.unshare, *user, "--mount", "--propagation", "private", *extra, *pid]


_ROOT_FLAGS = ("--mount", "--propagation", "private", "--net", "--uts")
_USER_FLAGS = ("--user", "--map-root-user", *_ROOT_FLAGS)
_PID_FLAGS = ("--pid", "--fork", "--mount-proc")


@functools.cache
def _unshare_fails(unshare: str, flags: tuple[str, ...]) -> str | None:
    try:
        proc = subprocess.run(
            [unshare, *flags, "true"], capture_output=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if proc.returncode == 0:
        return None
    lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else f"unshare exited {proc.returncode}"


def namespaces(enabled: bool = True) -> Namespaces:
    """Probe (once per process) whether this machine lets a run have its own namespaces."""
    if not enabled:
        return Namespaces(None, False, "namespaces turned off by the caller")
    if not sys.platform.startswith("linux"):
        return Namespaces(None, False, f"no Linux namespaces on {sys.platform}")
    unshare = shutil.which("unshare")
    if unshare is None:
        return Namespaces(None, False, "`unshare` (util-linux) is not installed")
    is_root = hasattr(os, "geteuid") and os.geteuid() == 0
    for as_root, flags in ((True, _ROOT_FLAGS), (False, _USER_FLAGS)):
        if as_root and not is_root:
            continue
        if _unshare_fails(unshare, (*flags, *_PID_FLAGS)) is None:
            return Namespaces(unshare, as_root, None, pid=True)
        failed = _unshare_fails(unshare, flags)
        if failed is None:
            return Namespaces(unshare, as_root, None)
    return Namespaces(unshare, False, f"unshare refused: {failed}")


# --- the environment, the tree, the unpinned sources ----------------------------------------


def scrubbed_environ(environ: Mapping[str, str], home: Path, python: str) -> dict[str, str]:
    """The allowlisted part of the caller's environment, with a fresh empty HOME."""
    kept = {name: environ[name] for name in ALLOWED_ENV if name in environ}
    venv = environ.get("VIRTUAL_ENV")
    if venv and os.path.abspath(python).startswith(os.path.join(os.path.abspath(venv), "")):
        kept["VIRTUAL_ENV"] = venv
    home.mkdir(parents=True, exist_ok=True)
    kept[protocol.HOME_ENV] = str(home)
    if sys.platform == "win32":
        kept[protocol.PROFILE_ENV] = str(home)
    return kept


def copy_tree(root: Path, dest: Path, exclude: tuple[Path, ...] = ()) -> int:
    """Copy the work tree to `dest`: git's tracked and unignored files and what an install
    generated inside the project's packages (hosts.environments.generated: a `_version.py`
    git ignores), else all but caches.

    Untracked nested repositories (a `git worktree` of the base ref, say), environments
    inside the checkout (an untracked `.venv`: hosts.environments) and the `exclude`d folders
    (the gate's own output) are left out.
    """
    try:
        git.toplevel(root)
        names = [name for name in git.tracked_and_untracked(root) if not name.endswith("/")]
        names += environments.generated(root)
    except GateError:
        names = [str(p.relative_to(root)) for p in _walk(root)]
    skip = _inside(root, (*exclude, *environments.environments(root)))
    made: set[str] = set()
    count = 0
    for name in names:
        posix = name.replace(os.sep, "/")
        if any(folder in (".", posix) or posix.startswith(folder + "/") for folder in skip):
            continue
        source, target = os.path.join(root, name), os.path.join(dest, name)
        try:
            mode = os.lstat(source).st_mode
        except FileNotFoundError:  # deleted in the work tree
            continue
        if (parent := os.path.dirname(target)) not in made:
            os.makedirs(parent, exist_ok=True)
            made.add(parent)
        if stat.S_ISLNK(mode):
            os.symlink(os.readlink(source), target)
        elif stat.S_ISDIR(mode):  # a submodule
            shutil.copytree(source, target, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        elif stat.S_ISREG(mode):
            try:
                shutil.copy2(source, target)
            except FileNotFoundError:  # deleted while copying (another run's clean-up)
                continue
        else:
            continue
        count += 1
    return count


def _inside(root: Path, folders: tuple[Path, ...]) -> tuple[str, ...]:
    """The `folders` inside `root` as names relative to it ('/'-separated): a file is
    skipped by comparing its name's text, not by walking each file's parents (a walk per
    file per folder was most of host B's preparation beside a few thousand files)."""
    base = root.absolute()
    names = []
    for folder in folders:
        try:
            names.append(folder.absolute().relative_to(base).as_posix())
        except ValueError:  # outside the tree: nothing of it is copied anyway
            continue
    return tuple(names)


def _walk(root: Path) -> list[Path]:
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        found.extend(Path(folder) / name for name in sorted(files))
    return found


def new_hostname() -> str:
    return HOSTNAME_PREFIX + secrets.token_hex(3)


def unpinned_tz(environ: Mapping[str, str]) -> str:
    """A zone with an odd offset, other than the caller's."""
    return UNPINNED_TZ[1] if environ.get("TZ") == UNPINNED_TZ[0] else UNPINNED_TZ[0]


def unpinned_lang(environ: Mapping[str, str]) -> str:
    """A locale other than the caller's effective one (LC_ALL, else LANG)."""
    current = (environ.get("LC_ALL") or environ.get("LANG") or "").lower().replace("-", "")
    return UNPINNED_LANG[1] if current == "c.utf8" else UNPINNED_LANG[0]


def unpinned_umask(current: int) -> int:
    return UNPINNED_UMASK[1] if current == UNPINNED_UMASK[0] else UNPINNED_UMASK[0]


def current_umask() -> int:
    """This process's umask, read without changing it where the OS allows (threads run)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# --- the live clock --------------------------------------------------------------------------


@dataclass(frozen=True)
class ClockPlan:
    """How host B's live clock is shifted: by the plugin, by libfaketime, or not (a note)."""

    plugin_shift: int | None = None
    environ: dict[str, str] = field(default_factory=dict)
    method: str | None = None
    note: str | None = None


_FAKETIME_PROBE = """\
import queue, threading, time
start, wall = time.monotonic(), time.time()
time.sleep(0.05)
threading.Event().wait(0.05)
try:
    queue.Queue().get(timeout=0.05)
except queue.Empty:
    pass
assert time.monotonic() - start < 5, "timed waits took too long"
print(wall)
"""


# libfaketime's two ways of treating CLOCK_MONOTONIC; NOTES.md saw each break CPython's waits.
FAKETIME_SETTINGS: tuple[dict[str, str], ...] = ({}, {"FAKETIME_DONT_FAKE_MONOTONIC": "1"})


def faketime_fails(
    python: str, preload: Mapping[str, str], environ: Mapping[str, str]
) -> str | None:
    """Why libfaketime cannot shift the clock for `python` (None: sleep and waits work)."""
    env = {**environ, **preload}
    try:
        proc = subprocess.run(
            [python, "-c", _FAKETIME_PROBE], env=env, capture_output=True, timeout=5, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"sleep/Event.wait/Queue.get hang under it ({type(exc).__name__})"
    if proc.returncode != 0:
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else f"the probe exited {proc.returncode}"
    try:
        shifted = float(proc.stdout.decode().strip()) - time.time()
    except ValueError:
        return "the probe printed no time"
    return "the clock did not move under it" if shifted < SHIFT_SECONDS / 2 else None


def plan_clock(
    interpreter: Interpreter, environ: Mapping[str, str], libraries: tuple[str, ...] = LIBFAKETIME
) -> ClockPlan:
    """time-machine in the test process; else libfaketime, once proved to keep timed waits."""
    if interpreter.has_time_machine:
        return ClockPlan(plugin_shift=SHIFT_SECONDS, method="time-machine")
    missing = f"time_machine is not importable by {interpreter.path} (pip install time-machine)"
    library = next((lib for lib in libraries if os.path.exists(lib)), None)
    if library is None:
        return ClockPlan(note=f"live clock not shifted: {missing}; libfaketime is not installed")
    reasons: list[str] = []
    for extra in FAKETIME_SETTINGS:
        preload = {"LD_PRELOAD": library, "FAKETIME": f"+{SHIFT_SECONDS}", **extra}
        why = faketime_fails(interpreter.path, preload, environ)
        if why is None:
            return ClockPlan(environ=preload, method="libfaketime")
        if why not in reasons:
            reasons.append(why)
    return ClockPlan(
        note=f"live clock not shifted: {missing}; libfaketime {library} fails timed waits: "
        + "; ".join(reasons)
    )


def describe_shift(seconds: float) -> str:
    days, rest = divmod(round(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    return f"{days} days {hours} h {rest // 60} min"


# --- what took effect ------------------------------------------------------------------------


@dataclass(frozen=True)
class HostB:
    """How one host B run is made to differ, decided before it starts."""

    tree: Path
    files_copied: int
    hostname: str
    namespaces: Namespaces
    clock: ClockPlan
    dropped: int
    tz: str | None = None
    umask: int | None = None
    tmpdir: str | None = None
    interpreter: str | None = None
    lang: str | None = None  # LANG and LC_ALL when lang is unpinned
    rng_seed: int | None = None  # the base seed when rng_seed is unpinned
    hash_seed: int | None = None  # PYTHONHASHSEED when hash_seed is unpinned
    test_order_seed: int | None = None  # the tests' shuffle (None: collection order, as A)
    file_order_seed: int | None = None  # directory listings' shuffle (None: as the OS lists)
    cpu_count: int | None = None  # the CPU count the tests see (None: the machine's, as A)
    # dimensions the manifest turned off (constraints.host_b_off) -> its reason
    off: Mapping[str, str] = field(default_factory=dict)


def prepare(
    root: Path,
    environ: Mapping[str, str],
    python: str,
    scratch: Path,
    spaces: Namespaces,
    pins: Pins,
    *,
    private_tmp: bool,
    exclude: tuple[Path, ...],
    modules: tuple[str, ...],
    revert: frozenset[str] = frozenset(),
    keep_env: tuple[str, ...] = (),
    off: Mapping[str, str] | None = None,
) -> tuple[dict[str, str], HostB]:
    """Host B's scrubbed environment and plan: tree copied under `scratch`, clock chosen.

    `revert` names perturbations left out, to tell which one a failure follows (REVERTIBLE);
    `keep_env` are caller variables passed through the scrub (to bisect the environment);
    `off` the dimensions the manifest turned off (core.variations.SWITCHABLE) with its reason.
    """
    off = dict(off or {})
    env = scrubbed_environ(environ, scratch / "home", python)
    env.update({name: environ[name] for name in keep_env if name in environ})
    if "env" in revert:
        env = {k: v for k, v in environ.items() if k not in _NEVER_PASSED}
    interpreter = inspect_interpreter(python, env)
    tree = scratch / "tree" / (root.name or "root")
    copied = copy_tree(root, tree, exclude=exclude) if "path" not in revert else 0
    if "path" in revert:
        tree = root
    for module in modules:
        if not (tree / module).is_file():
            raise GateError(
                f"{module}: git ignores it, so host B's copy of the tree lacks it; commit it or "
                "stop ignoring it"
            )
    tmpdir = None
    if not private_tmp:
        (scratch / "tmp").mkdir(exist_ok=True)
        tmpdir = str(scratch / "tmp")
    other = None if python == sys.executable else f"{python} (Python {interpreter.version})"
    hostb = HostB(
        tree=tree,
        files_copied=copied,
        hostname=new_hostname(),
        namespaces=spaces,
        clock=ClockPlan() if "clock" in revert else plan_clock(interpreter, env),
        dropped=sum(1 for name in environ if name not in env),
        tz=None if pins.tz or "env" in revert else unpinned_tz(environ),
        umask=None if pins.umask else unpinned_umask(current_umask()),
        tmpdir=tmpdir,
        interpreter=other,
        lang=None if pins.lang else unpinned_lang(environ),
        rng_seed=None if pins.rng_seed is not None else UNPINNED_RNG_SEED,
        hash_seed=None if pins.hash_seed is not None or "hash_seed" in revert
        else UNPINNED_HASH_SEED,
        test_order_seed=None if _held("test_order", revert, off)
        else derived_seed("test_order", _base_seed(pins)),
        file_order_seed=None if _held("file_order", revert, off)
        else derived_seed("file_order", _base_seed(pins)),
        cpu_count=None if _held("cpu_count", revert, off) else unpinned_cpu_count(real_cpu_count()),
        off=off,
    )  # fmt: skip
    return env, hostb


def _held(dimension: str, revert: frozenset[str], off: Mapping[str, str]) -> bool:
    """Whether host B keeps host A's behaviour in `dimension` this run."""
    return dimension in revert or dimension in off


def _base_seed(pins: Pins) -> int:
    """The base seed host B's tests are seeded from (rng_seed, pinned or host B's own)."""
    return pins.rng_seed if pins.rng_seed is not None else UNPINNED_RNG_SEED


def derived_seed(dimension: str, rng_seed: int) -> int:
    """A seed of its own per dimension, derived from the run's rng_seed: the same pins give the
    same order, and the tests' own seeds (test_seed) do not move with it."""
    return zlib.crc32(f"{dimension}:{rng_seed}".encode()) & 0xFFFFFFFF


def real_cpu_count() -> int | None:
    """The CPUs this process may run on (its affinity where the OS has one), as host A sees."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


def unpinned_cpu_count(real: int | None) -> int:
    """A CPU count other than the machine's."""
    return UNPINNED_CPU_COUNT[1] if real == UNPINNED_CPU_COUNT[0] else UNPINNED_CPU_COUNT[0]
