"""The one judging pipeline: every path that reaches a verdict calls `judge`.

`gate` (local), `compare`, `verdict` (the workflow's last job) and the trusted workflow_run
job gather the same evidence — the pin check and the scan (read from git objects and the
tree as data), both hosts' report folders, the base's runs, and what the host steps left
beside the reports (hoststeps.py: strength.json on host A, attribution.json on host B) — and
`judge` turns it into the Verdict, with the inputs it is a function of. No path assembles a
subset of its own: a step a path cannot run itself (the strength check needs the PR's code)
is read from the host folder, and where the base manifest calls for it and it is missing or
damaged, the verdict is invalid, never a pass.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from entropy_action import __version__
from entropy_action.core import git, layout
from entropy_action.core.errors import GateError
from entropy_action.core.findings import Finding
from entropy_action.core.hostinfo import (
    HOOKS_UNUSABLE,
    MAX_HOOKS,
    MAX_PLUGINS,
    HookInventory,
    HostInfo,
)
from entropy_action.core.layout import HOST_JSON
from entropy_action.evidence import (
    hostreport,
    inputs,
    stepfiles,
)
from entropy_action.evidence.hostreport import HostReport
from entropy_action.gate import attribution, crashed, orderdep, probes
from entropy_action.manifest.baseline import PinCheck
from entropy_action.manifest.pindiff import PinChange
from entropy_action.manifest.pinfile import Constraints, LoadedManifest
from entropy_action.verdict import (
    basepolicy,
    hook_inventory,
    pairing,
    remediation,
    rollup,
    treecheck,
    variation_check,
)
from entropy_action.verdict.classify import Evidence, classify
from entropy_action.verdict.model import Verdict

if TYPE_CHECKING:  # the scan and the strength check are imported where they run: a compare
    # without a base ref runs neither (a third of the command's import time)
    from entropy_action.scan import ScanResult
    from entropy_action.strength.assess import Strength

NO_BASE = (
    "no base commit to judge against: no pin check and no silencing scan could run, so "
    "nothing may pass (set the base-ref input: the pull request's base sha, or "
    "merge_group.base_sha in a merge queue)"
)


@dataclass(frozen=True)
class Dossier:
    """Everything one judgement looks at. Reports are folders to read, or already read."""

    host_a: Path | HostReport
    host_b: Path | HostReport | None
    check: PinCheck | None = None  # None: no base ref, so no pin check and no scan
    scanned: ScanResult | None = None
    loaded: LoadedManifest | None = None  # the head's manifest, when there is no check
    base_a: Path | HostReport | None = None  # the base's module run on host A (and B)
    base_b: Path | HostReport | None = None
    invalid: Sequence[str] = ()  # why the caller found the inputs cannot be judged
    notes: Sequence[str] = ()
    require_base: bool = False  # the workflow: without a pin check and a scan, invalid
    strength_off: str | None = None  # why the strength check was not asked for (gate's flag)
    root: Path | None = None  # the head's tree, for the inputs (default: the check's root)
    exclude: tuple[Path, ...] = ()  # folders of the gate's own output inside that tree


def judge(dossier: Dossier) -> Verdict:
    """The verdict on a dossier: the seed's table over every check, with its inputs."""
    check = dossier.check
    problems = list(dossier.invalid)
    if dossier.require_base and (check is None or dossier.scanned is None):
        problems.append(NO_BASE)
    if check is not None and check.head is None:
        return _with_inputs(_advised(_unreadable_head(check, problems), None), dossier, None, None)
    loaded = check.head if check is not None else dossier.loaded
    source = (check.base or check.head) if check is not None else loaded
    constraints = source.manifest.constraints if source is not None else None
    report_a, report_b = _read("a", dossier.host_a), _read("b", dossier.host_b)
    report_b, probed, found = probes.folded(report_b)  # host B's order probes (gate.probes)
    dossier = _host_b_base(dossier, report_a, report_b, found)
    strong, more = _strength(dossier, report_a)
    strong, more_b = _strength_b(dossier, strong, report_b)
    more += more_b
    lost, unmeasured_notes = _unmeasured(strong, constraints)
    scanned = dossier.scanned
    notes = [*dossier.notes, *(f"silencing scan incomplete: {e}" for e in _errors(scanned))]
    notes += probed
    notes += scanned.explained if scanned else ()
    base_cases = None if dossier.base_a is None else pairing.base_cases(dossier.base_a)
    static, moved = _moved(scanned, strong)
    static, renamed = _renamed(static, scanned, (report_a, report_b))
    moved += renamed
    static = _quiet_guards(static, scanned, (report_a, report_b), dossier.base_a)
    notes += moved
    hooks = _hook_findings(dossier, (report_a, report_b), static)
    problems += _lost_inventories((report_a, report_b))
    problems += _variation_problems(report_b, loaded)
    root = dossier.root or (check.root if check is not None else None)
    infos = {label: r.info for label, r in (("a", report_a), ("b", report_b)) if r is not None}
    tree_problems, tree_notes = treecheck.check(root, dossier.exclude, infos)
    problems += tree_problems
    notes += tree_notes
    verdict = pairing.evaluate(
        report_a or dossier.host_a,
        report_b or dossier.host_b,
        loaded=loaded,
        pin_diff=check.diff if check is not None else None,
        # one finding per fact before the table counts them (verdict.remediation.fold)
        findings=remediation.fold((*static, *hooks, *(strong.findings if strong else ()))),
        runtime_findings=_runtime_rule(scanned, base_cases),
        strict_baseline=constraints.strict_baseline if constraints else False,
        require_host_b=constraints.require_host_b if constraints else True,
        invalid=[*problems, *more, *lost],
        notes=[*notes, *(strong.notes if strong else ()), *unmeasured_notes],
        base_a=dossier.base_a,
        base_b=dossier.base_b,
        forbid_live_entropy=constraints.forbid_live_entropy if constraints else False,
        seams=scanned.seams if scanned else (),
        crash=crashed.cause(
            ((dossier.host_a, dossier.base_a), (dossier.host_b, dossier.base_b)),
            lambda: _changed(check),
        ),
    )
    audits = None  # read only for a verdict they can explain (the base's reports re-read)
    if attribution.attributable(verdict):
        audits = _audits((report_a, report_b), (dossier.base_a, dossier.base_b))
    pinned = loaded.manifest.pins.flat() if loaded is not None else {}
    verdict = _attributed(strong.annotate(verdict) if strong else verdict, report_b, audits, pinned)
    if not verdict.coupled_reads:  # unattributed: the reads whose values differed, as evidence
        reads = attribution.read_behind(verdict, audits)
        verdict = verdict.model_copy(update={"coupled_reads": reads})
    if report_b is not None:
        verdict = verdict.model_copy(update={"host_b_variations": report_b.info.variations})
    return _with_inputs(_advised(verdict, loaded), dossier, report_a, report_b)


def _host_b_base(
    dossier: Dossier,
    report_a: HostReport | None,
    report_b: HostReport | None,
    found: stepfiles.ProbeReport | None,
) -> Dossier:
    """The dossier with host B's base run only where the gate would have made it
    (basepolicy.host_b_base_counts), with the base's run of a failing order probe folded in
    (probes.fold_base); host A's base run read once, when it was needed here."""
    if dossier.base_b is None:
        return dossier
    base_a = _read("a", dossier.base_a) if isinstance(dossier.base_a, Path) else dossier.base_a
    if not basepolicy.host_b_base_counts(base_a, report_a, report_b):
        return dataclasses.replace(dossier, base_a=base_a or dossier.base_a, base_b=None)
    if found is None or not any(probe.base for probe in found.probes):
        return dossier
    base_b = _read("b", dossier.base_b) if isinstance(dossier.base_b, Path) else dossier.base_b
    if base_b is None:
        return dossier  # unusable: pairing says why
    return dataclasses.replace(dossier, base_b=probes.fold_base(base_b, found))


def _advised(verdict: Verdict, loaded: LoadedManifest | None) -> Verdict:
    """The verdict with what to do about it (verdict.remediation), under the pins it ran."""
    pinned = loaded.manifest.pins.flat() if loaded is not None else {}
    return remediation.advise(verdict, pinned)


def _moved(
    scanned: ScanResult | None, strong: Strength | None
) -> tuple[tuple[Finding, ...], list[str]]:
    """The scan's findings less the `test_removed` of base tests the strength step found
    moved (the head still runs their cases: strength.evidence.moved), and a note on each."""
    if scanned is None:
        return (), []
    if strong is None:
        return scanned.findings, []
    moved = set(strong.moved) & scanned.removed
    kept = tuple(f for f in scanned.findings if not (f.kind == "test_removed" and f.test in moved))
    notes = [
        f"strength: the base's {name} is gone at the head and its cases still run there (it "
        "passes on the head's code, and the head's module kills every mutant it killed): "
        "moved or merged, not removed"
        for name in sorted(moved)
    ]
    return kept, notes


def _renamed(
    static: tuple[Finding, ...],
    scanned: ScanResult | None,
    head: tuple[HostReport | None, HostReport | None],
) -> tuple[tuple[Finding, ...], list[str]]:
    """The scan's findings less the `test_removed` of a property renamed word for word, in
    place or into another class, what runs around it unchanged (its decorators, fixtures,
    setUp: the scan's `renamed`), whose new name passed on both hosts — the same test, still
    run: a note. structlog bac52127fdbd merged seven property classes into one, renaming the
    tests; loguru 940b7cfea0be fixed a typo in one's name."""
    if scanned is None or not scanned.renamed or head[0] is None or head[1] is None:
        return static, []
    from entropy_action import scan  # noqa: PLC0415 (see TYPE_CHECKING; it ran: scanned)

    both = (*scanned.tests, *scanned.base_tests)
    hosts = [scan.outcomes_by_test(((c.id, c.outcome) for c in r.tests), both) for r in head if r]
    paths = {t.name: t.path for t in scanned.tests}
    ran = {
        old: new
        for old, new in scanned.renamed
        if new in paths and all(h.get(f"{paths[new]}::{new}") == {"passed"} for h in hosts)
    }
    kept = tuple(f for f in static if not (f.kind == "test_removed" and f.test in ran))
    notes = [
        f"scan: the base's {old} is {new} at the head, {_how(old, new)} word for word with the "
        f"same decorators, fixtures and setup, and it passed on both hosts: {_how(old, new)}, "
        "not removed"
        for old, new in sorted(ran.items())
        if any(f.kind == "test_removed" and f.test == old for f in static)
    ]
    return kept, notes


def _how(old: str, new: str) -> str:
    return "renamed" if old.rpartition("::")[0] == new.rpartition("::")[0] else "moved"


def _quiet_guards(
    static: tuple[Finding, ...],
    scanned: ScanResult | None,
    head: tuple[HostReport | None, HostReport | None],
    base_a: Path | HostReport | None,
) -> tuple[Finding, ...]:
    """The import guards that never fired, as notices (scan.runtime.never_fired): read from
    both hosts' reports and the base's run on host A, where there is one."""
    if scanned is None or not scanned.guards or head[0] is None or head[1] is None:
        return static
    from entropy_action import scan  # noqa: PLC0415 (see TYPE_CHECKING; it ran: scanned)

    both = (*scanned.tests, *scanned.base_tests)
    hosts = [scan.outcomes_by_test(((c.id, c.outcome) for c in r.tests), both) for r in head if r]
    base_report = _read("a", base_a) if isinstance(base_a, Path) else base_a
    base = None
    if base_report is not None:
        ran = scan.outcomes_by_test(((c.id, c.outcome) for c in base_report.tests), both)
        base = (ran, {t.name for t in scanned.base_tests})
    guards = [(g.path, g.line, g.tests) for g in scanned.guards]
    return scan.never_fired(static, guards, scanned.tests, hosts, base)


def _changed(check: PinCheck | None) -> frozenset[str] | None:
    if check is None or check.base_commit is None:
        return None
    try:
        return frozenset(git.changed_files(check.root, check.base_commit))
    except GateError:
        return None


def _variation_problems(report_b: HostReport | None, loaded: LoadedManifest | None) -> list[str]:
    """Host B's variation set against the head manifest's switch (verdict.variation_check):
    a report of this gate version that lists less than every dimension, or claims a switch
    the head manifest does not set, cannot be judged."""
    if report_b is None or report_b.info.host != "b" or not report_b.info.isolated:
        return []  # no host B, or a host A in its slot: evaluate says why
    off = loaded.manifest.constraints.host_b_off if loaded is not None else {}
    current = report_b.info.gate_version == __version__
    return variation_check.problems(report_b.info.variations, off, current=current)


def _unmeasured(
    strong: Strength | None, constraints: Constraints | None
) -> tuple[list[str], list[str]]:
    """What the strength check could not measure: invalid causes when the base manifest asks
    for strength (`constraints.mutation` other than `off`: cannot measure is never clean),
    else notes. (invalid, notes)."""
    unmeasured = strong.unmeasured if strong is not None else ()
    lines = [f"strength: cannot measure: {why}" for why in unmeasured]
    if constraints is not None and constraints.mutation != "off":
        asked = f"constraints.mutation is {constraints.mutation!r}"
        return [f"{line} ({asked}: the patch's strength must be measurable)" for line in lines], []
    return [], lines


def _hook_findings(
    dossier: Dossier, head: tuple[HostReport | None, HostReport | None], static: Sequence[Finding]
) -> list[Finding]:
    """The hosts' hook inventories against the base runs' (verdict.hook_inventory); without a
    base run's inventory, against the files the patch changed (git, from the base commit)."""
    inventories = [r.info.hooks for r in head if r is not None]
    if not any(
        inventory is not None and inventory.hooks + inventory.replaced for inventory in inventories
    ):
        return []
    base = [_base_hooks(source) for source in (dossier.base_a, dossier.base_b)]
    changed = None if any(base) else _changed(dossier.check)
    quiet = dossier.scanned.quiet_hooks if dossier.scanned is not None else ()
    return hook_inventory.findings(inventories, base, changed=changed, static=static, quiet=quiet)


def _lost_inventories(head: tuple[HostReport | None, HostReport | None]) -> list[str]:
    """A host whose passing run spoiled or removed the gate's hook inventory, or filled it
    past its cap: its hooks cannot be judged, so it may not pass (a run that failed or
    stopped early is judged as such: a conftest that fails to import stops pytest before
    any inventory)."""
    lost = [
        f"host {report.info.host.upper()}: {note}: the hooks the run loaded cannot be judged"
        for report in head
        if report is not None and report.info.hooks is None and report.info.returncode == 0
        for note in report.info.notes
        if note.startswith(HOOKS_UNUSABLE)
    ][:2]
    return lost + [
        f"host {report.info.host.upper()}: the hook inventory reached its cap (more than "
        f"{MAX_PLUGINS} plugins or {MAX_HOOKS} hooks): the hooks past it cannot be judged"
        for report in head
        if report is not None and report.info.returncode == 0
        if report.info.hooks is not None and report.info.hooks.truncated
    ]


def _base_hooks(source: Path | HostReport | None) -> HookInventory | None:
    if isinstance(source, HostReport):
        return source.info.hooks
    if source is None:
        return None
    try:
        return hostreport.read_info(source / HOST_JSON).hooks
    except GateError:
        return None


def _runtime_rule(
    scanned: ScanResult | None, base_cases: dict[str, str] | None
) -> pairing.RuntimeFindings | None:
    """The scan's rules over the paired tests (not_executed), when a scan ran."""
    if scanned is None:
        return None
    from entropy_action import scan  # noqa: PLC0415 (see TYPE_CHECKING)

    return scan.runtime_rule(scanned, base_cases)


def _errors(scanned: ScanResult | None) -> tuple[str, ...]:
    return scanned.errors if scanned is not None else ()


def _read(label: pairing.Label, source: Path | HostReport | None) -> HostReport | None:
    """A report read once for every later use; None when unusable or when the host left an
    error report instead (evaluate says why, once)."""
    if source is None or isinstance(source, HostReport):
        return source
    if pairing.unreported(label, source):
        return None
    try:
        return hostreport.read_host(source)
    except GateError:
        return None


def strength_needed(check: PinCheck | None, info: HostInfo | None = None) -> bool:
    """Whether the base manifest calls for the strength check: a base to compare with and a
    property whose test side (scan.closure: its module, conftests, helpers, configuration,
    and the data files host A's `info` says its tests opened) the patch changed (else both
    test sides detect the same things)."""
    from entropy_action.scan import closure  # noqa: PLC0415 (see TYPE_CHECKING)
    from entropy_action.strength import base_on_head  # noqa: PLC0415

    if check is None or check.base is None or check.base_commit is None:
        return False
    return (
        base_on_head.plan(check, closure.data_files(info.test_data if info else None)) is not None
    )


def _strength_b(
    dossier: Dossier, strong: Strength | None, report_b: HostReport | None
) -> tuple[Strength | None, list[str]]:
    """Host A's strength with host B's step (strength.json in host B's folder: the base's
    test side on the head's code under host B's variations) added: its findings, its notes,
    and `moved` only for tests the head's code passes on both hosts. Required where host B
    passed and the patch changed the test side; problems say why it cannot be used."""
    check = dossier.check
    if strong is None or check is None or check.base_commit is None or report_b is None:
        return strong, []
    if dossier.strength_off is not None or report_b.info.pins_mismatch:
        return strong, []
    needed = strength_needed(check, report_b.info)
    where = report_b.dir / layout.STRENGTH_JSON
    try:
        found = stepfiles.read_strength(report_b.dir, report_b.info)
    except GateError as exc:
        return strong, [f"host B: {exc.message}"] if needed else []
    if found is None:
        if not needed or report_b.outcome != "pass":
            return strong, []
        return strong, [
            f"host B: {where} is missing: host B passed and the patch changed the property's "
            "test side, so the base's test side must run on the head's code in host B's job "
            "too (`entropy-gate run --host b --base-ref BASE`)"
        ]
    if found.base_commit != check.base_commit or found.measured != needed or found.mutation:
        return strong, [
            f"host B: {where}: not host B's strength report of this patch (its base, what it "
            "says of the test side, or a mutation score host B's step never measures)"
        ]
    if not found.measured:
        return strong, []
    known = {(f.kind, f.test) for f in strong.findings}
    return dataclasses.replace(
        strong,
        findings=(*strong.findings, *(f for f in found.findings if (f.kind, f.test) not in known)),
        notes=(
            *strong.notes,
            *(f"host B: {note}" for note in found.notes),
            *(f"host B: not measured: {why}" for why in found.unmeasured),
        ),
        moved=tuple(name for name in strong.moved if name in set(found.moved)),
    ), []


def _strength(dossier: Dossier, report_a: HostReport | None) -> tuple[Strength | None, list[str]]:
    """What host A's strength step found (strength.json), and why it cannot be used; None
    without a base to measure against."""
    check = dossier.check
    if check is None or check.base is None or check.base_commit is None:
        return None, []
    from entropy_action.strength.assess import Strength  # noqa: PLC0415 (see TYPE_CHECKING)

    if dossier.strength_off is not None:
        return Strength(notes=(dossier.strength_off,)), []
    if report_a is None:
        return Strength(), []  # host A is unusable: evaluate says why, the verdict is invalid
    if report_a.info.pins_mismatch:  # outside the pins: invalid, or a pin the tests write
        return Strength(), []  # (verdict.pinswritten), which rejects whatever strength says
    needed = strength_needed(check, report_a.info)
    where = report_a.dir / layout.STRENGTH_JSON
    try:
        found = stepfiles.read_strength(report_a.dir, report_a.info)
    except GateError as exc:
        return Strength(), [f"host A: {exc.message}"] if needed else []
    if found is None:
        if not needed:
            return Strength(), []
        return Strength(), [
            f"host A: {where} is missing: the patch changed the property's test side, so "
            "the strength check (the base's test side on the head's code, mutation) must run "
            "in host A's job (`entropy-gate run --host a --base-ref BASE`)"
        ]
    if found.base_commit != check.base_commit:
        return Strength(), [
            f"host A: {where}: measured against {found.base_commit[:12]}, the base is "
            f"{check.base_commit[:12]}"
        ]
    if found.measured != needed:
        said = "unchanged" if needed else "changed"
        return Strength(), [
            f"host A: {where}: says the property's test side is {said} at the head, git "
            "and host A's report say otherwise: it is not the strength report of this patch"
        ]
    return (
        Strength(
            tuple(found.findings),
            tuple(found.notes),
            found.mutation,
            tuple(found.unmeasured),
            tuple(found.moved),
        ),
        [],
    )


def _audits(
    head: tuple[HostReport | None, HostReport | None],
    base: tuple[Path | HostReport | None, Path | HostReport | None],
) -> attribution.Audits:
    """The live-entropy audits of both hosts and of the base's runs (the reads behind an
    env_coupled failure, verdict.coupled)."""
    based = (_read("a", base[0]), _read("b", base[1]))
    return attribution.Audits(
        (head[0].info.audit if head[0] else None, head[1].info.audit if head[1] else None),
        tuple(report.info.audit for report in based if report is not None),
    )


def _attributed(
    verdict: Verdict,
    report_b: HostReport | None,
    audits: attribution.Audits | None,
    pinned: Collection[str],
) -> Verdict:
    """An env_coupled verdict with what its failure follows, from host B's attribution
    re-runs (attribution.json), and the reads behind it (the audits); an explanation only,
    never a change of the verdict."""
    if not attribution.attributable(verdict) or report_b is None:
        return verdict
    try:
        found = stepfiles.read_attribution(report_b.dir, report_b.info)
    except GateError as exc:
        return _noted(verdict, f"attribution unusable ({exc.message})")
    want = attribution.disagreeing(verdict)
    if not want:
        return verdict
    missing = sorted(set(want) - set(found.tests if found is not None else ()))
    if found is None or missing:
        return _noted(
            verdict,
            f"not attributed: host B's attribution re-runs (of the tests host B failed) do not "
            f"cover {len(missing)} of the tests the hosts judged differently: a test host A "
            "failed and host B passed is attributed by the local `entropy-gate gate`, which "
            "knows both",
        )
    trials = [
        (
            attribution.Trial(frozenset(t.revert), tuple(t.keep_env), tuple(t.order), t.repeat),
            t.outcomes,
        )
        for t in found.trials
    ]
    orders = attribution.Orders(tuple(found.order_a), tuple(found.order_b))
    replayed = attribution.replay(trials)
    coupled = attribution.attribute(verdict, replayed, found.scrubbed, found.dimensions, orders)
    order = attribution.order_dependence(verdict, replayed, found.dimensions, orders)
    unsteady = orderdep.unsteady(trials, want)
    return attribution.with_attribution(verdict, coupled, order, audits, pinned, unsteady)


def attribution_covers(verdict: Verdict, folder: Path) -> bool:
    """Whether host B's attribution.json in `folder` covers every disagreeing test."""
    want = attribution.disagreeing(verdict)
    try:
        found = stepfiles.read_attribution(folder, hostreport.read_info(folder / HOST_JSON))
    except GateError:
        return False
    return found is not None and set(want) <= set(found.tests)


def _noted(verdict: Verdict, reason: str) -> Verdict:
    return verdict.model_copy(update={"reasons": [*verdict.reasons, reason]})


def _unreadable_head(check: PinCheck, problems: Sequence[str]) -> Verdict:
    broken = check.diff.of_kind("invalid")
    where = f"{check.relative}:{broken[0].line}" if broken else check.relative
    why = f": {broken[0].message.removesuffix(' (the patch broke the pin file)')}" if broken else ""
    return classify(
        Evidence(
            host_a="missing",
            host_b="missing",
            pins_intact=check.diff.intact,
            pin_changes=check.diff.summary(),
            invalid=(
                *problems,
                f"{where}: cannot be read at the head, so no host can run under it{why}",
            ),
        )
    )


def _with_inputs(
    verdict: Verdict, dossier: Dossier, report_a: HostReport | None, report_b: HostReport | None
) -> Verdict:
    """The verdict with the inputs it is a function of and their digest (see `inputs`)."""
    check = dossier.check
    root = dossier.root or (check.root if check is not None else None)
    hosts: dict[str, HostInfo | None] = {
        "a": _info(report_a, dossier.host_a),
        "b": _info(report_b, dossier.host_b),
    }
    loaded = (check.head or check.base) if check is not None else dossier.loaded
    try:
        head_tree = inputs.tree_digest(root, exclude=dossier.exclude) if root else "none"
        base_tree = (
            git.tree_of(check.root, check.base_commit)
            if check is not None and check.base_commit
            else None
        )
    except GateError as exc:  # a tree git cannot list: the verdict is not reproducible
        return _noted(verdict, f"the inputs could not be taken: {exc.message}")
    named = inputs.collect(head_tree, base_tree, loaded.sha256 if loaded else "none", hosts)
    named.update(  # what publish checks against the folders beside the verdict
        {"reports_a": _digest(dossier.host_a), "reports_b": _digest(dossier.host_b)}
    )
    return verdict.model_copy(update={"inputs": named, "inputs_sha256": inputs.digest(named)})


def _digest(source: Path | HostReport | None) -> str:
    """The report folder's digest (inputs.report_digest); "missing" for no folder at all."""
    if source is None:
        return "missing"
    try:
        return inputs.report_digest(source.dir if isinstance(source, HostReport) else source)
    except GateError:
        return inputs.UNREADABLE


def _info(report: HostReport | None, source: Path | HostReport | None) -> HostInfo | None:
    if report is not None:
        return report.info
    if isinstance(source, Path):
        try:
            return hostreport.read_info(source / HOST_JSON)
        except GateError:
            return None
    return None


@dataclass(frozen=True)
class PropertyDossier:
    """One property's dossier, in a manifest that lists many."""

    property_id: str
    module: str | None
    dossier: Dossier
    judged: Verdict | None = None  # the judge's verdict on it, when the caller has it


def judge_all(
    dossiers: Sequence[PropertyDossier],
    dropped: Sequence[PinChange] = (),
    *,
    many: bool,
    hosts: tuple[Path | None, Path | None] = (None, None),
) -> Verdict:
    """The verdict on every property of a manifest: each judged by `judge`, then rolled up
    (verdict.rollup). A manifest in the one-property form gives `judge`'s verdict itself.
    `hosts` are the host folders that hold every property's (properties/ID): the rolled-up
    verdict's reports_a and reports_b digest them, as publish checks."""
    if not many and len(dossiers) == 1 and not dropped:
        return dossiers[0].judged or judge(dossiers[0].dossier)
    judged = [
        rollup.Judged(d.property_id, d.module, d.judged or judge(d.dossier)) for d in dossiers
    ]
    verdict = remediation.advise(rollup.roll_up(judged, dropped))
    named = {
        f"{j.property_id}.{key}": value for j in judged for key, value in j.verdict.inputs.items()
    }
    named.update({"reports_a": _digest(hosts[0]), "reports_b": _digest(hosts[1])})
    return verdict.model_copy(update={"inputs": named, "inputs_sha256": inputs.digest(named)})
