"""The summary's replay line for a failing test: the command that runs it again as its host
ran it, from the host's report folder (`entropy-gate replay`)."""

from __future__ import annotations

from entropy_action.render.summary import render_text
from entropy_action.verdict.classify import Evidence, classify
from entropy_action.verdict.model import TEST_RESULT, TestResult, TestSeed

ID = "tests/t.py::test_total[a b]"


def result(**fields: object) -> TestResult:
    return TEST_RESULT.validate_python({"id": ID, "raw_ids": [ID], **fields})


def test_a_test_host_b_alone_failed_is_replayed_from_host_bs_folder() -> None:
    test = result(
        host_a="passed",
        host_b="failed",
        seed_a=TestSeed(rng_seed=0, seed=1),
        seed_b=TestSeed(rng_seed=1843, seed=2),
    )
    text = render_text(classify(Evidence(host_a="pass", host_b="fail", tests=(test,))))
    assert (
        f"  A passed   B failed   {ID}\n"
        "      replay: entropy-gate replay --report host-b 'tests/t.py::test_total[a b]'\n"
    ) in text
    assert "--entropy-gate-seed" not in text  # the seed alone does not reproduce host B


def test_a_test_failing_on_both_hosts_is_replayed_as_host_a_ran_it() -> None:
    seeds = {"seed_a": TestSeed(rng_seed=0, seed=1), "seed_b": TestSeed(rng_seed=1843, seed=2)}
    both = result(host_a="error", host_b="failed", **seeds)
    text = render_text(classify(Evidence(host_a="fail", host_b="fail", tests=(both,))))
    assert f"      replay: entropy-gate replay --report host-a '{ID}'\n" in text
    assert "host-b" not in text


def test_a_passing_test_or_one_the_gate_did_not_report_gets_no_replay_line() -> None:
    passing = result(host_a="passed", host_b="passed")
    text = render_text(classify(Evidence(host_a="pass", host_b="pass", tests=(passing,))))
    assert "replay" not in text
    unseeded = result(host_a="passed", host_b="failed")  # no seed: not the gate's own report
    text = render_text(classify(Evidence(host_a="pass", host_b="fail", tests=(unseeded,))))
    assert "replay" not in text
