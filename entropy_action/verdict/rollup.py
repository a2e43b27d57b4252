"""The verdict on a manifest that lists many properties: each property judged on its own,
then rolled up. Pure: no I/O.

The repository's classification is the worst of its properties' by the table's precedence
(`SEVERITY`), so one property that fails, did not run, or was silenced rejects the patch
whatever the others say; `merge` holds only when every property is a merge candidate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from entropy_action.core.findings import Finding
from entropy_action.manifest.pindiff import PinChange
from entropy_action.verdict.model import (
    ROWS,
    Classification,
    HostOutcome,
    PropertyVerdict,
    TestResult,
    Verdict,
)

# Worst first: the table's precedence (invalid, then pin mutation, then silencing, then the
# host rows), and among the host rows a defect before a coupling.
SEVERITY: tuple[Classification, ...] = (
    "invalid",
    "pin_mutation",
    "masked_defect",
    "entropy_silenced",
    "real_defect",
    "env_coupled",
    "env_coupled_reverse",
    "merge_candidate",
)
_HOST_SEVERITY: tuple[HostOutcome, ...] = ("missing", "fail", "pass")


@dataclass(frozen=True)
class Judged:
    """One property's verdict, as the judge gave it."""

    property_id: str
    module: str | None
    verdict: Verdict


def rank(classification: Classification) -> int:
    """0 for the worst classification."""
    return SEVERITY.index(classification)


def deciding(properties: Sequence[PropertyVerdict]) -> list[PropertyVerdict]:
    """The properties in the order a reader needs them: the worst first, then by id."""
    return sorted(properties, key=lambda p: (rank(p.verdict.classification), p.property_id))


def dropped_verdict(change: PinChange) -> Verdict:
    """A property the head's manifest no longer lists: a pin mutation (its tests left the
    gate), with no host run to show."""
    return Verdict(
        classification="pin_mutation",
        merge=False,
        row=ROWS["pin_mutation"],
        host_a="missing",
        host_b="missing",
        pins_intact=False,
        pin_changes={"missing": [change.key]},
        pin_diff=[change],
        findings=[],
        reasons=[f"pin mutation against the baseline (missing: {change.key})", change.message],
        tests=[],
    )


def roll_up(judged: Sequence[Judged], dropped: Sequence[PinChange] = ()) -> Verdict:
    """The one verdict over every property (see the module's docstring)."""
    properties = [
        PropertyVerdict(property_id=j.property_id, module=j.module, verdict=j.verdict)
        for j in judged
    ]
    properties += [
        PropertyVerdict(
            property_id=str(
                change.old.get("property_id") if isinstance(change.old, dict) else change.key
            ),
            module=None,
            verdict=dropped_verdict(change),
        )
        for change in dropped
    ]
    if not properties:
        raise ValueError("roll_up needs at least one property")
    ordered = deciding(properties)
    worst = ordered[0]
    classification = worst.verdict.classification
    verdicts = [p.verdict for p in properties]
    return Verdict(
        classification=classification,
        merge=all(v.merge for v in verdicts) and classification == "merge_candidate",
        row=worst.verdict.row,
        host_a=_worst_host([v.host_a for v in verdicts]),
        host_b=_worst_host([v.host_b for v in verdicts]),
        pins_intact=all(v.pins_intact for v in verdicts),
        pin_changes=_pin_changes(properties),
        pin_diff=_unique([c for v in verdicts for c in v.pin_diff]),
        strict_baseline=any(v.strict_baseline for v in verdicts),
        findings=_unique_findings([f for v in verdicts for f in v.findings]),
        reasons=_reasons(ordered),
        tests=_tests(verdicts),
        errors=[f"property {p.property_id}: {e}" for p in ordered for e in p.verdict.errors],
        coupled_to=sorted({c for v in verdicts for c in v.coupled_to}),
        properties=properties,
    )


def _worst_host(outcomes: list[HostOutcome]) -> HostOutcome:
    return min(outcomes, key=_HOST_SEVERITY.index)


def _pin_changes(properties: list[PropertyVerdict]) -> dict[str, list[str]]:
    """Every property's changed keys by kind, each once; a key that is not shared by every
    property (its pins, module, run options) is named with its property."""
    out: dict[str, list[str]] = {}
    for prop in properties:
        for kind, keys in prop.verdict.pin_changes.items():
            bucket = out.setdefault(kind, [])
            for key in keys:
                named = (
                    key
                    if key.startswith(("constraints.", "properties.", "manifest"))
                    else f"{prop.property_id}:{key}"
                )
                if named not in bucket:
                    bucket.append(named)
    return out


def _unique(changes: list[PinChange]) -> list[PinChange]:
    seen: dict[tuple[str, str, int, str], PinChange] = {}
    for change in changes:
        seen.setdefault((change.kind, change.key, change.line, change.message), change)
    return list(seen.values())


def _unique_findings(findings: list[Finding]) -> list[Finding]:
    """A finding in a file two properties share (a conftest, production code) once."""
    seen: dict[str, Finding] = {}
    for finding in findings:
        seen.setdefault(finding.model_dump_json(), finding)
    return list(seen.values())


def _reasons(ordered: list[PropertyVerdict]) -> list[str]:
    counts: dict[str, int] = {}
    for prop in ordered:
        counts[prop.verdict.classification] = counts.get(prop.verdict.classification, 0) + 1
    tally = ", ".join(f"{n} {c}" for c, n in sorted(counts.items(), key=lambda kv: rank(kv[0])))  # type: ignore[arg-type]
    out = [f"{len(ordered)} properties: {tally}; the worst decides"]
    for prop in ordered:
        if prop.verdict.classification == "merge_candidate":
            continue
        out += [f"property {prop.property_id}: {reason}" for reason in prop.verdict.reasons]
    return out


def _tests(verdicts: list[Verdict]) -> list[TestResult]:
    """Every property's tests; a test two properties both ran (one module listed twice is
    refused, but a shared parametrized id is not) is kept once per property."""
    return [t for v in verdicts for t in v.tests]
