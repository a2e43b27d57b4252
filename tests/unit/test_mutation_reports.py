"""What the test process and the cache hand back is data: read with limits, typed, or dropped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from entropy_action.strength.mutation import harness
from entropy_action.strength.mutation.harness import Outcome


@pytest.mark.parametrize(
    "text",
    ["", "not json", "[1, 2]", '{"outcomes": 3, "reached": "x"}', '{"outcomes": {"a": 1}}'],
)
def test_a_broken_probe_report_reads_as_no_outcome(tmp_path: Path, text: str) -> None:
    report = tmp_path / "probe.json"
    report.write_text(text, encoding="utf-8")
    assert harness._read(report, False) == Outcome({}, {}, False)


def test_a_probe_report_keeps_only_known_outcomes_and_well_formed_calls(tmp_path: Path) -> None:
    report = tmp_path / "probe.json"
    data = {
        "outcomes": {"t::a": "passed", "t::b": "exploded", "t::c": "failed"},
        "reached": {"t::a": [["m.py", 3], ["m.py", "4"], "junk", ["m.py", 5, 6]], "t::b": 7},
    }
    report.write_text(json.dumps(data), encoding="utf-8")
    assert harness._read(report, True) == Outcome(
        {"t::a": "passed", "t::c": "failed"}, {"t::a": [("m.py", 3)]}, True
    )


def test_an_oversized_or_missing_report_is_no_outcome(tmp_path: Path) -> None:
    report = tmp_path / "probe.json"
    assert harness._read(report, False) == Outcome({}, {}, False)
    report.write_bytes(b" " * (harness.MAX_REPORT + 1))
    assert harness._read(report, False) == Outcome({}, {}, False)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"applied": false, "why": "a closure"}', None),
        ('{"applied": true, "timed_out": true, "outcomes": {}}', Outcome({}, {}, True)),
        (
            '{"applied": true, "outcomes": {"t::a": "failed", "t::b": 9}}',
            Outcome({"t::a": "failed"}, {}, False),
        ),
        ("[]", False),
        ("{", False),
    ],
)
def test_a_forked_mutants_result(tmp_path: Path, text: str, expected: object) -> None:
    path = tmp_path / "7.json"
    path.write_text(text, encoding="utf-8")
    assert harness._mutant_result(path) == expected
