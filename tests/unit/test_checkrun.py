"""The check-run plan: conclusion, title, summary limit and annotation batches, all pure."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from entropy_action.core.findings import Finding
from entropy_action.core.score import MutationScore, Survivor
from entropy_action.render import checkrun, markdown
from entropy_action.render.checkrun import MAX_SUMMARY, plan
from entropy_action.render.phrases import REPLAY
from entropy_action.verdict.classify import Evidence, classify
from entropy_action.verdict.model import TestSeed
from tests.support.github_api import load_schemas, violations
from tests.support.verdict_samples import (
    EVIDENCE,
    FAILING_B,
    MODULE,
    SKIP,
    result,
    verdict_of,
    with_findings,
)

SHA = "0123456789abcdef0123456789abcdef01234567"
SCHEMAS = load_schemas()


def bodies(p: checkrun.CheckRunPlan) -> list[dict[str, Any]]:
    return [p.create_body(), *p.update_bodies()]


@pytest.mark.parametrize("classification", sorted(EVIDENCE))
def test_one_conclusion_per_classification(classification):
    p = plan(verdict_of(classification), head_sha=SHA)
    expected = "success" if classification == "merge_candidate" else "failure"
    assert p.conclusion == expected
    assert p.title == markdown.TITLES[classification]
    body = p.create_body()
    assert (body["status"], body["conclusion"], body["head_sha"]) == ("completed", expected, SHA)
    assert violations(SCHEMAS["POST"], body) == []


@pytest.mark.parametrize(
    ("count", "batch_sizes"),
    [(0, [0]), (50, [50]), (51, [50, 1]), (120, [50, 50, 20])],
)
def test_annotations_are_cut_into_batches_of_at_most_50(count, batch_sizes):
    p = plan(with_findings(count), head_sha=SHA, check_name="gate")
    sent = bodies(p)
    sizes = [len(b["output"].get("annotations", [])) for b in sent]
    assert sizes == batch_sizes
    lines = [a["start_line"] for b in sent for a in b["output"].get("annotations", [])]
    assert lines == list(range(1, count + 1))  # every finding once, in order
    assert sent[0]["name"] == "gate"
    assert all(violations(SCHEMAS["PATCH"], b) == [] for b in sent[1:])
    assert violations(SCHEMAS["POST"], sent[0]) == []


def test_findings_annotate_failure_and_pre_existing_ones_stay_in_the_summary():
    """A finding that stood at the base is on a line the patch did not touch: no annotation."""
    p = plan(verdict_of("entropy_silenced"), head_sha=SHA)
    assert [(a.path, a.line, a.level, a.title) for a in p.annotations] == [
        (MODULE, 14, "failure", "entropy-gate: skip_marker"),
    ]
    assert "1 notice that stood at the base ref" in p.summary


def test_under_strict_baseline_a_pre_existing_finding_is_a_failure():
    old = SKIP.model_copy(update={"introduced": False})
    v = classify(Evidence("pass", "pass", findings=(old,), strict_baseline=True))
    assert [a.level for a in plan(v, head_sha=SHA).annotations] == ["failure"]


def test_a_finding_with_a_warning_level_is_a_warning():
    warning = Finding(
        kind="live_entropy", path=MODULE, line=3, message="read the clock", level="warning"
    )
    v = classify(Evidence("pass", "pass", findings=(warning,)))
    assert [a.level for a in plan(v, head_sha=SHA).annotations] == ["warning"]


def test_a_failing_test_is_annotated_at_its_line_with_both_messages():
    p = plan(verdict_of("env_coupled"), head_sha=SHA)
    (annotation,) = p.annotations
    assert annotation.as_json() == {
        "path": MODULE,
        "start_line": 20,
        "end_line": 20,
        "annotation_level": "failure",
        "message": f"{MODULE}::test_total failed on host B (host A passed, host B failed)",
        "title": "entropy-gate: property failed on host B",
        "raw_details": "host B:\nAssertionError: 2026 != 2031",  # no seed: no replay
    }


def test_a_test_that_failed_at_the_base_too_still_fails_and_says_why():
    old = result("test_old", "failed", "failed", base_a="failed", base_b="failed")
    v = classify(Evidence("fail", "fail", tests=(old,)))
    (annotation,) = plan(v, head_sha=SHA).annotations
    assert annotation.level == "failure"  # the base run explains; it never excuses
    assert annotation.message == (
        f"{MODULE}::test_old failed on host A and host B (host A failed, host B failed); it "
        "failed at the base ref too on host A and B: the patch did not cause it, and it does "
        "not fix it"
    )


@pytest.mark.parametrize("path", [None, "/abs/tests/t.py", "../outside.py", "C:\\t.py"])
def test_a_test_without_a_usable_path_falls_back_to_the_manifest_line_1(path):
    failing = dataclasses.replace(FAILING_B, path=path, line=7)
    v = classify(Evidence("pass", "fail", tests=(failing,)))
    (annotation,) = plan(v, head_sha=SHA, manifest_path="ci/entropy.yaml").annotations
    assert (annotation.path, annotation.line) == ("ci/entropy.yaml", 1)
    assert MODULE + "::test_total" in annotation.message
    assert plan(v, head_sha=SHA, manifest_path=None).annotations == ()


def test_pin_changes_are_annotated_on_their_entropy_yaml_line():
    (annotation,) = plan(verdict_of("pin_mutation"), head_sha=SHA).annotations
    assert (annotation.path, annotation.line, annotation.level) == ("entropy.yaml", 5, "failure")
    assert annotation.title == "entropy-gate: pin changed: pins.rng_seed"


def test_long_messages_and_titles_are_cut_to_githubs_limits():
    huge = SKIP.model_copy(update={"message": "é" * 70_000, "kind": "skip_call"})
    v = classify(Evidence("pass", "pass", findings=(huge,)))
    body = plan(v, head_sha=SHA, check_name="n").create_body()
    (annotation,) = body["output"]["annotations"]
    assert len(annotation["message"].encode()) <= 64 * 1024
    assert annotation["message"].endswith("…")
    assert violations(SCHEMAS["POST"], body) == []


def test_a_summary_over_the_limit_is_truncated_with_a_note():
    p = plan(verdict_of("invalid"), head_sha=SHA, summary="line\n" * 20_000)
    assert len(p.summary) <= MAX_SUMMARY
    assert p.summary.rstrip().endswith("and `entropy-gate compare` locally have everything.")
    assert "summary truncated at 65,535 characters" in p.summary


def test_the_summary_is_the_markdown_render():
    v = verdict_of("env_coupled")
    assert plan(v, head_sha=SHA).summary == markdown.render(v)


def test_a_failing_test_carries_the_command_that_replays_it_as_its_host_ran_it():
    seed = TestSeed(rng_seed=9173, seed=12)
    seeded = dataclasses.replace(FAILING_B, seed_a=seed, seed_b=seed)
    (annotation,) = plan(
        classify(Evidence("pass", "fail", tests=(seeded,))), head_sha=SHA
    ).annotations
    assert annotation.raw_details == (
        "host B:\nAssertionError: 2026 != 2031\n\n"
        f"replay: entropy-gate replay --report host-b {MODULE}::test_total"
    )
    assert REPLAY not in annotation.raw_details  # the seed alone does not reproduce host B


def test_a_mutant_only_the_head_kills_is_a_stronger_notice_on_its_line():
    stronger = Survivor(mutant="m.py:30: 10 → 11", path="m.py", line=30, test="test_tenth")
    score = MutationScore(
        mode="changed", mutants=4, base_killed=1, head_killed=2, strengthened=[stronger]
    )
    verdict = verdict_of("merge_candidate").model_copy(update={"mutation": score})
    (annotation,) = plan(verdict, head_sha=SHA).annotations
    assert annotation.as_json() == {
        "path": "m.py",
        "start_line": 30,
        "end_line": 30,
        "annotation_level": "notice",
        "message": "stronger: m.py:30: 10 → 11 (the head's test_tenth kills it)",
        "title": "entropy-gate: stronger property",
    }
    assert plan(verdict, head_sha=SHA).conclusion == "success"  # a notice never rejects
