"""Verdicts for the reporter and publish tests: one per classification, and many findings."""

from __future__ import annotations

from entropy_action.core.findings import Finding
from entropy_action.manifest.pindiff import PinChange
from entropy_action.verdict import remediation
from entropy_action.verdict.classify import Evidence, classify
from entropy_action.verdict.model import TEST_RESULT, Classification, TestResult, Verdict

MODULE = "tests/properties/test_invoice_total.py"
SKIP = Finding(
    kind="skip_marker",
    path=MODULE,
    line=14,
    message="skip marker 'flaky' on property test_total (forbid_skip_markers lists it)",
    test="test_total",
)
OLD_XFAIL = SKIP.model_copy(
    update={"kind": "skip_marker", "line": 30, "introduced": False, "message": "xfail marker"}
)
SEED_CHANGED = PinChange(
    kind="changed",
    key="pins.rng_seed",
    old=9173,
    new=1,
    path="entropy.yaml",
    line=5,
    message="pins.rng_seed changed from 9173 to 1",
    rejects=True,
)


def result(name: str, a: str = "passed", b: str = "passed", **fields: object) -> TestResult:
    return TEST_RESULT.validate_python(
        {"id": f"{MODULE}::{name}", "raw_ids": [f"{MODULE}::{name}"], "host_a": a, "host_b": b}
        | {"path": MODULE, "line": 20}
        | fields
    )


FAILING_B = result("test_total", "passed", "failed", message_b="AssertionError: 2026 != 2031")
FAILING_BOTH = result("test_total", "failed", "failed", message_a="boom", message_b="boom")
FAILING_A = result("test_total", "failed", "passed", message_a="KeyError: 'HOME'")
GREEN = result("test_rounding")

EVIDENCE: dict[Classification, Evidence] = {
    "merge_candidate": Evidence("pass", "pass", tests=(GREEN,)),
    "real_defect": Evidence("fail", "fail", tests=(FAILING_BOTH, GREEN)),
    "env_coupled": Evidence("pass", "fail", tests=(FAILING_B, GREEN)),
    "env_coupled_reverse": Evidence("fail", "pass", tests=(FAILING_A, GREEN)),
    "pin_mutation": Evidence(
        "pass",
        "pass",
        pins_intact=False,
        pin_changes={"changed": ["pins.rng_seed"]},
        pin_diff=(SEED_CHANGED,),
        tests=(GREEN,),
    ),
    "entropy_silenced": Evidence("pass", "pass", findings=(SKIP, OLD_XFAIL), tests=(GREEN,)),
    "masked_defect": Evidence("fail", "fail", findings=(SKIP,), tests=(FAILING_BOTH,)),
    "invalid": Evidence("pass", "missing", tests=(GREEN,)),
}


def verdict_of(classification: Classification) -> Verdict:
    """The sample verdict as the judge hands it to the reporters: classified, then advised."""
    verdict = remediation.advise(classify(EVIDENCE[classification]))
    assert verdict.classification == classification
    return verdict


def with_findings(count: int) -> Verdict:
    """An entropy_silenced verdict with `count` introduced findings on distinct lines."""
    findings = tuple(
        SKIP.model_copy(update={"line": i + 1, "message": f"finding {i + 1}"}) for i in range(count)
    )
    return classify(Evidence("pass", "pass", findings=findings, tests=(GREEN,)))
