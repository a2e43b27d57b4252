"""What to do, as data (verdict.remediation): every finding's remediation, one finding per
fact (mutants folded into the base test's finding), and the verdict's next steps per
classification, never advising a pin that is already pinned."""

from __future__ import annotations

import typing

from entropy_action.core.findings import Finding, FindingKind, Remediation
from entropy_action.manifest.pindiff import PinChange
from entropy_action.verdict import remediation
from entropy_action.verdict.classify import Evidence, classify
from entropy_action.verdict.model import OrderPair, Verdict
from tests.support.verdict_samples import EVIDENCE, FAILING_B, GREEN, MODULE, result

CHANGED = Finding(
    kind="test_changed_to_pass",
    path=MODULE,
    line=20,
    message="property test_ago fails with the base's module on the head's code (assert "
    "'just now' == '0 seconds ago') and is skipped with the head's module: the patch made it go "
    "quiet by changing the test, not the code",
    test="test_ago",
)


def mutant(number: int, killer: str = "test_ago") -> Finding:
    return Finding(
        kind="weakened_property",
        path=MODULE,
        line=20,
        message=f"mutant billing/ago.py:{number}: < → <= is killed by the base's {killer} and "
        "survives the head's module: the patch made the property weaker",
        test=killer,
    )


def silenced(*findings: Finding) -> Verdict:
    return classify(Evidence("pass", "pass", tests=(GREEN,), findings=findings))


def test_every_finding_kind_has_a_next_step():
    assert set(typing.get_args(FindingKind)) == set(remediation.NEXT_STEP)


def test_each_finding_carries_what_where_and_evidence():
    advised = remediation.advise(silenced(CHANGED))
    assert advised.findings[0].remediation == Remediation(
        what=remediation.NEXT_STEP["test_changed_to_pass"],
        where=f"{MODULE}:20",
        evidence="the base's test_ago on the head's code: assert 'just now' == '0 seconds ago'",
    )
    assert advised.next_steps == [advised.findings[0].remediation]


def test_mutants_killed_by_the_changed_test_fold_into_its_finding_with_a_count_and_an_example():
    other = mutant(9, killer="test_other")
    advised = remediation.advise(silenced(CHANGED, *(mutant(n) for n in range(1, 8)), other))
    assert [f.kind for f in advised.findings] == ["test_changed_to_pass", "weakened_property"]
    folded = advised.findings[0]
    assert folded.folded == 7
    assert folded.message.endswith(
        "; 7 mutants it killed at the base survive the head's module "
        "(e.g. billing/ago.py:1: < → <=)"
    )
    assert folded.remediation is not None
    assert folded.remediation.evidence.endswith("(e.g. billing/ago.py:1: < → <=)")
    assert advised.findings[1].remediation == Remediation(
        what=remediation.NEXT_STEP["weakened_property"],
        where=f"{MODULE}:20",
        evidence="the mutant billing/ago.py:9: < → <= survives the head's module; the base's "
        "test_other kills it",
    )


def test_advice_is_idempotent():
    once = remediation.advise(silenced(CHANGED, mutant(1)))
    assert remediation.advise(once) == once


def test_the_skip_finding_quotes_what_the_base_said():
    assert remediation.shown_by_base(CHANGED.message) == "assert 'just now' == '0 seconds ago'"
    assert remediation.shown_by_base("worded otherwise") is None


def test_a_pin_mutation_says_restore_the_pin_on_its_line():
    advised = remediation.advise(classify(EVIDENCE["pin_mutation"]))
    assert [(s.where, s.what) for s in advised.next_steps] == [
        ("entropy.yaml:5", remediation.RESTORE_PIN.format(key="pins.rng_seed"))
    ]


def test_an_allowed_pin_change_asks_nothing():
    added = PinChange(
        kind="added", key="pins.tz", path="entropy.yaml", line=7, message="added", rejects=False
    )
    verdict = classify(Evidence("pass", "pass", tests=(GREEN,), pin_diff=(added,)))
    assert remediation.advise(verdict).next_steps == []


def test_an_invalid_verdict_leads_with_its_cause():
    advised = remediation.advise(classify(EVIDENCE["invalid"]))
    assert advised.next_steps == [
        Remediation(
            what=remediation.FIX_RUN,
            where="",
            evidence="host B did not report and constraints.require_host_b is true",
        )
    ]


def test_a_merge_candidate_has_no_next_step():
    assert remediation.advise(classify(EVIDENCE["merge_candidate"])).next_steps == []


def test_a_real_defect_names_each_test_failing_on_both_hosts():
    advised = remediation.advise(classify(EVIDENCE["real_defect"]))
    [step] = advised.next_steps
    assert step.what == remediation.FIX_DEFECT.format(test="test_total")
    assert step.where == f"{MODULE}:20"
    assert step.evidence == "fails on both hosts: boom"


def coupled(source: str, *findings: Finding) -> Verdict:
    verdict = classify(Evidence("pass", "fail", tests=(FAILING_B, GREEN), findings=findings))
    return verdict.model_copy(update={"coupled_to": [source]})


READ = Finding(
    kind="live_entropy",
    path="billing/clock.py",
    line=7,
    message="reads `datetime.now()` while the property pins the clock: take a Clock",
    level="warning",
    introduced=True,
)


def test_env_coupled_on_the_clock_names_the_read_and_never_advises_pinning_a_pinned_clock():
    [step] = remediation.advise(coupled("clock", READ), {"clock_unix": 1}).next_steps
    assert step.where == "billing/clock.py:7"
    assert "pin it (clock_unix)" not in step.what
    assert "clock_unix is pinned already" in step.what
    assert step.evidence == (
        "the failure follows clock (host B re-run with it reverted): billing/clock.py:7 reads "
        "`datetime.now()`; on host B: AssertionError: 2026 != 2031"
    )
    [unpinned] = remediation.advise(coupled("clock", READ)).next_steps
    assert unpinned.what.startswith("pin it (clock_unix)")


def test_env_coupled_on_a_variable_names_it():
    env_read = READ.model_copy(update={"message": "reads `os.environ['HOME']`, which no pin fixes"})
    [step] = remediation.advise(coupled("env:HOME", env_read)).next_steps
    assert step.what == "pass HOME in, or pin it (pins.env.HOME)"
    assert step.where == "billing/clock.py:7"
    [pinned] = remediation.advise(coupled("env:HOME", env_read), {"env.HOME": "/h"}).next_steps
    assert "pin it" not in pinned.what


def test_env_coupled_prefers_the_read_the_patch_introduced_over_an_old_one():
    old = READ.model_copy(update={"path": "billing/old.py", "introduced": False})
    [step] = remediation.advise(coupled("clock", old, READ)).next_steps
    assert step.where == "billing/clock.py:7"


def test_an_order_pair_names_the_polluter_and_its_replay():
    victim = result("test_total", "passed", "failed")
    verdict = classify(Evidence("pass", "fail", tests=(victim, GREEN)))
    pair = OrderPair(
        victim=victim.id, other="tests/t.py::test_cache", kind="polluter", replay="python -m x"
    )
    verdict = verdict.model_copy(update={"coupled_to": ["test_order"], "order_dependence": [pair]})
    [step] = remediation.advise(verdict).next_steps
    assert step.what.startswith("undo in tests/t.py::test_cache what it changes")
    assert step.where == f"{MODULE}:20"
    assert step.evidence.endswith("; replay the pair: python -m x")


def test_an_unattributed_env_coupled_names_the_failing_test():
    [step] = remediation.advise(classify(EVIDENCE["env_coupled"])).next_steps
    assert step.where == f"{MODULE}:20"
    assert step.evidence == "fails on host B only: AssertionError: 2026 != 2031"
