"""The whole gate in one process: pin check, silencing scan, host A, isolated host B, compare.

The base ref's property module also runs once on host A (in a temporary git worktree)
so that a test that does not execute at the head counts against the patch only when
it executed at the base.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from entropy_action import baseline, compare, crossrun, git, reports, runner, scan, strength
from entropy_action.errors import ExitCode, GateError
from entropy_action.verdict import FAILING, Evidence, Verdict, classify

HEARTBEAT_SECONDS = 10.0


@dataclass(frozen=True)
class GateSettings:
    """Everything `gate` needs, parsed once by the CLI (or built by the demo)."""

    manifest: Path
    base_ref: str
    environ: Mapping[str, str]
    out: Path | None = None  # where the host reports go; default: a temporary directory
    python: str | None = None  # host B's interpreter
    base_run: bool = True  # run the base's module once to attribute non-executed tests
    namespaces: bool = True  # False: keep every run out of Linux namespaces
    progress: Callable[[str], None] = field(default=lambda line: None)


@dataclass(frozen=True)
class GateResult:
    verdict: Verdict
    check: baseline.PinCheck
    out: Path
    notes: tuple[str, ...] = ()


def run_gate(settings: GateSettings) -> GateResult:
    """Judge the working tree against `settings.base_ref`."""
    check = baseline.check(settings.manifest, settings.base_ref, None)
    out = settings.out or Path(tempfile.mkdtemp(prefix="entropy-gate-"))
    out.mkdir(parents=True, exist_ok=True)
    if check.head is None:
        return GateResult(_unreadable_head(check), check, out, check.notes)
    settings.progress("scanning the property module for silenced entropy…")
    scanned = scan.scan(check)
    runs = _run_hosts(settings, check, out)
    strong = _strength(settings, check, scanned, out)
    constraints = (check.base or check.head).manifest.constraints
    verdict = compare.evaluate(
        out / "host-a",
        out / "host-b",
        loaded=check.head,
        pin_diff=check.diff,
        findings=(*scanned.findings, *strong.findings),
        runtime_findings=scan.runtime_rule(scanned, runs.base_cases),
        strict_baseline=constraints.strict_baseline,
        require_host_b=constraints.require_host_b,
        invalid=runs.errors,
        notes=[f"silencing scan incomplete: {error}" for error in scanned.errors]
        + list(strong.notes),
        base_a=runs.base_a,
        base_b=runs.base_b,
    )
    verdict = strong.annotate(verdict)
    return GateResult(verdict, check, out, check.notes + scanned.notes + runs.notes)


def _strength(
    settings: GateSettings, check: baseline.PinCheck, scanned: scan.ScanResult, out: Path
) -> strength.Strength:
    """Property strength (strength.py), after the hosts ran; off with `--no-base-run`."""
    if not settings.base_run:
        return strength.Strength()
    host = crossrun.HostSettings(
        settings.environ, settings.namespaces, _labelled(settings.progress, "strength")
    )
    return strength.measure_strength(check, scanned, host, out)


def _unreadable_head(check: baseline.PinCheck) -> Verdict:
    return classify(
        Evidence(
            host_a="missing",
            host_b="missing",
            pins_intact=check.diff.intact,
            pin_changes=check.diff.summary(),
            invalid=(f"{check.relative} cannot be read at the head, so no host can run under it",),
        )
    )


@dataclass(frozen=True)
class Runs:
    """What the host runs left for the comparison."""

    errors: tuple[str, ...]  # a host that could not run, in words (the verdict is invalid)
    base_cases: dict[str, str] | None  # case id -> outcome in the base's run on host A
    base_a: Path | None  # the base's reports on host A and (when host B failed) on host B
    base_b: Path | None
    notes: tuple[str, ...]


def _run_hosts(settings: GateSettings, check: baseline.PinCheck, out: Path) -> Runs:
    """Host A, host B and the base's module on host A, concurrently when there are cores;
    then, only when host B failed a test, the base's module on host B too, so a failure
    that stood at the base is told from one the patch brought."""
    host_notes: list[str] = []
    jobs: dict[str, Callable[[], object]] = {
        "host A": lambda: _run_host(_host(settings, check, out, "a"), host_notes),
        "host B": lambda: _run_host(_host(settings, check, out, "b"), host_notes),
    }
    want_base = settings.base_run and check.base is not None and check.base_commit is not None
    if want_base:
        jobs["base run"] = lambda: _run_base(settings, check, out, "a")
    failures = _execute(jobs, settings.progress)
    errors = tuple(f"{name}: {failures[name]}" for name in ("host A", "host B") if name in failures)
    notes = tuple(sorted(host_notes))
    if not want_base:
        return Runs(errors, None, None, None, notes)
    if "base run" in failures:
        notes += (f"base run failed ({failures['base run']}); attributing skips statically",)
        return Runs(errors, None, None, None, notes)
    base_b: Path | None = None
    if _has_failures(out / "host-b"):
        more = _execute(
            {"base run on host B": lambda: _run_base(settings, check, out, "b")}, settings.progress
        )
        base_b = None if more else out / "base-b"
        notes += tuple(
            f"{name} failed ({why}); host B's failures all count" for name, why in more.items()
        )
    return Runs(errors, compare.base_cases(out / "base-a"), out / "base-a", base_b, notes)


def _run_host(settings: runner.RunSettings, notes: list[str]) -> None:
    """One host; a run whose inputs were unusable (pins did not take, usage error) raises."""
    info = runner.run_host(settings)
    notes.extend(f"host {settings.host.upper()}: {note}" for note in info.notes)
    code, why = runner.outcome(info)
    if code == ExitCode.INVALID:
        detail = _first_error(settings.out / runner.PYTEST_LOG)
        raise GateError(why.split(": ", 1)[-1] + (f" — {detail}" if detail else ""))


def _first_error(log: Path, limit: int = 65536) -> str:
    """The first line of pytest's output that says `error:`, if any."""
    try:
        with open(log, "rb") as handle:
            text = handle.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""
    return next((line.strip() for line in text.splitlines() if "error:" in line), "")


def _host(
    settings: GateSettings, check: baseline.PinCheck, out: Path, host: str
) -> runner.RunSettings:
    assert check.head is not None
    isolated = host == "b"
    return runner.RunSettings(
        host="b" if isolated else "a",
        out=out / f"host-{host}",
        root=check.root,
        loaded=check.head,
        environ=settings.environ,
        isolate=isolated,
        python=settings.python if isolated else None,
        namespaces=settings.namespaces,
        progress=_labelled(settings.progress, f"host {host.upper()}"),
    )


def _labelled(progress: Callable[[str], None], label: str) -> Callable[[str], None]:
    return lambda line: progress(f"{label}: {line}")


def _run_base(settings: GateSettings, check: baseline.PinCheck, out: Path, host: str) -> None:
    """The base ref's module in a temporary git worktree, under the base's manifest."""
    assert check.base is not None
    assert check.base_commit is not None
    tree = out / f"base-tree-{host}"
    if tree.exists():
        shutil.rmtree(tree)
    git.add_worktree(check.root, check.base_commit, tree)
    try:
        runner.run_host(
            runner.RunSettings(
                host="b" if host == "b" else "a",
                out=out / f"base-{host}",
                root=tree,
                loaded=check.base,
                environ=settings.environ,
                isolate=host == "b",
                python=settings.python if host == "b" else None,
                namespaces=settings.namespaces,
                progress=_labelled(settings.progress, f"base run on host {host.upper()}"),
            )
        )
    finally:
        git.remove_worktree(check.root, tree)


def _execute(
    jobs: Mapping[str, Callable[[], object]], progress: Callable[[str], None]
) -> dict[str, str]:
    """Run the jobs, as many at once as there are cores; the GateError of each that failed."""
    workers = max(1, min(len(jobs), os.cpu_count() or 1))
    failures: dict[str, str] = {}
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="entropy-gate") as pool:
        futures: dict[Future[object], str] = {pool.submit(job): name for name, job in jobs.items()}
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


def _has_failures(host_dir: Path) -> bool:
    try:
        report = reports.read_host(host_dir)
    except GateError:
        return False
    return any(case.outcome in FAILING for case in report.tests)
