"""The tests of tests/unit/test_reports.py that start a process (pytest runs, git)."""

from __future__ import annotations

import pytest

from entropy_action.core.layout import JUNIT_XML
from entropy_action.evidence import hostreport, junitcases
from tests.unit.test_reports import MIXED, MODULE, host_info, make_tree, run_pytest, write_host


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> hostreport.HostReport:
    root = make_tree(tmp_path_factory.mktemp("mixed") / "checkout", MIXED)
    out = root.parent / "out"
    out.mkdir()
    code = run_pytest(root, out / JUNIT_XML)
    write_host(out, host_info("a", root, returncode=code), None)
    return hostreport.read_host(out)


def test_a_real_pytest_report_gives_one_case_per_test_with_its_outcome(mixed):
    merged = {k: v.outcome for k, v in junitcases.merge(mixed.tests).items()}
    assert merged == {
        f"{MODULE}::test_pass": "passed",
        f"{MODULE}::test_fail": "failed",
        f"{MODULE}::test_setup_error": "error",
        f"{MODULE}::test_fail_then_teardown": "failed",
        f"{MODULE}::test_skip": "skipped",
        f"{MODULE}::test_xfail": "skipped",
        f"{MODULE}::test_param[<root>/tests/properties]": "passed",
        f"{MODULE}::test_param[plain]": "passed",
        f"{MODULE}::TestOuter::test_method": "passed",
        f"{MODULE}::TestOuter::TestInner::test_nested": "passed",
    }
    assert mixed.outcome == "fail"
    assert mixed.errors == ()


def test_a_test_that_fails_and_errors_in_teardown_is_reported_twice_and_kept_as_failed(mixed):
    twice = [t for t in mixed.tests if t.id.endswith("::test_fail_then_teardown")]
    assert [t.outcome for t in twice] == ["failed", "error"]
    assert junitcases.merge(twice)[twice[0].id].message == "assert False"


def test_messages_lines_and_raw_ids_are_kept(mixed):
    by_id = {t.id: t for t in mixed.tests}
    failed = by_id[f"{MODULE}::test_fail"]
    assert failed.message == "AssertionError: boom\nassert 1 == 2"
    assert (failed.path, failed.line) == (MODULE, 11)  # 1-based: the `def` line
    assert by_id[f"{MODULE}::test_skip"].message == "not here"
    assert by_id[f"{MODULE}::test_xfail"].message == "xfail: known bug"
    param = by_id[f"{MODULE}::test_param[<root>/tests/properties]"]
    assert param.raw_id == f"{MODULE}::test_param[{mixed.info.root}/tests/properties]"


def test_a_module_that_fails_to_import_is_a_failed_host_with_the_error_text(tmp_path):
    root = make_tree(tmp_path / "checkout", "import not_a_module_zz\n\ndef test_x():\n    pass\n")
    code = run_pytest(root, tmp_path / "out" / JUNIT_XML)
    report = hostreport.read_host(
        write_host(tmp_path / "out", host_info("a", root, returncode=code), None)
    )
    assert report.tests == ()
    assert report.outcome == "fail"
    assert len(report.errors) == 1
    assert report.errors[0].startswith(f"collection failure in {MODULE}:\n")
    assert report.errors[0].endswith("E   ModuleNotFoundError: No module named 'not_a_module_zz'")
    assert report.failure_notes() == []
