"""The silencing scan: find where a patch silenced entropy instead of fixing a defect.

Static rules (ast, never substring matching) over the property module, its conftests, the
repository modules they reach and pytest's configuration — read at the head (the work tree)
and at the base ref (with `git show`, never checked out), so that a finding that stood the
same at the base is pre-existing (`introduced=False`): a notice, not a rejection. The
runtime rules (`not_executed`, `assertions_skipped_at_runtime`) read both hosts' results.
The gate's own configuration (`protected`: files under `constraints.protected_paths` the
patch changed) and the production files the patch changed (`production`: a live clock read
replaced by a constant, the gate's ENTROPY_* pins read) are checked here too, so that every
judging path sees them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from entropy_action.core.errors import GateError
from entropy_action.core.findings import Finding
from entropy_action.manifest.baseline import PinCheck
from entropy_action.scan import detection, production, protected, provenance
from entropy_action.scan.assertions import assertions_skipped
from entropy_action.scan.engine import analyze, match
from entropy_action.scan.model import Guard, Rules
from entropy_action.scan.runtime import (
    DefinedTest,
    cases_not_executed,
    executed_names,
    never_fired,
    not_executed,
    outcomes_by_test,
)
from entropy_action.scan.source import CommitTree, head_tree
from entropy_action.scan.weakening import (
    compare,
    deduplicated,
    removed,
    renames,
    retired,
    same_place,
)
from entropy_action.verdict.model import TestResult
from entropy_action.verdict.removed import Seam

__all__ = [
    "DefinedTest",
    "ScanResult",
    "never_fired",
    "not_executed",
    "outcomes_by_test",
    "runtime_rule",
    "scan",
]


@dataclass(frozen=True)
class ScanResult:
    findings: tuple[Finding, ...]  # static findings, `introduced` set against the base
    tests: tuple[DefinedTest, ...]  # the property tests the module defines at the head
    base_tests: tuple[DefinedTest, ...] = ()  # ... and at the base (for not_executed)
    errors: tuple[str, ...] = ()  # "path:line: cannot parse: ..." — the scan is incomplete
    notes: tuple[str, ...] = ()
    seams: tuple[Seam, ...] = ()  # base production functions the head injects a value into
    explained: tuple[str, ...] = ()  # said among the verdict's reasons (protected files)
    removed: frozenset[str] = frozenset()  # base properties gone at the head, not renamed
    guards: tuple[Guard, ...] = ()  # the head's skips that only a failed import reaches
    # (base property, head property): renamed word for word, what runs around it the same
    renamed: tuple[tuple[str, str], ...] = ()
    # properties whose dropped checks name a message the patch removed from production
    retired: frozenset[str] = frozenset()
    # property -> its base's distinct cases, where the cases it no longer runs were repeats
    repeats: tuple[tuple[str, int], ...] = ()
    quiet_hooks: tuple[tuple[str, int], ...] = ()  # head hooks the inventory need not report


def scan(check: PinCheck) -> ScanResult:
    """Scan the head (the work tree, or git's index for a staged check), and the base ref's
    tree to tell pre-existing findings apart."""
    if check.head is None:
        raise GateError(
            f"{check.relative}: cannot be read at the head, so the scan has no property module"
        )
    head_manifest = check.head.manifest
    base_manifest = check.base.manifest if check.base is not None else None
    rules = Rules.of(head_manifest, base_manifest)
    head = analyze(head_tree(check.root, staged=check.staged), head_manifest.module, rules)
    errors = head.errors
    if not head.module_found:
        errors += (f"{head_manifest.module}: the property module does not exist at the head",)
    if check.base_commit is None:
        findings = match(head.hits, None, {})
        return ScanResult(
            tuple(findings), head.tests, (), errors, head.notes, quiet_hooks=head.quiet_hooks
        )
    base_module = (base_manifest or head_manifest).module
    base = analyze(CommitTree(check.root, check.base_commit), base_module, rules)
    renamed = renames(base.counted, head.counted) if head.module_parsed else {}
    # a hit's subject names a test as the test ("Class::test") or as the stretch ("Class.test")
    subjects = {
        **renamed,
        **{o.replace("::", "."): n.replace("::", ".") for o, n in renamed.items()},
    }
    findings = match(head.hits, base.hits, {base_module: head_manifest.module}, subjects)
    findings += compare(base.counted, head.counted) if head.module_parsed else []
    gone = removed(base.counted, head.counted) if head.module_parsed else frozenset()
    kept = same_place(base.counted, head.counted) if head.module_parsed else {}
    moved = provenance.moved(head_manifest.module, base.imports, head.imports)
    was = {i.dotted: i for i in base.imports}
    shadows = {i.path for i in head.imports if i.support and not was.get(i.dotted, i).support}
    findings += moved
    findings += provenance.own_copies(head_manifest.module, base.bindings, head.bindings, shadows)
    config = protected.check(check)  # introduced by definition: the base is what it protects
    findings += config.findings
    made = production.check(check)  # the production files the patch changed
    findings += made.findings
    gone_checks = retired(base.counted, head.counted, made.retired) if head.module_parsed else {}
    findings = [_retired(f, gone_checks) for f in findings]
    findings += detection.check(check)  # ... and whether they detect the test run
    findings.sort(key=lambda f: (f.path, f.line, f.kind))
    notes = head.notes + config.notes + made.notes
    found = tuple(findings)
    return ScanResult(
        found,
        head.tests,
        base.tests,
        errors,
        notes,
        made.seams,
        config.explained,
        gone,
        head.guards,
        tuple(sorted(kept.items())),
        frozenset(gone_checks),
        tuple(sorted(deduplicated(base.counted, head.counted).items()))
        if head.module_parsed
        else (),
        head.quiet_hooks,
    )


RETIRED = (
    " — but each check it dropped names a message the patch removed from production "
    "({message!r}): a behaviour retired with its test, not a check silenced"
)


def _retired(finding: Finding, gone_checks: Mapping[str, str]) -> Finding:
    """An `assertions_dropped` that `weakening.retired` explains, as a notice."""
    if finding.kind != "assertions_dropped" or finding.test is None:
        return finding
    if finding.test not in gone_checks:
        return finding
    said = RETIRED.format(message=_short(gone_checks[finding.test]))
    return finding.model_copy(update={"level": "warning", "message": finding.message + said})


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:59] + "…"


def runtime_rule(
    scanned: ScanResult, base_cases: Mapping[str, str] | None
) -> Callable[[Sequence[TestResult], Collection[str]], list[Finding]]:
    """Rule 6 bound to a scan: (paired results, hosts that failed to collect) -> findings.

    `base_cases`: normalized case id -> outcome in a run of the base's module on host A
    (None: the caller did not run it, so skips are attributed statically).
    """
    both = (*scanned.tests, *scanned.base_tests)
    executed = None if base_cases is None else executed_names(base_cases, both)
    existed = {test.name for test in scanned.base_tests} if base_cases is not None else None

    def rule(results: Sequence[TestResult], broken_hosts: Collection[str]) -> list[Finding]:
        found = not_executed(
            scanned.tests,
            results,
            executed,
            scanned.findings,
            existed_at_base=existed,
            broken_hosts=broken_hosts,
        )
        if base_cases is not None:
            found += cases_not_executed(
                scanned.tests,
                results,
                base_cases,
                broken_hosts,
                scanned.findings,
                scanned.retired,
                dict(scanned.repeats),
                scanned.base_tests,
            )
        return found + assertions_skipped(results)  # counts exist only where the base ran

    return rule
