"""The whole gate in one process: pin check, silencing scan, host A, isolated host B, compare.

The base ref's property module also runs once on host A (in a temporary git worktree)
so that a test that does not execute at the head counts against the patch only when
it executed at the base.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from entropy_action import scan
from entropy_action.core import git, layout, treestate
from entropy_action.core.errors import ExitCode, GateError
from entropy_action.evidence import hostreport, stepfiles
from entropy_action.gate import attribution, baserun, grouped, hoststeps, judge, probes
from entropy_action.hosts import environments, hostjson, launch, runsettings
from entropy_action.manifest import baseline
from entropy_action.manifest.pinfile import LoadedManifest
from entropy_action.scan.changed import changed_tests
from entropy_action.strength import base_on_head
from entropy_action.verdict import basepolicy, pairing
from entropy_action.verdict.model import FAILING, Verdict

HEARTBEAT_SECONDS = 10.0


@dataclass(frozen=True)
class GateSettings:
    """Everything `gate` needs, parsed once by the CLI (or built by the demo)."""

    manifest: Path
    base_ref: str
    environ: Mapping[str, str]
    out: Path | None = None  # where the host reports go; default: a temporary directory
    python: str | None = None  # host B's interpreter
    python_a: str | None = None  # host A's interpreter (default: this one)
    base_run: bool = True  # run the base's module once to attribute non-executed tests
    namespaces: bool = True  # False: keep every run out of Linux namespaces
    timeout: float | None = None  # seconds per host run; None: the manifest's, else the default
    progress: Callable[[str], None] = field(default=lambda line: None)
    cache_dir: Path | None = None  # the base evidence cache (None: no cache)
    properties: tuple[str, ...] = ()  # only these properties (--property); default: every one


@dataclass(frozen=True)
class GateResult:
    verdict: Verdict
    check: baseline.PinCheck
    out: Path
    notes: tuple[str, ...] = ()


def run_gate(settings: GateSettings) -> GateResult:
    """Judge the working tree against `settings.base_ref`: the same host steps as the
    workflow's host jobs (hoststeps.py), then the one judging pipeline (judge.py). A
    manifest that lists its properties is gated property by property (each into
    OUT/properties/ID, as the workflow's host folders hold them) and rolled up."""
    with git.memo():  # each property asks git the same questions: one answer each
        return _run_gate(settings)


def _run_gate(settings: GateSettings) -> GateResult:
    repo = baseline.check_all(settings.manifest, settings.base_ref, None)
    repo = repo.only(settings.properties)
    out = settings.out or Path(tempfile.mkdtemp(prefix="entropy-gate-"))
    out.mkdir(parents=True, exist_ok=True)
    if not repo.many:
        verdict, alone = _gate_one(settings, repo.checks[0], out)
        return GateResult(verdict, repo.checks[0], out, alone)
    dossiers: list[judge.PropertyDossier] = []
    notes: list[str] = []
    total = len(repo.checks)
    labels = {
        id(check): _label(check, number, total) for number, check in enumerate(repo.checks, 1)
    }
    scans: dict[int, scan.ScanResult] = {}

    def scan_all() -> None:  # while host B's first session runs in its copy (`_execute`)
        with treestate.settled(repo.checks[0].root):  # host A has not started: read once
            for check in repo.checks:
                if check.head is not None:
                    _labelled(settings.progress, labels[id(check)])(SCANNING)
                    scans[id(check)] = scan.scan(check)

    ran = _run_groups(settings, repo.checks, out, scan_all)
    with treestate.settled(repo.checks[0].root):  # every run in the checkout has ended
        for check in repo.checks:
            named = check.head or check.base
            pid = named.property_id if named is not None else "?"
            label = labels[id(check)]
            one = dataclasses.replace(settings, progress=_labelled(settings.progress, label))
            folder = layout.property_folder(out, pid)
            folder.mkdir(parents=True, exist_ok=True)
            dossier, more, judged = _evidence(
                one, check, folder, ran.get(pid), scans.get(id(check))
            )
            notes += [f"property {pid}: {note}" for note in more]
            module = named.manifest.module if named is not None else None  # the base's, if unread
            dossiers.append(judge.PropertyDossier(pid, module, dossier, judged))
            settings.progress(f"{label}: judged")
    verdict = judge.judge_all(dossiers, repo.dropped, many=True)
    return GateResult(verdict, repo.checks[0], out, tuple(dict.fromkeys((*repo.notes, *notes))))


def _label(check: baseline.PinCheck, number: int, total: int) -> str:
    named = check.head or check.base
    return f"property {named.property_id if named is not None else '?'} ({number}/{total})"


def _run_groups(
    settings: GateSettings,
    checks: Sequence[baseline.PinCheck],
    out: Path,
    between: Callable[[], None],
) -> dict[str, grouped.HostsRan]:
    """Both hosts' runs of every head property: one session per group (gate.grouped); host
    B's first session starts before `between` (the scans), the rest after it (`_execute`)."""
    by_id = {check.head.property_id: check for check in checks if check.head is not None}
    views = [check.head for check in checks if check.head is not None]

    def host(views: Sequence[LoadedManifest], host: str, folder: Path) -> runsettings.RunSettings:
        made = _host(settings, by_id[views[0].property_id], folder.parent, host)
        shown = f"host {host.upper()} ({grouped.label(views)})"
        return dataclasses.replace(
            made, test_progress=True, progress=_labelled(settings.progress, shown)
        )

    based = [check for check in checks if check.head is not None]
    want_base = settings.base_run and all(
        check.base is not None and check.base_commit is not None for check in based
    )
    base_a = None
    if want_base and based and not _docs_only(based[0]):  # docs only: the base run may wait

        def base_a() -> list[str | None]:
            folders = [layout.property_folder(out, view.property_id) for view in views]
            return baserun.run_many(_base(settings), based, folders, "a")

    def execute(jobs: Mapping[str, Callable[[], object]]) -> dict[str, str]:
        first_b = next((name for name in jobs if name.startswith("host B")), None)
        early = (first_b,) if first_b is not None else ()
        return _execute(jobs, settings.progress, early, between)

    return grouped.run_groups(views, out, host, execute, base_a)


def _gate_one(
    settings: GateSettings, check: baseline.PinCheck, out: Path
) -> tuple[Verdict, tuple[str, ...]]:
    """One property's verdict and notes."""
    dossier, notes, judged = _evidence(settings, check, out)
    return judged or judge.judge(dossier), notes


def _evidence(
    settings: GateSettings,
    check: baseline.PinCheck,
    out: Path,
    ran: grouped.HostsRan | None = None,
    scanned: scan.ScanResult | None = None,
) -> tuple[judge.Dossier, tuple[str, ...], Verdict | None]:
    """One property's host runs and host steps into `out`, as the dossier the judge reads
    (with host B's attribution re-runs beside it when the verdict calls for them), its
    notes, and the judge's verdict on it when no re-run came after (None: judge again).
    The scan reads the checkout before host A's tests run in it, as the workflow's check
    job reads the PR's commit: `scanned`, made beside the group sessions, or here while host
    B starts in its copy of the tree."""
    if check.head is None:
        return judge.Dossier(out / "host-a", out / "host-b", check=check), check.notes, None
    made: list[scan.ScanResult] = [scanned] if scanned is not None else []

    def scan_it() -> None:
        if not made:
            settings.progress(SCANNING)
            with treestate.settled(check.root):  # before host A starts in the checkout
                made.append(scan.scan(check))

    runs = _run_hosts(settings, check, out, ran, scan_it)
    with treestate.settled(check.root):  # what runs from here runs outside the checkout
        return _judged_evidence(settings, check, out, runs, made[0])


def _judged_evidence(
    settings: GateSettings,
    check: baseline.PinCheck,
    out: Path,
    runs: Runs,
    scanned: scan.ScanResult,
) -> tuple[judge.Dossier, tuple[str, ...], Verdict | None]:
    """`_evidence` after the hosts ran: the steps that follow them, and the judge."""
    assert check.head is not None
    _strength(settings, check, scanned, out, runs)
    probed = _probe(settings, check, out, runs)
    runs = _base_b_after_probes(settings, check, out, runs, probed)
    if probed is not None and runs.base_b is not None:  # a failing probe, in the base's tree
        hoststeps.base_probe_step(_base(settings), check, out / "host-b", runs.base_b)
    runs = _strength_b(settings, check, scanned, out, runs)
    dossier = judge.Dossier(
        runs.host_a or out / "host-a",
        runs.host_b or out / "host-b",
        check=check,
        scanned=scanned,
        base_a=runs.base_a,
        base_b=runs.base_b,
        invalid=runs.errors,
        require_base=True,
        strength_off=None if settings.base_run else "strength check not run (--no-base-run)",
        exclude=(out, *environments.environments(check.root)),
    )
    verdict: Verdict | None = judge.judge(dossier)
    assert verdict is not None
    if _attribute(settings, check, out, verdict):
        verdict = None  # the same evidence, with host B's re-runs beside it: judge again
    return dossier, (*check.notes, *scanned.notes, *runs.notes), verdict


def _attribute(
    settings: GateSettings, check: baseline.PinCheck, out: Path, verdict: Verdict
) -> bool:
    """For an env_coupled outcome, host B's attribution re-runs (the step host B's job runs
    over the tests it failed) over the tests the hosts judged differently; whether it ran."""
    want = attribution.disagreeing(verdict)
    folder = out / "host-b"
    if not attribution.attributable(verdict) or not want or check.head is None:
        return False
    if judge.attribution_covers(verdict, folder):
        return False
    settings.progress("attributing: re-running the disagreeing tests on host B…")
    found = hoststeps.attribution_step(
        _host(settings, check, out, "b"),
        settings.environ,
        list(check.head.manifest.pins.env or {}),
        attribution.dimensions(settings.python),
        want=want,
    )
    return found is not None


def _probe(
    settings: GateSettings, check: baseline.PinCheck, out: Path, runs: Runs
) -> stepfiles.ProbeReport | None:
    """Host B's order probes (hoststeps.probe_step, as `run --host b --base-ref` runs them in
    the workflow) when host B ran and the patch added or changed tests of the property."""
    if check.head is None or runs.errors or not (out / "host-b").is_dir():
        return None
    changed = changed_tests(check)
    if not changed:
        return None
    return hoststeps.probe_step(
        _host(settings, check, out, "b"),
        settings.environ,
        list(check.head.manifest.pins.env or {}),
        attribution.dimensions(settings.python),
        changed,
    )


def _base_b_after_probes(
    settings: GateSettings,
    check: baseline.PinCheck,
    out: Path,
    runs: Runs,
    found: stepfiles.ProbeReport | None,
) -> Runs:
    """An order probe failed a test host B's own run passed: host B has failed a test (the
    judge folds the probe into its report), so the base runs on host B as beside any failure
    there. The workflow's host B job ran it beside its passing head, and the judge reads it
    now (basepolicy.host_b_base_counts): without this run the gate judged less evidence."""
    if found is None or runs.base_b is not None or runs.base_a is None:
        return runs
    if not any(o in probes.FAILED for probe in found.probes for o in probe.outcomes.values()):
        return runs
    settings.progress("base run on host B needed: an order probe failed a test")
    return _with_base_b(settings, check, out, runs, "; host B's failures are not told pre-existing")


def _with_base_b(
    settings: GateSettings, check: baseline.PinCheck, out: Path, runs: Runs, failed: str = ""
) -> Runs:
    """`runs` with host B's base run made now (the workflow's host B job makes it beside its
    head); a note saying why when it could not run (`failed` added to it)."""
    more = _execute(
        {"base run on host B": lambda: baserun.run(_base(settings), check, out, "b")},
        settings.progress,
    )
    notes = tuple(f"{name} failed ({why}){failed}" for name, why in more.items())
    base_b = None if more else baserun.folder(out, "b")
    return dataclasses.replace(runs, base_b=base_b, notes=(*runs.notes, *notes))


def _strength_b(
    settings: GateSettings,
    check: baseline.PinCheck,
    scanned: scan.ScanResult,
    out: Path,
    runs: Runs,
) -> Runs:
    """Host B's strength step (as `run --host b --base-ref` runs it in the workflow) where
    host B passed and the patch changed the property's test side, after host B's base run,
    which the workflow's host B job made beside its head: it tells a failure there
    pre-existing. Off with `--no-base-run`."""
    if not settings.base_run or check.base is None or check.base_commit is None or runs.errors:
        return runs
    report = runs.host_b or _read_or_none(out / "host-b")
    if report is None or report.outcome != "pass" or report.info.pins_mismatch:
        return runs
    if not judge.strength_needed(check, report.info):
        return runs
    if runs.base_b is None and runs.base_a is not None:
        runs = _with_base_b(settings, check, out, runs)
    host = base_on_head.HostSettings(
        settings.environ,
        settings.namespaces,
        _labelled(settings.progress, "strength on host B"),
        settings.python,
        settings.cache_dir,
        host="b",
    )
    hoststeps.strength_b_step(
        check, host, report.dir, runs.base_b, scanned, work=out / "strength-b"
    )
    return runs


def _strength(
    settings: GateSettings,
    check: baseline.PinCheck,
    scanned: scan.ScanResult,
    out: Path,
    runs: Runs,
) -> None:
    """Host A's strength step (as `run --host a --base-ref` runs it in the workflow), after
    the hosts ran: strength.json beside host A's report; off with `--no-base-run`."""
    if not settings.base_run or check.base is None or check.base_commit is None:
        return
    report = runs.host_a or _read_or_none(out / "host-a")
    if report is None or report.info.pins_mismatch:
        return  # host A is unusable (or ran outside the pins): strength would not count
    host = base_on_head.HostSettings(
        settings.environ,
        settings.namespaces,
        _labelled(settings.progress, "strength"),
        settings.python_a,
        settings.cache_dir,
    )
    hoststeps.strength_step(check, host, report.dir, report.info, scanned, work=out)


@dataclass(frozen=True)
class Runs:
    """What the host runs left for the comparison."""

    errors: tuple[str, ...]  # a host that could not run, in words (the verdict is invalid)
    base_cases: dict[str, str] | None  # case id -> outcome in the base's run on host A
    base_a: Path | hostreport.HostReport | None  # the base's reports on host A and (when host B
    base_b: Path | None  # failed, or the head dropped a read the base made) on host B
    notes: tuple[str, ...]
    host_b: hostreport.HostReport | None = None  # host B's report, when already read
    host_a: hostreport.HostReport | None = None  # host A's, likewise


SCANNING = "scanning the property module for silenced entropy…"
SKIPPED_INVALID = (
    "a host run did not run under the pins or could not run, so no base is judged beside it"
)


def _run_hosts(
    settings: GateSettings,
    check: baseline.PinCheck,
    out: Path,
    ran: grouped.HostsRan | None = None,
    between: Callable[[], None] = lambda: None,
) -> Runs:
    """Host A, host B and the base's module on host A, concurrently when there are cores;
    then, only when host B failed a test, the base's module on host B too. Host B starts
    first, in its copy of the tree, and `between` (the scan, which reads the checkout) runs
    before host A's tests start there.

    On a docs-only patch the base run on host A waits for the hosts and is skipped when they
    passed cleanly, since nothing could then read it (`verdict.basepolicy`).

    It runs too when host B passed but the base's audit on host A saw a production read the
    head no longer makes (`basepolicy.removed_read`): host B's base run then tells whether the
    patch turned a test the base failed there into a pass (`live_read_removed`).

    That second base run never changes a host's outcome (head outcomes decide); it marks
    host B's failures `failed_at_base`. It is kept because it costs nothing on a patch that
    passes (it runs only once host B has already failed, so the verdict is a rejection either
    way), and because it is the one way to tell a reviewer that host B's failure on, say, a
    docs-only patch is an old coupling of the base, not something the patch brought.

    A host run that is invalid makes the verdict invalid whatever the base says: the base run
    is then not started, or killed if it is running (`invalid`)."""
    host_notes: list[str] = []
    invalid = threading.Event()  # set by a host run that is invalid
    read: dict[str, hostreport.HostReport | None] = {}  # each host's report, read by its own job
    jobs: dict[str, Callable[[], object]] = {
        "host A": lambda: _run_host(_host(settings, check, out, "a"), host_notes, invalid, read),
        "host B": lambda: _run_host(_host(settings, check, out, "b"), host_notes, invalid, read),
    }
    if ran is not None:  # the hosts ran already, in the property's group sessions
        jobs.clear()
        host_notes += ran.notes
        read.update(ran.read)
        if ran.invalid:
            invalid.set()
    want_base = settings.base_run and check.base is not None and check.base_commit is not None
    deferred = want_base and _docs_only(check)
    if want_base and not deferred and not (ran and ran.based):
        jobs["base run"] = lambda: baserun.run(_base(settings), check, out, "a", invalid)
    early = ("host B",) if "host B" in jobs else ()
    failures = {
        **(ran.failures if ran else {}),
        **_execute(jobs, settings.progress, early, between),
    }
    if ran is not None and ran.based and ran.base_error is not None:
        failures["base run"] = ran.base_error
    errors = tuple(f"{name}: {failures[name]}" for name in ("host A", "host B") if name in failures)
    notes = tuple(sorted(host_notes))
    if not want_base:
        return Runs(errors, None, None, None, notes)
    crashed: list[baserun.Host] = [h for h in ("a", "b") if _died(out / f"host-{h}")]
    if crashed:  # the base on each such host tells the patch from the environment
        return _crash_bases(settings, check, out, crashed, Runs(errors, None, None, None, notes))
    if invalid.is_set():  # a note, not a progress line too (it would be printed twice)
        return Runs(errors, None, None, None, (*notes, f"base run skipped: {SKIPPED_INVALID}"))
    host_a, host_b = (read[h] if h in read else _read_or_none(out / f"host-{h}") for h in "ab")
    if deferred:
        why = basepolicy.settled(host_a, host_b)
        if why is None and not errors:
            settings.progress("base run skipped: a docs-only patch that passed cleanly on both")
            return Runs(errors, None, None, None, notes, host_b, host_a)
        settings.progress(f"base run needed: {why or 'a host could not run'}")
        failures.update(
            _execute(
                {"base run": lambda: baserun.run(_base(settings), check, out, "a")},
                settings.progress,
            )
        )
    if "base run" in failures:
        notes += (f"base run failed ({failures['base run']}); attributing skips statically",)
        return Runs(errors, None, None, None, notes, host_b, host_a)
    folder_a = baserun.folder(out, "a")
    base_a = _read_or_none(folder_a)
    base_b: Path | None = None
    failed_b = host_b is not None and any(case.outcome in FAILING for case in host_b.tests)
    removed = None if failed_b else basepolicy.removed_read(base_a, host_a, host_b)
    if removed is not None:
        settings.progress(f"base run on host B needed: {removed}")
    if failed_b or removed is not None:
        more = _execute(
            {"base run on host B": lambda: baserun.run(_base(settings), check, out, "b")},
            settings.progress,
        )
        base_b = None if more else baserun.folder(out, "b")
        notes += tuple(
            f"{name} failed ({why}); host B's failures are not told pre-existing"
            for name, why in more.items()
        )
    base_read = base_a or folder_a  # unusable: evaluate says why
    return Runs(errors, pairing.base_cases(base_read), base_read, base_b, notes, host_b, host_a)


def _died(folder: Path) -> bool:
    """Whether the host run in `folder` died of a signal (host.json's crash: not the gate's
    own kill at a timeout or the temp root's cap)."""
    try:
        return hostreport.read_info(folder / layout.HOST_JSON).crash is not None
    except GateError:
        return False


def _crash_bases(
    settings: GateSettings,
    check: baseline.PinCheck,
    out: Path,
    hosts: list[baserun.Host],
    runs: Runs,
) -> Runs:
    """A head host died of a signal: the base's module on that host, so the verdict can say
    whether the crash is the patch's or the environment's (verdict.crash)."""
    named = " and ".join(f"host {host.upper()}" for host in hosts)
    settings.progress(f"base run needed: {named} died of a signal")
    jobs: dict[str, Callable[[], object]] = {
        f"base run on host {host.upper()}": functools.partial(
            baserun.run, _base(settings), check, out, host
        )
        for host in hosts
    }
    failed = _execute(jobs, settings.progress)
    folders = {h: None if f"base run on host {h.upper()}" in failed else baserun.folder(out, h)
               for h in hosts}  # fmt: skip
    notes = tuple(f"{name} failed ({why})" for name, why in failed.items())
    return dataclasses.replace(
        runs, base_a=folders.get("a"), base_b=folders.get("b"), notes=(*runs.notes, *notes)
    )


def _base(settings: GateSettings) -> baserun.BaseRun:
    """The base run made as the gate's own host runs are (interpreters, namespaces, cache)."""
    return baserun.BaseRun(
        environ=settings.environ,
        python_a=settings.python_a,
        python_b=settings.python,
        namespaces=settings.namespaces,
        timeout=settings.timeout,
        progress=settings.progress,
        cache_dir=settings.cache_dir,
    )


def _docs_only(check: baseline.PinCheck) -> bool:
    """Whether the patch touches documentation only (`verdict.basepolicy`: the base run may
    wait)."""
    assert check.base_commit is not None
    return basepolicy.docs_only(git.changed_files(check.root, check.base_commit))


def _run_host(
    settings: runsettings.RunSettings,
    notes: list[str],
    invalid: threading.Event,
    read: dict[str, hostreport.HostReport | None],
) -> None:
    """One host. A run that cannot be judged (a usage error, code imported from outside the
    host's tree, pins that did not take, a death by a signal) sets `invalid`, which stops
    the rest; the judge says why from host.json, as compare does (a pin the patch's own
    tests write is judged there, verdict.pinswritten). A usable run's report is read into
    `read` here, while the other host may still be running (the gate reads each report
    once)."""
    info = launch.run_host(settings)
    notes.extend(f"host {settings.host.upper()}: {note}" for note in info.notes)
    code, _ = hostjson.outcome(info)
    if code == ExitCode.INVALID:
        invalid.set()
        return
    read[settings.host] = _read_or_none(settings.out)


def _host(
    settings: GateSettings, check: baseline.PinCheck, out: Path, host: str
) -> runsettings.RunSettings:
    assert check.head is not None
    isolated = host == "b"
    return runsettings.RunSettings(
        host="b" if isolated else "a",
        out=out / f"host-{host}",
        root=check.root,
        loaded=check.head,
        environ=settings.environ,
        isolate=isolated,
        python=settings.python if isolated else settings.python_a,
        namespaces=settings.namespaces,
        progress=_labelled(settings.progress, f"host {host.upper()}"),
        timeout=settings.timeout,
    )


def _labelled(progress: Callable[[str], None], label: str) -> Callable[[str], None]:
    return lambda line: progress(f"{label}: {line}")


def _execute(
    jobs: Mapping[str, Callable[[], object]],
    progress: Callable[[str], None],
    early: Sequence[str] = (),
    between: Callable[[], None] = lambda: None,
) -> dict[str, str]:
    """Run the jobs, as many at once as there are cores; the GateError of each that failed.
    The `early` ones are started first, then `between` runs here, then the others start."""
    workers = max(1, min(len(jobs), os.cpu_count() or 1))
    failures: dict[str, str] = {}
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="entropy-gate") as pool:
        futures: dict[Future[object], str] = {
            pool.submit(jobs[name]): name for name in early if name in jobs
        }
        between()  # after the early jobs started, before the others
        futures.update({pool.submit(job): name for name, job in jobs.items() if name not in early})
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=HEARTBEAT_SECONDS)
            for future in done:
                name = futures[future]
                error = future.exception()
                if isinstance(error, GateError):
                    failures[name] = error.message.splitlines()[0]
                    progress(f"{name}: could not run: {failures[name]}")
                elif error is not None:
                    raise error
            if pending:
                running = ", ".join(sorted(futures[f] for f in pending))
                progress(f"… still running: {running} ({time.monotonic() - started:.0f} s)")
    return failures


def _read_or_none(host_dir: Path) -> hostreport.HostReport | None:
    """A report read once for every later use; None when unusable (evaluate then says why)."""
    try:
        return hostreport.read_host(host_dir)
    except GateError:
        return None
