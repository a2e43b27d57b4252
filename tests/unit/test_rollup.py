"""The roll-up of many properties' verdicts: the worst by the table's precedence decides, no
property that fails or did not run can be outvoted, and a forged roll-up reads as one."""

from __future__ import annotations

import itertools

import pytest

from entropy_action.core.findings import Finding
from entropy_action.manifest.pindiff import PinChange
from entropy_action.verdict import rollup
from entropy_action.verdict.classify import Evidence, classify, contradictions
from entropy_action.verdict.model import TestResult, Verdict

SKIP = Finding(
    kind="skip_marker",
    path="tests/test_b.py",
    line=9,
    message="skip marker 'skip' on property test_two_b",
    introduced=True,
)


def _test(path: str, a: str = "passed", b: str = "passed") -> TestResult:
    return TestResult(id=f"{path}::test_x", host_a=a, host_b=b, path=path, line=1)  # type: ignore[arg-type]


# One verdict per classification, from the classification itself (not hand-written).
SAMPLES: dict[str, Verdict] = {
    "merge_candidate": classify(Evidence("pass", "pass", tests=(_test("t/a.py"),))),
    "real_defect": classify(Evidence("fail", "fail", tests=(_test("t/b.py", "failed", "failed"),))),
    "env_coupled": classify(Evidence("pass", "fail", tests=(_test("t/c.py", b="failed"),))),
    "env_coupled_reverse": classify(Evidence("fail", "pass", tests=(_test("t/d.py", "failed"),))),
    "pin_mutation": classify(
        Evidence("pass", "pass", pins_intact=False, pin_changes={"changed": ["pins.tz"]})
    ),
    "entropy_silenced": classify(Evidence("pass", "pass", findings=(SKIP,))),
    "masked_defect": classify(Evidence("fail", "fail", findings=(SKIP,))),
    "invalid": classify(Evidence("pass", "missing", invalid=("host B: no report",))),
}


def _judged(*classes: str) -> list[rollup.Judged]:
    return [rollup.Judged(f"p{i}", f"tests/test_{i}.py", SAMPLES[c]) for i, c in enumerate(classes)]


def test_the_samples_are_what_they_say() -> None:
    assert {k: v.classification for k, v in SAMPLES.items()} == {k: k for k in SAMPLES}


@pytest.mark.parametrize(("worse", "better"), list(itertools.combinations(rollup.SEVERITY, 2)))
def test_the_worse_classification_decides_whatever_the_order(worse: str, better: str) -> None:
    for order in ((worse, better), (better, worse)):
        verdict = rollup.roll_up(_judged(*order))
        assert verdict.classification == worse
        assert verdict.merge is False
        assert contradictions(verdict) == []


def test_every_property_a_merge_candidate_is_a_merge_candidate() -> None:
    verdict = rollup.roll_up(_judged("merge_candidate", "merge_candidate"))
    assert (verdict.classification, verdict.merge) == ("merge_candidate", True)
    assert (verdict.host_a, verdict.host_b, verdict.pins_intact) == ("pass", "pass", True)
    assert verdict.reasons == ["2 properties: 2 merge_candidate; the worst decides"]
    assert [p.property_id for p in verdict.properties or []] == ["p0", "p1"]


def test_the_reasons_lead_with_the_deciding_property_and_name_each() -> None:
    verdict = rollup.roll_up(_judged("merge_candidate", "entropy_silenced", "invalid"))
    assert verdict.reasons[0] == (
        "3 properties: 1 invalid, 1 entropy_silenced, 1 merge_candidate; the worst decides"
    )
    assert verdict.reasons[1].startswith("property p2: invalid input: host B: no report")
    assert any(r.startswith("property p1: entropy silenced") for r in verdict.reasons)
    assert not any(r.startswith("property p0") for r in verdict.reasons)
    assert [p.property_id for p in rollup.deciding(verdict.properties or [])] == ["p2", "p1", "p0"]
    assert verdict.host_b == "missing"  # the worst host outcome of any property
    assert verdict.findings == [SKIP]


def test_a_finding_two_properties_share_is_listed_once() -> None:
    verdict = rollup.roll_up(_judged("entropy_silenced", "entropy_silenced"))
    assert verdict.findings == [SKIP]


def test_a_dropped_property_is_a_pin_mutation_with_no_host_run() -> None:
    change = PinChange(
        kind="missing",
        key="properties.beta",
        old={"property_id": "beta", "module": "tests/test_b.py"},
        path="entropy.yaml",
        line=11,
        message="property 'beta' (tests/test_b.py, line 14 of the baseline) removed",
        rejects=True,
    )
    verdict = rollup.roll_up(_judged("merge_candidate"), [change])
    assert verdict.classification == "pin_mutation"
    assert verdict.pin_changes == {"missing": ["properties.beta"]}
    dropped = [p for p in verdict.properties or [] if p.module is None]
    assert [p.property_id for p in dropped] == ["beta"]
    assert dropped[0].verdict.host_a == dropped[0].verdict.host_b == "missing"
    assert contradictions(verdict) == []


def test_a_propertys_own_pin_keys_are_named_with_it() -> None:
    verdict = rollup.roll_up(_judged("pin_mutation", "merge_candidate"))
    assert verdict.pin_changes["changed"] == ["p0:pins.tz"]


def test_a_forged_roll_up_is_caught() -> None:
    real = rollup.roll_up(_judged("merge_candidate", "env_coupled"))
    outvoted = real.model_copy(update={"classification": "merge_candidate", "merge": True})
    found = contradictions(outvoted)
    assert any("not the worst of its properties ('env_coupled')" in why for why in found)
    inner = real.properties or []
    forged_inner = inner[1].model_copy(
        update={"verdict": inner[1].verdict.model_copy(update={"merge": True})}
    )
    tampered = real.model_copy(update={"properties": [inner[0], forged_inner]})
    assert any(why.startswith("property p1: merge is true") for why in contradictions(tampered))
    empty = real.model_copy(update={"properties": []})
    assert contradictions(empty) == ["a rolled-up verdict with no property"]


def test_a_roll_up_needs_a_property() -> None:
    with pytest.raises(ValueError, match="at least one property"):
        rollup.roll_up([])
