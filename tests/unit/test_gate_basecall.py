"""The base run on host A is skipped only where it can change nothing (`basecall`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from entropy_action.core.hostinfo import (
    Audit,
    AuditRecord,
    HostInfo,
    Provenance,
    ProvenanceUnit,
    Replacement,
)
from entropy_action.evidence import hostreport, junitcases
from entropy_action.verdict import basepolicy
from tests.support.helpers import Repo

MANIFEST = """\
version: 1
property_id: cases
module: tests/test_cases.py
pins:
  rng_seed: 3
  tz: UTC
  temp_root: {temp_root}
"""

# The cases come from a data file next to the module: a patch that edits only the data
# can drop one, and only the base run shows it.
MODULE = """\
from pathlib import Path

import pytest

CASES = Path(__file__).with_name("cases.txt").read_text().split()


@pytest.mark.parametrize("n", CASES)
def test_square_is_not_smaller(n):
    assert int(n) * int(n) >= int(n)
"""


def _gate(repo: Repo, base: str) -> tuple[int, dict[str, Any], Path]:
    out, reports_dir = repo.path.parent / "verdict.json", repo.path.parent / "reports"
    result = repo.cli("gate", "--base-ref", base, "--json", str(out), "--out", str(reports_dir))
    return result.code, json.loads(out.read_text(encoding="utf-8")), reports_dir


@pytest.mark.parametrize(
    ("changed", "expected"),
    [
        (["README.md"], True),
        (["docs/a.RST", "CHANGELOG.md"], True),
        ([], True),
        (["README.md", "tests/cases.txt"], False),
        (["entropy.yaml"], False),
        (["docs/conf.py"], False),
        (["notes.txt"], False),
        (["README"], False),
    ],
)
def test_docs_only(changed: list[str], expected: bool) -> None:
    assert basepolicy.docs_only(changed) is expected


def _report(
    tmp_path: Path, host: str, outcomes: dict[str, str], *, reads: int = 0
) -> hostreport.HostReport:
    record = AuditRecord(api="time.time()", path="m.py", line=1, test="t::x", count=1)
    failed = any(outcome in ("failed", "error") for outcome in outcomes.values())
    fields: dict[str, Any] = {  # only what `settled` reads
        "host": host,
        "returncode": 1 if failed else 0,
        "audit": Audit(mechanism="audit-hook", records=[record] * reads),
    }
    info = HostInfo.model_construct(**fields)
    tests = tuple(  # "t::p[x-1]@t::p[a:0]": the id, and the case's place (entropy_case)
        junitcases.TestCase(
            id=test_id.split("@")[0],
            raw_id=test_id.split("@")[0],
            outcome=outcome,  # type: ignore[arg-type]
            case=test_id.split("@")[1] if "@" in test_id else None,
        )
        for test_id, outcome in outcomes.items()
    )
    return hostreport.HostReport(tmp_path / host, info, tests, ())


_OTHER = "the hosts ran different tests"


@pytest.mark.parametrize(
    ("a", "b", "reads", "why"),
    [
        ({"t::x": "passed"}, {"t::x": "passed"}, 0, None),
        ({"t::x": "passed"}, {"t::x": "skipped"}, 0, "a test did not pass on host B"),
        ({"t::x": "failed"}, {"t::x": "passed"}, 0, "host A did not pass cleanly"),
        ({"t::x": "passed"}, {"t::y": "passed"}, 0, "the hosts ran different tests"),
        # an id holding a value that differs by host, the same place: the verdict pairs them
        ({"t::p[tb-/a]@t::p[v:0]": "passed"}, {"t::p[v0]@t::p[v:0]": "passed"}, 0, None),
        ({"t::p[tb-/a]@t::p[v:0]": "passed"}, {"t::p[v1]@t::p[v:1]": "passed"}, 0, _OTHER),
        (
            {"t::p[a]@t::p[v:0]": "passed", "t::q": "passed"},
            {"t::p[b]@t::p[v:0]": "passed"},
            0,
            _OTHER,
        ),
        ({"t::x": "passed"}, {"t::x": "passed"}, 1, "host A's audit saw a live read"),
        ({}, {}, 0, "host A did not pass cleanly"),
    ],
)
def test_settled(
    tmp_path: Path, a: dict[str, str], b: dict[str, str], reads: int, why: str | None
) -> None:
    host_a = _report(tmp_path, "a", a, reads=reads)
    host_b = _report(tmp_path, "b", b)
    assert basepolicy.settled(host_a, host_b) == why


def test_an_unusable_report_needs_the_base(tmp_path: Path) -> None:
    host_a = _report(tmp_path, "a", {"t::x": "passed"})
    assert basepolicy.settled(host_a, None) == "a host report is unusable"


def test_a_replaced_unit_keeps_the_base_run(tmp_path: Path) -> None:
    """The base's run tells a replacement the patch brought from one that stood there; a
    test helper module the tests import is no reason to run it."""
    host_a = _report(tmp_path, "a", {"t::x": "passed"})
    host_b = _report(tmp_path, "b", {"t::x": "passed"})
    helper = ProvenanceUnit(module="helpers", path="tests/helpers.py", tests_area=True)
    shadow = Replacement(
        how="shadowed",
        module="invoice_lib",
        path="tests/invoice_lib.py",
        production="invoice_lib.py",
        detail="invoice_lib was imported from tests/invoice_lib.py",
    )
    for record, why in (
        (Provenance(units=[helper]), None),
        (
            Provenance(units=[helper], replaced=[shadow]),
            "host A's tests ran a replaced unit (provenance)",
        ),
    ):
        info = host_a.info.model_copy(update={"provenance": record})
        recorded = hostreport.HostReport(host_a.dir, info, host_a.tests, ())
        assert basepolicy.settled(recorded, host_b) == why
