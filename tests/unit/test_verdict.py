"""The classification, row by row against the seed's table, and its precedence."""

from __future__ import annotations

import pytest

from entropy_action.core.findings import Finding
from entropy_action.verdict.classify import Evidence, classify
from entropy_action.verdict.model import HostOutcome

SKIP = Finding(
    kind="skip_marker",
    path="tests/properties/test_invoice_total.py",
    line=12,
    message="skip marker 'flaky' on property test_total — constraints.forbid_skip_markers lists it",
    test="test_total",
)
OLD_SKIP = SKIP.model_copy(update={"introduced": False, "line": 30})
MUTATED = {"missing": ["pins.cassette_sha256"], "changed": ["pins.rng_seed"], "added": []}

# The seed's table: host A, host B, pins intact, skip markers present -> action.
SEED_TABLE: list[tuple[HostOutcome, HostOutcome, bool, bool, str]] = [
    ("pass", "pass", True, False, "merge_candidate"),
    ("fail", "fail", True, False, "real_defect"),
    ("pass", "fail", True, False, "env_coupled"),
    ("fail", "pass", True, False, "env_coupled_reverse"),
    ("pass", "pass", False, False, "pin_mutation"),
    ("pass", "pass", True, True, "entropy_silenced"),  # pass | * | * | present
    ("pass", "fail", True, True, "entropy_silenced"),
    ("fail", "fail", True, True, "masked_defect"),
]


@pytest.mark.parametrize(("host_a", "host_b", "intact", "silenced", "expected"), SEED_TABLE)
def test_each_row_of_the_seed_table(
    host_a: HostOutcome, host_b: HostOutcome, intact: bool, silenced: bool, expected: str
) -> None:
    evidence = Evidence(
        host_a=host_a,
        host_b=host_b,
        pins_intact=intact,
        pin_changes={} if intact else MUTATED,
        findings=(SKIP,) if silenced else (),
    )
    verdict = classify(evidence)
    assert verdict.classification == expected
    assert verdict.merge is (expected == "merge_candidate")
    assert (verdict.host_a, verdict.host_b, verdict.pins_intact) == (host_a, host_b, intact)


def test_a_merge_candidate_says_so_in_its_row_and_reasons() -> None:
    verdict = classify(Evidence(host_a="pass", host_b="pass"))
    assert verdict.row == "pass | pass | pins intact | no silencing → merge candidate"
    assert verdict.reasons == ["host A: pass", "host B: pass"]


def test_invalid_comes_before_everything() -> None:
    evidence = Evidence(
        host_a="fail",
        host_b="fail",
        pins_intact=False,
        pin_changes=MUTATED,
        findings=(SKIP,),
        invalid=("manifest_sha256 differs between host A and host B",),
    )
    verdict = classify(evidence)
    assert verdict.classification == "invalid"
    assert verdict.merge is False
    # Every rule that fired stays in the reasons, not only the first.
    assert verdict.reasons == [
        "invalid input: manifest_sha256 differs between host A and host B",
        "pin mutation against the baseline (missing: pins.cassette_sha256; changed: pins.rng_seed)",
        "entropy silenced: 1 finding(s) introduced by the patch (1 skip_marker)",
        "host A: fail",
        "host B: fail",
        "both hosts failed under the pins: a real defect",
    ]


def test_pin_mutation_comes_before_silencing() -> None:
    evidence = Evidence(
        host_a="pass", host_b="pass", pins_intact=False, pin_changes=MUTATED, findings=(SKIP,)
    )
    assert classify(evidence).classification == "pin_mutation"


def test_silencing_on_a_failing_host_a_and_passing_b_is_still_silencing() -> None:
    evidence = Evidence(host_a="fail", host_b="pass", findings=(SKIP,))
    assert classify(evidence).classification == "entropy_silenced"


def test_a_missing_host_is_invalid_while_host_b_is_required() -> None:
    verdict = classify(Evidence(host_a="pass", host_b="missing"))
    assert verdict.classification == "invalid"
    assert verdict.reasons[0] == (
        "invalid input: host B did not report and constraints.require_host_b is true"
    )
    assert classify(Evidence(host_a="missing", host_b="pass")).classification == "invalid"


def test_host_a_decides_alone_when_host_b_is_not_required() -> None:
    verdict = classify(Evidence(host_a="pass", host_b="missing", require_host_b=False))
    assert verdict.classification == "merge_candidate"
    assert verdict.reasons[0] == (
        "host B did not report; constraints.require_host_b is false, so host A decides"
    )
    failing = Evidence(host_a="fail", host_b="missing", require_host_b=False)
    assert classify(failing).classification == "real_defect"


def test_pre_existing_findings_are_notices_not_rejections() -> None:
    verdict = classify(Evidence(host_a="pass", host_b="pass", findings=(OLD_SKIP,)))
    assert verdict.classification == "merge_candidate"
    assert verdict.findings == [OLD_SKIP]
    assert "1 pre-existing finding(s) stood at the base ref (notices only)" in verdict.reasons


def test_strict_baseline_counts_pre_existing_findings() -> None:
    evidence = Evidence(host_a="pass", host_b="pass", findings=(OLD_SKIP,), strict_baseline=True)
    verdict = classify(evidence)
    assert verdict.classification == "entropy_silenced"
    assert verdict.reasons[0] == (
        "entropy silenced: 1 finding(s) present (strict_baseline) (1 skip_marker)"
    )


def test_the_laptop_shaped_row_names_the_missing_pin() -> None:
    verdict = classify(Evidence(host_a="pass", host_b="fail"))
    assert verdict.reasons[-1].startswith("host A passed and host B failed")
    assert (
        verdict.row
        == "pass | fail | pins intact | no silencing → env-coupled behavior; do not merge"
    )


CONFIG = Finding(
    kind="gate_config_changed",
    path=".github/workflows/entropy-gate.yml",
    line=9,
    message=".github/workflows/entropy-gate.yml is the gate's own configuration",
)


@pytest.mark.parametrize(
    ("host_a", "host_b"), [(a, b) for a in ("pass", "fail") for b in ("pass", "fail")]
)
def test_a_changed_gate_configuration_is_a_pin_mutation_on_every_host_row(
    host_a: HostOutcome, host_b: HostOutcome
) -> None:
    verdict = classify(Evidence(host_a=host_a, host_b=host_b, findings=(CONFIG,)))
    assert verdict.classification == "pin_mutation"
    assert verdict.merge is False
    assert verdict.reasons[0] == (
        "gate configuration changed by the patch (1 file(s): "
        ".github/workflows/entropy-gate.yml): a maintainer lands such a change on its own"
    )


def test_a_changed_gate_configuration_beats_silencing_and_is_not_counted_as_silencing() -> None:
    codeowners = CONFIG.model_copy(update={"path": ".github/CODEOWNERS", "line": 1})
    verdict = classify(Evidence(host_a="pass", host_b="pass", findings=(CONFIG, codeowners, SKIP)))
    assert verdict.classification == "pin_mutation"
    assert verdict.reasons[:2] == [
        "gate configuration changed by the patch (2 file(s): "
        ".github/workflows/entropy-gate.yml, .github/CODEOWNERS): a maintainer lands such a "
        "change on its own",
        "entropy silenced: 1 finding(s) introduced by the patch (1 skip_marker)",
    ]


def test_invalid_still_comes_before_a_changed_gate_configuration() -> None:
    evidence = Evidence(host_a="pass", host_b="pass", findings=(CONFIG,), invalid=("broken",))
    assert classify(evidence).classification == "invalid"


def test_a_gate_configuration_finding_that_stood_at_the_base_does_not_reject() -> None:
    old = CONFIG.model_copy(update={"introduced": False})
    assert classify(Evidence(host_a="pass", host_b="pass", findings=(old,))).merge is True
