"""The classification of the seed's table, as a pure function of typed evidence.

No I/O here: the evidence is gathered elsewhere (pin check, scan, host reports) and
every reporter (text, JSON, check run) renders the Verdict this returns.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

from entropy_action.core.findings import Finding, FindingKind
from entropy_action.manifest.pindiff import PinChange
from entropy_action.verdict import live_entropy, rollup
from entropy_action.verdict.model import (
    FAILING,
    ROWS,
    Classification,
    CrashCause,
    HostOutcome,
    TestResult,
    Verdict,
    not_run_on,
)


@dataclass(frozen=True)
class Evidence:
    """Everything the classification looks at."""

    host_a: HostOutcome
    host_b: HostOutcome
    pins_intact: bool = True
    pin_changes: dict[str, list[str]] = field(default_factory=dict)
    pin_diff: tuple[PinChange, ...] = ()
    findings: tuple[Finding, ...] = ()
    tests: tuple[TestResult, ...] = ()
    invalid: tuple[str, ...] = ()  # why the inputs cannot be judged
    errors: tuple[str, ...] = ()  # host errors to show (not reasons by themselves)
    strict_baseline: bool = False  # pre-existing findings reject too (never host failures)
    require_host_b: bool = True
    notes: tuple[str, ...] = ()  # appended to the reasons as they are
    crash: CrashCause | None = None  # a host died of a signal: the patch or the environment


def counted(evidence: Evidence) -> list[Finding]:
    """The findings that count against the patch."""
    return [f for f in evidence.findings if counts(f, strict_baseline=evidence.strict_baseline)]


def counts(finding: Finding, *, strict_baseline: bool) -> bool:
    """Whether one finding counts against the patch: an error the patch introduced, or under
    `constraints.strict_baseline` any error (the pre-commit hook asks this of each one)."""
    return finding.level == "error" and (finding.introduced or strict_baseline)


# A pin too: the patch changed what decides the gate's run (constraints.protected_paths).
GATE_CONFIG: FindingKind = "gate_config_changed"


def config_changes(evidence: Evidence) -> list[Finding]:
    """The counted findings that changed the gate's own configuration (protected_paths)."""
    return [f for f in counted(evidence) if f.kind == GATE_CONFIG]


def classify(evidence: Evidence) -> Verdict:
    """The seed's table with the documented precedence; `reasons` lists every rule that fired."""
    reasons = _reasons(evidence)
    classification = _decide(evidence)
    return Verdict(
        classification=classification,
        merge=classification == "merge_candidate",
        row=ROWS[classification],
        host_a=evidence.host_a,
        host_b=evidence.host_b,
        pins_intact=evidence.pins_intact,
        pin_changes={k: list(v) for k, v in evidence.pin_changes.items()},
        pin_diff=list(evidence.pin_diff),
        strict_baseline=evidence.strict_baseline,
        findings=list(evidence.findings),
        reasons=reasons,
        tests=list(evidence.tests),
        errors=list(evidence.errors),
        crash=evidence.crash,
    )


def _decide(e: Evidence) -> Classification:
    if e.invalid or e.host_a == "missing" or (e.host_b == "missing" and e.require_host_b):
        return "invalid"
    if not e.pins_intact or config_changes(e):
        return "pin_mutation"
    host_b = e.host_a if e.host_b == "missing" else e.host_b
    if counted(e):
        return "masked_defect" if e.host_a == host_b == "fail" else "entropy_silenced"
    table: dict[tuple[HostOutcome, HostOutcome], Classification] = {
        ("pass", "pass"): "merge_candidate",
        ("fail", "fail"): "real_defect",
        ("pass", "fail"): "env_coupled",
        ("fail", "pass"): "env_coupled_reverse",
    }
    return table[(e.host_a, host_b)]


def _reasons(e: Evidence) -> list[str]:
    """Every rule that fired: why the inputs cannot be judged first, unless a host died of a
    signal: then what the patch was seen doing without running it (pins, silencing) leads,
    since the crash may be its own doing."""
    causes = [f"invalid input: {why}" for why in e.invalid]
    reasons = [] if e.crash else causes
    if e.host_a == "missing" and not e.invalid:
        reasons.append("invalid input: host A did not report")
    if e.host_b == "missing" and not e.invalid:
        reasons.append(
            "invalid input: host B did not report and constraints.require_host_b is true"
            if e.require_host_b
            else "host B did not report; constraints.require_host_b is false, so host A decides"
        )
    if not e.pins_intact:
        parts = [
            f"{kind}: {', '.join(keys)}"
            for kind, keys in e.pin_changes.items()
            if keys and kind != "added"
        ]
        reasons.append("pin mutation against the baseline (" + "; ".join(parts) + ")")
    reasons.extend(_finding_reasons(e))
    reasons.extend(causes if e.crash else [])
    reasons.extend(_host_reasons(e))
    # a read that stood at the base is a collapsed notice of the summary, not a reason
    introduced = [f for f in e.findings if f.level == "warning" and f.introduced]
    reasons.extend(live_entropy.reasons(introduced))
    reasons.extend(e.notes)
    return reasons


def _finding_reasons(e: Evidence) -> list[str]:
    out: list[str] = []
    config = config_changes(e)
    if config:
        files = ", ".join(dict.fromkeys(f.path for f in config))
        out.append(
            f"gate configuration changed by the patch ({len(config)} file(s): {files}): "
            "a maintainer lands such a change on its own"
        )
    against = [f for f in counted(e) if f.kind != GATE_CONFIG]
    if against:
        kinds = Counter(f.kind for f in against)
        listed = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
        scope = "present (strict_baseline)" if e.strict_baseline else "introduced by the patch"
        out.append(f"entropy silenced: {len(against)} finding(s) {scope} ({listed})")
    pre = [f for f in e.findings if not f.introduced and f.level == "error"]
    if pre and not e.strict_baseline:
        out.append(f"{len(pre)} pre-existing finding(s) stood at the base ref (notices only)")
    return out


def _host_reasons(e: Evidence) -> list[str]:
    out: list[str] = []
    hosts: tuple[tuple[str, HostOutcome, Literal["a", "b"]], ...] = (
        ("A", e.host_a, "a"),
        ("B", e.host_b, "b"),
    )
    for name, outcome, key in hosts:
        if outcome == "missing":
            continue
        failing = [t for t in e.tests if t.outcome(key) in FAILING]
        bad = Counter(t.outcome(key) for t in failing)
        details = ", ".join(f"{n} {what}" for what, n in sorted(bad.items()))
        before = sum(t.failed_before(key) for t in failing)
        if before:
            details += f"; {_at_base(before)}"
        unrun = len(not_run_on(e.tests, key))
        if unrun:
            other = "B" if name == "A" else "A"
            details += f"{'; ' if details else ''}{unrun} not run that host {other} ran"
        out.append(f"host {name}: {outcome}" + (f" ({details})" if details else ""))
    if e.host_a == "pass" and e.host_b == "fail":
        out.append(
            "host A passed and host B failed: the property depends on a source that differs "
            "on host B and that the pins do not fix"
        )
    elif e.host_a == "fail" and e.host_b == "pass":
        out.append("host A failed and host B passed: host A's environment breaks the property")
    elif e.host_a == "fail" and e.host_b == "fail":
        out.append("both hosts failed under the pins: a real defect")
    return out


def _at_base(count: int) -> str:
    """Why a failure that stood at the base ref still counts, in words."""
    it = "it" if count == 1 else "them"
    return (
        f"{count} failed at the base ref too: the patch did not cause {it}, "
        f"and it does not fix {it}"
    )


def exit_code(verdict: Verdict) -> int:
    """0 merge candidate, 2 invalid, 1 any other rejection (compare and gate)."""
    if verdict.classification == "merge_candidate":
        return 0
    return 2 if verdict.classification == "invalid" else 1


def contradictions(verdict: Verdict) -> list[str]:
    """What in a verdict read back from a file `classify` could not have written: the checks
    that keep a forged or edited verdict from being published as a merge."""
    found = []
    if verdict.merge != (verdict.classification == "merge_candidate"):
        found.append(f"merge is {str(verdict.merge).lower()} for {verdict.classification!r}")
    if verdict.classification == "merge_candidate":
        if (verdict.host_a, verdict.host_b) != ("pass", "pass"):
            found.append(f"merge_candidate with host A {verdict.host_a}, host B {verdict.host_b}")
        if not verdict.pins_intact:
            found.append("merge_candidate with pins that are not intact")
        if any(f.introduced or verdict.strict_baseline for f in verdict.findings):
            found.append("merge_candidate with findings that count against the patch")
    if verdict.properties is not None:
        found += _rolled_up(verdict)
    return found


def _rolled_up(verdict: Verdict) -> list[str]:
    """A rolled-up verdict: each property's verdict holds, and the worst of them decides."""
    assert verdict.properties is not None
    if not verdict.properties:
        return ["a rolled-up verdict with no property"]
    found = [
        f"property {p.property_id}: {why}"
        for p in verdict.properties
        for why in contradictions(p.verdict)
    ]
    found += [
        f"property {p.property_id}: a rolled-up verdict inside a property's"
        for p in verdict.properties
        if p.verdict.properties is not None
    ]
    worst = rollup.deciding(verdict.properties)[0].verdict.classification
    if verdict.classification != worst:
        found.append(
            f"classification {verdict.classification!r} is not the worst of its properties "
            f"({worst!r})"
        )
    return found
