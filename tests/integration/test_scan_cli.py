"""`entropy-gate scan`: introduced vs pre-existing, strict_baseline, JSON, bad input."""

from __future__ import annotations

import json

from entropy_action.verdict import remediation
from tests.integration.test_scan_helpers import MANIFEST, PROPERTY, base, scan, write
from tests.support.helpers import Repo

ADOPTED = """\
import sys

import pytest

from invoice_lib import total_for


@pytest.mark.skipif(sys.platform == "win32", reason="posix paths")
def test_total():
    assert total_for([1, 2]) == 3


@pytest.mark.xfail(reason="rounding bug #12")
def test_rounding():
    assert round(2.5) == 3


def test_currency():
    assert total_for([5]) == 5
"""

REORDERING_CONFTEST = """\
def pytest_collection_modifyitems(items):
    items.reverse()
"""


def adopted(repo: Repo) -> None:
    base(repo, ADOPTED, tests__conftest_dot_py=REORDERING_CONFTEST)


def test_a_docs_only_patch_on_a_repo_with_old_skips_passes_with_notices(repo: Repo) -> None:
    adopted(repo)
    write(repo, README_dot_md="# Invoice\n")
    scanned = scan(repo)
    assert scanned.code == 0
    assert scanned.result.out == (
        "tests/conftest.py:1: notice: pre-existing — hook pytest_collection_modifyitems in "
        "tests/conftest.py can drop, deselect, reorder or re-mark property tests (consider "
        "removing it)\n"
        f"{PROPERTY}:8: notice: pre-existing — skip marker 'skipif' on property test_total: "
        "pytest.mark.skipif(sys.platform == 'win32', reason='posix paths') — it skips the "
        "property when sys.platform == 'win32' (counted whatever the condition is under the "
        "pins) (consider removing it from the property module)\n"
        f"{PROPERTY}:13: notice: pre-existing — xfail marker on property test_rounding: "
        "pytest.mark.xfail(reason='rounding bug #12') — a failure is reported as expected, so "
        "the property cannot fail the gate (consider removing it from the property module)\n"
        "scan: 0 finding(s) introduced by the patch, 3 pre-existing (notices)\n"
    )


def test_one_more_skip_rejects_and_names_only_the_new_one(repo: Repo) -> None:
    adopted(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py="# moved down by a comment\n"
        + ADOPTED.replace(
            "def test_currency", '@pytest.mark.skip(reason="flaky on CI")\ndef test_currency'
        ),
    )
    scanned = scan(repo)
    assert scanned.code == 1
    assert scanned.introduced == [("skip_marker", PROPERTY, 19)]
    assert [new for *_, new in scanned.located] == [False, False, False, True]
    assert scanned.result.out.count("notice: pre-existing") == 3
    assert (
        f"{PROPERTY}:19: skip marker 'skip' on property test_currency: "
        "pytest.mark.skip(reason='flaky on CI')" in scanned.result.out
    )


def test_a_second_identical_skip_call_counts(repo: Repo) -> None:
    text = 'import pytest\n\n\ndef test_total():\n    pytest.skip("later")\n'
    base(repo, text)
    write(repo, tests__properties__test_invoice_dot_py=text + '    pytest.skip("later")\n')
    scanned = scan(repo)
    assert scanned.located == [
        ("skip_call", PROPERTY, 5, False),
        ("skip_call", PROPERTY, 6, True),
    ]


def test_strict_baseline_counts_pre_existing_findings(repo: Repo) -> None:
    base(repo, ADOPTED, manifest=MANIFEST + "  strict_baseline: true\n")
    write(repo, README_dot_md="docs\n")
    scanned = scan(repo)
    assert scanned.code == 1
    lines = scanned.result.out.splitlines()
    assert lines[0].endswith("(pre-existing; constraints.strict_baseline counts it)")
    assert lines[-1] == (
        "scan: 2 finding(s) (2 pre-existing); constraints.strict_baseline rejects them all"
    )


def test_the_base_ref_may_be_a_commit_and_the_patch_a_second_commit(repo: Repo) -> None:
    first = base(repo)
    write(
        repo,
        tests__properties__test_invoice_dot_py=(
            "import pytest\n\n\n@pytest.mark.network\ndef test_total():\n    assert 3 > 2\n"
        ),
    )
    repo.commit("patch")
    scanned = scan(repo, first)
    assert scanned.introduced == [("skip_marker", PROPERTY, 4)]
    assert scan(repo, "HEAD").findings[0]["introduced"] is False


def test_json_lists_every_finding_with_its_fields(repo: Repo) -> None:
    adopted(repo)
    out = repo.path.parent / "f.json"
    result = repo.cli("scan", "--base-ref", "main", "--json", str(out))
    assert result.code == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data[1] == {
        "kind": "skip_marker",
        "path": PROPERTY,
        "line": 8,
        "message": data[1]["message"],
        "introduced": False,
        "test": "test_total",
        "level": "error",
        "folded": 0,
        "remediation": {
            "what": remediation.NEXT_STEP["skip_marker"],
            "where": f"{PROPERTY}:8",
            "evidence": data[1]["message"],
        },
    }
    assert len(data) == 3


def test_when_the_base_has_no_manifest_the_heads_module_is_scanned_there(repo: Repo) -> None:
    base(repo, ADOPTED)
    repo.remove("entropy.yaml")
    repo.commit("before the gate")
    repo.write("entropy.yaml", MANIFEST)
    scanned = scan(repo)
    assert scanned.code == 0
    assert [new for *_, new in scanned.located] == [False, False]
    assert "no manifest at the base ref" in scanned.result.err


def test_a_renamed_property_module_keeps_its_old_findings_as_notices(repo: Repo) -> None:
    base(repo, ADOPTED)
    repo.git("mv", PROPERTY, "tests/properties/test_billing.py")
    write(repo, entropy_dot_yaml=MANIFEST.replace("test_invoice.py", "test_billing.py"))
    scanned = scan(repo)
    assert [(p, new) for _, p, _, new in scanned.located] == [
        ("tests/properties/test_billing.py", False),
        ("tests/properties/test_billing.py", False),
    ]


def test_a_property_module_that_does_not_parse_is_invalid_input(repo: Repo) -> None:
    base(repo)
    write(repo, tests__properties__test_invoice_dot_py="def test_total(:\n    pass\n")
    scanned = scan(repo)
    assert scanned.code == 2
    assert scanned.result.out == ""
    assert scanned.result.err == (
        f"{PROPERTY}:1: cannot parse: invalid syntax; the scan cannot check the patch\n"
    )


def test_a_helper_that_does_not_parse_is_a_note(repo: Repo) -> None:
    base(repo)
    write(
        repo,
        tests__properties__helpers_dot_py="def broken(:\n",
        tests__properties__test_invoice_dot_py=(
            "from tests.properties.helpers import broken\n\n\n"
            "def test_total():\n    broken()\n    assert 1 < 2\n"
        ),
    )
    scanned = scan(repo)
    assert scanned.code == 0
    assert "note: tests/properties/helpers.py:1: cannot parse: invalid syntax" in scanned.result.err


def test_a_missing_property_module_is_invalid_input(repo: Repo) -> None:
    base(repo)
    repo.remove(PROPERTY)
    scanned = scan(repo)
    assert scanned.code == 2
    assert f"{PROPERTY}: the property module does not exist at the head" in scanned.result.err


def test_a_manifest_the_patch_made_unreadable_is_invalid_input(repo: Repo) -> None:
    base(repo)
    write(repo, entropy_dot_yaml="version: 1\npins: [\n")
    scanned = scan(repo)
    assert scanned.code == 2
    assert scanned.result.out == ""
    assert "entropy.yaml" in scanned.result.err


def test_a_conftest_that_does_not_parse_is_invalid_input(repo: Repo) -> None:
    base(repo)
    write(repo, tests__conftest_dot_py="import pytest\n\n\n@pytest.fixture\ndef x(:\n")
    scanned = scan(repo)
    assert scanned.code == 2
    assert scanned.result.err == (
        "tests/conftest.py:5: cannot parse: invalid syntax; the scan cannot check the patch\n"
    )


def test_binary_junk_in_the_property_module_is_invalid_input(repo: Repo) -> None:
    base(repo)
    (repo.path / PROPERTY).write_bytes(b"def test_total():\n    assert 1\x00\xff\n")
    scanned = scan(repo)
    assert scanned.code == 2
    assert scanned.result.err.startswith(f"{PROPERTY}:")
    assert scanned.result.err.count("\n") == 1
