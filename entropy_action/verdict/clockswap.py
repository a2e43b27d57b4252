"""The clock replaced inside the test process, read from the audits: `entropy_patched` at run
time, whatever name did it.

Every clock read the audit records from code under test carries what the clock said
(`seen`: the wall clock in UTC at that read). On host A that is the real time, on host B the
real time shifted years ahead (host.json `replay.clock_shift_seconds`), so a read seen
outside its run's window (the run's start and end, shifted as the host shifts) was answered
by something in the test process standing in for the clock: time-machine's travel reached
through `importlib`, a name built at run time, a fixture pytest's `usefixtures` option
applies — the red team's walk-arounds of 2026-12-06, which the scan (by name) cannot see and
which hide from host B the very clock it shifts. freezegun's fakes stand in for the functions
and leave no record (the audit's `unseen`): the scan's.

A test whose reads the base's run on host A saw replaced as well is a notice (a suite that
freezes the clock on purpose, and did before the patch): matched by the test's id, else by the
read's file and API (a test renamed or moved keeps its freeze). Without a base run there is
nothing to tell introduced from pre-existing, and nothing is said (as for the scan).
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence

from entropy_action.core.findings import Finding
from entropy_action.core.hostinfo import AuditRecord, HostInfo
from entropy_action.evidence.hostreport import HostReport

CLOCK_APIS = ("time.", "datetime.", "date.")
SLACK = 120  # seconds either side of the run's window: `seen` is to the second, runs start late
_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def findings(
    head: Sequence[HostReport | None], base_a: HostReport | None, host_names: str = "AB"
) -> list[Finding]:
    """One finding per test whose code under test read a replaced clock on a head host: the
    first such read (file, line, what it saw against the host's clock)."""
    if base_a is None:
        return []
    before = replaced(base_a.info)
    tests_before = {record.test for record in before}
    sites_before = {(record.path, record.api) for record in before}
    found: dict[str, Finding] = {}
    for name, report in zip(host_names, head, strict=True):
        if report is None:
            continue
        start, end = window(report.info)
        for record in replaced(report.info):
            if record.test in found:
                continue
            known = record.test in tests_before or (record.path, record.api) in sites_before
            found[record.test] = Finding(
                kind="entropy_patched",
                path=record.path,
                line=record.line,
                test=record.test.partition("::")[2] or record.test,
                introduced=not known,
                message=(
                    f"{record.call()} returned {record.seen} on host {name} while its clock "
                    f"read {_iso(start)} to {_iso(end)} (in {record.test}): something in the "
                    "test process stands in for the clock the code under test reads, so the "
                    "property no longer sees the time it runs at"
                ),
            )
    return list(found.values())


def replaced(info: HostInfo) -> list[AuditRecord]:
    """The clock reads of code under test whose `seen` lies outside the run's window."""
    if info.audit is None:
        return []
    start, end = window(info)
    out = []
    for record in info.audit.records:
        if not record.api.startswith(CLOCK_APIS) or record.seen is None:
            continue
        seen = _parse(record.seen)
        if seen is not None and not start - SLACK <= seen <= end + SLACK:
            out.append(record)
    return out


def window(info: HostInfo) -> tuple[float, float]:
    """The run's start and end on the clock its tests saw (Unix seconds): host.json's times,
    which the gate takes from its own unshifted clock, plus host B's shift."""
    shift = (info.replay.clock_shift_seconds or 0) if info.replay is not None else 0
    start, end = _parse(info.started_at), _parse(info.finished_at)
    if start is None or end is None:
        return float("-inf"), float("inf")  # nothing to compare with: nothing is outside
    return start + shift, end + shift


def _parse(text: str) -> float | None:
    try:
        stamp = datetime.datetime.strptime(text, _FORMAT).replace(tzinfo=datetime.timezone.utc)
    except ValueError:
        return None
    return stamp.timestamp()


def _iso(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime(_FORMAT)
