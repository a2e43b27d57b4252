"""The steps a host runs beside its property run, leaving their results as evidence.

The same two functions run in the local gate's host phases and in the workflow's host jobs
(`entropy-gate run`): what needs the PR's code to run is done where PR code already runs,
and the judge (judge.py) only reads what they wrote (evidence.py).

- host A, with a base: the strength check (the base's module on the head's code, mutation)
  into `strength.json`;
- host B, when it failed a test: the attribution re-runs of those tests, one perturbation
  left out each time, into `attribution.json`;
- host B, when the patch changed tests: the order probes into `probes.json`, and where one
  failed a test the base has, the base's module in that order once host B's base ran.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from entropy_action import scan
from entropy_action.core import layout
from entropy_action.core.errors import GateError
from entropy_action.core.hostinfo import AuditRecord, HostInfo
from entropy_action.evidence import hostreport, stepfiles
from entropy_action.gate import attribution, baserun, orderdep
from entropy_action.hosts import runsettings, temproot
from entropy_action.manifest.baseline import PinCheck
from entropy_action.scan import ScanResult, closure
from entropy_action.scan.runtime import bare_id
from entropy_action.strength import assess, base_on_head, evidence


def strength_step(
    check: PinCheck,
    host: base_on_head.HostSettings,
    folder: Path,
    info: HostInfo,
    scanned: ScanResult | None = None,
    work: Path | None = None,
) -> stepfiles.StrengthReport:
    """The strength check after host A ran into `folder`, its own runs in `work` (default: a
    temporary folder); written to folder/strength.json."""
    assert check.base_commit is not None
    plan = base_on_head.plan(check, closure.data_files(info.test_data))
    measured = plan is not None
    found = assess.Strength()
    if plan is not None and work is not None:
        found = assess.measure_strength(
            check, plan, scanned or scan.scan(check), host, (folder, work)
        )
    elif plan is not None:
        with temproot.scratch("entropy-gate-strength-") as scratch:
            found = assess.measure_strength(
                check, plan, scanned or scan.scan(check), host, (folder, scratch)
            )
    report = stepfiles.StrengthReport(
        property_id=info.property_id,
        manifest_sha256=info.manifest_sha256,
        commit=info.commit,
        base_commit=check.base_commit,
        measured=measured,
        findings=list(found.findings),
        notes=list(found.notes),
        mutation=found.score,
        unmeasured=list(found.unmeasured),
        moved=list(found.moved),
    )
    stepfiles.write(folder, layout.STRENGTH_JSON, report)
    return report


def strength_b_step(
    check: PinCheck,
    host: base_on_head.HostSettings,
    folder: Path,
    base_folder: Path | None,
    scanned: ScanResult | None = None,
    work: Path | None = None,
) -> stepfiles.StrengthReport | None:
    """Host B, after its head passed into `folder`: the base's test side on the head's code
    under host B's variations (no mutation: host A's step measures that) into host B's
    strength.json. A defect only host B shows (production reading the live clock) is hidden
    from host A's strength step; a patch that changes the test so host B cannot see it either
    (a due date a century out, the test deleted or renamed) is `test_changed_to_pass` here,
    and a base test that fails here is not "moved". A failure the base's own run on host B
    (`base_folder`) had too is pre-existing: a note, not a finding (the patch may be fixing a
    test that read the live clock itself). None when host B's run is unusable or failed."""
    assert check.base_commit is not None
    try:
        report = hostreport.read_host(folder)
    except GateError:
        return None
    if report.outcome != "pass":
        return None  # host B failed: the verdict rejects, whatever this would add
    plan = base_on_head.plan(check, closure.data_files(report.info.test_data))
    found, moved = assess.Strength(), frozenset[str]()
    if plan is not None:
        scanned = scanned or scan.scan(check)
        with temproot.scratch("entropy-gate-strength-b-") as scratch:
            where = work or scratch
            found, passed = assess.run_base_on_head(check, plan, scanned, host, (folder, where))
            found = _pre_existing(found, base_folder, where / base_on_head.OUT)
        moved = evidence.moved(scanned.removed, passed, frozenset())
    written = stepfiles.StrengthReport(
        property_id=report.info.property_id,
        manifest_sha256=report.info.manifest_sha256,
        commit=report.info.commit,
        base_commit=check.base_commit,
        measured=plan is not None,
        findings=list(found.findings),
        notes=list(found.notes),
        unmeasured=list(found.unmeasured),
        moved=sorted(moved),
    )
    stepfiles.write(folder, layout.STRENGTH_JSON, written)
    return written


LIVE_APIS = ("time.", "datetime.", "date.", "random.", "os.urandom", "secrets.", "uuid.")


def _pre_existing(
    found: assess.Strength, base_folder: Path | None, crossed: Path
) -> assess.Strength:
    """`found` less the findings about tests that failed in the base's own run on host B
    too *and* read the live clock or RNG in their own code there, never through the code
    under test (the audit of the run in `crossed`): a test that read the live clock itself,
    which the patch fixes (notes). A base test that failed at the base because production
    reads the live clock is still a test changed to pass: main was red on host B and the
    patch hid it instead of fixing the code."""
    if not found.findings:
        return found
    try:
        base = hostreport.read_host(base_folder) if base_folder is not None else None
        audit = hostreport.read_info(crossed / layout.HOST_JSON).audit
    except GateError:
        return found
    failed = {
        bare_id(case.id).partition("::")[2]
        for case in (base.tests if base is not None else ())
        if case.outcome in FAILED
    }

    def readers(records: Sequence[AuditRecord]) -> set[str]:
        return {bare_id(r.test).partition("::")[2] for r in records if r.api.startswith(LIVE_APIS)}

    own = readers(audit.test_records) - readers(audit.records) if audit is not None else set()
    excused = failed & own
    kept = tuple(f for f in found.findings if f.test not in excused)
    notes = tuple(
        f"the base's {f.test} fails on host B at the base too, and reads the live clock or RNG "
        f"in its own code: pre-existing there, not counted ({f.message})"
        for f in found.findings
        if f.test in excused
    )
    return dataclasses.replace(found, findings=kept, notes=(*found.notes, *notes))


def attribution_step(
    settings: runsettings.RunSettings,
    environ: Mapping[str, str],
    pinned: Sequence[str],
    dims: Sequence[str],
    want: Mapping[str, str] | None = None,
    order_b: Sequence[str] = (),
) -> stepfiles.AttributionReport | None:
    """After host B ran into settings.out: when it failed tests, re-run them with one of its
    perturbations left out at a time (and bisect the environment), into attribution.json.
    `want` (test id -> the outcome that explains a difference) replaces "every test host B
    failed, which passing would explain" where the caller knows host A's outcomes too."""
    try:
        report = hostreport.read_host(settings.out)
    except GateError:
        return None  # an unusable report: the judge says why; nothing to attribute
    if want is None:
        want = dict.fromkeys(attribution.failing_ids(report), "passed")
    failing = sorted(want)
    if not failing:
        return None
    scrubbed = attribution.scrubbed_names(environ, pinned)
    orders = _orders(report.info)
    dims = _varied(report.info, dims)
    if order_b:  # an order probe's failure: the probe's order is the one to search
        orders = attribution.Orders(orders.a or _collected(report.info), tuple(order_b))
        dims = [*dims, orderdep.ORDER] if orderdep.ORDER not in dims else dims
    if not orders.b:  # host B ran its tests in host A's order: no order trials
        dims = [d for d in dims if d != "test_order"]
    if settings.progress is not None:
        settings.progress(f"attributing: re-running {len(failing)} test(s)…")
    with temproot.scratch("entropy-gate-attribution-") as work:
        rerun = attribution.rerun_host_b(settings, work, failing)
        trials = attribution.record(rerun, want, scrubbed, dims, orders)
    found = stepfiles.AttributionReport(
        property_id=report.info.property_id,
        manifest_sha256=report.info.manifest_sha256,
        commit=report.info.commit,
        tests=failing,
        dimensions=list(dims),
        scrubbed=scrubbed,
        trials=[
            stepfiles.Trial(
                revert=sorted(trial.revert),
                keep_env=list(trial.keep_env),
                order=list(trial.order),
                repeat=trial.repeat,
                outcomes=dict(got),
            )
            for trial, got in trials
        ],
        order_a=list(orders.a),
        order_b=list(orders.b),
    )
    stepfiles.write(settings.out, layout.ATTRIBUTION_JSON, found)
    return found


FAILED = frozenset({"failed", "error"})


def probe_step(
    settings: runsettings.RunSettings,
    environ: Mapping[str, str],
    pinned: Sequence[str],
    dims: Sequence[str],
    changed: Collection[str],
) -> stepfiles.ProbeReport | None:
    """After host B passed, when the patch added or changed tests of the property (`changed`:
    their function names): the module again in the designed orders (orderdep.probe_orders:
    reversed, the changed tests first, last) into probes.json. A test a probe fails is then
    attributed like a failure of host B's own run (attribution.json, the probe's order as
    host B's), so the judge finds its pair."""
    try:
        report = hostreport.read_host(settings.out)
    except GateError:
        return None
    collected = _collected(report.info)
    ids = changed_ids(collected, changed)
    orders = orderdep.probe_orders(collected, ids) if report.outcome == "pass" else []
    if not orders:
        return None
    if settings.progress is not None:
        settings.progress(f"order probes: {len(orders)} run(s) of the module in designed orders…")
    with temproot.scratch("entropy-gate-probes-") as work:
        rerun = attribution.rerun_host_b(settings, work, list(collected))
        probes = [(order, rerun(attribution.Trial(order=order))) for order in orders]
    found = stepfiles.ProbeReport(
        property_id=report.info.property_id,
        manifest_sha256=report.info.manifest_sha256,
        commit=report.info.commit,
        changed=ids,
        probes=[stepfiles.Trial(order=list(o), outcomes=dict(got)) for o, got in probes],
    )
    stepfiles.write(settings.out, layout.PROBES_JSON, found)
    for order, got in probes:
        victims = {t: "passed" for t, outcome in got.items() if outcome in FAILED}
        if victims:  # the first probe that failed a test: its order is searched for the pair
            attribution_step(settings, environ, pinned, dims, want=victims, order_b=order)
            break
    return found


def base_probe_step(
    base: baserun.BaseRun, check: PinCheck, folder: Path, base_folder: Path
) -> bool:
    """After host B's base run (`base_folder`), where an order probe failed a test the base
    has: the base's module in that probe's order (its own tests of it) on host B, what they
    did written into the probe's `base` in probes.json, so the judge can tell a failure the
    base shares in the same order (jdatetime's locale left set by an older test) from one
    the patch made. Explanation only: the head's failure stands. Whether it ran."""
    try:
        info = hostreport.read_info(folder / layout.HOST_JSON)
        found = stepfiles.read_probes(folder, info)
        at_base = _collected(hostreport.read_info(base_folder / layout.HOST_JSON))
    except GateError:
        return False
    if found is None or check.base is None or check.base_commit is None:
        return False
    known = set(at_base)
    index, probe = next(
        (
            (i, p)
            for i, p in enumerate(found.probes)
            if any(o in FAILED and t in known for t, o in p.outcomes.items())
        ),
        (-1, None),
    )
    if probe is None:
        return False
    order = [test for test in probe.order if test in known]
    base.progress(f"order probe at the base: {len(order)} tests in the failing probe's order")
    with (
        temproot.scratch("entropy-gate-base-probe-") as work,
        baserun.worktree(check, work, "b") as tree,
    ):
        settings = baserun.settings(base, check.base, check.root, tree, work / "out", "b")
        got = attribution.rerun_host_b(settings, work, order)(attribution.Trial(order=tuple(order)))
    probes = [*found.probes]
    probes[index] = probe.model_copy(update={"base": dict(got)})
    stepfiles.write(folder, layout.PROBES_JSON, found.model_copy(update={"probes": probes}))
    return True


def _collected(info: HostInfo) -> tuple[str, ...]:
    return tuple(info.test_order.collected) if info.test_order is not None else ()


def _function(node_id: str) -> str:
    """`tests/t.py::TestX::test_y[1]` -> `test_y`."""
    return node_id.rsplit("::", maxsplit=1)[-1].split("[", maxsplit=1)[0]


_INDEX = re.compile(r"\d+(?:_.*)?")


def changed_ids(collected: Sequence[str], changed: Collection[str]) -> list[str]:
    """The collected ids of the changed tests (function names): by the function's name, or
    as a name a generator made from one (`test_y_03_rest`: parameterized.expand, ddt). A
    plain `test_y_0` beside a changed `test_y` is taken too: one more test in the designed
    orders, never a finding by itself."""

    def made(function: str) -> bool:
        return any(
            function.startswith(name + "_") and _INDEX.fullmatch(function[len(name) + 1 :])
            for name in changed
        )

    return [i for i in collected if _function(i) in changed or made(_function(i))]


def _varied(info: HostInfo, dims: Sequence[str]) -> list[str]:
    """The perturbations host B's report says took effect (host.json `variations`): one
    pinned, turned off by the manifest or not possible on this machine held host A's value,
    so a re-run leaving it out would only repeat host B's run. A report without the list (an
    older gate's) keeps them all."""
    if not info.variations:
        return list(dims)
    varied = {v.dimension for v in info.variations if v.varied}
    return [d for d in dims if d in varied]


def _orders(info: HostInfo) -> attribution.Orders:
    """Host B's collection order (host A's) and run order, when it shuffled its tests."""
    seen = info.test_order
    if info.test_order_seed is None or seen is None:
        return attribution.Orders()
    return attribution.Orders(tuple(seen.collected), tuple(seen.ran))
