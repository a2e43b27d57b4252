"""The read behind a host-B failure (#36): which live read an env_coupled outcome follows,
and the one next step that fits it.

Pure: the verdict (its tests and `coupled_to`, what attribution found), the live-entropy
audits of both hosts — test code included (`Audit.test_records`) — and those of the base's
runs in; one `CoupledRead` per source out, and the step for it.

- Only a read made during a test the hosts judged differently explains it; a read another
  test made (an old read in code the failing test never ran) never does.
- Among those: a read the patch brought before one that stood at the base (the base's run
  recorded the same API and variable in the same file, and for test code in the same test);
  one whose value differed between the hosts before one that did not; the test's own read
  before the code's.
- Without an attribution (`coupled_to` empty), the reads whose values differed are named,
  each under the source its API reads, as evidence only.
- The step never pins a source the property pins already: a live read of a pinned clock is
  the defect, and the value the pin gives is what to inject.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from entropy_action.core import variations
from entropy_action.core.hostinfo import Audit, AuditRecord
from entropy_action.verdict.model import CoupledRead, TestResult, Verdict

# A dimension of host B -> the audited APIs that read it (the others are not audited).
SOURCES: dict[str, tuple[str, ...]] = {
    "clock": ("time.", "datetime.", "date."),
    "tz": ("time.localtime", "datetime.now", "datetime.today", "date.today"),
    "env": ("os.environ",),
    "network": ("socket.getaddrinfo", "socket.gethostby", "socket.connect"),
    "hostname": ("socket.gethostname",),
    "temp_root": ("tempfile.",),
    "rng_seed": ("random.",),
}
_DECIDED = frozenset({"passed", "failed", "error"})
_Key = tuple[str, str | None, str, int, str, bool]  # api, name, path, line, test, test code


@dataclass(frozen=True)
class _Seen:
    record: AuditRecord
    test_code: bool
    seen_a: str | None
    seen_b: str | None


def reads(
    verdict: Verdict, head: tuple[Audit | None, Audit | None], base: Iterable[Audit | None]
) -> list[CoupledRead]:
    """The read each source of `verdict.coupled_to` follows (none for a source no audited
    API reads), or, unattributed, the reads whose values differed between the hosts."""
    failing = {raw: test.id for test in verdict.tests if _disagrees(test) for raw in _ids(test)}
    if not failing:
        return []
    seen = _paired(head, failing)
    at_base = _at_base(base)
    if not verdict.coupled_to:
        return [
            _read(_source_of(s.record.api), s, failing, at_base)
            for s in sorted(seen, key=lambda s: _rank(s, at_base))
            if s.seen_a != s.seen_b and _source_of(s.record.api)
        ][:3]
    found = []
    for source in verdict.coupled_to:
        dimension, _, name = source.partition(":")
        prefixes = SOURCES.get(dimension, ())
        matching = [
            s
            for s in seen
            if s.record.api.startswith(prefixes) and (not name or s.record.name == name)
        ]
        if matching:
            best = min(matching, key=lambda s: _rank(s, at_base))
            found.append(_read(source, best, failing, at_base))
    return found


def _disagrees(test: TestResult) -> bool:
    return test.host_a != test.host_b and {test.host_a, test.host_b} <= _DECIDED


def _ids(test: TestResult) -> set[str]:
    return {test.id, *test.raw_ids}


def _paired(head: tuple[Audit | None, Audit | None], failing: Collection[str]) -> list[_Seen]:
    """Each read of a failing test on either host, with what it saw on each."""
    values: dict[_Key, list[str | None]] = {}
    records: dict[_Key, AuditRecord] = {}
    for index, audit in enumerate(head):
        if audit is None:
            continue
        for test_code, listed in ((False, audit.records), (True, audit.test_records)):
            for record in listed:
                if record.test not in failing:
                    continue
                key = (record.api, record.name, record.path, record.line, record.test, test_code)
                records.setdefault(key, record)
                values.setdefault(key, [None, None])[index] = record.seen
    return [_Seen(records[k], k[5], v[0], v[1]) for k, v in values.items()]


def _at_base(base: Iterable[Audit | None]) -> set[tuple[str, str | None, str, str | None]]:
    """What the base's runs read: (api, name, path, None) for the code's reads, (api, name,
    path, test) for the tests' own (a new test's reads are new, whatever its file read)."""
    known: set[tuple[str, str | None, str, str | None]] = set()
    for audit in base:
        if audit is None:
            continue
        known |= {(r.api, r.name, r.path, None) for r in audit.records}
        known |= {(r.api, r.name, r.path, r.test) for r in audit.test_records}
    return known


def _stood(seen: _Seen, at_base: set[tuple[str, str | None, str, str | None]]) -> bool:
    record = seen.record
    test = record.test if seen.test_code else None
    return (record.api, record.name, record.path, test) in at_base


def _rank(seen: _Seen, at_base: set[tuple[str, str | None, str, str | None]]) -> tuple[object, ...]:
    record = seen.record
    differs = seen.seen_a != seen.seen_b
    return (_stood(seen, at_base), not differs, not seen.test_code, record.path, record.line)


def _source_of(api: str) -> str:
    if api == "os.environ":
        return "env"
    return next((d for d, p in SOURCES.items() if d != "tz" and api.startswith(p)), "")


def _read(
    source: str,
    seen: _Seen,
    failing: dict[str, str],
    at_base: set[tuple[str, str | None, str, str | None]],
) -> CoupledRead:
    record = seen.record
    if source == "env" and record.name:
        source = f"env:{record.name}"
    return CoupledRead(
        source=source,
        path=record.path,
        line=record.line,
        call=record.call(),
        test=failing.get(record.test, record.test),
        test_code=seen.test_code,
        at_base=_stood(seen, at_base),
        seen_a=seen.seen_a,
        seen_b=seen.seen_b,
    )


def for_source(source: str, found: Sequence[CoupledRead]) -> CoupledRead | None:
    """The read behind `source` (an unnamed `env` takes the variable its read names)."""
    for read in found:
        if read.source == source or (source == "env" and read.source.startswith("env:")):
            return read
    return None


# --- what to do about it ---------------------------------------------------------------------


def step(read: CoupledRead, pinned: Collection[str]) -> str:
    """The one next step that fits the read: inject the value the property pins, pin the
    variable, or fix the test's own read."""
    dimension, _, name = read.source.partition(":")
    call = f"`{read.call}`"
    if dimension == "clock":
        return _clock_step(read, call, "clock_unix" in pinned)
    if dimension == "env" and name:
        if f"env.{name}" in pinned:
            return f"read {name} where the pin applies: pins.env.{name} is pinned already"
        if read.test_code:
            return (
                f"fix the test's own read of {name}: set it in the test (monkeypatch.setenv) "
                f"or pin it (pins.env.{name})"
            )
        return f"pass {name} in, or pin it (pins.env.{name})"
    if dimension == "network" and "cassette_sha256" in pinned:
        return f"pass a client in: the cassette is pinned already, and {call} reaches past it"
    known = variations.BY_NAME.get(dimension)
    advice = known.advice if known is not None else "pass the value in as a parameter"
    return f"{advice} ({call} {'in the test' if read.test_code else 'in the code'})"


def _clock_step(read: CoupledRead, call: str, pinned: bool) -> str:
    if read.test_code:
        if pinned:
            return (
                f"fix the test's own read: take the time from the pinned clock (the "
                f"entropy_clock fixture) instead of {call}; clock_unix is pinned already"
            )
        return (
            f"pin clock_unix and take the time from it in the test (the entropy_clock "
            f"fixture) instead of {call}"
        )
    if pinned:
        return (
            f"inject the value the property already pins: let the code that calls {call} "
            "take a Clock, and pass the pinned one (entropy_clock) from the test"
        )
    return f"pin clock_unix and let the code that calls {call} take a Clock"


def evidence(read: CoupledRead) -> str:
    """The read, whose it is, and what it saw on each host."""
    whose = "the test's own read" if read.test_code else "read by the code under test"
    text = f"`{read.location()}` reads `{read.call}` ({whose}"
    text += ", which stood at the base)" if read.at_base else ")"
    if read.seen_a is not None or read.seen_b is not None:
        text += f": {_value(read.seen_a)} on host A, {_value(read.seen_b)} on host B"
    return text


def _value(seen: str | None) -> str:
    return "not recorded" if seen is None else seen


def lines(found: Sequence[CoupledRead]) -> list[str]:
    """The reads as the reasons word them, one each."""
    return [f"{read.source}: {evidence(read)}" for read in found]
