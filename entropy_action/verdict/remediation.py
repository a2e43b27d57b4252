"""What to do about a verdict, as data (#36): each finding's `remediation` and the verdict's
`next_steps`, the deciding ones first.

A decision like the classification, so it is made once, here, for every path (`gate`,
`compare`, the workflow's `verdict`, the trusted job: gate.judge calls `advise`), and the
reporters only render it. Pure: the verdict and the pins the property runs under in, the
advised verdict out. Advice never names a pin as the fix for a source that is already pinned.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from entropy_action.core import variations
from entropy_action.core.findings import Finding, Remediation
from entropy_action.verdict import coupled
from entropy_action.verdict.model import FAILING, CoupledRead, OrderPair, TestResult, Verdict

# What a PR author does about each kind of finding: one short imperative.
NEXT_STEP: dict[str, str] = {
    "skip_marker": "remove the marker: a property that fails under the pins is fixed in the "
    "code, not skipped",
    "skip_call": "remove the skip: fix the code so the property passes under the pins",
    "collection_tampering": "drop the hook or variable that changes which tests are collected",
    "report_tampering": "drop the hook that rewrites test outcomes",
    "config_selection": "drop the selection option (-k, -m, --deselect, --ignore, -p no:) "
    "from the pytest configuration",
    "entropy_patched": "let the gate pin the source (entropy.yaml) instead of patching it "
    "inside the test, or take the source as a parameter of the code (a clock, an RNG)",
    "reseeded": "remove the random.seed call: the gate seeds every test with the pinned seed",
    "env_write": "do not write pinned variables in the test: change the pin in a reviewed "
    "change of its own",
    "test_removed": "restore the property test, or remove it in a reviewed change of its own",
    "assertions_dropped": "restore the assertions the base's test made",
    "tautology": "restore an assertion that can fail",
    "assertion_swallowed": "let the AssertionError propagate",
    "not_executed": "make the property run on both hosts: it proves nothing when it does not",
    "live_entropy": "pin the source in entropy.yaml, or inject it into the code under test",
    "self_comparison": "compare the result with an expected value, not with itself",
    "unit_patched": "test the production function, not a copy of it",
    "conditional_exit": "remove the early exit: the assertions must run on every host",
    "test_changed_to_pass": "fix the code so the base's test passes; change the property in a "
    "reviewed change of its own",
    "weakened_property": "restore the property's strength: the base's module catches a change "
    "the head's lets through",
    "assertions_skipped_at_runtime": "make every assertion of the test run",
    "gate_config_changed": "land the change to the gate's configuration on its own, reviewed",
    "live_read_removed": "keep the production read and inject it (a Clock, a random.Random, "
    "a parameter): the property must pass under the pins, not without the source",
    "live_read_constant": "take the clock as a parameter (a Clock, or a value with no constant "
    "default) instead of a constant date: the time-dependent path must still be reachable",
    "gate_pin_read": "do not read the gate's ENTROPY_* pins in production: take a Clock or an "
    "RNG as a parameter, and let the properties pass the pinned one",
    "unit_replaced": "let the tests import the production module: remove the copy, the "
    "sys.modules entry or the reassignment",
    "assertion_broadened": "restore the value assertion, or expect the one exception the "
    "code documents (pytest.raises(ValueError, match=...)) beside it",
    "hook_added": "drop the plugin the run now loads, or add it in a reviewed change of its own",
    "test_detection": "remove the branch on running under a test: production must run the "
    "same code under pytest as everywhere else (pass in what must differ)",
}
FIX_RUN = "fix the run and try again: nothing was judged"
RESTORE_PIN = "restore {key} as the base has it; change a pin in a reviewed change of its own"
FIX_DEFECT = "fix the code so {test} passes on both hosts; do not skip or freeze the property"
MAX_EVIDENCE = 300  # characters of a quoted message in the evidence

# strength.base_on_head's words: the base's module, or its whole test side (scan.closure)
_BASE_SAID = tuple(
    f"fails with the base's {what} on the head's code (" for what in ("module", "test side")
)
_HEAD_SAID = tuple(
    f") and {green} with the head's{what}"
    for green in ("passes", "is skipped")
    for what in (" module", " (the patch changed ")
)
_MUTANT = ("mutant ", " is killed by the base's ")
_READS = {
    "clock": ("time.", "datetime.", "date."),
    "network": ("socket.",),
    "env": ("os.environ",),
}


def advise(verdict: Verdict, pinned: Collection[str] = ()) -> Verdict:
    """`verdict` with its findings folded (`fold`), each given its remediation, and the
    verdict's `next_steps`; a many-property verdict's properties that were not advised
    (judge advised each it judged, under its own pins) too. `pinned` are the keys the
    property pins (Pins.flat(): clock_unix, env.NAME, …)."""
    findings = [_advised(f) for f in fold(verdict.findings)]
    properties = verdict.properties
    if properties is not None:
        properties = [
            p if p.verdict.next_steps else p.model_copy(update={"verdict": advise(p.verdict)})
            for p in properties
        ]
    advised = verdict.model_copy(update={"findings": findings, "properties": properties})
    return advised.model_copy(update={"next_steps": next_steps(advised, pinned)})


def shown_by_base(message: str) -> str | None:
    """What the base's test said on the head's code, quoted by a test_changed_to_pass
    finding (strength.base_on_head: it then passes, or is skipped, with the head's module)."""
    found = [(at, said) for said in _BASE_SAID if (at := message.find(said)) >= 0]
    if not found:
        return None
    start, said = found[0]
    end = max(message.rfind(head) for head in _HEAD_SAID)
    if end < start + len(said):
        return None
    return message[start + len(said) : end]


def fold(findings: Sequence[Finding]) -> list[Finding]:
    """One finding per fact: the `weakened_property` mutants whose killer at the base is a
    test that fails on the head's code (its `test_changed_to_pass` finding) fold into that
    finding, counted, with one example; the rest stay as they are."""
    changed = {f.test for f in findings if f.kind == "test_changed_to_pass" and f.test}
    folded: dict[str, list[Finding]] = {}
    kept: list[Finding] = []
    for finding in findings:
        if finding.kind == "weakened_property" and finding.test in changed and finding.introduced:
            folded.setdefault(finding.test or "", []).append(finding)
        else:
            kept.append(finding)
    return [_with_mutants(f, folded.get(f.test or "", [])) for f in kept]


def _with_mutants(finding: Finding, mutants: list[Finding]) -> Finding:
    if finding.kind != "test_changed_to_pass" or not mutants:
        return finding
    count = len(mutants)
    example = _mutant(mutants[0].message) or mutants[0].location()
    noun = "mutant" if count == 1 else "mutants"
    message = (
        f"{finding.message}; {count} {noun} it killed at the base survive the head's module "
        f"(e.g. {example})"
    )
    return finding.model_copy(update={"message": message, "folded": finding.folded + count})


def _mutant(message: str) -> str | None:
    start, end = message.find(_MUTANT[0]), message.find(_MUTANT[1])
    return message[start + len(_MUTANT[0]) : end] if 0 <= start < end else None


def _advised(finding: Finding) -> Finding:
    if finding.remediation is not None:
        return finding
    return finding.model_copy(update={"remediation": for_finding(finding)})


def for_finding(finding: Finding) -> Remediation:
    """The remediation of one finding: its kind's next step, its line, what shows it."""
    what = NEXT_STEP.get(finding.kind, "read the finding and undo what it names")
    evidence = finding.message
    if finding.kind == "test_changed_to_pass":
        said = shown_by_base(finding.message)
        name = finding.test or finding.location()
        if said is not None:
            evidence = f"the base's {name} on the head's code: {said}"
        if finding.folded:
            evidence += f"; {_tail(finding.message)}"
    elif finding.kind == "weakened_property":
        mutant = _mutant(finding.message)
        if mutant is not None:
            evidence = f"the mutant {mutant} survives the head's module; the base's "
            evidence += f"{finding.test} kills it"
    elif finding.kind == "live_entropy":
        what = _live_step(finding.message) or what
    return Remediation(what=what, where=finding.location(), evidence=_cut(evidence))


def _tail(message: str) -> str:
    return message.rpartition("; ")[2]


def _live_step(message: str) -> str | None:
    """The seam a live read's message names after its colon (live_entropy.advice)."""
    _, colon, step = message.rpartition(": ")
    return step if colon and step else None


def next_steps(verdict: Verdict, pinned: Collection[str] = ()) -> list[Remediation]:
    """What to do, deciding first: on a many-property verdict, each failing property's; else
    the counted findings', then what the classification itself asks."""
    if verdict.properties:
        steps = [s for p in verdict.properties for s in p.verdict.next_steps]
        return _unique(steps)
    counted = [
        f.remediation
        for f in verdict.findings
        if f.remediation is not None and f.level == "error"
        if f.introduced or verdict.strict_baseline
    ]
    return _unique([*counted, *_for_classification(verdict, pinned)])


def _for_classification(verdict: Verdict, pinned: Collection[str]) -> list[Remediation]:
    kind = verdict.classification
    if kind == "invalid":
        prefix = "invalid input: "
        causes = [r.removeprefix(prefix) for r in verdict.reasons if r.startswith(prefix)]
        causes = [c for c in causes if c] or ["the inputs cannot be judged"]
        # whole, not cut: the cause is one line, and the terminal shows it here only
        return [Remediation(what=FIX_RUN, where="", evidence=causes[0])]
    if kind == "pin_mutation" or not verdict.pins_intact:
        return _pins(verdict)
    if kind in ("env_coupled", "env_coupled_reverse"):
        return _coupled(verdict, pinned)
    if kind in ("real_defect", "masked_defect"):
        return [_defect(t) for t in verdict.tests if t.host_a in FAILING and t.host_b in FAILING]
    return []


def _pins(verdict: Verdict) -> list[Remediation]:
    return [
        Remediation(
            what=RESTORE_PIN.format(key=change.key),
            where=f"{change.path}:{change.line}",
            evidence=change.message,
        )
        for change in verdict.pin_diff
        if change.rejects
    ]


def _defect(test: TestResult) -> Remediation:
    message = test.message_a or test.message_b or "it fails"
    return Remediation(
        what=FIX_DEFECT.format(test=_name(test)),
        where=_test_place(test),
        evidence=_cut(f"fails on both hosts: {_first_line(message)}"),
    )


def _coupled(verdict: Verdict, pinned: Collection[str]) -> list[Remediation]:
    """The read each source of an env_coupled failure follows, and what fits it; the
    order pairs; without an attribution, the failing test itself."""
    failing = [t for t in verdict.tests if t.host_a != t.host_b and _decided(t)]
    steps = [_pair(p, verdict.tests) for p in verdict.order_dependence]
    for source in verdict.coupled_to:
        if source == "test_order" and verdict.order_dependence:
            continue
        read = coupled.for_source(source, verdict.coupled_reads)
        if read is not None:
            steps.append(_read_step(source, read, failing, pinned))
        else:
            steps.append(_source(source, verdict.findings, failing, pinned))
    if not steps:
        steps = [_unexplained(t, verdict.coupled_reads) for t in failing]
    return steps


def _read_step(
    source: str, read: CoupledRead, failing: Sequence[TestResult], pinned: Collection[str]
) -> Remediation:
    """The read a source's failure follows, named with its line and its values, and the step
    that fits it (verdict.coupled.step)."""
    test = next((t for t in failing if t.id == read.test), failing[0] if failing else None)
    said = f"; on host B: {_first_line(test.message_b)}" if test and test.message_b else ""
    evidence = f"the failure follows {read.source} (host B re-run with it reverted): "
    evidence += coupled.evidence(read) + said
    return Remediation(
        what=coupled.step(read, pinned), where=read.location(), evidence=_cut(evidence)
    )


def _source(
    source: str, findings: Sequence[Finding], failing: Sequence[TestResult], pinned: Collection[str]
) -> Remediation:
    dimension, _, name = source.partition(":")
    known = variations.BY_NAME.get(dimension)
    what = known.advice if known is not None else f"make the test independent of {source}"
    if name:
        what = f"pass {name} in, or pin it (pins.env.{name})"
        if f"env.{name}" in pinned:
            what = f"read {name} where the pin applies: pins.env.{name} is pinned already"
    elif dimension == "clock" and "clock_unix" in pinned:
        what = (
            "take the time from the pinned clock (a Clock, or the value clock_unix pins): "
            "clock_unix is pinned already, so a live read of the clock is the defect"
        )
    read = _read(dimension, name, findings)
    test = failing[0] if failing else None
    where = read.location() if read is not None else (_test_place(test) if test else "")
    said = f"; on host B: {_first_line(test.message_b or '')}" if test and test.message_b else ""
    reads = f"{read.location()} reads `{_call(read)}`" if read is not None else "no audited read"
    evidence = f"the failure follows {source} (host B re-run with it reverted): {reads}{said}"
    return Remediation(what=what, where=where, evidence=_cut(evidence))


def _read(dimension: str, name: str, findings: Sequence[Finding]) -> Finding | None:
    """The audited read of the source, introduced ones before those that stood at the base."""
    prefixes = _READS.get(dimension, ())
    if not prefixes:
        return None
    reads = [f for f in findings if f.kind == "live_entropy"]
    for finding in sorted(reads, key=lambda f: not f.introduced):
        call = _call(finding)
        if call.startswith(prefixes) and (not name or repr(name) in call):
            return finding
    return None


def _call(finding: Finding) -> str:
    """The read a live_entropy message quotes (`datetime.now()`), or ""."""
    return finding.message.split("`")[1] if finding.message.count("`") >= 2 else ""


def _pair(pair: OrderPair, tests: Sequence[TestResult]) -> Remediation:
    victim = next((t for t in tests if t.id == pair.victim), None)
    if pair.other is None:
        what = f"make {pair.victim} set up the state it needs: two or more earlier tests decide it"
    elif pair.kind == "polluter":
        what = f"undo in {pair.other} what it changes (a fixture), or reset it in {pair.victim}"
    else:
        what = f"make {pair.victim} set up itself what {pair.other} leaves behind (a fixture)"
    evidence = f"{pair.kind}: {pair.other or 'several tests'} runs before it on host B"
    evidence += f"; replay the pair: {pair.replay}" if pair.replay else ""
    where = _test_place(victim) if victim is not None else pair.victim
    return Remediation(what=what, where=where, evidence=_cut(evidence))


def _unexplained(test: TestResult, reads: Sequence[CoupledRead] = ()) -> Remediation:
    host = "B" if test.host_b in FAILING else "A"
    message = test.message_b if host == "B" else test.message_a
    evidence = f"fails on host {host} only: {_first_line(message or 'it fails')}"
    read = next((r for r in reads if r.test == test.id), None)
    evidence += f"; during it, {coupled.evidence(read)}" if read is not None else ""
    return Remediation(
        what=f"make {_name(test)} independent of what differs on host {host}: read what it "
        "reads from a pinned source or a parameter",
        where=_test_place(test),
        evidence=_cut(evidence),
    )


def _decided(test: TestResult) -> bool:
    return {test.host_a, test.host_b} <= {"passed", "failed", "error"}


def _name(test: TestResult) -> str:
    return test.id.rpartition("::")[2] or test.id


def _test_place(test: TestResult) -> str:
    if test.path is None:
        return test.id.partition("::")[0]
    return f"{test.path}:{test.line}" if test.line else test.path


def _first_line(message: str) -> str:
    return message.strip().split("\n", 1)[0]


def _cut(value: str) -> str:
    return value if len(value) <= MAX_EVIDENCE else value[: MAX_EVIDENCE - 1] + "…"


def _unique(steps: Sequence[Remediation]) -> list[Remediation]:
    seen: dict[tuple[str, str], Remediation] = {}
    for step in steps:
        seen.setdefault((step.what, step.where), step)
    return list(seen.values())
