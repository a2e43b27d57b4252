"""A verdict read back from a file must be one `classify` could have written (publish's guard)."""

from __future__ import annotations

import itertools

import pytest

from entropy_action.core.findings import Finding
from entropy_action.verdict.classify import Evidence, classify, contradictions
from entropy_action.verdict.model import HostOutcome

OUTCOMES: tuple[HostOutcome, ...] = ("pass", "fail", "missing")
FINDING = Finding(kind="skip_marker", path="t.py", line=3, message="skip", introduced=True)


@pytest.mark.parametrize(
    ("host_a", "host_b", "pins_intact", "findings", "invalid"),
    list(itertools.product(OUTCOMES, OUTCOMES, (True, False), ((), (FINDING,)), ((), ("x",)))),
)
def test_no_verdict_classify_writes_contradicts_itself(
    host_a, host_b, pins_intact, findings, invalid
):
    evidence = Evidence(
        host_a=host_a, host_b=host_b, pins_intact=pins_intact, findings=findings, invalid=invalid
    )
    assert contradictions(classify(evidence)) == []


def test_an_edited_verdict_that_claims_a_merge_is_caught():
    real = classify(Evidence(host_a="fail", host_b="fail"))
    assert contradictions(real.model_copy(update={"merge": True})) == [
        "merge is true for 'real_defect'"
    ]
    forged = real.model_copy(update={"classification": "merge_candidate", "merge": True})
    assert contradictions(forged) == ["merge_candidate with host A fail, host B fail"]
    green = classify(Evidence(host_a="pass", host_b="pass"))
    assert contradictions(green) == []
    assert contradictions(green.model_copy(update={"pins_intact": False})) == [
        "merge_candidate with pins that are not intact"
    ]
    assert contradictions(green.model_copy(update={"findings": [FINDING]})) == [
        "merge_candidate with findings that count against the patch"
    ]
