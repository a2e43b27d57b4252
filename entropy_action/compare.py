"""Two host reports, paired test by test, checked against each other, and classified.

`evaluate` gathers the evidence for `verdict.classify`: it reads both reports (a report that
cannot be read becomes an `invalid` verdict, never an exception), pairs their tests on the
normalized id, decides each host's outcome and checks that the two runs can be compared at
all (same manifest bytes, the right host in each slot, two different hosts).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Literal

from entropy_action import live_entropy, reports
from entropy_action.errors import GateError
from entropy_action.findings import Finding
from entropy_action.host import HOST_JSON
from entropy_action.manifest import LoadedManifest
from entropy_action.pins import PinDiff
from entropy_action.reports import HostReport
from entropy_action.verdict import (
    FAILING,
    Evidence,
    HostOutcome,
    TestOutcome,
    TestResult,
    Verdict,
    classify,
)

# (paired results, hosts "A"/"B" whose collection failed) -> runtime findings
RuntimeFindings = Callable[[Sequence[TestResult], Collection[str]], Sequence[Finding]]
Label = Literal["a", "b"]


def evaluate(
    host_a: Path,
    host_b: Path | None,
    *,
    loaded: LoadedManifest | None,
    pin_diff: PinDiff | None,
    findings: Sequence[Finding] = (),
    runtime_findings: RuntimeFindings | None = None,
    strict_baseline: bool = False,
    require_host_b: bool = True,
    invalid: Sequence[str] = (),
    notes: Sequence[str] = (),
    base_a: Path | None = None,
    base_b: Path | None = None,
    forbid_live_entropy: bool = False,
) -> Verdict:
    """The verdict on two host report directories; bad host input makes it `invalid`.

    `pin_diff` None means no pin check ran (pins count as intact, and the reasons say so);
    `runtime_findings` turns the paired tests into findings (the scan's not_executed);
    `invalid` are reasons found by the caller why the inputs cannot be judged (a host run
    that could not start); `notes` are appended to the reasons as they are. `base_a` and
    `base_b` are reports of the base ref's module on each host: a test that fails the same
    way there is a pre-existing failure, which does not fail the host (unless strict).
    The hosts' live-entropy audits become `live_entropy` findings (see `live_entropy`).
    """
    report_a, problems = _read("a", host_a)
    report_b: HostReport | None = None
    if host_b is not None:
        report_b, problems_b = _read("b", host_b)
        problems += problems_b
    problems = [*invalid, *problems, *_cross_checks(report_a, report_b, loaded, require_host_b)]
    base_notes: list[str] = []
    old_a = _read_base("a", base_a, base_notes)
    old_b = _read_base("b", base_b, base_notes)
    tests = with_baseline(pair(report_a, report_b), old_a, old_b)
    broken = [name for name, r in (("A", report_a), ("B", report_b)) if r and r.errors]
    runtime = list(runtime_findings(tests, broken)) if runtime_findings and report_a else []
    live = _live(loaded, (report_a, report_b), (old_a, old_b), forbid_live_entropy, problems)
    evidence = Evidence(
        host_a=_outcome(report_a, tests, "a", strict_baseline),
        host_b=_outcome(report_b, tests, "b", strict_baseline),
        pins_intact=pin_diff.intact if pin_diff is not None else True,
        pin_changes=(pin_diff or _NO_PIN_DIFF).summary(),
        pin_diff=tuple(pin_diff.changes) if pin_diff is not None else (),
        findings=(*findings, *runtime, *live),
        tests=tuple(tests),
        invalid=tuple(problems),
        errors=(*_host_errors("A", report_a), *_host_errors("B", report_b)),
        strict_baseline=strict_baseline,
        require_host_b=require_host_b,
        notes=(*([] if pin_diff is not None else [NO_PIN_CHECK]), *base_notes, *notes),
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


def _read_base(label: Label, dir: Path | None, notes: list[str]) -> HostReport | None:
    if dir is None:
        return None
    try:
        return reports.read_host(dir)
    except GateError as exc:
        notes.append(
            f"the base run on host {label.upper()} is unusable ({exc.message}); "
            "failures there cannot be told pre-existing"
        )
        return None


def with_baseline(
    results: list[TestResult], base_a: HostReport | None, base_b: HostReport | None
) -> list[TestResult]:
    """Each result with its outcome in the base ref's run on each host that had one."""
    if base_a is None and base_b is None:
        return results
    by_a = reports.merge(base_a.tests) if base_a else None
    by_b = reports.merge(base_b.tests) if base_b else None
    return [
        result.model_copy(
            update={
                "base_a": None if by_a is None else _test_outcome(by_a.get(result.id)),
                "base_b": None if by_b is None else _test_outcome(by_b.get(result.id)),
            }
        )
        for result in results
    ]


_NO_PIN_DIFF = PinDiff(baseline="(no pin check)", baseline_found=False)
NO_PIN_CHECK = "no pin check ran (no --base-ref): the pins were not compared with a baseline"


def invalid_verdict(reason: str) -> Verdict:
    """The verdict when the inputs around the reports (manifest, base ref) are unusable."""
    return classify(Evidence(host_a="missing", host_b="missing", invalid=(reason,)))


def _read(label: Label, dir: Path) -> tuple[HostReport | None, list[str]]:
    name = label.upper()
    try:
        report = reports.read_host(dir)
    except GateError as exc:
        return None, [f"host {name}: {exc.message}"]
    problems: list[str] = []
    if report.info.host != label:
        problems.append(
            f"host {name}: {dir / HOST_JSON} is the report of host "
            f"{report.info.host.upper()}; --host-{label} needs host {name}'s report"
        )
    if report.info.pins_mismatch:
        problems.append(
            f"host {name}: the test process did not see these pins as pinned: "
            + ", ".join(report.info.pins_mismatch)
        )
    return report, problems


def _cross_checks(
    a: HostReport | None, b: HostReport | None, loaded: LoadedManifest | None, require_b: bool
) -> list[str]:
    problems: list[str] = []
    if a and b and a.info.manifest_sha256 != b.info.manifest_sha256:
        problems.append(
            f"manifest_sha256 differs between host A ({a.info.manifest_sha256[:12]}…) and "
            f"host B ({b.info.manifest_sha256[:12]}…): the hosts ran different entropy.yaml bytes"
        )
    for name, report in (("A", a), ("B", b)):
        if loaded is not None and report and report.info.manifest_sha256 != loaded.sha256:
            problems.append(
                f"host {name} ran a manifest with sha256 {report.info.manifest_sha256[:12]}…, "
                f"not {loaded.name} ({loaded.sha256[:12]}…)"
            )
    if a and b and require_b and a.info.fingerprint == b.info.fingerprint:
        problems.append(
            "host A and host B have the same fingerprint: comparing a process to itself is "
            "theater (run host B on another machine or with --isolate)"
        )
    return problems


def pair(a: HostReport | None, b: HostReport | None) -> list[TestResult]:
    """One TestResult per normalized test id, in host A's order, then host B's extra ones."""
    by_a = reports.merge(a.tests) if a else {}
    by_b = reports.merge(b.tests) if b else {}
    results = []
    for test_id in [*by_a, *(key for key in by_b if key not in by_a)]:
        in_a, in_b = by_a.get(test_id), by_b.get(test_id)
        first = in_a or in_b
        assert first is not None
        results.append(
            TestResult(
                id=test_id,
                raw_ids=list(dict.fromkeys(t.raw_id for t in (in_a, in_b) if t is not None)),
                host_a=_test_outcome(in_a),
                host_b=_test_outcome(in_b),
                path=first.path,
                line=first.line,
                message_a=in_a.message if in_a else None,
                message_b=in_b.message if in_b else None,
            )
        )
    return results


def _test_outcome(test: reports.TestCase | None) -> TestOutcome:
    return test.outcome if test is not None else "missing"


def _outcome(
    report: HostReport | None, tests: Sequence[TestResult], host: Label, strict: bool
) -> HostOutcome:
    """A host fails on a failing test, unless every failing test failed at the base too."""
    if report is None:
        return "missing"
    if report.errors or not report.tests:
        return "fail"
    failing = [t for t in tests if t.outcome(host) in FAILING]
    if not failing:
        return report.outcome  # a nonzero exit without a failing test still fails
    if strict:
        return "fail"
    return "fail" if any(not t.failed_before(host) for t in failing) else "pass"


def _host_errors(name: str, report: HostReport | None) -> list[str]:
    if report is None:
        return []
    return [f"host {name}: {text}" for text in (*report.errors, *report.failure_notes())]


def base_cases(base_dir: Path) -> dict[str, str] | None:
    """Normalized case id -> outcome in a run of the base's module (None when unusable)."""
    try:
        report = reports.read_host(base_dir)
    except GateError:
        return None
    return {case.id: case.outcome for case in reports.merge(report.tests).values()}
