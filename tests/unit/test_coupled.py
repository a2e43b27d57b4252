"""The read behind a host-B failure (verdict.coupled), decided from audits as values: which
read of a failing test explains it, and the step that fits it, row by row."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from entropy_action.core.hostinfo import Audit, AuditRecord
from entropy_action.verdict import coupled
from entropy_action.verdict.classify import Evidence, classify
from entropy_action.verdict.model import TEST_RESULT, CoupledRead, Verdict

FAILING = "tests/test_otp.py::test_expiry_year"
OTHER = "tests/test_otp.py::test_uri"


def _verdict(coupled_to: list[str]) -> Verdict:
    tests = (
        TEST_RESULT.validate_python({"id": FAILING, "host_a": "passed", "host_b": "failed"}),
        TEST_RESULT.validate_python({"id": OTHER, "host_a": "passed", "host_b": "passed"}),
    )
    verdict = classify(Evidence("pass", "fail", tests=tests))
    return verdict.model_copy(update={"coupled_to": coupled_to})


def _record(api: str, path: str, line: int, seen: str | None, **more: Any) -> AuditRecord:
    fields = {"api": api, "path": path, "line": line, "test": FAILING, "count": 1, "seen": seen}
    return AuditRecord.model_validate(fields | more)


def _audit(records: Sequence[AuditRecord] = (), tests: Sequence[AuditRecord] = ()) -> Audit:
    return Audit(mechanism="m", records=list(records), test_records=list(tests))


PRODUCTION = ("datetime.now()", "src/otp.py", 76)
OWN = ("date.today()", "tests/test_otp.py", 250)


def _pair(api: str, path: str, line: int, *, test_code: bool, **more: Any) -> tuple[Audit, Audit]:
    a = _record(api, path, line, "2026-01-10T09:30:00Z", **more)
    b = _record(api, path, line, "2031-01-27T16:43:00Z", **more)
    if test_code:
        return _audit(tests=[a]), _audit(tests=[b])
    return _audit([a]), _audit([b])


def _merged(*pairs: tuple[Audit, Audit]) -> tuple[Audit, Audit]:
    def merge(index: int) -> Audit:
        return _audit(
            [r for p in pairs for r in p[index].records],
            [r for p in pairs for r in p[index].test_records],
        )

    return merge(0), merge(1)


def test_the_tests_own_new_read_wins_over_an_old_production_read_it_also_made() -> None:
    head = _merged(_pair(*PRODUCTION, test_code=False), _pair(*OWN, test_code=True))
    base = [_audit([_record(*PRODUCTION, None, test=OTHER)])]  # the production read stood there
    [read] = coupled.reads(_verdict(["clock"]), head, base)
    assert (read.location(), read.call, read.test_code, read.at_base) == (
        "tests/test_otp.py:250",
        "date.today()",
        True,
        False,
    )
    assert (read.seen_a, read.seen_b) == ("2026-01-10T09:30:00Z", "2031-01-27T16:43:00Z")


def test_a_read_another_test_made_is_never_the_explanation() -> None:
    other = _record(*PRODUCTION, "2026", test=OTHER)
    assert coupled.reads(_verdict(["clock"]), (_audit([other]), _audit([other])), []) == []


def test_a_new_production_read_ranks_before_the_tests_own_read_that_stood_at_the_base() -> None:
    head = _merged(_pair(*PRODUCTION, test_code=False), _pair(*OWN, test_code=True))
    base = [_audit(tests=[_record(*OWN, None)])]  # the same test read the clock at the base
    [read] = coupled.reads(_verdict(["clock"]), head, base)
    assert (read.path, read.test_code) == ("src/otp.py", False)


def test_an_unnamed_environment_takes_the_variable_whose_value_differed() -> None:
    same = _record("os.environ", "tests/test_otp.py", 5, "set (value not recorded)", name="CI")
    home_a = _record("os.environ", "tests/test_otp.py", 9, "'/home/alice'", name="HOME")
    home_b = _record("os.environ", "tests/test_otp.py", 9, "'/tmp/x/home'", name="HOME")
    head = (_audit(tests=[same, home_a]), _audit(tests=[same, home_b]))
    [read] = coupled.reads(_verdict(["env"]), head, [])
    assert (read.source, read.line) == ("env:HOME", 9)


def test_unattributed_the_reads_whose_values_differed_are_evidence() -> None:
    head = _merged(_pair(*OWN, test_code=True))
    [read] = coupled.reads(_verdict([]), head, [])
    assert (read.source, read.location()) == ("clock", "tests/test_otp.py:250")


def _read(source: str, call: str, *, test_code: bool) -> CoupledRead:
    return CoupledRead(
        source=source,
        path="tests/test_otp.py" if test_code else "src/otp.py",
        line=9,
        call=call,
        test=FAILING,
        test_code=test_code,
        at_base=False,
    )


@pytest.mark.parametrize(
    ("source", "call", "test_code", "pinned", "step"),
    [
        ("clock", "date.today()", True, {"clock_unix"},
         "fix the test's own read: take the time from the pinned clock (the entropy_clock "
         "fixture) instead of `date.today()`; clock_unix is pinned already"),
        ("clock", "date.today()", True, set(),
         "pin clock_unix and take the time from it in the test (the entropy_clock fixture) "
         "instead of `date.today()`"),
        ("clock", "datetime.now()", False, {"clock_unix"},
         "inject the value the property already pins: let the code that calls `datetime.now()` "
         "take a Clock, and pass the pinned one (entropy_clock) from the test"),
        ("clock", "datetime.now()", False, set(),
         "pin clock_unix and let the code that calls `datetime.now()` take a Clock"),
        ("env:HOME", "os.environ['HOME']", True, set(),
         "fix the test's own read of HOME: set it in the test (monkeypatch.setenv) or pin it "
         "(pins.env.HOME)"),
        ("env:REGION", "os.environ['REGION']", False, set(),
         "pass REGION in, or pin it (pins.env.REGION)"),
        ("network", "socket.connect('rates.example')", False, {"cassette_sha256"},
         "pass a client in: the cassette is pinned already, and "
         "`socket.connect('rates.example')` reaches past it"),
        ("tz", "datetime.now()", False, set(),
         "pin it (tz) or pass a zone in (`datetime.now()` in the code)"),
    ],
)  # fmt: skip
def test_the_step_fits_the_read_and_never_pins_what_is_pinned(
    source: str, call: str, test_code: bool, pinned: set[str], step: str
) -> None:
    read = _read(source, call, test_code=test_code)
    assert coupled.step(read, pinned) == step
    for key in pinned:
        assert f"pin {key}" not in step
        assert f"pin it ({key})" not in step


def test_the_evidence_names_the_line_whose_read_it_is_and_each_hosts_value() -> None:
    read = _read("env:HOME", "os.environ['HOME']", test_code=True)
    read = read.model_copy(update={"seen_a": "'/home/alice'", "seen_b": "unset", "at_base": True})
    assert coupled.evidence(read) == (
        "`tests/test_otp.py:9` reads `os.environ['HOME']` (the test's own read, which stood at "
        "the base): '/home/alice' on host A, unset on host B"
    )
