"""Two host reports, paired test by test, checked against each other, and classified.

`evaluate` gathers the evidence for `verdict.classify`: it reads both reports (a report that
cannot be read becomes an `invalid` verdict, never an exception), pairs their tests on the
normalized id, decides each host's outcome and checks that the two runs can be compared at
all (same manifest bytes, the right host in each slot, two different hosts).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Literal

from entropy_action.core.errors import GateError
from entropy_action.core.findings import Finding
from entropy_action.core.hostinfo import outside_reason
from entropy_action.core.layout import ERROR_JSON, HOST_JSON
from entropy_action.evidence import hosterror, hostreport, junitcases
from entropy_action.evidence.hostreport import HostReport
from entropy_action.manifest.pindiff import PinDiff
from entropy_action.manifest.pinfile import LoadedManifest
from entropy_action.verdict import (
    clockswap,
    detection,
    live_entropy,
    pinswritten,
    places,
    provenance,
    removed,
)
from entropy_action.verdict.classify import Evidence, classify, counts
from entropy_action.verdict.model import (
    FAILING,
    Assertions,
    CrashCause,
    HostOutcome,
    TestOutcome,
    TestResult,
    TestSeed,
    Verdict,
    not_run_on,
)

# (paired results, hosts "A"/"B" whose collection failed) -> runtime findings
RuntimeFindings = Callable[[Sequence[TestResult], Collection[str]], Sequence[Finding]]
Label = Literal["a", "b"]


def evaluate(
    host_a: Path | HostReport,
    host_b: Path | HostReport | None,
    *,
    loaded: LoadedManifest | None,
    pin_diff: PinDiff | None,
    findings: Sequence[Finding] = (),
    runtime_findings: RuntimeFindings | None = None,
    strict_baseline: bool = False,
    require_host_b: bool = True,
    invalid: Sequence[str] = (),
    notes: Sequence[str] = (),
    base_a: Path | HostReport | None = None,
    base_b: Path | HostReport | None = None,
    forbid_live_entropy: bool = False,
    seams: Sequence[removed.Seam] = (),
    crash: CrashCause | None = None,
) -> Verdict:
    """The verdict on two host report directories; bad host input makes it `invalid`.

    `pin_diff` None means no pin check ran (pins count as intact, and the reasons say so);
    `runtime_findings` turns the paired tests into findings (the scan's not_executed);
    `invalid` are reasons found by the caller why the inputs cannot be judged (a host run
    that could not start); `notes` are appended to the reasons as they are. `base_a` and
    `base_b` are reports of the base ref's module on each host: they explain (a failing test
    that failed there too is marked `failed_at_base`), and never change a host's outcome.
    Each report is a directory to read or a HostReport the caller already read from one
    (read, then judge: the gate parses each report once).
    The hosts' live-entropy audits become `live_entropy` findings (see `live_entropy`), and,
    against the base's audits, `live_read_removed` and `gate_pin_read` findings (`removed`;
    `seams`: the base's production functions the head injects the value into, from the scan).
    `crash`: a host died of a signal (verdict.crash): the static evidence then leads the reasons.
    """
    causes = [*_cause("a", host_a, invalid), *(_cause("b", host_b, invalid) if host_b else [])]
    written = pinswritten.written(f for f in findings if counts(f, strict_baseline=strict_baseline))
    explained: list[str] = []  # pins the patch's own tests write: judged, not invalid
    report_a, problems = _read("a", host_a, written, explained)
    report_b: HostReport | None = None
    if host_b is not None:
        report_b, problems_b = _read("b", host_b, written, explained)
        problems += problems_b
    cross = _cross_checks(report_a, report_b, loaded, require_host_b)
    problems = [*causes, *invalid, *problems, *cross]  # a host's own cause leads
    base_notes: list[str] = []
    old_a = _read_base("a", base_a, base_notes)
    old_b = _read_base("b", base_b, base_notes)
    named = places.of(report_a, report_b) if old_a or old_b else None
    tests = with_baseline(pair(report_a, report_b), old_a, old_b, named)
    broken = [name for name, r in (("A", report_a), ("B", report_b)) if r and r.errors]
    if runtime_findings is None or old_a is None:  # nothing can attribute a one-sided test
        problems += unpaired(report_a, report_b, tests)
    # a host that died of a signal ran no test to skip: its absent tests are the crash's
    reported = report_a is not None and (report_b is not None or crash is None)
    runtime = list(runtime_findings(tests, broken)) if runtime_findings and reported else []
    live = _live(loaded, (report_a, report_b), (old_a, old_b), forbid_live_entropy, problems)
    live += _cheap_exits((report_a, report_b), (old_a, old_b), tests, seams, findings)
    live += clockswap.findings((report_a, report_b), old_a)
    live += provenance.findings(
        (r.info.provenance for r in (report_a, report_b) if r is not None),
        old_a.info.provenance if old_a is not None else None,
    )
    evidence = Evidence(
        host_a=_outcome(report_a, tests, "a"),
        host_b=_outcome(report_b, tests, "b"),
        pins_intact=pin_diff.intact if pin_diff is not None else True,
        pin_changes=(pin_diff or _NO_PIN_DIFF).summary(),
        pin_diff=tuple(pin_diff.changes) if pin_diff is not None else (),
        findings=(*findings, *runtime, *live),
        tests=tuple(tests),
        invalid=tuple(problems),
        errors=(*_host_errors("A", report_a), *_host_errors("B", report_b)),
        strict_baseline=strict_baseline,
        require_host_b=require_host_b,
        notes=(*([] if pin_diff is not None else [NO_PIN_CHECK]), *explained, *base_notes, *notes),
        crash=crash,
    )
    return classify(evidence)


def _live(
    loaded: LoadedManifest | None,
    head: tuple[HostReport | None, HostReport | None],
    base: tuple[HostReport | None, HostReport | None],
    forbid: bool,
    problems: list[str],
) -> list[Finding]:
    """Live reads on either host; with `forbid`, a host that did not audit is invalid input."""
    if forbid:
        problems.extend(
            f"host {name}: the live-entropy audit did not run, and "
            "constraints.forbid_live_entropy needs it"
            for name, report in zip("AB", head, strict=True)
            if report is not None and report.info.audit is None
        )
    return live_entropy.findings(
        (r.info.audit for r in head if r is not None),
        (r.info.audit for r in base if r is not None),
        loaded.manifest.pins if loaded is not None else None,
        forbid=forbid,
    )


def _cheap_exits(
    head: tuple[HostReport | None, HostReport | None],
    base: tuple[HostReport | None, HostReport | None],
    tests: Sequence[TestResult],
    seams: Sequence[removed.Seam],
    static: Sequence[Finding],
) -> list[Finding]:
    """Live reads the patch removed from production, and the gate's pins read there (one
    finding per place: a pin read the scan already found at that line is not repeated)."""
    head_audits = [r.info.audit for r in head if r is not None]
    base_audits = [r.info.audit for r in base if r is not None]
    said = {(f.kind, f.path, f.line) for f in static}
    pins = [
        f
        for f in (
            *removed.pin_reads(head_audits, base_audits),
            *detection.findings(head_audits, base_audits),
        )
        if (f.kind, f.path, f.line) not in said
    ]
    return [*removed.findings(base_audits, head_audits, tests, seams, static), *pins]


def _read_base(label: Label, dir: Path | HostReport | None, notes: list[str]) -> HostReport | None:
    if dir is None or isinstance(dir, HostReport):
        return dir
    try:
        return hostreport.read_host(dir)
    except GateError as exc:
        notes.append(
            f"the base run on host {label.upper()} is unusable ({exc.message}); "
            "failures there cannot be told pre-existing"
        )
        return None


def with_baseline(
    results: list[TestResult],
    base_a: HostReport | None,
    base_b: HostReport | None,
    named: dict[str, str] | None = None,
) -> list[TestResult]:
    """Each result with its outcome in the base ref's run on each host that had one: by id,
    else by the case's place (`named`: id -> entropy_case, verdict.places)."""
    if base_a is None and base_b is None:
        return results
    by_a = places.Base(base_a, named or {}) if base_a else None
    by_b = places.Base(base_b, named or {}) if base_b else None
    out = []
    for result in results:
        old_a = by_a.get(result.id) if by_a else None
        old_b = by_b.get(result.id) if by_b else None
        known = dataclasses.replace(
            result,
            base_a=None if by_a is None else _test_outcome(old_a),
            base_b=None if by_b is None else _test_outcome(old_b),
            base_assertions_a=_assertions(old_a) if by_a else None,
            base_assertions_b=_assertions(old_b) if by_b else None,
        )
        failed = known.failed_before("a") or known.failed_before("b")
        if failed != known.failed_at_base:
            known = dataclasses.replace(known, failed_at_base=failed)
        out.append(known)
    return out


_NO_PIN_DIFF = PinDiff(baseline="(no pin check)", baseline_found=False)
NO_PIN_CHECK = "no pin check ran (no --base-ref): the pins were not compared with a baseline"


def invalid_verdict(reason: str) -> Verdict:
    """The verdict when the inputs around the reports (manifest, base ref) are unusable."""
    return classify(Evidence(host_a="missing", host_b="missing", invalid=(reason,)))


UNREPORTED = "the host job failed before it uploaded its report, was cancelled or was skipped"


def unreported(label: Label, source: Path | HostReport) -> list[str]:
    """The one reason a host's folder holds no report: the error report its job left
    (error.json: the step and its one line), or why there is no report folder at all."""
    if isinstance(source, HostReport):
        return []
    name = label.upper()
    why = hosterror.unreported(source)
    if why is not None:
        return [f"host {name}: {why} ({UNREPORTED})"]
    try:
        error = hosterror.read(source)
    except GateError as exc:
        return [f"host {name}: {exc.message}"]
    if error is None:
        return []
    if error.host != label:
        return [f"host {name}: {ERROR_JSON} is host {error.host.upper()}'s error report"]
    said = error.message.removeprefix(f"host {label}: ")  # `run`'s own lines name the host
    return [f"host {name} could not run: {said} (step: {error.step})"]


def _cause(label: Label, source: Path | HostReport, invalid: Sequence[str]) -> list[str]:
    """`unreported`, unless the caller already said why this host has no folder (the local
    gate's host run that could not start): one reason per fact."""
    said = any(reason.startswith(f"host {label.upper()}") for reason in invalid)
    if said and isinstance(source, Path) and hosterror.unreported(source) is not None:
        return []
    return unreported(label, source)


def _read(
    label: Label, source: Path | HostReport, written: frozenset[str], explained: list[str]
) -> tuple[HostReport | None, list[str]]:
    """A host's report and why it cannot be judged; pins that did not take because the
    patch's tests write them (`written`, verdict.pinswritten) go to `explained` instead."""
    name = label.upper()
    if unreported(label, source):
        return None, []  # said once, by `unreported`
    try:
        report = source if isinstance(source, HostReport) else hostreport.read_host(source)
    except GateError as exc:
        return None, [f"host {name}: {exc.message}"]
    dir = report.dir
    problems: list[str] = []
    if report.info.host != label:
        problems.append(
            f"host {name}: {dir / HOST_JSON} is the report of host "
            f"{report.info.host.upper()}; --host-{label} needs host {name}'s report"
        )
    if report.info.imported_outside:
        problems.append(f"host {name}: {outside_reason(report.info)}")
    mismatch = report.info.pins_mismatch
    if mismatch and not pinswritten.unexplained(mismatch, written):
        explained.append(pinswritten.reason(name, mismatch, written))
    elif mismatch:
        problems.append(
            f"host {name}: {dir / HOST_JSON}: pins_mismatch: the test process did not see "
            "these pins as pinned: " + ", ".join(report.info.pins_mismatch)
        )
    return report, problems


def _cross_checks(
    a: HostReport | None, b: HostReport | None, loaded: LoadedManifest | None, require_b: bool
) -> list[str]:
    """Two reports of one manifest, property and commit, from two different hosts."""
    problems: list[str] = []
    present = [(name, r) for name, r in (("A", a), ("B", b)) if r is not None]
    if loaded is not None:
        for name, report in present:
            problems.extend(_against_manifest(name, report, loaded)[:1])
    if a and b:  # against each other what no manifest was there to check
        fields = ("commit",) if loaded else ("manifest_sha256", "property_id", "module", "commit")
        for field in fields:
            ours, theirs = getattr(a.info, field), getattr(b.info, field)
            if ours != theirs:
                problems.append(
                    f"host B: {b.dir / HOST_JSON}: {field} is {_shown(theirs)}, host A's is "
                    f"{_shown(ours)}: the hosts did not run the same {_WHAT[field]}"
                )
    if a and b and require_b and a.info.fingerprint == b.info.fingerprint:
        problems.append(
            f"{a.dir / HOST_JSON} and {b.dir / HOST_JSON}: the fingerprint is the same: "
            "comparing a process to itself is theater (run host B on another machine or with "
            "--isolate)"
        )
    return problems


_WHAT = {
    "manifest_sha256": "entropy.yaml bytes",
    "property_id": "property",
    "module": "property module",
    "commit": "commit",
}


def _against_manifest(name: str, report: HostReport, loaded: LoadedManifest) -> list[str]:
    where = f"host {name}: {report.dir / HOST_JSON}"
    info, manifest = report.info, loaded.manifest
    found = []
    if info.manifest_sha256 != loaded.sha256:
        found.append(
            f"{where}: manifest_sha256 is {info.manifest_sha256[:12]}…, {loaded.name} has "
            f"{loaded.sha256[:12]}…: host {name} ran other entropy.yaml bytes"
        )
    for field in ("property_id", "module"):
        if getattr(info, field) != getattr(manifest, field):
            found.append(
                f"{where}: {field} is {_shown(getattr(info, field))}, {loaded.name} says "
                f"{_shown(getattr(manifest, field))}: a report of another {_WHAT[field]}"
            )
    return found


def _shown(value: str | None, limit: int = 60) -> str:
    if value is None:
        return "missing"
    return repr(value if len(value) <= limit else value[: limit - 1] + "…")


def pair(a: HostReport | None, b: HostReport | None) -> list[TestResult]:
    """One TestResult per normalized test id, in host A's order, then host B's extra ones."""
    with junitcases.no_gc():
        return _pair(a, b)


def _pair(a: HostReport | None, b: HostReport | None) -> list[TestResult]:
    by_a = junitcases.merge(a.tests) if a else {}
    by_b = junitcases.merge(b.tests) if b else {}
    placed = places.by_place(by_a, by_b)
    results = []
    paired = 0  # tests both hosts ran
    # One pass over a suite that may hold 100,000 tests: for a test both hosts ran (nearly
    # every one) the helpers are inlined, and called only for what a test has.
    for test_id, in_a in by_a.items():
        in_b = by_b.get(test_id)
        if in_b is None and placed:
            in_b = by_b.get(placed.get(test_id, ""))
        if in_b is None:
            results.append(_result(test_id, in_a, None))
            continue
        paired += 1
        raw = in_a.raw_id
        seed_a = None if in_a.seed is None else _seed(in_a)
        results.append(
            TestResult(
                id=test_id,
                raw_ids=[raw] if raw == in_b.raw_id else [raw, in_b.raw_id],
                host_a=in_a.outcome,
                host_b=in_b.outcome,
                path=in_a.path,
                line=in_a.line,
                message_a=in_a.message,
                message_b=in_b.message,
                seed_a=seed_a,
                seed_b=None if in_b.seed is None else _seed_b(in_a, in_b, seed_a),
                assertions_a=None if in_a.assertions is None else _assertions(in_a),
                assertions_b=None if in_b.assertions is None else _assertions(in_b),
            )
        )
    if paired < len(by_b):  # tests only host B ran (not paired by id or place), in its order
        taken = set(placed.values())
        results.extend(
            _result(key, None, test)
            for key, test in by_b.items()
            if key not in by_a and key not in taken
        )
    return results


def _result(
    test_id: str, in_a: junitcases.TestCase | None, in_b: junitcases.TestCase | None
) -> TestResult:
    first = in_a or in_b
    assert first is not None
    return TestResult(
        id=test_id,
        raw_ids=_raw_ids(in_a, in_b),
        host_a=_test_outcome(in_a),
        host_b=_test_outcome(in_b),
        path=first.path,
        line=first.line,
        message_a=in_a.message if in_a else None,
        message_b=in_b.message if in_b else None,
        seed_a=_seed(in_a),
        seed_b=_seed(in_b),
        assertions_a=_assertions(in_a),
        assertions_b=_assertions(in_b),
    )


def _raw_ids(a: junitcases.TestCase | None, b: junitcases.TestCase | None) -> list[str]:
    if a is None or b is None or a.raw_id == b.raw_id:
        return [(a or b).raw_id]  # type: ignore[union-attr]  # one of them is a test
    return [a.raw_id, b.raw_id]


MAX_NAMED = 5  # test ids named in one reason


def unpaired(a: HostReport | None, b: HostReport | None, tests: Sequence[TestResult]) -> list[str]:
    """Why two reports that do not cover the same tests cannot be judged (no base run to
    attribute the difference): one line per host, naming the tests it did not run."""
    if a is None or b is None:
        return []
    problems = []
    sides: tuple[tuple[str, str, Label, HostReport], ...] = (("A", "B", "a", a), ("B", "A", "b", b))
    for name, other, host, report in sides:
        lacking = not_run_on(tests, host)
        if not lacking or report.errors:  # a host that failed to collect fails anyway
            continue
        named = ", ".join(
            f"{t.id} ({'absent' if t.outcome(host) == 'missing' else t.outcome(host)})"
            for t in lacking[:MAX_NAMED]
        )
        more = f" and {len(lacking) - MAX_NAMED} more" if len(lacking) > MAX_NAMED else ""
        problems.append(
            f"host {name} did not run {len(lacking)} of the tests host {other} ran: {named}{more}"
        )
    return problems


def _seed(test: junitcases.TestCase | None) -> TestSeed | None:
    if test is None or test.seed is None or test.rng_seed is None:
        return None
    return TestSeed(rng_seed=test.rng_seed, seed=test.seed)


def _seed_b(
    a: junitcases.TestCase, b: junitcases.TestCase, seed_a: TestSeed | None
) -> TestSeed | None:
    """Host B's seed; host A's TestSeed (a frozen value) when both seeded the test alike."""
    if seed_a is not None and (a.seed, a.rng_seed) == (b.seed, b.rng_seed):
        return seed_a
    return _seed(b)


def _assertions(test: junitcases.TestCase | None) -> Assertions | None:
    if test is None or test.assertions is None or test.assertion_sites is None:
        return None
    return _counted(test.assertions, test.assertion_sites)


@functools.lru_cache(maxsize=4096)
def _counted(executed: int, sites: int) -> Assertions:
    """One Assertions per count: tests share a few (a frozen value, shared safely)."""
    return Assertions(executed=executed, sites=sites)


def _test_outcome(test: junitcases.TestCase | None) -> TestOutcome:
    return test.outcome if test is not None else "missing"


def _outcome(report: HostReport | None, tests: Sequence[TestResult], host: Label) -> HostOutcome:
    """A host fails on any failing or erroring test at the head, whatever the base did."""
    if report is None:
        return "missing"
    if report.errors or not report.tests:
        return "fail"
    outcomes = (t.host_a for t in tests) if host == "a" else (t.host_b for t in tests)
    if not FAILING.isdisjoint(outcomes) or not_run_on(tests, host):
        return "fail"
    return report.outcome  # a nonzero exit without a failing test still fails


def _host_errors(name: str, report: HostReport | None) -> list[str]:
    if report is None:
        return []
    return [f"host {name}: {text}" for text in (*report.errors, *report.failure_notes())]


def base_cases(base_dir: Path | HostReport) -> dict[str, str] | None:
    """Normalized case id -> outcome in a run of the base's module (None when unusable)."""
    try:
        report = base_dir if isinstance(base_dir, HostReport) else hostreport.read_host(base_dir)
    except GateError:
        return None
    return {case.id: case.outcome for case in junitcases.merge(report.tests).values()}
