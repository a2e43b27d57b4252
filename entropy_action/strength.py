"""Property strength: what the property can still detect, at the base and at the head.

Syntax rules trail the next trick; this measures the thing itself, on the head's code:

1. the base's property module against the head's code (crossrun.py): a test the patch made
   pass by changing the test is a `test_changed_to_pass` finding;
2. mutation strength (mutation/): mutants of the code the property exercises, run under
   the base's and the head's module; a mutant the base kills and the head lets survive is a
   `weakened_property` finding.

Findings here reject like the scan's (`entropy_silenced`, or `masked_defect` when both
hosts fail). A step that cannot run is a note, never a pass of its own: the verdict still
judges the head's hosts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from entropy_action import crossrun, reports
from entropy_action.baseline import PinCheck
from entropy_action.errors import GateError
from entropy_action.findings import Finding
from entropy_action.scan import ScanResult


@dataclass(frozen=True)
class Strength:
    """What the strength checks found, and what they could not do."""

    findings: tuple[Finding, ...] = ()
    notes: tuple[str, ...] = ()


def measure(
    check: PinCheck, scanned: ScanResult, host: crossrun.HostSettings, out: Path
) -> Strength:
    """The strength checks of the working tree against the base ref, after host A ran into
    `out/host-a`."""
    findings: list[Finding] = []
    notes: list[str] = []
    cross = _cross_run(check, scanned, host, out)
    findings += cross.findings
    notes += cross.notes
    return Strength(tuple(findings), tuple(notes))


def _cross_run(
    check: PinCheck, scanned: ScanResult, host: crossrun.HostSettings, out: Path
) -> Strength:
    plan = crossrun.plan(check)
    if plan is None:
        return Strength()
    try:
        head = reports.read_host(out / "host-a")
    except GateError:
        why = "host A left no readable report"
        return Strength(notes=(f"the base's module was not run on the head's code: {why}",))
    if host.progress is not None:
        host.progress("running the base's property module against the head's code…")
    try:
        base_on_head = reports.read_host(crossrun.run(plan, check, host, out))
    except GateError as exc:
        line = exc.message.splitlines()[0]
        return Strength(notes=(f"the base's module could not run on the head's code ({line})",))
    return Strength(tuple(crossrun.judge(head.tests, base_on_head.tests, scanned.tests)))
