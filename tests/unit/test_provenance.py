"""The provenance record as data: its limits in host.json, and the findings judge makes of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from entropy_action.core.hostinfo import MAX_PROVENANCE, HostInfo, Provenance
from entropy_action.hosts import hostjson, pinsseen
from entropy_action.verdict import provenance
from tests.unit.test_reports import host_info

SHADOW = {
    "how": "shadowed",
    "module": "invoice_lib",
    "path": "tests/properties/invoice_lib.py",
    "production": "invoice_lib.py",
    "sha256": "a" * 64,
    "detail": "invoice_lib was imported from tests/properties/invoice_lib.py",
}
PRODUCTION = {"module": "invoice_lib", "path": "invoice_lib.py", "sha256": "a" * 64}


def _record(
    replaced: list[dict[str, Any]], units: list[dict[str, Any]] | None = None
) -> Provenance:
    return Provenance.model_validate({"replaced": replaced, "units": units or []})


def test_a_replacement_on_the_head_is_an_introduced_finding_naming_both_files() -> None:
    [found] = provenance.findings([_record([SHADOW]), _record([SHADOW])], None)
    assert (found.kind, found.path, found.line, found.introduced) == (
        "unit_replaced",
        "tests/properties/invoice_lib.py",
        1,
        True,
    )
    assert "not the production code in invoice_lib.py" in found.message


def test_the_same_replacement_at_the_base_is_a_notice() -> None:
    base = _record([SHADOW], [{**PRODUCTION, "tests_area": False}])
    [found] = provenance.findings([_record([SHADOW])], base)
    assert found.introduced is False
    assert "a verbatim copy of the base's invoice_lib.py" in found.message


def test_a_module_the_base_ran_from_production_and_the_head_from_the_tests_is_a_finding() -> None:
    head = _record([], [{**PRODUCTION, "path": "tests/invoice_lib.py", "tests_area": True}])
    base = _record([], [{**PRODUCTION, "tests_area": False}])
    [found] = provenance.findings([head], base)
    assert (found.path, found.introduced) == ("tests/invoice_lib.py", True)
    assert "the base's tests ran the production code in invoice_lib.py" in found.message
    assert provenance.findings([head], None) == []  # head-only: a helper of the tests
    assert not provenance.suspicious(head)  # no replacement seen: the base run may go
    assert provenance.suspicious(_record([SHADOW]))


def test_no_record_is_no_finding() -> None:
    assert provenance.findings([None, None], None) == []
    assert provenance.suspicious(None) is False


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("path", "/etc/passwd"),
        ("path", "../outside.py"),
        ("production", "a\\b.py"),
        ("detail", "line\x1b[31m"),
        ("how", "guessed"),
        ("sha256", "not-a-digest"),
        ("line", 0),
    ],
)
def test_a_record_the_test_process_spoiled_is_refused(field: str, value: object) -> None:
    with pytest.raises(ValidationError):
        _record([{**SHADOW, field: value}])


def test_more_entries_than_the_test_process_keeps_are_refused() -> None:
    with pytest.raises(ValidationError):
        _record([SHADOW] * (MAX_PROVENANCE + 1))


@pytest.fixture
def info(tmp_path: Path) -> HostInfo:
    return host_info("a", tmp_path)


def test_an_unusable_report_is_a_note_and_no_record(tmp_path: Path, info: HostInfo) -> None:
    path = tmp_path / "provenance.json"
    assert hostjson.with_provenance(info, path) == info  # no file: nothing recorded
    path.write_text("{not json", encoding="utf-8")
    spoiled = hostjson.with_provenance(info, path)
    assert spoiled.provenance is None
    assert spoiled.notes[-1] == "provenance: the test process wrote no usable report"
    path.write_text(json.dumps({"replaced": [{**SHADOW, "path": "/etc/passwd"}]}))
    refused = hostjson.with_provenance(info, path)
    assert refused.provenance is None
    assert refused.notes[-1].startswith("provenance: report refused (field 'replaced.0.path'")
    path.write_bytes(b" " * (pinsseen.REPORT_LIMIT + 1))
    assert hostjson.with_provenance(info, path).provenance is None


def test_a_good_report_lands_in_host_json_and_reads_back(tmp_path: Path, info: HostInfo) -> None:
    path = tmp_path / "provenance.json"
    path.write_text(json.dumps({"replaced": [SHADOW], "units": [], "dropped": 3}))
    recorded = hostjson.with_provenance(info, path)
    assert recorded.provenance is not None
    assert recorded.provenance.dropped == 3
    again = HostInfo.model_validate_json(recorded.model_dump_json())
    assert again.provenance == recorded.provenance
    older = json.loads(info.model_dump_json())
    older.pop("provenance", None)
    assert HostInfo.model_validate(older).provenance is None  # an older gate's host.json


def test_a_module_loaded_from_another_production_file_while_the_base_s_remains() -> None:
    base = _record([], [{**PRODUCTION, "tests_area": False}])
    vendored = {**PRODUCTION, "path": "vendor/invoice_lib.py", "tests_area": False}
    [found] = provenance.findings(
        [_record([], [{**vendored, "candidates": ["invoice_lib.py"]}])], base
    )
    assert (found.path, found.introduced) == ("vendor/invoice_lib.py", True)
    assert "while invoice_lib.py is still there" in found.message
    moved = _record([], [{**PRODUCTION, "path": "src/invoice_lib.py", "tests_area": False}])
    assert provenance.findings([moved], base) == []  # moved to src/: the base's file is gone


def test_a_candidate_outside_the_tree_is_refused() -> None:
    with pytest.raises(ValidationError):
        _record([], [{**PRODUCTION, "tests_area": False, "candidates": ["/etc/passwd"]}])
    with pytest.raises(ValidationError):
        _record([], [{**PRODUCTION, "tests_area": False, "candidates": ["a.py"] * 6}])
