"""Cheap exits in production code, read from the audits: a live read removed, a pin read.

`live_read_removed`: the base's audit recorded production reading a pinned source (the clock,
the global RNG, an environment variable) in a test whose outcome the patch changed (it failed
at the base on host A or B, or both, and passes at the head), and neither host's audit at the
head records that source anywhere. Sources are matched as families, never by line: the clock
is one source whatever API reads it (`datetime.now()` moved to `time.time()` in another
function is still read), an environment variable is one source per name. The read is not a
finding where the head injects the value instead (a `Seam`: the function holding the base's
line takes a new parameter at the head, as the scan reads it from the diff — a Clock, a
`random.Random`, the value itself).

`gate_pin_read`: code under test reads one of the gate's pins (ENTROPY_*, which the audit
records by name although they are pinned): under the gate it sees the pin, anywhere else its
fallback runs, so the property tests what the gate set, not what production does. Not a pin
read: the gate's control variables (protocol.GATE_ENV: host B's child settings, the run
marker), which no production code can take a value from, and a copy of the whole environment
(`dict(os.environ)` for a subprocess: click's pager, requests' proxy lookups), which reads
every variable at one line — the adoption trials' false rejection on click and requests.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from entropy_action.core.findings import Finding, fakes_clock
from entropy_action.core.hostinfo import Audit, AuditRecord
from entropy_action.testproc.protocol import GATE_ENV, GATE_PREFIX
from entropy_action.verdict.detection import is_detection
from entropy_action.verdict.model import FAILING, TestResult

_CLOCK = ("time.", "datetime.", "date.")
# One line of code under test that reads this many distinct variables in one run copies or
# walks the environment (`dict(os.environ)`, `os.environ.copy()`, a loop over it): it reads no
# variable for its value, so its gate names are not pin reads.
ENV_COPY_NAMES = 5
Source = tuple[str, str | None]  # ("clock", None), ("rng", None), ("env", NAME)


@dataclass(frozen=True)
class Seam:
    """A production function at the base (its file, first and last line) whose head version
    takes a parameter the base's did not: the value is injected, not read live."""

    path: str
    first: int
    last: int

    def covers(self, path: str, line: int) -> bool:
        return path == self.path and self.first <= line <= self.last


def is_gate_variable(record: AuditRecord) -> bool:
    """A read of one of the gate's own variables (ENTROPY_*: a pin or a control)."""
    return record.api == "os.environ" and (record.name or "").startswith(GATE_PREFIX)


def is_gate_pin(record: AuditRecord) -> bool:
    """A read of one of the gate's pins (ENTROPY_*, not one of its control variables)."""
    return is_gate_variable(record) and record.name not in GATE_ENV


def env_copies(audit: Audit) -> frozenset[tuple[str, int]]:
    """The (path, line) places that copied or walked the environment in this run."""
    names: dict[tuple[str, int], set[str | None]] = {}
    for record in audit.records:
        if record.api == "os.environ":
            names.setdefault((record.path, record.line), set()).add(record.name)
    return frozenset(place for place, seen in names.items() if len(seen) >= ENV_COPY_NAMES)


def source(record: AuditRecord) -> Source | None:
    """The pinned source a read stands for; None for the others (network, temp dirs, ids)."""
    if record.api.startswith(_CLOCK):
        return ("clock", None)
    if record.api.startswith("random."):
        return ("rng", None)
    if record.api == "os.environ" and not is_gate_variable(record) and not is_detection(record):
        return ("env", record.name)
    return None


def removed(base: Iterable[Audit | None], head: Iterable[Audit | None]) -> list[AuditRecord]:
    """The base's production reads of a pinned source that no head audit records at all
    (none when no head host audited: nothing tells the read is gone)."""
    heads = [audit for audit in head if audit is not None]
    if not heads:
        return []
    still = {source(r) for audit in heads for r in audit.records}
    return [
        r
        for audit in base
        if audit is not None
        for r in audit.records
        if (found := source(r)) is not None and found not in still
    ]


def changed_to_pass(test: TestResult) -> bool:
    """Failing at the base on host A or B, passing at the head (on both hosts that ran)."""
    passes = test.host_a == "passed" and test.host_b in ("passed", "missing")
    return passes and (test.base_a in FAILING or test.base_b in FAILING)


def findings(
    base: Iterable[Audit | None],
    head: Iterable[Audit | None],
    tests: Sequence[TestResult],
    seams: Sequence[Seam] = (),
    static: Sequence[Finding] = (),
) -> list[Finding]:
    """One `live_read_removed` per base read (API, variable, file, line) that the head removed
    while a test that made it changed to pass, unless a seam covers the line, or the head's
    test fakes the clock (`static`: the scan's findings; the audit cannot see a frozen clock's
    reads, so their absence there proves no removal)."""
    changed: dict[str, TestResult] = {}
    for test in tests:
        if changed_to_pass(test):
            changed.update(dict.fromkeys((test.id, *test.raw_ids), test))
    if not changed:
        return []
    out: dict[tuple[str, str | None, str, int], Finding] = {}
    for record in removed(base, head):
        fixed = changed.get(record.test)
        key = (record.api, record.name, record.path, record.line)
        if fixed is None or key in out or any(s.covers(record.path, record.line) for s in seams):
            continue
        if source(record) == ("clock", None) and _clock_faked(fixed, static):
            continue
        out[key] = Finding(
            kind="live_read_removed",
            path=record.path,
            line=record.line,
            message=_removed_message(record, fixed),
            test=fixed.id,
        )
    return sorted(out.values(), key=lambda f: (f.path, f.line, f.message))


def _clock_faked(test: TestResult, static: Sequence[Finding]) -> bool:
    """Whether the head's scan found `test` (or its whole module) faking the clock."""
    path, _, name = test.id.partition("::")
    name = name.split("[")[0].split("::")[-1]
    return any(fakes_clock(f) and f.path == path and f.test in (None, name) for f in static)


def _removed_message(record: AuditRecord, test: TestResult) -> str:
    where = " and ".join(
        f"host {h.upper()}" for h in ("a", "b") if (test.base_a, test.base_b)[h == "b"] in FAILING
    )
    what = {"clock": "the live clock", "rng": "the global RNG"}.get(
        (source(record) or ("env", None))[0], f"the variable {record.name!r}"
    )
    return (
        f"the base read `{record.call()}` here in production and {test.id} failed at the base on "
        f"{where}; at the head no production code reads {what} and the test passes: the source "
        "was removed, not pinned (inject it: a Clock, a random.Random, a parameter)"
    )


def pin_reads(head: Iterable[Audit | None], base: Iterable[Audit | None]) -> list[Finding]:
    """One `gate_pin_read` per (variable, file, line) code under test read at the head; one
    the base's run read the same way in the same file stood there (introduced=False)."""
    audits = [audit for audit in base if audit is not None]
    known = {(r.name, r.path) for audit in audits for r in audit.records if is_gate_pin(r)}
    out: dict[tuple[str | None, str, int], Finding] = {}
    for audit in head:
        copies = env_copies(audit) if audit is not None else frozenset()
        for record in audit.records if audit is not None else ():
            key = (record.name, record.path, record.line)
            if not is_gate_pin(record) or key in out or (record.path, record.line) in copies:
                continue
            out[key] = Finding(
                kind="gate_pin_read",
                path=record.path,
                line=record.line,
                message=pin_message(record.name or ""),
                introduced=not audits or (record.name, record.path) not in known,
                test=record.test,
            )
    return sorted(out.values(), key=lambda f: (f.path, f.line, f.message))


def pin_message(name: str) -> str:
    """What reading the gate's variable `name` in production means, in one line."""
    what = (
        "the gate's manifest of pins" if name.endswith((".yaml", ".yml")) else "the gate's own pin"
    )
    return (
        f"production code reads `{name}`, {what}: under the gate it sees the pin, "
        "anywhere else its fallback runs, so the property tests the gate's value, not what "
        "production does (take a Clock or a parameter; the properties pass the pinned one)"
    )
