"""The summary's replay line for a failing test, from the seeds its hosts recorded."""

from __future__ import annotations

from entropy_action.render.summary import REPLAY, render_text
from entropy_action.verdict.classify import Evidence, classify
from entropy_action.verdict.model import TEST_RESULT, TestResult, TestSeed

ID = "tests/t.py::test_total[a b]"


def result(**fields: object) -> TestResult:
    return TEST_RESULT.validate_python({"id": ID, "raw_ids": [ID], **fields})


def test_a_test_that_failed_with_one_seed_gets_one_replay_command() -> None:
    seed = TestSeed(rng_seed=9173, seed=12)
    test = result(host_a="failed", host_b="failed", seed_a=seed, seed_b=seed)
    text = render_text(classify(Evidence(host_a="fail", host_b="fail", tests=(test,))))
    assert (
        f"  A failed   B failed   {ID}\n"
        "      replay: python -m pytest -p entropy_action.plugin --rootdir=. "
        "--entropy-gate-seed=9173 "
        "'tests/t.py::test_total[a b]'\n"
    ) in text


def test_hosts_with_different_seeds_get_one_command_each_for_the_host_that_failed() -> None:
    test = result(
        host_a="passed",
        host_b="failed",
        seed_a=TestSeed(rng_seed=0, seed=1),
        seed_b=TestSeed(rng_seed=1843, seed=2),
    )
    text = render_text(classify(Evidence(host_a="pass", host_b="fail", tests=(test,))))
    assert "      replay: " + REPLAY + "1843 " in text
    both = result(
        host_a="error",
        host_b="failed",
        seed_a=TestSeed(rng_seed=0, seed=1),
        seed_b=TestSeed(rng_seed=1843, seed=2),
    )
    text = render_text(classify(Evidence(host_a="fail", host_b="fail", tests=(both,))))
    assert "      replay on host A: " + REPLAY + "0 " in text
    assert "      replay on host B: " + REPLAY + "1843 " in text


def test_a_passing_or_unseeded_test_gets_no_replay_line() -> None:
    unseeded = result(host_a="failed", host_b="failed")
    text = render_text(classify(Evidence(host_a="fail", host_b="fail", tests=(unseeded,))))
    assert "replay" not in text
