"""`entropy-gate replay TEST`: one test run again as a host ran it, from that host's report
folder (`gate --out DIR`'s DIR/host-b, or the workflow's host artifact).

The folder is data (hostreport: host.json and junit.xml, capped, never executed): it names the
host, the property, the test and its outcome there, what host B varied (`variations`) and the
values it started its tests with (`replay`, hosts.replayplan: the clock shift, TZ, LANG, umask,
hash seed, listing-order seed, CPU count). The test then runs in this checkout through the
same host run as the gate's (hosts.launch): host B's isolation — scrubbed environment and a
fresh HOME, another checkout path, namespaces where this machine has them — with those
values, alone, after the tests given with `--after`, or after every test host B ran before it
(`--predecessors`, host B's order). What this machine could not reproduce, and where this
checkout or manifest is not the one the host ran, is said, never silently dropped.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from entropy_action.core import git, layout
from entropy_action.core.errors import GateError
from entropy_action.core.hostinfo import HostInfo
from entropy_action.core.variations import Variation
from entropy_action.evidence import hostreport, ids, junitcases
from entropy_action.evidence.junitcases import TestCase
from entropy_action.hosts import launch, runsettings
from entropy_action.manifest import pinfile

NOT_A_FOLDER = (
    "{dir}: not a host's report folder (no host.json): give the host-a or host-b folder "
    "`entropy-gate gate --out DIR` writes, or the host's artifact of the workflow "
    "(entropy-gate-<property>-host-b-<leg>)"
)


@dataclass(frozen=True)
class Request:
    """What `replay` is asked, parsed once by the command."""

    test: str
    report: Path
    manifest: Path
    environ: Mapping[str, str]
    after: tuple[str, ...] = ()
    predecessors: bool = False
    python: str | None = None
    namespaces: bool = True
    timeout: float | None = None
    out: Path | None = None  # keep the replay's own report here


@dataclass(frozen=True)
class Replayed:
    """What the replay found: the reported outcome beside its own."""

    test: str
    host: str  # "a" or "b"
    reported: str
    outcome: str
    message: str | None
    ran: tuple[str, ...]
    reproduced: list[str] = field(default_factory=list)  # host B's dimensions varied here too
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"


def replay(request: Request, root: Path) -> Replayed:
    """Run `request.test` in the checkout at `root` as the reported host ran it."""
    report = _report(request.report, request.test)
    case = _case(report, request.test)
    loaded, notes = _manifest(request.manifest, root, report.info)
    notes += _checkout(root, report.info)
    order = _order(case.id, request, report.info, notes)
    if request.out is not None:
        return _run(request, root, loaded, report, case, order, notes, request.out)
    with tempfile.TemporaryDirectory(prefix="entropy-gate-replay-") as scratch:
        return _run(request, root, loaded, report, case, order, notes, Path(scratch))


def _report(folder: Path, test: str) -> hostreport.HostReport:
    """The host folder's report; in a folder of many properties, the one holding `test`."""
    if (folder / layout.HOST_JSON).is_file():
        return hostreport.read_host(folder)
    listed = folder / layout.PROPERTIES_FOLDER
    if not folder.is_dir() or not listed.is_dir():
        raise GateError(NOT_A_FOLDER.format(dir=folder))
    for child in sorted(p for p in listed.iterdir() if (p / layout.HOST_JSON).is_file()):
        found = hostreport.read_host(child)
        if any(test in (c.id, c.raw_id) for c in found.tests):
            return found
    raise GateError(f"{test}: no property's report in {folder} holds this test")


def _case(report: hostreport.HostReport, test: str) -> TestCase:
    cases = junitcases.merge(report.tests)
    found = cases.get(test) or next((c for c in cases.values() if c.raw_id == test), None)
    if found is None:
        near = [c for c in cases if c.rpartition("::")[2] == test.rpartition("::")[2]]
        hint = f" (did you mean {near[0]}?)" if near else ""
        raise GateError(
            f"{test}: not among the {len(cases)} tests host {report.info.host.upper()} ran "
            f"in {report.dir}{hint}"
        )
    if ids.ROOT_PLACEHOLDER in found.id or ids.TMP_PLACEHOLDER in found.id:
        raise GateError(
            f"{test}: its id names the host's own checkout or temp path, so no other tree can "
            "select it"
        )
    return found


def _manifest(path: Path, root: Path, info: HostInfo) -> tuple[pinfile.LoadedManifest, list[str]]:
    loaded = pinfile.parse_file(pinfile.read(path, str(path)), str(path), root)
    view = loaded.view(info.property_id) if loaded.many else loaded.views[0]
    if view is None:
        raise GateError(f"{path}: lists no property {info.property_id!r}, the one the report is of")
    notes = []
    if view.sha256 != info.manifest_sha256:
        notes.append(
            f"{path} is not the manifest host {info.host.upper()} ran under (another sha256): "
            "the replay runs under this one's pins"
        )
    return view, notes


def _checkout(root: Path, info: HostInfo) -> list[str]:
    try:
        head = git.head_commit(root)
    except GateError:
        head = None
    if info.commit is None or head == info.commit:
        return []
    ran = info.commit[:12]
    return [f"this checkout is {head[:12] if head else 'not a commit'}, the host ran {ran}"]


def _order(test: str, request: Request, info: HostInfo, notes: list[str]) -> tuple[str, ...]:
    """The node ids to run in this order (empty: the test alone)."""
    if request.after:
        return (*request.after, test)
    if not request.predecessors:
        return ()
    ran = list(info.test_order.ran) if info.test_order is not None else []
    if test not in ran:
        notes.append(
            "--predecessors: the report lists no run order holding this test (host B ran its "
            "tests in collection order, or the list was capped): the test runs alone"
        )
        return ()
    return tuple(ran[: ran.index(test) + 1])


def _run(
    request: Request,
    root: Path,
    loaded: pinfile.LoadedManifest,
    report: hostreport.HostReport,
    case: TestCase,
    order: tuple[str, ...],
    notes: list[str],
    out: Path,
) -> Replayed:
    info = report.info
    if info.host == "b" and info.replay is None:
        notes.append(
            "the report holds no replay plan (an older gate): host B's time zone, locale, "
            "umask and CPU count are this machine's picks"
        )
    settings = runsettings.RunSettings(
        host=info.host,
        out=out,
        root=root,
        loaded=loaded,
        environ=request.environ,
        isolate=info.host == "b",
        python=request.python,
        namespaces=request.namespaces,
        timeout=request.timeout,
        audit=False,
        count_assertions=False,
        select=() if order else (case.id,),
        order=order,
        replay=info.replay,
    )
    ran = launch.run_host(settings)
    again = junitcases.merge(hostreport.read_host(out).tests).get(case.id)
    if again is None:
        raise GateError(
            f"{case.id}: the replay did not run it (see {out / layout.PYTEST_LOG}"
            f"{'' if request.out else ', kept with --out DIR'})"
        )
    reproduced, lost = _compare(info.variations, ran.variations, alone=len(order) < 2)
    return Replayed(
        test=case.id,
        host=info.host,
        reported=case.outcome,
        outcome=again.outcome,
        message=again.message,
        ran=order or (case.id,),
        reproduced=reproduced,
        notes=[*notes, *lost],
    )


ALONE = (
    "test_order: the test ran alone (--predecessors runs the tests host B ran before it, in "
    "its order; --after ID a pair's other test)"
)


def _compare(
    reported: Sequence[Variation], here: Sequence[Variation], *, alone: bool
) -> tuple[list[str], list[str]]:
    """Host B's varied dimensions this run varied too, and a note for each it could not."""
    mine = {v.dimension: v for v in here}
    reproduced, lost = [], []
    for variation in (v for v in reported if v.varied):
        local = mine.get(variation.dimension)
        if local is not None and local.varied:
            reproduced.append(variation.dimension)
        elif variation.dimension == "test_order" and alone:
            lost.append(ALONE)
        else:
            why = local.why_not if local is not None else "not varied"
            lost.append(f"not reproduced here: {variation.dimension} ({why})")
    return reproduced, lost
