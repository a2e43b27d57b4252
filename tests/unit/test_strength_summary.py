"""The strength section of the summary: the scores, each mutant that changed sides, exactly."""

from __future__ import annotations

from entropy_action.core.findings import Finding
from entropy_action.core.score import MutationScore, Survivor
from entropy_action.render import summary
from entropy_action.verdict.classify import Evidence, classify

WEAKER = Survivor(
    mutant="billing/fees.py:27: amount > limit → amount >= limit",
    path="billing/fees.py",
    line=27,
    test="test_limit",
)
STRONGER = Survivor(
    mutant="billing/fees.py:30: 10 → 11", path="billing/fees.py", line=30, test="test_tenth"
)


def score(**fields: object) -> MutationScore:
    base = {"mode": "changed", "mutants": 16, "base_killed": 14, "head_killed": 9}
    return MutationScore.model_validate({**base, **fields})


def strength_lines(verdict_score: MutationScore | None) -> list[str]:
    verdict = classify(Evidence(host_a="pass", host_b="pass")).model_copy(
        update={"mutation": verdict_score}
    )
    lines = summary.render_text(verdict).splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("strength:")), None)
    if start is None:
        return []
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("  "))
    return lines[start:end]


def test_a_weaker_property_shows_both_scores_and_counts_the_survivors_its_findings_name() -> None:
    assert strength_lines(score(weakened=[WEAKER], not_counted=2)) == [
        "strength: base kills 14/16 mutants, head kills 9/16 (constraints.mutation: changed); "
        "2 not counted",
        "  weaker: 1 mutant(s) the base's module killed survive the head's (each a "
        "weakened_property finding)",
    ]


def test_a_stronger_property_says_so() -> None:
    stronger = score(base_killed=9, head_killed=10, strengthened=[STRONGER])
    assert strength_lines(stronger) == [
        "strength: base kills 9/16 mutants, head kills 10/16 (constraints.mutation: changed)",
        "  stronger: billing/fees.py:30: 10 → 11 (the head's test_tenth kills it)",
        "  the property is stronger at the head",
    ]


def test_no_score_no_section_and_the_strength_command_says_so() -> None:
    assert strength_lines(None) == []
    finding = Finding(
        kind="weakened_property", path="tests/test_fees.py", line=3, message="m", test="t"
    )
    assert summary.render_strength(None, [finding]) == (
        "strength: no mutation score (see the notes)\nfindings:\n  tests/test_fees.py:3: m\n"
    )
