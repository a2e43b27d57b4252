"""Whether the base's run on host A can tell the verdict anything (decided, never guessed).

Head outcomes decide the verdict; the base's run on host A only explains. It is read by:
the runtime `not_executed` rule (was a test that did not run at the head running at the
base?), `cases_not_executed` (did a parametrized case that ran at the base vanish at the
head?), `failed_at_base` (did a failing test fail there too?), `unpaired` (a test on one
host only) and the live-entropy findings (was a live read already made at the base?).

The gate may skip the run only when none of them can say anything, which needs two things:

- `docs_only`: the patch changes documentation files only (before the hosts run). Then the
  head's code and property module are the base's, so no case can have vanished; a patch
  that changes any other file (code, data, conftest, the manifest) keeps the base run, run
  alongside the hosts as before, because a case dropped by a data change shows only there.
- `settled`: after the hosts ran, both reports are readable and clean, list the same tests,
  every test passed on both, neither host's audit saw a live read, and neither host saw a
  replaced unit (`provenance`: the base's run tells a replacement the patch brought from
  one that stood at the base).

A docs-only patch changes no production code, so it cannot remove a live read from it
(`live_read_removed`): skipping its base run loses nothing there. Every other patch keeps the
base run on host A; the base's run on host B, which the local gate makes only once host B
failed a test, is made too when `removed_read` says the base's audit on host A saw a
production read the head no longer makes in a test that passed there (host B's base run is
then what shows whether the patch changed that test's outcome). The workflow's host B job
cannot see host A's audit, so it runs the base beside every head that is not docs-only, and
the judge reads that run only where the gate would have made it (`host_b_base_counts`):
both paths judge the same evidence.
The hook inventory (verdict.hook_inventory) needs no base run to be safe here: without one,
the files the patch changed decide whether a hook is new, and a docs-only patch changes none
a hook can live in.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath

from entropy_action.evidence import junitcases
from entropy_action.evidence.hostreport import HostReport
from entropy_action.verdict import places, provenance, removed
from entropy_action.verdict.model import FAILING

DOC_SUFFIXES = frozenset({".md", ".rst"})  # prose pytest does not collect by default


def docs_only(changed: Iterable[str]) -> bool:
    """Whether every changed path (relative, `/`-separated) is a documentation file."""
    return all(PurePosixPath(path).suffix.lower() in DOC_SUFFIXES for path in changed)


def settled(host_a: HostReport | None, host_b: HostReport | None) -> str | None:
    """Why the base run is still needed after the hosts ran; None when it can add nothing."""
    if host_a is None or host_b is None:
        return "a host report is unusable"
    for name, report in (("A", host_a), ("B", host_b)):
        if report.errors or report.info.returncode != 0 or not report.tests:
            return f"host {name} did not pass cleanly"
        if any(case.outcome != "passed" for case in report.tests):
            return f"a test did not pass on host {name}"
        if report.info.audit is not None and report.info.audit.records:
            return f"host {name}'s audit saw a live read"
        if provenance.suspicious(report.info.provenance):
            return f"host {name}'s tests ran a replaced unit (provenance)"
    if not _same_tests(host_a, host_b):
        return "the hosts ran different tests"
    return None


def _same_tests(host_a: HostReport, host_b: HostReport) -> bool:
    """Whether every test pairs with one on the other host, as the verdict pairs them: by id,
    else by its parametrized place (python-json-logger's ids hold a traceback's text, which
    differs on host B; the verdict paired all 207 and the gate ran the base for nothing)."""
    by_a, by_b = junitcases.merge(host_a.tests), junitcases.merge(host_b.tests)
    placed = places.by_place(by_a, by_b)
    return {test if test in by_b else placed.get(test) for test in by_a} == set(by_b)


def removed_read(
    base_a: HostReport | None, host_a: HostReport | None, host_b: HostReport | None
) -> str | None:
    """Why the base's run on host B is needed although host B passed: the base's audit on
    host A recorded a production read of a pinned source that neither head audit records, in
    a test the base passed on host A (a failing one already shows the change). None: not."""
    if base_a is None or base_a.info.audit is None:
        return None
    heads = [r.info.audit for r in (host_a, host_b) if r is not None]
    gone = removed.removed([base_a.info.audit], heads)
    failed = {n for c in base_a.tests if c.outcome in FAILING for n in (c.raw_id, c.id)}
    waiting = [record for record in gone if record.test not in failed]
    if not waiting:
        return None
    first = waiting[0]
    return (
        f"the base read `{first.call()}` at {first.path}:{first.line} and the head no longer "
        "does: the base's run on host B tells whether the patch changed the outcome"
    )


def host_b_base_counts(
    base_a: HostReport | None, host_a: HostReport | None, host_b: HostReport | None
) -> bool:
    """Whether the judge reads host B's base run: where the local gate makes it — host B
    failed a test or died (or its report is unreadable: the verdict says why), or the head
    removed a read the base made (`removed_read`). A workflow's host B job runs it beside
    every head that is not docs-only; read anywhere else, it would give the workflow evidence
    the gate never has."""
    if host_b is None or host_b.info.crash is not None:
        return True
    if any(case.outcome in FAILING for case in host_b.tests):
        return True
    return removed_read(base_a, host_a, host_b) is not None
