"""One host run: the pinned environment, a fresh temp root, pytest in a subprocess, host.json.

`run_host` runs the manifest's property module with pytest under the pins and writes
`junit.xml`, `host.json` and `pytest.log` into the output directory. With `isolate` it is the
local host B (see `isolate`). The test process loads the gate's plugin, copied with its
siblings into a private directory on PYTHONPATH (`testfiles`), which reports what the process
saw; `pinsseen` turns that into `pins_applied`, `pins_mismatch` and the fingerprint, and
`hostjson` writes it all down.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from entropy_action.core.errors import GateError
from entropy_action.core.hostinfo import HostInfo
from entropy_action.core.layout import CRASH_LOG, HOST_JSON, JUNIT_XML, PYTEST_LOG
from entropy_action.core.signals import signal_name
from entropy_action.evidence.hostreport import PYTEST_USAGE_ERROR
from entropy_action.hosts import (
    channel,
    crashlog,
    environments,
    isolate,
    pinsseen,
    replayplan,
    supervise,
    temproot,
)
from entropy_action.hosts.hostjson import (
    CONFTEST_NOTE,
    host_info,
    last_line,
    prepare_out,
    record_conftest_failure,
    utc_now,
    with_audit,
    with_channel,
    with_hooks,
    with_provenance,
    with_test_data,
    write_host_json,
)
from entropy_action.hosts.runsettings import Launch, RunSettings, timeout_of
from entropy_action.hosts.testfiles import (
    NSINIT_FILE,
    drop_rewritten_pycs,
    install_childsite,
    install_plugin,
    plugin_modules,
    write_boot,
)
from entropy_action.manifest.pinfile import LoadedManifest, check_temp_root
from entropy_action.testproc.protocol import (
    ASSERTCOUNT_MODULE,
    ASSERTION_HOOK_INI,
    AUDIT_CONFIG_FILE,
    AUDIT_ENV,
    AUDIT_JSON,
    AUDIT_MODULE,
    BLOCKED_PLUGINS,
    BOOT_MODULE,
    CHANNEL_FD_FIELD,
    CHILD_ENV,
    CHILDREN_FILE,
    DATA_FILE,
    GATE_ENV,
    GATE_HOST_ENV,
    HOOKS_FILE,
    HYPOTHESIS_DIR,
    IMPORTS_FILE,
    LANG_ENV,
    LOCK_ENV,
    MARKER_ENV,
    NSINIT_RESULT,
    PATH_ENV,
    PLUGIN_CONFIG_FILE,
    PLUGIN_ENV,
    PLUGIN_FOLDER,
    PLUGIN_MODULE,
    PROVENANCE_FILE,
    PYTEST_CONFIG_ENV,
    REPORT_FILE,
    TEMP_ENV,
    TZ_ENV,
)

MARKER_ONLY = (
    "no PID namespace or cgroup here: left-over processes are found by an environment marker only"
)
# Caller variables that would change which tests run on host A only: run options belong in
# run.pytest_args, where they are pinned and checked.
DROPPED_ON_A = PYTEST_CONFIG_ENV  # host B never gets them either (isolate.py)
NSINIT_FAILED = 125
# A session over several properties' modules: a collection error in one module must not stop
# the others' tests, which run as they would alone (hosts.split gives it to its property).
SHARED_SESSION_ARGS = ("--continue-on-collection-errors",)


def run_host(settings: RunSettings) -> HostInfo:
    """Run the property module on one host; write out/junit.xml, out/host.json, out/pytest.log."""
    started_iso, started = utc_now(), time.time()
    out = settings.out.absolute()
    prepare_out(out)
    _require_modules(settings)
    python = resolve_python(settings.python)
    with temproot.scratch(
        f"entropy-gate-{settings.host}-",
        temproot.scratch_parent(settings.loaded.manifest.pins.temp_root),
    ) as scratch:
        pipe = list(os.pipe())  # the channel; an end handed on becomes -1
        try:
            launch = _launch(settings, python, scratch, out, pipe)
            _say(settings, f"running pytest on {', '.join(settings.property_modules)}")
            with temproot.claimed(launch.temp_root):
                returncode, stopped, heard = _execute(launch, settings, out / PYTEST_LOG)
        finally:
            for end in (end for end in pipe if end >= 0):
                os.close(end)
        untrusted = stopped or (
            f"was killed by {signal_name(returncode)}" if returncode < 0 else None
        )
        if untrusted:
            (out / JUNIT_XML).unlink(missing_ok=True)
            launch.notes.append(f"pytest {untrusted}: its partial report was discarded")
        report = pinsseen.read_report(scratch / REPORT_FILE)
        if returncode == NSINIT_FAILED and report is None:
            raise GateError(f"host {settings.host}: {last_line(out / PYTEST_LOG)}")
        if returncode == PYTEST_USAGE_ERROR and record_conftest_failure(out):
            launch.notes.append(CONFTEST_NOTE)
        info = host_info(settings, launch, python, report, returncode, (started_iso, started))
        info = with_audit(info, settings, scratch / AUDIT_JSON)
        info = with_provenance(info, scratch / PROVENANCE_FILE)
        info = with_hooks(info, scratch / HOOKS_FILE)
        info = with_test_data(info, scratch / DATA_FILE)
        info = with_channel(info, heard, out, settings.loaded.manifest.module)
        if not stopped:  # a signal from elsewhere than the gate's own timeout or cap
            crash = crashlog.keep(
                scratch / CRASH_LOG, out, returncode, launch.cwd, scratch / PLUGIN_FOLDER
            )
            info = info.model_copy(update={"crash": crash}) if crash else info
    write_host_json(out / HOST_JSON, info)
    _say(settings, f"pytest exited {returncode} ({time.time() - started:.1f} s)")
    if stopped:
        raise GateError(
            f"host {settings.host}: pytest {stopped} and was killed (see {out / PYTEST_LOG})"
        )
    return info


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


def _require_modules(settings: RunSettings) -> None:
    """Each property module is in the tree this host runs, before anything is prepared: a
    patch that moved it away is said so, not left to pytest's usage error or host B's copy."""
    for module in settings.property_modules:
        if not (settings.root / module).is_file():
            raise GateError(
                f"{module}: the property module is not in the tree this host runs: a patch "
                "that moves or removes it names the new path in the manifest (a reviewed change)"
            )


def _launch(
    settings: RunSettings, python: str, scratch: Path, out: Path, pipe: list[int]
) -> Launch:
    pins = settings.loaded.manifest.pins
    home = settings.environ.get("HOME")
    places = {"checkout": settings.root, **({"home directory": Path(home)} if home else {})}
    check_temp_root(settings.loaded, places)
    check_cassette(settings.loaded, settings.root)
    plugin_dir = install_plugin(scratch)
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
        env, hostb = _prepare_b(settings, python, scratch, spaces, private_tmp=claim is not None)
        cwd, notes = hostb.tree, []
    else:
        dropped = {*DROPPED_ON_A, *GATE_ENV}  # the gate's own are the gate's to set
        env = {k: v for k, v in settings.environ.items() if k not in dropped}
        for module in settings.property_modules:
            drop_rewritten_pycs(settings.root.absolute(), module)
        isolate.inspect_interpreter(python, env)
    cassette = str(cwd / pins.cassette) if pins.cassette else None
    target = None if claim is None else str(claim.target)
    expected = pinsseen.pinned_environ(pins, target, cassette, hostb.hash_seed if hostb else None)
    pinsseen.set_pinned(env, expected)
    env.update(_unpinned_b(hostb))
    old_path = env.get(PATH_ENV) if hostb is None else None
    paths = [str(plugin_dir), *([old_path] if old_path else [])]
    if hostb is not None:
        paths.append(str(install_childsite(scratch)))
        env[CHILD_ENV] = _child_config(plugin_dir, scratch, hostb, in_process=not unshare)
    env[PATH_ENV] = os.pathsep.join(paths)
    env[PLUGIN_ENV] = str(_plugin_config(settings, scratch, hostb, unshare, expected, pipe[1]))
    marker = supervise.new_marker()
    env[MARKER_ENV] = marker
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


def _prepare_b(
    settings: RunSettings,
    python: str,
    scratch: Path,
    spaces: isolate.Namespaces,
    *,
    private_tmp: bool,
) -> tuple[dict[str, str], isolate.HostB]:
    """Host B's environment and plan (isolate.prepare); a replay's with the reported host B's
    own values for the unpinned sources (hosts.replayplan)."""
    env, hostb = isolate.prepare(
        settings.root.absolute(),
        settings.environ,
        python,
        scratch,
        spaces,
        settings.loaded.manifest.pins,
        private_tmp=private_tmp,
        exclude=(settings.out, *settings.exclude),
        modules=settings.property_modules,
        revert=settings.revert,
        keep_env=settings.keep_env,
        off=settings.loaded.manifest.constraints.host_b_off,
    )
    if settings.replay is not None:
        hostb = replayplan.apply(hostb, settings.replay, settings.loaded.manifest.pins)
    return env, hostb


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
        env.update(dict.fromkeys(TEMP_ENV, hostb.tmpdir))
    if hostb.tz:
        env["TZ"] = hostb.tz
    if hostb.lang:
        env.update(dict.fromkeys(("LANG", "LC_ALL"), hostb.lang))
    env.update(hostb.clock.environ)
    return env


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
            "file_order_seed": hostb.file_order_seed,
            "cpu_count": hostb.cpu_count,
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
        "modules": list(settings.property_modules),
        "pinned_env": sorted({name for _, name, _ in expected}),
        "temp_root": None if claim is None else str(claim.target),
        "out": str(scratch / AUDIT_JSON),
    }
    path = scratch / AUDIT_CONFIG_FILE
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def _plugin_config(
    settings: RunSettings,
    scratch: Path,
    hostb: isolate.HostB | None,
    unshare: bool,
    expected: list[tuple[str, str, str]],
    channel_fd: int,
) -> Path:
    in_process = hostb is not None and not unshare and "network" not in settings.revert
    root = settings.root.absolute()
    config = {
        CHANNEL_FD_FIELD: channel_fd,
        "host": settings.host,
        "report": str(scratch / REPORT_FILE),
        "env_names": sorted({name for _, name, _ in expected} | {TZ_ENV, *LANG_ENV}),
        "clock_shift_seconds": hostb.clock.plugin_shift if hostb else None,
        "block_network": in_process,
        "hostname": hostb.hostname if hostb and in_process else None,
        "check_loopback": hostb is not None,
        "rng_seed": rng_seed(settings.loaded.manifest.pins.rng_seed, hostb),
        "hypothesis_dir": str(scratch / HYPOTHESIS_DIR),
        "tree": str(hostb.tree if hostb else settings.root.absolute()),
        "original": str(settings.root.absolute()) if hostb else None,
        "checkouts": [str(path) for path in environments.checkouts(root, settings.checkout)],
        "environments": _environments(settings),
        "imports_report": str(scratch / IMPORTS_FILE),
        "module": settings.loaded.manifest.module,
        "modules": list(settings.property_modules),
        "provenance_report": str(scratch / PROVENANCE_FILE),
        "hooks_report": str(scratch / HOOKS_FILE),
        # host A records the data files its tests open (scan.closure: the property's test side)
        "data_report": str(scratch / DATA_FILE) if settings.host == "a" else None,
        "test_order_seed": hostb.test_order_seed if hostb else None,  # testproc.order
        "order": list(settings.order) or None,
        "file_order_seed": hostb.file_order_seed if hostb else None,
        "cpu_count": hostb.cpu_count if hostb else None,
        "crash_log": str(scratch / CRASH_LOG),  # faulthandler's file (hosts.crashlog)
    }
    path = scratch / PLUGIN_CONFIG_FILE
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def _environments(settings: RunSettings) -> list[str]:
    """The environments inside the trees whose code host B must not import (plugin.json)."""
    trees = [settings.root, *([settings.checkout] if settings.checkout else [])]
    return [str(path) for tree in trees for path in environments.environments(tree)]


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
    counting = ["-p", ASSERTCOUNT_MODULE, "-o", f"{ASSERTION_HOOK_INI}=true"]
    return [
        python, "-m", "pytest", *(settings.select or settings.property_modules),
        *manifest.run.pytest_args, *(SHARED_SESSION_ARGS if len(settings.modules) > 1 else []),
        "-p", BOOT_MODULE, "-p", PLUGIN_MODULE, *(["-p", AUDIT_MODULE] if settings.audit else []),
        "-p", "no:cacheprovider", *BLOCKED_PLUGINS, "-o", "junit_family=xunit1",
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
    options = ["--loopback"] if network else []
    if hostb and network:
        options += ["--hostname", hostb.hostname]
    if claim is not None and claim.private is not None:
        options += ["--bind", str(claim.private), str(claim.target)]
    if not spaces.as_root:  # the tests get the caller's uid back (nsinit.become)
        options += ["--as", str(os.getuid()), str(os.getgid())]
    if spaces.pid:
        options += ["--result", str(scratch / NSINIT_RESULT)]
    nsinit = [python, "-I", "-S", str(plugin_dir / NSINIT_FILE), *options, "--"]
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
        listener, pipe[0] = channel.Listener(pipe[0], _tests_done(settings)), -1
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


def _tests_done(settings: RunSettings) -> Callable[[int], None] | None:
    """A progress line with the tests heard so far (hosts.channel: every few seconds)."""
    if not settings.test_progress or settings.progress is None:
        return None
    say = settings.progress
    return lambda count: say(f"{count} test(s) done")


def _say(settings: RunSettings, message: str) -> None:
    if settings.progress is not None:
        settings.progress(message)
