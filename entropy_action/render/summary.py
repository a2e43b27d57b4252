"""Reporters over a Verdict: the readable text summary and the verdict JSON.

Rendering only; every decision was made by `verdict.classify`.
"""

from __future__ import annotations

from collections.abc import Sequence

from entropy_action.core.findings import Finding, Remediation
from entropy_action.core.score import MutationScore
from entropy_action.render import phrases
from entropy_action.render.phrases import REPLAY
from entropy_action.verdict.model import OrderPair, PropertyVerdict, TestResult, Verdict
from entropy_action.verdict.rollup import deciding

__all__ = ["REPLAY", "render_json", "render_strength", "render_text"]

_INVALID = "invalid input: "  # the classifier's prefix of an invalid verdict's cause
MAX_SHOWN_MESSAGE = 160  # characters of a test's message on its summary line

_ACTIONS = {
    "merge_candidate": "merge candidate",
    "invalid": "invalid input; nothing was judged",
}


def render_json(verdict: Verdict) -> str:
    """The verdict JSON, as `--json FILE` writes it (schema/verdict.schema.json)."""
    return verdict.model_dump_json(indent=2) + "\n"


def render_text(verdict: Verdict) -> str:
    """The readable summary: classification, its table row, hosts, tests, pins, findings, why;
    on a many-property verdict, a line per property (worst first) then each failing
    property's own summary, indented."""
    if verdict.properties:
        return _render_many(verdict, verdict.properties)
    return _join(_sections(verdict))


def _join(sections: list[list[str]]) -> str:
    return "\n".join(line for section in sections for line in section) + "\n"


def _sections(
    verdict: Verdict, *, digest: bool = True, steps: list[Remediation] | None = None
) -> list[list[str]]:
    """`digest=False`: a property's sections in a roll-up (which has the digest, and the
    properties' next steps first: `steps`). What the steps quote is not repeated: a finding
    whose remediation is a step, a reason a step quotes as its evidence."""
    headline = _headline(verdict)
    at = next(i for i, line in enumerate(headline) if line.startswith("  table row: "))
    shown = verdict.next_steps if steps is None else steps
    quoted = {step.evidence for step in shown}
    rest = [f for f in verdict.findings if f.remediation not in shown]
    reasons = [r for r in verdict.reasons if r.removeprefix(_INVALID) not in quoted]
    return [
        headline[:at],
        _next_steps(verdict) if digest else [],
        headline[at:],
        _tests(verdict.tests, verdict.findings, verdict.order_dependence),
        _variations(verdict),
        _pin_changes(verdict),
        _findings(rest, verdict.strict_baseline),
        _strength(verdict.mutation),
        _bullets("reasons", reasons),
        _errors(verdict.errors),
        _digest(verdict.inputs_sha256) if digest else [],
    ]


def _render_many(verdict: Verdict, properties: list[PropertyVerdict]) -> str:
    ordered = deciding(properties)
    action = _ACTIONS.get(verdict.classification, "do not merge")
    lines = [
        f"entropy-gate verdict: {verdict.classification} ({action})",
        f"  {phrases.properties_title(verdict.classification, ordered)}",
    ]
    lines += [*_next_steps(verdict), "properties (worst first):"]
    width = max(len(p.property_id) for p in ordered)
    modules = max((len(p.module) for p in ordered if p.module is not None), default=0)
    lines += [f"  {_property_line(p, width, modules)}" for p in ordered]
    lines += _many_variations(ordered)
    for prop in ordered:
        if prop.verdict.classification == "merge_candidate":
            continue
        lines += ["", f"property {phrases.property_name(prop.property_id, prop.module)}:"]
        body = (
            _join(_sections(prop.verdict, digest=False, steps=verdict.next_steps))
            .rstrip("\n")
            .split("\n")
        )
        lines += [f"  {line}" if line else "" for line in body]
    return _join([lines, [""] if verdict.inputs_sha256 else [], _digest(verdict.inputs_sha256)])


def _many_variations(ordered: list[PropertyVerdict]) -> list[str]:
    """Host B's variations under the list: one line when every property's host B varied and
    held the same, else one per property that has them (a passing property has no section)."""
    each = [(p.property_id, line) for p in ordered for line in _variations(p.verdict)]
    if not each:
        return []
    if len({line for _, line in each}) == 1 and len(each) == len(ordered):
        return [f"  {each[0][1]}"]
    return [f"  {name}: {line}" for name, line in each]


def _property_line(prop: PropertyVerdict, width: int, modules: int) -> str:
    verdict = prop.verdict
    head = f"{verdict.classification:<19} {prop.property_id:<{width}}"
    if prop.module is None:
        return f"{head}  {phrases.REMOVED}"
    hosts = f"host A {verdict.host_a}, host B {verdict.host_b}"
    if verdict.host_a == verdict.host_b == "missing":
        hosts = "host A, host B: not run"
    count = len(verdict.tests)
    tests = f"{count} test{'s' if count != 1 else ''}"
    shown = sum(not t.host_a == t.host_b == "passed" for t in verdict.tests)
    tests += f", {shown} differ or did not pass" if shown else ""
    return f"{head}  {prop.module:<{modules}}  {hosts}, {tests}"


def _headline(verdict: Verdict) -> list[str]:
    action = _ACTIONS.get(verdict.classification, "do not merge")
    lines = [f"entropy-gate verdict: {verdict.classification} ({action})"]
    if verdict.crash is not None:
        lines.append(f"  {verdict.crash.line}")
    if verdict.coupled_to:
        lines.append(f"  {phrases.coupled(verdict.coupled_to)}")
    for pair in verdict.order_dependence:
        lines.append(f"  {phrases.order_pair(pair)}")
        lines += [f"    replay the pair: {pair.replay}"] if pair.replay else []
    pins = f"pins {'intact' if verdict.pins_intact else 'changed'}"
    hosts = f"host A: {verdict.host_a}, host B: {verdict.host_b}, {pins}"
    if verdict.host_a == verdict.host_b == "missing":  # nothing ran: the reasons say why
        hosts = "host A, host B: not run" + ("" if verdict.pins_intact else f", {pins}")
    return [*lines, f"  table row: {verdict.row}", f"  {hosts}"]


def _next_steps(verdict: Verdict) -> list[str]:
    """What to do, deciding first (verdict.remediation): the step, where, what shows it."""
    if not verdict.next_steps:
        return []
    lines = [f"{phrases.WHAT_TO_DO}:"]
    for number, step in enumerate(verdict.next_steps, 1):
        where = f"{step.where}: " if step.where else ""
        lines += [f"  {number}. {where}{step.what}", f"     {step.evidence}"]
    return lines


def _tests(
    tests: list[TestResult], findings: list[Finding], pairs: Sequence[OrderPair] = ()
) -> list[str]:
    """The tests that differ or did not pass; those skipped on both hosts only when the
    patch is blamed for them (the rest were skipped at the base as well: a count)."""
    flagged = {
        f.test.split("::")[-1] for f in findings if f.introduced and f.test and f.level == "error"
    }
    if not tests:
        return ["tests: none reported"]
    shown = [t for t in tests if _noteworthy(t, flagged)]
    skipped = sum(t.host_a == t.host_b == "skipped" and t not in shown for t in tests)
    agreed = len(tests) - len(shown) - skipped
    lines = [f"tests: {len(tests)}; {agreed} passed on both hosts"]
    if skipped:  # each one that counts is a not_executed finding below
        lines[0] += f"; {skipped} skipped on both"
    if shown:
        verb = "differs" if len(shown) == 1 else "differ"
        lines[0] += f"; {len(shown)} {verb} between hosts or did not pass:"
    for test in shown:
        at_base = phrases.at_base_note(test)
        note = f"  ({at_base})" if at_base else ""
        lines.append(f"  A {test.host_a:<7}  B {test.host_b:<7}  {_display_id(test)}{note}")
        for host, message in (("A", test.message_a), ("B", test.message_b)):
            if message:
                lines.append(f"      {host}: {_first_line(message)}")
        lines.extend(_replays(test, pairs))
    return lines


def _replays(test: TestResult, pairs: Sequence[OrderPair]) -> list[str]:
    return [
        f"      replay{f' on host {host}' if host else ''}: {command}"
        for host, command in phrases.replays(test, pairs)
    ]


def _noteworthy(test: TestResult, flagged: set[str]) -> bool:
    if test.host_a == test.host_b == "skipped":
        return test.id.split("::")[-1].split("[", 1)[0] in flagged
    return not test.host_a == test.host_b == "passed"


def _display_id(test: TestResult) -> str:
    """The id as the hosts wrote it when they agree, else the normalized id."""
    return test.raw_ids[0] if len(test.raw_ids) == 1 else test.id


def _first_line(message: str) -> str:
    line = message.strip().split("\n", 1)[0]
    return line if len(line) <= MAX_SHOWN_MESSAGE else line[: MAX_SHOWN_MESSAGE - 1] + "…"


def _variations(verdict: Verdict) -> list[str]:
    """Host B's variations on one line (host.json `variations`; none from an older gate)."""
    listed = verdict.host_b_variations
    if not listed:
        return []
    varied = [v.dimension for v in listed if v.varied]
    held = [(v.dimension, phrases.cut_why(v.why_not)) for v in listed if not v.varied]
    return [phrases.host_b_variations(varied, held)]


def _pin_changes(verdict: Verdict) -> list[str]:
    if verdict.pin_diff:
        return ["pin changes:"] + [
            f"  {c.path}:{c.line}: {c.message}" + ("" if c.rejects else " (does not reject)")
            for c in verdict.pin_diff
        ]
    keys = [f"  {kind}: {', '.join(k)}" for kind, k in verdict.pin_changes.items() if k]
    return ["pin changes:", *keys] if keys else []


def _findings(findings: list[Finding], strict: bool) -> list[str]:
    if not findings:
        return []
    return ["findings:"] + [f"  {_finding(f, strict)}" for f in findings]


def _finding(finding: Finding, strict: bool) -> str:
    if finding.level == "warning" and finding.introduced:
        return f"{finding.location()}: warning: {finding.message}"
    if finding.introduced:
        return finding.render()
    if strict and finding.level == "error":
        return f"{finding.location()}: pre-existing, counts (strict_baseline) — {finding.message}"
    return f"{finding.location()}: notice: pre-existing — {finding.message}"


def render_strength(score: MutationScore | None, findings: list[Finding]) -> str:
    """`entropy-gate strength`: the scores, the mutants that changed sides, the findings."""
    lines = _strength(score) or ["strength: no mutation score (see the notes)"]
    lines += _findings(findings, strict=False)
    return "\n".join(lines) + "\n"


def _strength(score: MutationScore | None) -> list[str]:
    """The mutation score at the base and the head, and each mutant that changed sides."""
    if score is None:
        return []
    lines = [f"strength: {phrases.strength(score.render(), score.mode, score.not_counted)}"]
    lines += [f"  {phrases.weaker(len(score.weakened))}"] if score.weakened else []
    lines += [f"  {phrases.stronger(m.mutant, m.test)}" for m in score.strengthened]
    if score.strengthened and not score.weakened:
        lines.append(f"  {phrases.STRONGER_AT_HEAD}")
    return lines


def _bullets(title: str, items: list[str]) -> list[str]:
    return [f"{title}:"] + [f"  - {item}" for item in items] if items else []


def _errors(errors: list[str]) -> list[str]:
    if not errors:
        return []
    lines = ["host errors:"]
    for error in errors:
        first, *rest = error.split("\n")
        lines.append(f"  - {first}")
        lines.extend(f"      {line}" for line in rest)
    return lines


def _digest(digest: str | None) -> list[str]:
    return [phrases.inputs_digest(digest)] if digest else []
