"""verdict/clockswap.py: a clock read of code under test seen outside its run's window (the
run's start and end, shifted as host B shifts its clock) was answered by a stand-in in the
test process. Pure: host.json values in, findings out."""

from __future__ import annotations

from pathlib import Path

from entropy_action.core.hostinfo import Audit, AuditRecord, HostInfo, ReplayPlan
from entropy_action.evidence.hostreport import HostReport
from entropy_action.verdict import clockswap
from tests.unit.test_reports import host_info

START, END = "2026-12-06T15:00:00Z", "2026-12-06T15:00:10Z"
SHIFT = 5 * 365 * 86400
MODULE = "tests/properties/test_shapes.py"


def _record(seen: str | None, test: str = "test_a", api: str = "datetime.now()") -> AuditRecord:
    return AuditRecord(
        api=api, path="lib.py", line=14, test=f"{MODULE}::{test}", count=1, seen=seen
    )


def _report(host: str, *records: AuditRecord, shift: int | None = None) -> HostReport:
    info: HostInfo = host_info(
        host,
        "/r",
        started_at=START,
        finished_at=END,
        audit=Audit(mechanism="wrappers", records=list(records)),
        replay=ReplayPlan(clock_shift_seconds=shift) if shift is not None else None,
    )
    return HostReport(dir=Path("/nowhere"), info=info, tests=(), errors=())


def test_reads_inside_each_hosts_window_are_nothing() -> None:
    a = _report("a", _record("2026-12-06T15:00:05Z"), _record("2026-12-06T14:58:30Z", "test_b"))
    b = _report("b", _record("2031-12-05T15:00:04Z"), shift=SHIFT)  # 5 × 365 days later
    assert clockswap.window(b.info)[0] - clockswap.window(a.info)[0] == SHIFT
    assert clockswap.findings((a, b), _report("a")) == []


def test_a_read_that_saw_the_pin_on_host_b_is_a_finding_naming_the_read() -> None:
    b = _report("b", _record("2026-12-06T00:00:00Z"), shift=SHIFT)
    [found] = clockswap.findings((None, b), _report("a"))
    assert (found.kind, found.path, found.line, found.test, found.introduced) == (
        "entropy_patched", "lib.py", 14, "test_a", True,
    )  # fmt: skip
    assert found.message == (
        "datetime.now() returned 2026-12-06T00:00:00Z on host B while its clock read "
        f"2031-12-05T15:00:00Z to 2031-12-05T15:00:10Z (in {MODULE}::test_a): something in "
        "the test process stands in for the clock the code under test reads, so the property "
        "no longer sees the time it runs at"
    )


def test_one_finding_per_test_across_hosts_and_reads() -> None:
    frozen = "2026-12-06T00:00:00Z"
    a = _report("a", _record(frozen), _record(frozen, api="time.time()"))
    b = _report("b", _record(frozen), _record(frozen, "test_b"), shift=SHIFT)
    found = clockswap.findings((a, b), _report("a"))
    assert [(f.test, f.message.split(" while")[0]) for f in found] == [
        ("test_a", f"datetime.now() returned {frozen} on host A"),
        ("test_b", f"datetime.now() returned {frozen} on host B"),
    ]


def test_a_freeze_the_base_had_is_a_notice_by_test_or_by_site() -> None:
    frozen = "2026-12-06T00:00:00Z"
    base = _report("a", _record(frozen, "test_old"))
    head = _report("a", _record(frozen, "test_old"), _record(frozen, "test_renamed"))
    assert [f.introduced for f in clockswap.findings((head, None), base)] == [False, False]
    other = _report("a", _record(frozen, "test_new", api="time.time()"))
    assert [f.introduced for f in clockswap.findings((other, None), base)] == [True]


def test_without_a_base_nothing_is_said_and_unreadable_values_are_passed_over() -> None:
    b = _report("b", _record("2026-12-06T00:00:00Z"), shift=SHIFT)
    assert clockswap.findings((None, b), None) == []
    odd = _report("a", _record("set (value not recorded)"), _record(None))
    assert clockswap.findings((odd, None), _report("a")) == []
