"""Host B's order probes as evidence (probes.json, written by hoststeps.probe_step): a test
that passed in host B's shuffled run but failed when the module ran in a designed order
(orderdep.probe_orders) is host B's failure. Folded into host B's report before the judge
pairs the hosts, so every path that judges host B's folder (gate, compare, the workflow's
verdict) reads the same outcome."""

from __future__ import annotations

import dataclasses

from entropy_action.core.errors import GateError
from entropy_action.evidence import stepfiles
from entropy_action.evidence.hostreport import HostReport
from entropy_action.evidence.junitcases import TestCase

FAILED = frozenset({"failed", "error"})


def folded(
    report: HostReport | None,
) -> tuple[HostReport | None, list[str], stepfiles.ProbeReport | None]:
    """Host B's report with the tests an order probe failed marked failed, the notes that
    say so (or why probes.json could not be read), and the probes read."""
    if report is None:
        return None, [], None
    try:
        found = stepfiles.read_probes(report.dir, report.info)
    except GateError as exc:
        return report, [f"order probes unusable ({exc.message})"], None
    if found is None:
        return report, [], None
    return (*fold(report, found), found)


def fold(report: HostReport, found: stepfiles.ProbeReport) -> tuple[HostReport, list[str]]:
    """The pure half of `folded`."""
    collected = report.info.test_order.collected if report.info.test_order else []
    failed: dict[str, str] = {}
    for probe in found.probes:
        said = describe(probe.order, collected, found.changed)
        for test, outcome in probe.outcomes.items():
            if outcome in FAILED:
                shared = probe.base is not None and probe.base.get(test) in FAILED
                failed.setdefault(test, said + (AT_BASE if shared else ""))
    cases, notes = [], []
    for case in report.tests:
        how = failed.get(case.id)
        if how is None or case.outcome != "passed":
            cases.append(case)
            continue
        message = f"failed when host B ran the module with {how} (order probe)"
        cases.append(_failed(case, message))
        notes.append(f"host B: {case.id} passed in its shuffled run and {message}")
    return dataclasses.replace(report, tests=tuple(cases)), notes


AT_BASE = "; the base fails it in the same order"


def fold_base(base: HostReport, found: stepfiles.ProbeReport | None) -> HostReport:
    """Host B's base run with the tests the base's run of a failing probe's order failed
    (Trial.base, hoststeps.base_probe_step) marked failed: the judge then tells that
    failure pre-existing (`failed_at_base`), as for a failure of host B's own order. It
    explains; the head's failure stands."""
    failed = {
        test
        for probe in (found.probes if found is not None else ())
        for test, outcome in (probe.base or {}).items()
        if outcome in FAILED and probe.outcomes.get(test) in FAILED
    }
    if not failed:
        return base
    message = "failed when host B ran the base's module in the failing order probe's order"
    cases = tuple(
        _failed(case, message) if case.id in failed and case.outcome == "passed" else case
        for case in base.tests
    )
    return dataclasses.replace(base, tests=cases)


def describe(order: list[str], collected: list[str], changed: list[str]) -> str:
    """Which designed order a probe ran, in words."""
    if order == list(reversed(collected)):
        return "its tests in reverse of host A's order"
    if changed and order[: len(changed)] == changed:
        return "the patch's new or changed tests first"
    return "the patch's new or changed tests last"


def _failed(case: TestCase, message: str) -> TestCase:
    return dataclasses.replace(case, outcome="failed", message=message)
