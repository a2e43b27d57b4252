"""`entropy-gate run`: the property module under the pins on one host (B: `--isolate`)."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from entropy_action.cli import options
from entropy_action.core.errors import ExitCode, GateError
from entropy_action.core.layout import BASE_FOLDER, PROBES_JSON

if TYPE_CHECKING:
    from entropy_action.core.hostinfo import HostInfo
    from entropy_action.gate import baserun
    from entropy_action.hosts import runsettings
    from entropy_action.manifest import baseline, pinfile

NAME = "run"
STEP = "entropy-gate run"  # the step an error report of the run itself names
HELP = (
    "run the manifest's property module under the pins on one host; writes DIR/junit.xml, "
    "DIR/host.json and DIR/pytest.log; exit 0 passed, 1 failed or nothing collected, "
    "2 invalid (pins that did not take; a run that could not start writes DIR/error.json)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", choices=("a", "b"), required=True, help="the host's label")
    parser.add_argument(
        "--out", type=Path, required=True, metavar="DIR", help="where the reports go"
    )
    options.add_manifest(parser)
    options.add_property(parser)
    parser.add_argument(
        "--isolate",
        action="store_true",
        help="the local host B: scrubbed env, fresh HOME, shifted live clock, no network, "
        "another hostname and a copy of the tree elsewhere",
    )
    parser.add_argument(
        "--python", metavar="PATH", help="the interpreter that runs pytest (default: this one)"
    )
    options.add_timeout(parser)
    parser.add_argument(
        "--base-ref",
        metavar="REF",
        help="also run the base ref's property module (a temporary git worktree, the base's "
        "manifest) into DIR/base: on host A always, on host B unless the head passed on a "
        "docs-only patch; beside the heads' runs where only an unusable head could make it "
        "unwanted; "
        "`verdict` then tells failures and skips that stood at the base from new ones",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        metavar="DIR",
        help="with --base-ref: reuse the base run from this evidence cache when a sound entry "
        "matches (`entropy-gate cache-key` prints its key), else keep it there",
    )
    parser.epilog = (
        f"{options.NO_NAMESPACES_ENV}=1 keeps the run out of Linux namespaces; the degraded "
        "isolation is noted in host.json.\n\n" + (parser.epilog or "")
    )


def run(args: argparse.Namespace) -> int:
    """The host run; when it stops on an error before reporting, DIR/error.json says why
    (the one line the verdict leads with), and the error still ends the command."""
    from entropy_action.core import git  # noqa: PLC0415 (--help imports no model)

    try:
        with git.memo():  # each property asks git the same questions: one answer each
            return _run(args)
    except GateError as exc:
        _report_error(args.out, args.host, exc.message)
        raise


def _report_error(out: Path, host: Literal["a", "b"], message: str) -> None:
    from entropy_action.evidence import hosterror  # noqa: PLC0415 (--help imports no model)

    try:
        hosterror.write(out, hosterror.make(host, STEP, message))
    except GateError as exc:  # the folder cannot be written: the run's own error still stands
        print(f"note: {exc.message}", file=sys.stderr)


def _run(args: argparse.Namespace) -> int:
    """Every property the manifest lists (or the --property ones): one into DIR in the
    one-property form, each into DIR/properties/ID otherwise, properties with equal pins and
    run options in one pytest session (hosts.sessions). The exit code is the worst."""
    from entropy_action.hosts import sessions  # noqa: PLC0415 (--help imports no model)
    from entropy_action.manifest import groups, pinfile  # noqa: PLC0415 (--help imports no model)

    path: Path = args.manifest
    root = repo_root(path)
    loaded = pinfile.parse_file(pinfile.read(path, str(path)), str(path), root)
    for warning in loaded.warnings:
        print(warning, file=sys.stderr)
    views = [loaded.select(pid) for pid in dict.fromkeys(args.properties)] or list(loaded.views)
    if not loaded.many:
        return _run_one(args, views[0], path, args.out)
    from entropy_action.core import layout  # noqa: PLC0415 (--help imports no model)

    folders = [layout.property_folder(args.out, view.property_id) for view in views]
    early = _early_base(args, path, views, folders)
    codes: list[int] = []
    based: list[tuple[pinfile.LoadedManifest, Path, HostInfo]] = []
    try:
        for group in groups.groups(views):
            for members in sessions.sessions(group):
                codes += _run_group(args, members, path, based)
        _bases(args, path, based, early)
    finally:
        if early is not None:
            early.discard()
    return max(codes)


def _run_group(
    args: argparse.Namespace,
    views: tuple[pinfile.LoadedManifest, ...],
    path: Path,
    based: list[tuple[pinfile.LoadedManifest, Path, HostInfo]],
) -> list[int]:
    """One session over the views' modules, each property's report in DIR/properties/ID;
    then each property's own steps, but the base run: those that want one join `based`. A
    session that could not run is every property's error report (each is invalid); the other
    groups still run."""
    from entropy_action.core import layout  # noqa: PLC0415 (--help imports no model)
    from entropy_action.hosts import sessions  # noqa: PLC0415 (--help imports no model)

    folders = [layout.property_folder(args.out, view.property_id) for view in views]
    for view in views:
        print(f"property {view.property_id}: {view.manifest.module}", file=sys.stderr, flush=True)
    if len(views) > 1:
        ids = ", ".join(view.property_id for view in views)
        print(f"one pytest session for properties {ids}", file=sys.stderr, flush=True)
    try:
        infos = sessions.run_session(_settings(args, views[0], path, folders[0]), views, folders)
    except GateError as exc:  # each property's error report; the other groups still run
        for view, folder in zip(views, folders, strict=True):
            _report_error(folder, args.host, exc.message)
            print(f"property {view.property_id}: {exc.message}", file=sys.stderr)
        return [int(ExitCode.INVALID)] * len(views)
    _show_log(folders[0] / layout.PYTEST_LOG, fence=args.environ.get("GITHUB_ACTIONS") == "true")
    codes = []
    for view, folder, info in zip(views, folders, infos, strict=True):
        try:
            code = _read(args, _settings(args, view, path, folder), info)
        except GateError as exc:  # this property's error report; the others still run
            _report_error(folder, args.host, exc.message)
            print(f"property {view.property_id}: {exc.message}", file=sys.stderr)
            code = int(ExitCode.INVALID)
        codes.append(code)
        _probe(args, path, view, folder, code)
        if _wants_base(args, code, info):
            based.append((view, folder, info))
    return codes


def _settings(
    args: argparse.Namespace, loaded: pinfile.LoadedManifest, path: Path, out: Path
) -> runsettings.RunSettings:
    from entropy_action.hosts import runsettings  # noqa: PLC0415 (--help imports no model)

    return runsettings.RunSettings(
        host=args.host,
        out=out,
        root=repo_root(path),
        loaded=loaded,
        environ=args.environ,
        isolate=args.isolate,
        python=args.python,
        progress=lambda message: print(message, file=sys.stderr, flush=True),
        namespaces=options.namespaces_allowed(args.environ),
        timeout=args.timeout,
    )


def _run_one(
    args: argparse.Namespace, loaded: pinfile.LoadedManifest, path: Path, out: Path
) -> int:
    from entropy_action.core import layout  # noqa: PLC0415 (--help imports no model)
    from entropy_action.hosts import launch  # noqa: PLC0415 (--help imports no model)

    settings = _settings(args, loaded, path, out)
    early = _early_base(args, path, [loaded], [out])
    try:
        info = launch.run_host(settings)
        _show_log(out / layout.PYTEST_LOG, fence=args.environ.get("GITHUB_ACTIONS") == "true")
        code = _read(args, settings, info)
        _probe(args, path, loaded, out, code)
        if _wants_base(args, code, info):
            _bases(args, path, [(loaded, out, info)], early)
    finally:
        if early is not None:  # unwanted, or the run raised: waited for, its report removed
            early.discard()
    return code


class _EarlyBase:
    """The base runs started beside the head's (a thread; the base runs in its own worktree
    and pytest processes), where the head's outcome cannot make them unwanted but by being
    unusable: on host A always, on host B unless the patch is docs-only. In the workflow's
    host jobs this takes the base run off the job's critical path (the local gate runs them
    side by side too). Reports are made outside DIR, which holds only the heads' until those
    are read; `take` moves those wanted into DIR/base, and `discard` removes the rest: the
    verdict never reads a base beside a head it could not use."""

    def __init__(
        self, args: argparse.Namespace, checks: list[baseline.PinCheck], outs: list[Path]
    ) -> None:
        import tempfile  # noqa: PLC0415 (--help imports no model)
        import threading  # noqa: PLC0415 (--help imports no model)

        self.args, self.checks, self.outs = args, checks, outs
        self.scratch = Path(tempfile.mkdtemp(prefix="entropy-gate-base-"))
        self.made = [self.scratch / str(index) for index in range(len(outs))]
        self.errors: list[str | None] = []
        self.kept: set[Path] = set()
        self.failure: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="entropy-gate-base", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.errors = _run_bases(self.args, self.checks, self.made)
        except BaseException as exc:  # raised again in the main thread, by take()
            self.failure = exc

    def take(self, wanted: list[Path]) -> list[tuple[baseline.PinCheck, Path, str | None]]:
        """The base runs of the heads whose folders are `wanted`, placed in each DIR/base:
        (check, folder, error) each."""
        self.thread.join()
        if self.failure is not None:
            raise self.failure
        taken = []
        for check, made, out, error in zip(
            self.checks, self.made, self.outs, self.errors, strict=True
        ):
            if out in wanted:
                _place(self.args, [made], [error], [out])
                taken.append((check, out, error))
                self.kept.add(out)
        return taken

    def discard(self) -> None:
        """Wait, and leave nothing of what was not taken (said: its progress lines were)."""
        self.thread.join()
        shutil.rmtree(self.scratch, ignore_errors=True)
        if left := [out for out in self.outs if out not in self.kept]:
            count = "property" if len(left) == 1 else "properties"
            which = "" if len(self.outs) == 1 else f" of {len(left)} {count}"
            print(
                f"base run{which} not kept: its head's run is unusable, and no verdict reads "
                "a base beside one",
                file=sys.stderr,
            )


def _early_base(
    args: argparse.Namespace, path: Path, views: list[pinfile.LoadedManifest], outs: list[Path]
) -> _EarlyBase | None:
    """The base runs beside the heads', where `_wants_base` can only say yes to a usable
    head (None: they wait for the heads' outcomes, as on host B for a docs-only patch). An
    earlier run's DIR/base goes first, with or without --base-ref: it never stands beside
    this run's head."""
    for out in outs:
        shutil.rmtree(out / BASE_FOLDER, ignore_errors=True)
    if args.base_ref is None or (args.host == "b" and _docs_only(args)):
        return None
    checked = [
        (check, out)
        for view, out in zip(views, outs, strict=True)
        if (check := _base_check(args, path, view.property_id if view.entry is not None else None))
    ]
    if not checked:
        return None
    return _EarlyBase(args, [check for check, _ in checked], [out for _, out in checked])


def _probe(
    args: argparse.Namespace, path: Path, loaded: pinfile.LoadedManifest, out: Path, code: int
) -> None:
    """Host B passed and --base-ref tells which tests of the property the patch added or
    changed: the order probes (hoststeps.probe_step) beside the report (probes.json)."""
    if args.host != "b" or code != ExitCode.OK or args.base_ref is None:
        return  # before the imports: a run without probes pays for none of them
    from entropy_action.gate import attribution, hoststeps  # noqa: PLC0415 (--help imports no model)
    from entropy_action.scan.changed import changed_tests  # noqa: PLC0415 (--help imports no model)

    check = _base_check(args, path, loaded.property_id if loaded.entry is not None else None)
    changed = changed_tests(check) if check is not None else frozenset()
    if not changed:
        return
    dims = [d for d in attribution.dimensions(None) if d != "python"]
    pinned = list(loaded.manifest.pins.env or {})
    found = hoststeps.probe_step(
        _settings(args, loaded, path, out), args.environ, pinned, dims, changed
    )
    if found is not None:
        print(f"order probes: {len(found.probes)} run(s) in designed orders", file=sys.stderr)


def _read(args: argparse.Namespace, settings: runsettings.RunSettings, info: HostInfo) -> int:
    """A property's run, read: its outcome, then host B's attribution re-runs of a failure."""
    from entropy_action.hosts import hostjson  # noqa: PLC0415 (--help imports no model)

    for line in info.isolation:
        print(f"isolation: {line}", file=sys.stderr)
    for note in info.notes:
        print(f"note: {note}", file=sys.stderr)
    code, message = hostjson.outcome(info)
    if code == ExitCode.OK:
        code, message = _as_read(settings.out, info.host, code, message)
    print(message, file=sys.stderr)
    if args.host == "b" and code not in (ExitCode.OK, ExitCode.INVALID):
        _attribution(settings, settings.loaded)
    return int(code)


def _wants_base(args: argparse.Namespace, code: int, info: HostInfo) -> bool:
    """--base-ref: on both hosts (host B's passing head only where the patch is not
    docs-only); never beside an unusable run (nothing beside it could be judged),
    except one that died of a signal: the base's run on the same host tells the patch from
    the environment (verdict.crash).

    Host B's base run beside a head that passed is the one the local gate makes when the
    base's audit on host A saw a production read the head no longer makes
    (`basepolicy.removed_read`, `live_read_removed`): this job cannot see host A's audit, so
    it runs the base and the judge reads it only where the gate would have
    (`basepolicy.host_b_base_counts`) — one gate, the same evidence."""
    if args.base_ref is None:
        return False
    if code == ExitCode.INVALID:
        return info.crash is not None
    return args.host == "a" or code != ExitCode.OK or not _docs_only(args)


def _docs_only(args: argparse.Namespace) -> bool:
    """Whether the patch touches documentation only: then host B's base run beside a passing
    head could tell the judge nothing (the head's code is the base's: no read was removed),
    and the gate does not make it (`verdict.basepolicy`)."""
    from entropy_action.core import git  # noqa: PLC0415 (--help imports no model)
    from entropy_action.verdict import basepolicy  # noqa: PLC0415 (--help imports no model)

    try:
        changed = git.changed_files(repo_root(args.manifest), args.base_ref)
    except GateError:
        return False  # unknown: run the base, the judge decides whether to read it
    return basepolicy.docs_only(changed)


def _bases(
    args: argparse.Namespace,
    path: Path,
    runs: list[tuple[pinfile.LoadedManifest, Path, HostInfo]],
    early: _EarlyBase | None = None,
) -> None:
    """The base runs of these properties into each DIR/base (one worktree, one session per
    group of their base views: baserun.run_many; or the one started beside the head,
    `early`), then host A's strength step of each."""
    infos = {out: info for _, out, info in runs}
    if early is not None:
        done = [(check, out, infos[out], error) for check, out, error in early.take([*infos])]
    else:
        checked = []
        for loaded, out, info in runs:
            pid = loaded.property_id if loaded.entry is not None else None
            if (check := _base_check(args, path, pid)) is not None:
                checked.append((check, out, info))
        outs = [out for _, out, _ in checked]
        errors = _run_bases(args, [check for check, _, _ in checked], outs) if checked else []
        _place(args, outs, errors, outs)
        done = [(c, o, i, e) for (c, o, i), e in zip(checked, errors, strict=True)]
    for check, out, info, error in done:
        if error is not None:
            print(
                f"note: the base run failed ({error}); skips are attributed statically",
                file=sys.stderr,
            )
        if info.crash is None:  # a crashed head: nothing to weigh
            _strength(args, check, info, out, None if error is not None else out / BASE_FOLDER)
        if args.host == "b" and error is None and (out / PROBES_JSON).is_file():
            from entropy_action.gate import hoststeps  # noqa: PLC0415 (--help imports no model)

            hoststeps.base_probe_step(_base_run(args), check, out, out / BASE_FOLDER)


def _as_read(out: Path, host: str, code: ExitCode, message: str) -> tuple[ExitCode, str]:
    """A run that passed by pytest's word, as the verdict will read it: against the gate's
    channel (a report rewritten at session end fails there, or is unusable)."""
    from entropy_action.evidence import hostreport  # noqa: PLC0415 (--help imports no model)

    try:
        report = hostreport.read_host(out)
    except GateError as exc:
        return ExitCode.INVALID, f"host {host}: {exc.message}"
    if report.outcome == "fail":
        return ExitCode.REJECTED, (
            f"host {host}: a property failed as the gate's channel heard it, although pytest "
            "exited 0 (its report was changed after the tests ran)"
        )
    return code, message


def _attribution(settings: runsettings.RunSettings, loaded: pinfile.LoadedManifest) -> None:
    """Host B failed tests: its attribution re-runs, beside the report (attribution.json).
    The interpreter is not one of the perturbations here: host A's runs on another runner."""
    from entropy_action.gate import attribution, hoststeps  # noqa: PLC0415 (--help imports no model)

    dims = [d for d in attribution.dimensions(None) if d != "python"]
    pinned = list(loaded.manifest.pins.env or {})
    found = hoststeps.attribution_step(settings, settings.environ, pinned, dims)
    if found is not None:
        print(
            f"attribution: {len(found.trials)} re-run(s) of {len(found.tests)} test(s)",
            file=sys.stderr,
        )


def _strength(
    args: argparse.Namespace,
    check: baseline.PinCheck,
    info: HostInfo,
    out: Path,
    base: Path | None,
) -> None:
    """The host's strength step into DIR/strength.json, which `verdict` requires where the
    patch changed the property's test side (scan.closure): host A's (the base's test side
    on the head's code, mutation), or host B's (that run under host B's variations, after a
    head that passed; `base`: host B's base run, which tells a failure pre-existing)."""
    from entropy_action.gate import hoststeps  # noqa: PLC0415 (--help imports no model)
    from entropy_action.strength import base_on_head  # noqa: PLC0415 (--help imports no model)

    host = base_on_head.HostSettings(
        args.environ,
        options.namespaces_allowed(args.environ),
        lambda message: print(f"strength: {message}", file=sys.stderr, flush=True),
        args.python,
        host=args.host,
    )
    if args.host == "a":
        report = hoststeps.strength_step(check, host, out, info)
    elif (found := hoststeps.strength_b_step(check, host, out, base)) is not None:
        report = found
    else:
        return
    if report.measured:
        kinds = ", ".join(sorted({f.kind for f in report.findings})) or "no finding"
        print(f"strength: {kinds}; {len(report.notes)} note(s)", file=sys.stderr)


def _base_check(
    args: argparse.Namespace, path: Path, property_id: str | None
) -> baseline.PinCheck | None:
    """The pin check the base run reads the base with (None: no base manifest, a note)."""
    from entropy_action.manifest import baseline  # noqa: PLC0415 (--help imports no model)

    try:
        check = baseline.check(path, args.base_ref, None, property_id)
    except GateError as exc:
        print(f"note: no base run: {exc.message}", file=sys.stderr)
        return None
    if check.base is None or check.base_commit is None or check.head is None:
        print(f"note: no base run: {args.base_ref} has no readable manifest", file=sys.stderr)
        return None
    return check


def _run_bases(
    args: argparse.Namespace, checks: list[baseline.PinCheck], outs: list[Path]
) -> list[str | None]:
    """The base ref's modules on this host, each into its DIR/base; a failure there is only a
    note. The error of each that could not run (None: it ran)."""
    from entropy_action.gate import baserun  # noqa: PLC0415 (--help imports no model)

    base = _base_run(args)
    for out in outs:
        shutil.rmtree(out / BASE_FOLDER, ignore_errors=True)
    try:
        return baserun.run_many(base, checks, outs, args.host)
    except GateError as exc:  # the worktree could not be made: every base run failed
        return [exc.message] * len(checks)


def _base_run(args: argparse.Namespace) -> baserun.BaseRun:
    """How this host makes the base's runs: its interpreter, namespaces and cache."""
    from entropy_action.gate import baserun  # noqa: PLC0415 (--help imports no model)

    return baserun.BaseRun(
        environ=args.environ,
        python_a=args.python,
        python_b=args.python,
        namespaces=options.namespaces_allowed(args.environ),
        progress=lambda message: print(message, file=sys.stderr, flush=True),
        cache_dir=args.cache_dir,
    )


def _place(
    args: argparse.Namespace, made: list[Path], errors: list[str | None], outs: list[Path]
) -> None:
    """Each base report that ran, from where it was made into its DIR/base."""
    from entropy_action.gate import baserun  # noqa: PLC0415 (--help imports no model)

    for there, out, error in zip(made, outs, errors, strict=True):
        if error is None:
            shutil.rmtree(out / BASE_FOLDER, ignore_errors=True)  # an earlier run's, in DIR
            shutil.move(baserun.folder(there, args.host), out / BASE_FOLDER)
            shown = f"base run ({args.base_ref}) on host {args.host.upper()}: {out / BASE_FOLDER}"
            print(shown, file=sys.stderr)


def repo_root(path: Path) -> Path:
    """The git work tree holding the manifest, else the manifest's folder."""
    from entropy_action.core import git  # noqa: PLC0415 (--help imports no model)

    folder = path.parent if path.parent.parts else Path.cwd()
    try:
        return git.toplevel(folder)
    except GateError:
        return folder.resolve()


def _show_log(path: Path, *, fence: bool) -> None:
    """Echo pytest's log. It is PR code's output: in GitHub Actions it is fenced with
    stop-commands so a line a test prints cannot act as a workflow command."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
    if fence and text:
        from entropy_action.github import workflow  # noqa: PLC0415 (--help imports no model)

        text = "\n".join(workflow.fenced_log(text))
    sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
    sys.stdout.flush()
