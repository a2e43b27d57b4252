"""Cannot measure is never clean: a rename the base's module cannot import, a broad raises
over a defect that raises — through `entropy-gate gate` on real repositories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import Repo

MODULE = "tests/test_fees.py"
MANIFEST = """\
version: 1
property_id: fees
module: tests/test_fees.py
pins:
  rng_seed: 3
  tz: UTC
  temp_root: {temp_root}
"""
FEES = """\
def late_fee(amount, days_late):
    if days_late > 30:
        return amount // 10
    return 0
"""
PROPERTY = """\
from fees import late_fee


def test_no_fee_on_the_due_day():
    assert late_fee(1000, 30) == 0


def test_fee_after_the_due_day():
    assert late_fee(1000, 31) == 100
"""
RENAMED = FEES.replace("def late_fee(", "def overdue_fee(")
RENAMED_PROPERTY = PROPERTY.replace("late_fee", "overdue_fee")
# class 5: renamed, a defect (no fee until day 60), and expected values from a helper in
# another file that calls the unit, so they agree with any defect
RENAMED_DEFECT = RENAMED.replace("days_late > 30", "days_late > 60")
ATTRIBUTE_PROPERTY = """\
import fees


def test_no_fee_on_the_due_day():
    assert fees.late_fee(1000, 30) == 0


def test_fee_after_the_due_day():
    assert fees.late_fee(1000, 31) == 100
"""
HELPER = """\
import fees


def expected_fee(amount, days_late):
    return fees.overdue_fee(amount, days_late)
"""
HELPER_PROPERTY = """\
from expected import expected_fee

from fees import overdue_fee


def test_no_fee_on_the_due_day():
    assert overdue_fee(1000, 30) == expected_fee(1000, 30)


def test_fee_after_the_due_day():
    assert overdue_fee(1000, 31) == expected_fee(1000, 31)
"""
# class 3: the fee raises once overdue, and the test expects any exception there
RAISING = FEES.replace("return amount // 10", "raise ValueError('overdue')")
BROAD_PROPERTY = PROPERTY.replace("from fees", "import pytest\n\nfrom fees").replace(
    "    assert late_fee(1000, 31) == 100\n",
    "    assert late_fee(1000, 1) == 0\n    with pytest.raises(Exception):\n"
    "        late_fee(1000, 31)\n",
)


@pytest.fixture
def fees(repo: Repo, tmp_path: Path) -> Repo:
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("fees.py", FEES)
    repo.write(MODULE, PROPERTY)
    repo.commit("base")
    return repo


def gate(repo: Repo) -> tuple[int, dict[str, Any], str]:
    out = repo.path.parent / "verdict.json"
    reports = repo.path.parent / "reports"
    result = repo.cli("gate", "--base-ref", "main", "--json", str(out), "--out", str(reports))
    return result.code, json.loads(out.read_text(encoding="utf-8")), result.out


def strength_json(repo: Repo) -> dict[str, Any]:
    path = repo.path.parent / "reports" / "host-a" / "strength.json"
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def test_a_rename_with_expected_values_from_the_unit_itself_is_rejected(fees: Repo) -> None:
    """Class 5: the rename hides the base's tests from the head's code; measured through
    the rename (strength/renames.py), the base's test fails on the weakened body."""
    fees.write("fees.py", RENAMED_DEFECT)
    fees.write("tests/expected.py", HELPER)
    fees.write(MODULE, HELPER_PROPERTY)
    code, verdict, out = gate(fees)
    assert (code, verdict["classification"]) == (1, "entropy_silenced"), out
    assert verdict["host_a"] == verdict["host_b"] == "pass"
    (changed,) = [f for f in verdict["findings"] if f["kind"] == "test_changed_to_pass"]
    assert (changed["test"], changed["line"]) == ("test_fee_after_the_due_day", 10)
    assert "(assert 0 == 100)" in changed["message"]
    assert any(f["kind"] == "weakened_property" for f in verdict["findings"])
    assert (
        "strength: the base's module was measured with the patch's renames: "
        "fees.late_fee → overdue_fee (fees.py)"
    ) in verdict["reasons"]
    assert strength_json(fees)["unmeasured"] == []


def test_an_honest_rename_is_measured_through_the_rename_and_merges(fees: Repo) -> None:
    fees.write("fees.py", RENAMED)
    fees.write(MODULE, RENAMED_PROPERTY)
    code, verdict, out = gate(fees)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), out
    assert strength_json(fees)["unmeasured"] == []
    assert verdict["mutation"]["base_killed"] == verdict["mutation"]["head_killed"] > 0


def test_a_rename_used_through_its_module_is_measured_through_the_rename(fees: Repo) -> None:
    """`fees.late_fee(...)` is rewritten to `fees.overdue_fee(...)` in the base's module, as
    the import form is (issue 32, class 6: it was "cannot measure", invalid by default)."""
    fees.write(MODULE, ATTRIBUTE_PROPERTY)
    fees.commit("the property calls through the module")
    fees.write("fees.py", RENAMED)
    fees.write(MODULE, ATTRIBUTE_PROPERTY.replace("late_fee", "overdue_fee"))
    code, verdict, out = gate(fees)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), out
    assert strength_json(fees)["unmeasured"] == []
    assert (
        "strength: the base's module was measured with the patch's renames: "
        "fees.late_fee → overdue_fee (fees.py)"
    ) in verdict["reasons"]


def test_a_module_moved_away_cannot_be_measured_and_is_invalid(fees: Repo) -> None:
    """What stays unmeasured: the patch moves the unit to another module, so the base's
    module cannot even be collected on the head's code — never clean under the manifest's
    strength constraint."""
    fees.write(MODULE, ATTRIBUTE_PROPERTY)
    fees.commit("the property calls through the module")
    fees.remove("fees.py")
    fees.write("billing.py", FEES)
    fees.write(MODULE, ATTRIBUTE_PROPERTY.replace("fees", "billing"))
    code, verdict, out = gate(fees)
    assert (code, verdict["classification"]) == (2, "invalid"), out
    assert any(
        "strength: cannot measure" in r and "fees" in r and "constraints.mutation" in r
        for r in verdict["reasons"]
    ), verdict["reasons"]


def test_an_unmeasurable_move_under_mutation_off_is_a_note(fees: Repo, tmp_path: Path) -> None:
    manifest = (
        MANIFEST.format(temp_root=tmp_path / "pins-tmp") + 'constraints:\n  mutation: "off"\n'
    )
    fees.write("entropy.yaml", manifest)
    fees.write(MODULE, ATTRIBUTE_PROPERTY)
    fees.commit("the maintainers turn the strength check off")
    fees.remove("fees.py")
    fees.write("billing.py", FEES)
    fees.write(MODULE, ATTRIBUTE_PROPERTY.replace("fees", "billing"))
    code, verdict, out = gate(fees)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), out
    assert any(r.startswith("strength: cannot measure:") for r in verdict["reasons"]), verdict[
        "reasons"
    ]


def test_a_rename_that_keeps_the_old_name_as_an_alias_is_measured_and_honest(
    fees: Repo,
) -> None:
    fees.write("fees.py", RENAMED + "\n\nlate_fee = overdue_fee  # the old name, for a release\n")
    fees.write(MODULE, RENAMED_PROPERTY)
    code, verdict, out = gate(fees)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), out
    assert strength_json(fees)["unmeasured"] == []
    assert verdict["mutation"]["base_killed"] == verdict["mutation"]["head_killed"]


def test_a_broad_raises_over_a_defect_that_raises_is_rejected_three_ways(fees: Repo) -> None:
    fees.write("fees.py", RAISING)
    fees.write(MODULE, BROAD_PROPERTY)
    code, verdict, out = gate(fees)
    assert (code, verdict["classification"]) == (1, "entropy_silenced"), out
    found = {(f["kind"], f["test"], f["line"]) for f in verdict["findings"]}
    # the scan names the line of the broad raises
    assert ("assertion_broadened", "test_fee_after_the_due_day", 12) in found
    # the base's test fails on the head's code with a ValueError: counted
    (changed,) = [f for f in verdict["findings"] if f["kind"] == "test_changed_to_pass"]
    assert "(ValueError: overdue)" in changed["message"]
    # mutation keeps the failing base test: it counts against the head, never "strengthened"
    score = verdict["mutation"]
    # (dropped, the mutants only the head's broad raises killed read as "strengthened")
    assert score["strengthened"] == [], score
    assert score["base_killed"] == score["mutants"] >= score["head_killed"], score
    assert any("fail(s) on the head's code unmutated" in r for r in verdict["reasons"])


def test_a_signature_change_with_its_calls_updated_stays_honest(fees: Repo) -> None:
    fees.write("fees.py", FEES.replace("(amount, days_late)", "(amount, *, days_late)"))
    fees.write(MODULE, PROPERTY.replace("(1000, 3", "(1000, days_late=3"))
    code, verdict, out = gate(fees)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), out
    assert any("the patch changed the parameters of late_fee()" in r for r in verdict["reasons"]), (
        verdict["reasons"]
    )


def test_the_strength_command_exits_invalid_when_it_cannot_measure(fees: Repo) -> None:
    """A module moved away (a rename through the module is measured now: class 6)."""
    fees.write(MODULE, ATTRIBUTE_PROPERTY)
    fees.commit("the property calls through the module")
    fees.remove("fees.py")
    fees.write("billing.py", FEES)
    fees.write(MODULE, ATTRIBUTE_PROPERTY.replace("fees", "billing"))
    out = fees.path.parent / "strength.json"
    result = fees.cli("strength", "--base-ref", "main", "--json", str(out))
    assert result.code == 2, result.out
    assert "strength: cannot measure: " in result.err
    assert "(ModuleNotFoundError: No module named 'fees')" in result.err
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["findings"] == []
    assert written["unmeasured"][0].startswith(
        "the base's module cannot be collected against the head's code (ModuleNotFoundError: "
        "No module named 'fees')"
    )


def test_a_test_that_stops_reaching_production_code_cannot_be_measured(fees: Repo) -> None:
    """The head's version asserts on a copy of the unit kept in the module: it reaches no
    production function where the base's reached late_fee."""
    fees.write(
        MODULE,
        PROPERTY.replace(
            "from fees import late_fee\n",
            "from fees import late_fee\n\n\ndef _fee(amount, days_late):\n"
            "    return amount // 10 if days_late > 30 else 0\n",
        ).replace("assert late_fee(1000, 30) == 0", "assert _fee(1000, 30) == 0"),
    )
    code, verdict, out = gate(fees)
    # measured: the mutants the base's version killed survive the head's (the finding says
    # more than "cannot measure"), and the lost reach is said beside it
    assert (code, verdict["classification"]) == (1, "entropy_silenced"), out
    assert "weakened_property" in {f["kind"] for f in verdict["findings"]}
    assert (
        "mutation: the base's test_no_fee_on_the_due_day reached production code, the head's "
        "version reaches none (it tests something else, or a copy)"
    ) in verdict["reasons"]


def test_lost_reach_that_no_mutant_tells_cannot_be_measured(fees: Repo) -> None:
    """The base's only test reached a function with nothing to mutate; the head's version
    asserts on a constant: no mutant measures the loss, so it cannot be measured."""
    fees.write("fees.py", "def touch():\n    pass\n")
    base_test = "from fees import touch\n\n\ndef test_touch():\n    assert touch() is None\n"
    fees.write(MODULE, base_test)
    fees.commit("a unit with nothing to mutate")
    fees.write(MODULE, base_test.replace("touch() is None", "(lambda: None)() is None"))
    code, verdict, out = gate(fees)
    assert (code, verdict["classification"]) == (2, "invalid"), out
    assert any(
        "mutation: no function to mutate; mutation: the head's tests reach none of the "
        "production functions the base's reached (fees.py:1)" in r
        for r in verdict["reasons"]
    ), verdict["reasons"]


def test_a_skipped_test_reaches_nothing_because_it_does_not_run_and_is_judged_as_a_skip(
    fees: Repo,
) -> None:
    """The adoption trials' skip patches on click and itsdangerous were `invalid` ("the
    head's tests reach none of the production functions the base's reached"): a test the
    head skips reaches nothing because it does not run; the skip rules reject it."""
    fees.write(
        MODULE,
        PROPERTY.replace(
            "def test_fee_after", "@pytest.mark.skip(reason='flaky')\ndef test_fee_after"
        ).replace("from fees", "import pytest\n\nfrom fees"),
    )
    code, verdict, out = gate(fees)
    assert (code, verdict["classification"]) == (1, "entropy_silenced"), out
    assert not [r for r in verdict["reasons"] if "cannot measure" in r], verdict["reasons"]
    assert {"skip_marker", "not_executed"} <= {f["kind"] for f in verdict["findings"]}
