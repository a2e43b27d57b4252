"""One host run: the pinned environment, a fresh temp root, pytest in a subprocess, host.json.

`run_host` runs the manifest's property module with pytest under the pins and writes
`junit.xml`, `host.json` and `pytest.log` into the output directory. With `isolate` it is the
local host B (see `isolate`). The test process loads `plugin.py`, copied alone into a private
directory on PYTHONPATH, which reports what the process saw; `observed` turns that into
`pins_applied`, `pins_mismatch` and the fingerprint.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from entropy_action import __version__
from entropy_action.core import git
from entropy_action.core.errors import ExitCode, GateError
from entropy_action.core.hostinfo import (
    HOST_JSON,
    JUNIT_XML,
    Audit,
    ChannelInfo,
    HostInfo,
    outside_reason,
)
from entropy_action.evidence import hostreport
from entropy_action.hosts import channel, isolate, pinsseen, supervise, temproot
from entropy_action.manifest.pinfile import LoadedManifest, check_temp_root

PLUGIN_MODULE = "entropy_gate_plugin"
BOOT_MODULE = "entropy_gate_boot"  # the first `-p`: imports the run's plugins (write_boot)
CHILD_ENV = "ENTROPY_GATE_CHILD"  # childsite.CHILD_ENV
CHILDREN_FILE = "children.jsonl"
IMPORTS_FILE = "imports.json"
ASSERTION_HOOK = "enable_assertion_pass_hook"  # assertcount.ASSERTION_HOOK_INI
ASSERTCOUNT_MODULE = "entropy_gate_assertcount"  # assertcount.py, copied beside the plugin
AUDIT_MODULE = "entropy_gate_audit"  # audit.py, copied beside the plugin
AUDIT_ENV = "ENTROPY_GATE_AUDIT"  # audit.AUDIT_ENV
AUDIT_JSON = "audit.json"
GATE_HOST_ENV = "ENTROPY_GATE_HOST"  # seams.GATE_HOST_ENV: the user plugin is active under us
LOCK_ENV = "ENTROPY_GATE_LOCK"  # seams.LOCK_ENV: "1" locks the network in-process
NSINIT_FILE = "entropy_gate_nsinit.py"
NSINIT_RESULT = "nsinit.json"  # nsinit's exit status of pytest and what it killed
MARKER_ONLY = (
    "no PID namespace or cgroup here: left-over processes are found by an environment marker only"
)
PLUGIN_ENV = "ENTROPY_GATE_PLUGIN"  # plugin.CONFIG_ENV; the plugin may not import us
PYTEST_LOG = "pytest.log"
EVIDENCE_FILES = ("strength.json", "attribution.json")  # evidence.py, reports.EVIDENCE_FILES
DEFAULT_TIMEOUT = 1800.0
TESTPROC = Path(__file__).parent.parent / "testproc"  # the files copied into the test process
# Caller variables that would change which tests run on host A only: run options belong in
# run.pytest_args, where they are pinned and checked.
DROPPED_ON_A = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")
NSINIT_FAILED = 125
PYTEST_USAGE_ERROR = 4
CONFTEST_NOTE = "a conftest failed to import: recorded as an error in junit.xml (see pytest.log)"
_CONFTEST_FAILED = "ImportError while loading conftest"


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


def run_host(settings: RunSettings) -> HostInfo:
    """Run the property module on one host; write out/junit.xml, out/host.json, out/pytest.log."""
    started_iso, started = _utc_now(), time.time()
    out = settings.out.absolute()
    _prepare_out(out)
    python = resolve_python(settings.python)
    with tempfile.TemporaryDirectory(
        prefix=f"entropy-gate-{settings.host}-",
        dir=temproot.scratch_parent(settings.loaded.manifest.pins.temp_root),
        ignore_cleanup_errors=True,
    ) as tmp:
        scratch = Path(tmp)
        pipe = list(os.pipe())  # the channel; an end handed on becomes -1
        try:
            launch = _launch(settings, python, scratch, out, pipe)
            _say(settings, f"running pytest on {settings.loaded.manifest.module}")
            with temproot.claimed(launch.temp_root):
                returncode, stopped, heard = _execute(launch, settings, out / PYTEST_LOG)
        finally:
            for end in (end for end in pipe if end >= 0):
                os.close(end)
        untrusted = stopped or (f"was killed by {_signal(returncode)}" if returncode < 0 else None)
        if untrusted:
            (out / JUNIT_XML).unlink(missing_ok=True)
            launch.notes.append(f"pytest {untrusted}: its partial report was discarded")
        report = pinsseen.read_report(scratch / "report.json")
        if returncode == NSINIT_FAILED and report is None:
            raise GateError(f"host {settings.host}: {last_line(out / PYTEST_LOG)}")
        if returncode == PYTEST_USAGE_ERROR and record_conftest_failure(out):
            launch.notes.append(CONFTEST_NOTE)
        info = _host_info(settings, launch, python, report, returncode, (started_iso, started))
        info = _with_audit(info, settings, scratch / AUDIT_JSON)
        info = _with_channel(info, heard, out, settings.loaded.manifest.module)
    _write_host_json(out / HOST_JSON, info)
    _say(settings, f"pytest exited {returncode} ({time.time() - started:.1f} s)")
    if stopped:
        raise GateError(
            f"host {settings.host}: pytest {stopped} and was killed (see {out / PYTEST_LOG})"
        )
    return info


def timeout_of(settings: RunSettings) -> float:
    """--timeout, else run.timeout_seconds, else DEFAULT_TIMEOUT."""
    if settings.timeout is not None:
        return settings.timeout
    return float(settings.loaded.manifest.run.timeout_seconds or DEFAULT_TIMEOUT)


def _write_host_json(path: Path, info: HostInfo) -> None:
    try:
        path.write_text(info.model_dump_json(indent=2) + "\n", encoding="utf-8")
    except OSError as exc:  # a full disk, say
        raise GateError(f"{path}: cannot write the host report: {exc.strerror}") from None


def _signal(returncode: int) -> str:
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def outcome(info: HostInfo) -> tuple[ExitCode, str]:
    """The exit code of `run` for a finished host, and a one-line reason."""
    host = f"host {info.host}"
    if info.pins_mismatch:
        return ExitCode.INVALID, f"{host}: pins did not take: {'; '.join(info.pins_mismatch)}"
    if info.imported_outside:
        return ExitCode.INVALID, f"{host}: {outside_reason(info)}"
    code = info.returncode
    if code < 0:
        return ExitCode.INVALID, (
            f"{host}: pytest was killed by {_signal(code)}; the run did not finish and its "
            "report is not trusted"
        )
    if code == PYTEST_USAGE_ERROR and CONFTEST_NOTE in info.notes:
        return ExitCode.REJECTED, f"{host}: {CONFTEST_NOTE}"
    known = {
        0: (ExitCode.OK, "properties passed"),
        1: (ExitCode.REJECTED, "a property failed"),
        2: (ExitCode.REJECTED, "collection failed or the run was interrupted (see junit.xml)"),
        3: (ExitCode.REJECTED, "pytest stopped with an internal error (see pytest.log)"),
        4: (
            ExitCode.INVALID,
            "pytest usage error (see pytest.log); an option in addopts may need a plugin this "
            'interpreter lacks: set run.pytest_args, e.g. ["-o", "addopts="]',
        ),
        5: (ExitCode.REJECTED, "no tests were collected from the property module"),
    }
    status, words = known.get(code, (ExitCode.REJECTED, f"pytest exited {code}"))
    return status, f"{host}: {words}"


def resolve_python(python: str | None) -> str:
    if python is None:
        return sys.executable
    found = python if os.sep in python or "/" in python else shutil.which(python)
    if found is None or not os.path.isfile(found):
        raise GateError(f"--python {python}: no such interpreter")
    return os.path.abspath(found)  # not resolved: a venv's python is a symlink


def check_cassette(loaded: LoadedManifest, root: Path) -> Path | None:
    """The pinned cassette's path in `root`, after checking its bytes against the pin."""
    pins = loaded.manifest.pins
    if pins.cassette is None:
        return None
    where = f"{loaded.name}:{loaded.line_of('pins', 'cassette_sha256')}"
    path = root / pins.cassette
    try:
        actual = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise GateError(f"{where}: cassette {pins.cassette}: cannot read: {exc.strerror}") from None
    if actual != pins.cassette_sha256:
        raise GateError(
            f"{where}: cassette {pins.cassette} has sha256 {actual}, the pin says "
            f"{pins.cassette_sha256}: cassette changed — rotate it in a reviewed change "
            "(a new cassette_sha256)"
        )
    return path.absolute()


# --- preparing the launch ------------------------------------------------------------------


def _with_channel(info: HostInfo, heard: channel.Heard, out: Path, module: str) -> HostInfo:
    """outcomes.json, the gate's own record of what its plugin said, and host.json's note."""
    data = channel.record(heard, lambda nodeid: hostreport.junit_id(nodeid, module))
    channel.write(out / channel.OUTCOMES_JSON, data)
    complete = heard.begin is not None and heard.end is not None and not heard.truncated
    used = ChannelInfo(
        tests=len(data["tests"]),
        complete=complete,
        lines=heard.lines,
        malformed=heard.malformed,
        truncated=heard.truncated,
    )
    notes = list(info.notes)
    if heard.malformed:
        notes.append(f"the gate's channel: {heard.malformed} line(s) not the plugin's, ignored")
    if heard.truncated:
        notes.append("the gate's channel: more than its cap arrived; the rest was discarded")
    return info.model_copy(update={"channel": used, "notes": notes})


def _launch(
    settings: RunSettings, python: str, scratch: Path, out: Path, pipe: list[int]
) -> Launch:
    pins = settings.loaded.manifest.pins
    home = settings.environ.get("HOME")
    places = {"checkout": settings.root, **({"home directory": Path(home)} if home else {})}
    check_temp_root(settings.loaded, places)
    check_cassette(settings.loaded, settings.root)
    plugin_dir = _install_plugin(scratch)
    write_boot(plugin_dir, plugin_modules(audit=settings.audit, count=settings.count_assertions))
    spaces = isolate.namespaces(settings.namespaces)
    # Host A uses a namespace only to give a pinned temp_root its private stand-in, and only
    # as root: a user namespace would change the uid host A's tests see.
    # As root, host A also gets a PID namespace (no user namespace: the uid stays), so what
    # the tests leave running is found and killed by nsinit, not by an environment marker.
    root_a = spaces.as_root and (bool(pins.temp_root) or spaces.pid)
    unshare = spaces.usable and (settings.isolate or root_a)
    claim = temproot.plan(pins.temp_root, scratch / "tmp" if unshare else None)
    hostb, cwd, notes = None, settings.root.absolute(), _dropped_notes(settings)
    if settings.isolate:
        env, hostb = isolate.prepare(
            settings.root.absolute(),
            settings.environ,
            python,
            scratch,
            spaces,
            pins,
            private_tmp=claim is not None,
            exclude=(settings.out,),
            module=settings.loaded.manifest.module,
            revert=settings.revert,
            keep_env=settings.keep_env,
        )
        cwd, notes = hostb.tree, []
    else:
        dropped = (*DROPPED_ON_A, PLUGIN_ENV, AUDIT_ENV, GATE_HOST_ENV, LOCK_ENV)
        env = {k: v for k, v in settings.environ.items() if k not in dropped}
        drop_rewritten_pycs(settings.root.absolute(), settings.loaded.manifest.module)
        isolate.inspect_interpreter(python, env)
    cassette = str(cwd / pins.cassette) if pins.cassette else None
    expected = pinsseen.pinned_environ(pins, None if claim is None else str(claim.target), cassette)
    env.update({name: value for _, name, value in expected})
    env.update(_unpinned_b(hostb))
    old_path = env.get("PYTHONPATH") if hostb is None else None
    paths = [str(plugin_dir), *([old_path] if old_path else [])]
    if hostb is not None:
        paths.append(str(_install_childsite(scratch)))
        env[CHILD_ENV] = _child_config(plugin_dir, scratch, hostb, in_process=not unshare)
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env[PLUGIN_ENV] = str(_plugin_config(settings, scratch, hostb, unshare, expected, pipe[1]))
    marker = supervise.new_marker()
    env[supervise.MARKER_ENV] = marker
    env[GATE_HOST_ENV] = settings.host
    if hostb is not None and "network" not in settings.revert:
        env[LOCK_ENV] = "1"
    if settings.audit:
        env[AUDIT_ENV] = str(_audit_config(settings, scratch, cwd, claim, expected))
    pytest = _pytest_argv(settings, python, out)
    network = hostb is not None and "network" not in settings.revert
    pid = unshare and spaces.pid
    argv = (
        _unshare_argv(spaces, python, plugin_dir, claim, hostb, pytest, network, scratch)
        if unshare
        else pytest
    )
    if not pid:
        notes.append(MARKER_ONLY)
    umask = int(pins.umask, 8) if pins.umask else -1
    if hostb is not None and hostb.umask is not None:
        umask = hostb.umask
    launch = Launch(argv, pytest[3:], env, cwd, umask, expected, claim, hostb, notes, scratch)
    launch.marker, launch.channel, launch.pid_namespace = marker, pipe, pid
    return launch


def _dropped_notes(settings: RunSettings) -> list[str]:
    return [
        f"{name} from the caller's environment ignored: run options belong in run.pytest_args"
        for name in DROPPED_ON_A
        if settings.environ.get(name)
    ]


def _unpinned_b(hostb: isolate.HostB | None) -> dict[str, str]:
    """Host B's own values for what the manifest leaves unpinned."""
    env: dict[str, str] = {}
    if hostb is None:
        return env
    if hostb.tmpdir:
        env.update(dict.fromkeys(("TMPDIR", "TEMP", "TMP"), hostb.tmpdir))
    if hostb.tz:
        env["TZ"] = hostb.tz
    if hostb.lang:
        env.update(dict.fromkeys(("LANG", "LC_ALL"), hostb.lang))
    env.update(hostb.clock.environ)
    return env


def drop_rewritten_pycs(root: Path, module: str) -> None:
    """Remove pytest's cached rewrites of the property module and the conftests above it.

    A rewrite cached by a run without the assertion-pass hook (a developer's own pytest run
    in this checkout) is reused as it is, and its assertions would count as none executed.
    pytest rewrites them again (its documentation says to delete them when turning the hook
    on); host B's copy and the base's worktree hold no caches.
    """
    target = root / module
    found = [(target.parent, target.stem)]
    for folder in (target.parent, *target.parent.parents):
        if folder != root and root not in folder.parents:
            break
        found.append((folder, "conftest"))
    for folder, stem in found:
        for pyc in (folder / "__pycache__").glob(f"{stem}.*-pytest-*.pyc"):
            with contextlib.suppress(OSError):
                pyc.unlink()


def _install_plugin(scratch: Path) -> Path:
    """plugin.py, audit.py, assertcount.py and nsinit.py alone in a private directory: the
    gate's site stays out."""
    folder = scratch / "plugin"
    folder.mkdir()
    here = TESTPROC
    copy_module(here / "plugin.py", folder, PLUGIN_MODULE)
    copy_module(here / "audit.py", folder, AUDIT_MODULE)
    copy_module(here / "assertcount.py", folder, ASSERTCOUNT_MODULE)
    shutil.copyfile(here / "nsinit.py", folder / NSINIT_FILE)
    return folder


def copy_module(source: Path, folder: Path, name: str) -> None:
    """`source` as module `name` in `folder`, with the gate's own bytecode of it when there is
    one (an install compiles it): else the test process compiles the ~1,000 lines of the three
    modules again in every run (~35 ms). The copy keeps the source's mtime, which the
    bytecode's header records; bytecode that does not match is recompiled by Python as usual,
    and another interpreter (`--python`) looks for its own tag and does not find it."""
    target = folder / f"{name}.py"
    shutil.copy2(source, target)
    compiled = Path(importlib.util.cache_from_source(str(source)))
    if compiled.is_file():
        with contextlib.suppress(OSError):
            cached = Path(importlib.util.cache_from_source(str(target)))
            cached.parent.mkdir(exist_ok=True)
            shutil.copyfile(compiled, cached)


def plugin_modules(*, audit: bool, count: bool) -> list[str]:
    """The gate's plugins a run loads, in order: the plugin, the audit, the counting."""
    return [
        PLUGIN_MODULE,
        *([AUDIT_MODULE] if audit else []),
        *([ASSERTCOUNT_MODULE] if count else []),
    ]


def write_boot(folder: Path, modules: list[str]) -> None:
    """The module pytest loads first with `-p`: it imports the run's plugins as plain modules,
    from the gate's bytecode. pytest then registers each from its own `-p` (which also undoes
    a `-p no:NAME` in the project's addopts) and finds it imported: loaded by `-p` alone, pytest
    would rewrite their asserts, parsing and compiling their ~1,000 lines again in every run.
    Their docstrings say PYTEST_DONT_REWRITE, so pytest does not warn that they were imported
    before it could rewrite them."""
    imports = "".join(f"import {name}  # noqa: F401\n" for name in modules)
    text = f'"""The gate\'s plugins, imported first (runner.write_boot)."""\n\n{imports}'
    (folder / f"{BOOT_MODULE}.py").write_text(text, encoding="utf-8")


def _install_childsite(scratch: Path) -> Path:
    """childsite.py as sitecustomize.py in a directory of its own (children run it at start)."""
    folder = scratch / "childsite"
    folder.mkdir()
    shutil.copyfile(TESTPROC / "childsite.py", folder / "sitecustomize.py")
    return folder


def _child_config(
    plugin_dir: Path, scratch: Path, hostb: isolate.HostB, *, in_process: bool
) -> str:
    """What host B's Python children apply at start-up: the clock shift, the network block."""
    return json.dumps(
        {
            "plugin_dir": str(plugin_dir),
            "clock_shift_seconds": hostb.clock.plugin_shift,
            "block_network": in_process,
            "hostname": hostb.hostname if in_process else None,
            "children": str(scratch / CHILDREN_FILE),
        }
    )


def _audit_config(
    settings: RunSettings,
    scratch: Path,
    cwd: Path,
    claim: temproot.Claim | None,
    expected: list[tuple[str, str, str]],
) -> Path:
    """What the audit needs: the tree (code under test), the property module, the pins."""
    config = {
        "root": str(cwd),
        "module": settings.loaded.manifest.module,
        "pinned_env": sorted({name for _, name, _ in expected}),
        "temp_root": None if claim is None else str(claim.target),
        "out": str(scratch / AUDIT_JSON),
    }
    path = scratch / "audit-config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def _with_audit(info: HostInfo, settings: RunSettings, path: Path) -> HostInfo:
    """host.json with the audit's records; a report the test process spoiled is a note."""
    if not settings.audit:
        return info
    data = pinsseen.read_report(path)
    if data is None:
        note = "live-entropy audit: the test process wrote no usable report"
        return info.model_copy(update={"notes": [*info.notes, note]})
    try:
        return info.model_copy(update={"audit": Audit.model_validate(data)})
    except ValidationError as exc:
        where = ".".join(str(part) for part in exc.errors()[0]["loc"])[:80]
        note = f"live-entropy audit: report refused (field {where!r}: {exc.errors()[0]['msg']})"
        return info.model_copy(update={"notes": [*info.notes, note]})


def _plugin_config(
    settings: RunSettings,
    scratch: Path,
    hostb: isolate.HostB | None,
    unshare: bool,
    expected: list[tuple[str, str, str]],
    channel_fd: int,
) -> Path:
    in_process = hostb is not None and not unshare and "network" not in settings.revert
    config = {
        "channel_fd": channel_fd,
        "host": settings.host,
        "report": str(scratch / "report.json"),
        "env_names": sorted({name for _, name, _ in expected} | {"TZ", "LANG", "LC_ALL"}),
        "clock_shift_seconds": hostb.clock.plugin_shift if hostb else None,
        "block_network": in_process,
        "hostname": hostb.hostname if hostb and in_process else None,
        "check_loopback": hostb is not None,
        "rng_seed": rng_seed(settings.loaded.manifest.pins.rng_seed, hostb),
        "hypothesis_dir": str(scratch / "hypothesis"),
        "tree": str(hostb.tree if hostb else settings.root.absolute()),
        "original": str(settings.root.absolute()) if hostb else None,
        "checkout": str(settings.checkout.absolute()) if settings.checkout else None,
        "imports_report": str(scratch / IMPORTS_FILE),
    }
    path = scratch / "plugin.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def rng_seed(pinned: int | None, hostb: isolate.HostB | None) -> int:
    """The base seed the test process seeds random, numpy and hypothesis from."""
    if pinned is not None:
        return pinned
    return hostb.rng_seed if hostb and hostb.rng_seed is not None else isolate.HOST_A_RNG_SEED


def _pytest_argv(settings: RunSettings, python: str, out: Path) -> list[str]:
    """The gate's --junitxml comes last so it wins over one in the project's addopts.

    `--rootdir=.` (the tree root is the working directory) keeps test ids relative to the
    repository root even when the nearest pytest.ini sits deeper, so they match the scan's.
    assertcount.py, with the assertion-pass option on, counts the assertions each test
    executed (only where a rule compares them: the hosts' and the base's runs).
    """
    manifest = settings.loaded.manifest
    counting = ["-p", ASSERTCOUNT_MODULE, "-o", f"{ASSERTION_HOOK}=true"]
    return [
        python, "-m", "pytest", *(settings.select or [manifest.module]), *manifest.run.pytest_args,
        "-p", BOOT_MODULE, "-p", PLUGIN_MODULE, *(["-p", AUDIT_MODULE] if settings.audit else []),
        "-p", "no:cacheprovider", "-o", "junit_family=xunit1",
        *(counting if settings.count_assertions else []),
        "--rootdir=.", f"--junitxml={out / JUNIT_XML}",
    ]  # fmt: skip


def _unshare_argv(
    spaces: isolate.Namespaces,
    python: str,
    plugin_dir: Path,
    claim: temproot.Claim | None,
    hostb: isolate.HostB | None,
    pytest: list[str],
    network: bool,
    scratch: Path,
) -> list[str]:
    """unshare, then nsinit (lo up, hostname, private temp root), which runs pytest: as PID 1
    of a PID namespace where there is one (it reaps and kills what pytest leaves), else by
    exec."""
    bind = claim is not None and claim.private is not None
    spec = {
        "loopback": network,
        "hostname": hostb.hostname if hostb and network else None,
        "bind": [str(claim.private), str(claim.target)] if claim and bind else None,
        "result": str(scratch / NSINIT_RESULT) if spaces.pid else None,
    }
    nsinit = [python, "-I", "-S", str(plugin_dir / NSINIT_FILE), json.dumps(spec), "--"]
    return [*spaces.prefix(network=network), *nsinit, *pytest]


# --- running -------------------------------------------------------------------------------


def _execute(
    launch: Launch, settings: RunSettings, log_path: Path
) -> tuple[int, str | None, channel.Heard]:
    """Run pytest to the end, or kill its process group past the timeout or the temp root's
    cap; then kill what the tests left running, and take what the channel heard.
    (returncode, why it was killed or None, what the plugin said)."""
    pipe = launch.channel
    with open(log_path, "wb") as log:
        try:
            proc = subprocess.Popen(
                launch.argv,
                cwd=launch.cwd,
                env=launch.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                umask=launch.umask,
                pass_fds=(pipe[1],),
            )
        except OSError as exc:
            raise GateError(f"host {settings.host}: cannot start {launch.argv[0]}: {exc}") from None
        os.close(pipe[1])  # only the test process holds it now: EOF once it is gone
        pipe[1] = -1
        listener, pipe[0] = channel.Listener(pipe[0]), -1
        try:
            returncode, stopped = supervise.wait(proc, _limits(launch, settings))
        finally:
            if proc.poll() is None:
                supervise.kill_group(proc)
            left = supervise.reap(proc.pid, launch.marker)
    returncode, inside = _nsinit_result(launch, returncode)
    left = inside + left
    heard = listener.finish()
    if left:
        shown = ", ".join(left[:5]) + (f" and {len(left) - 5} more" if len(left) > 5 else "")
        launch.notes.append(
            f"{len(left)} process(es) the tests started outlived pytest and were killed: {shown}"
        )
    return returncode, stopped, heard


def _nsinit_result(launch: Launch, returncode: int) -> tuple[int, list[str]]:
    """pytest's own return code and the processes nsinit killed in the PID namespace (it
    cannot die of pytest's signal as PID 1, so it reports the code in its file)."""
    if not launch.pid_namespace:
        return returncode, []
    data = pinsseen.read_report(launch.scratch / NSINIT_RESULT) or {}
    code, left = data.get("returncode"), data.get("left")
    killed = [str(item)[:200] for item in left[:10_000]] if isinstance(left, list) else []
    if isinstance(code, int) and not isinstance(code, bool) and returncode >= 0:
        returncode = code
    return returncode, killed


def _limits(launch: Launch, settings: RunSettings) -> supervise.Limits:
    claim, cap = launch.temp_root, settings.loaded.manifest.run.temp_root_max_mb
    watched = None if claim is None else (claim.private or claim.target)
    cap_mb = cap or supervise.DEFAULT_TEMP_CAP_MB
    return supervise.Limits(timeout_of(settings), watched, cap_mb * 1024 * 1024, settings.cancel)


def record_conftest_failure(out: Path) -> bool:
    """A conftest that fails to import stops pytest (exit 4) before it writes JUnit XML: write
    one error case, so the host counts as failed like a module that fails at import."""
    log, junit = out / PYTEST_LOG, out / JUNIT_XML
    try:
        text = log.read_bytes()[-16384:].decode("utf-8", "replace")
    except OSError:
        return False
    start = text.find(_CONFTEST_FAILED)
    if start < 0 or junit.exists():
        return False
    first = text[start:].splitlines()[0]
    suite = ET.Element("testsuite", name="pytest", errors="1", failures="0", skipped="0", tests="1")
    case = ET.SubElement(suite, "testcase", classname="", name="conftest", time="0")
    ET.SubElement(case, "error", message=first).text = text[start:]
    root = ET.Element("testsuites")
    root.append(suite)
    ET.ElementTree(root).write(junit, encoding="utf-8", xml_declaration=True)
    return True


def last_line(path: Path, limit: int = 65536) -> str:
    """The last non-empty line of a log, for one-line messages."""
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, path.stat().st_size - limit))
            lines = handle.read().decode("utf-8", "replace").strip().splitlines()
    except OSError:
        return "no output"
    return lines[-1].strip() if lines else "no output"


def _host_info(
    settings: RunSettings,
    launch: Launch,
    python: str,
    report: dict[str, Any] | None,
    returncode: int,
    started: tuple[str, float],
) -> HostInfo:
    manifest = settings.loaded.manifest
    claim = launch.temp_root
    applied, mismatch = pinsseen.verify_pins(
        manifest.pins, launch.expected, report, None if claim is None else claim.target
    )
    if report is None and returncode not in (0, 1, 2, 5):
        mismatch = []  # pytest did not get far enough to report: `outcome` says why
    isolation: list[str] = []
    notes = list(launch.notes)
    if launch.hostb is not None:
        isolation, more = pinsseen.effects(launch.hostb, report, started[1])
        notes += more
        children = pinsseen.read_children(launch.scratch / CHILDREN_FILE)
        isolation += pinsseen.child_effects(launch.hostb, children, notes)
    temp_root = report.get("gettempdir") if report else None
    imports = pinsseen.read_imports(launch.scratch / IMPORTS_FILE)
    return HostInfo(
        host=settings.host,
        gate_version=__version__,
        property_id=manifest.property_id,
        module=manifest.module,
        manifest_sha256=settings.loaded.sha256,
        returncode=returncode,
        fingerprint=pinsseen.fingerprint(report, settings.environ, isolated=settings.isolate),
        pins_applied=applied,
        pins_mismatch=mismatch,
        started_at=started[0],
        finished_at=_utc_now(),
        isolated=settings.isolate,
        isolation=isolation,
        notes=notes,
        root=str(report["cwd"])
        if report and isinstance(report.get("cwd"), str)
        else str(launch.cwd),
        temp_root=str(temp_root) if temp_root else (str(claim.target) if claim else None),
        pytest_args=launch.pytest_args,
        python=python,
        distributions_sha256=_text(report, "distributions_sha256"),
        imported_from=imports.get("code", {}),
        imported_outside=imports.get("outside", []),
        imported_before_plugin=imports.get("early", []),
        rng_seed=report.get("rng_seed")
        if report and isinstance(report.get("rng_seed"), int)
        else None,
        commit=git.head_commit(settings.root),
    )


def _text(report: dict[str, Any] | None, key: str) -> str | None:
    value = report.get(key) if report else None
    return value if isinstance(value, str) and len(value) <= 128 else None


def _prepare_out(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
        # what an earlier run left here (its host steps' evidence included) is never read
        for name in (JUNIT_XML, HOST_JSON, PYTEST_LOG, channel.OUTCOMES_JSON, *EVIDENCE_FILES):
            (out / name).unlink(missing_ok=True)
    except OSError as exc:
        raise GateError(f"--out {out}: cannot write there: {exc.strerror}") from None


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def _say(settings: RunSettings, message: str) -> None:
    if settings.progress is not None:
        settings.progress(message)
