"""The verdict JSON written in pieces (render.verdictjson) is render_json's document, byte for
byte: every shape of verdict, tests across batch boundaries, text that JSON escapes, the
rolled-up form whose properties hold tests of their own."""

from __future__ import annotations

import pytest

from entropy_action.core.findings import Finding
from entropy_action.render import summary, verdictjson
from entropy_action.verdict import rollup
from entropy_action.verdict.classify import Evidence, classify
from entropy_action.verdict.model import Assertions, TestResult, TestSeed, Verdict

MODULE = "tests/properties/test_invoice_total.py"
ODD = 'quote " backslash \\ newline \n tab \t bell \x07 nul \x00 bidi \u202e é 💥 \ud7ff'


def _test(index: int, a: str = "passed", b: str = "passed", **fields: object) -> TestResult:
    name = f"{MODULE}::test_total[{index}]"
    given = {"raw_ids": [name], **fields}
    return TestResult(id=name, host_a=a, host_b=b, path=MODULE, line=3, **given)  # type: ignore[arg-type]


def _many(count: int) -> tuple[TestResult, ...]:
    seed = TestSeed(rng_seed=9173, seed=12)
    return tuple(
        _test(i, seed_a=seed, seed_b=seed, assertions_a=Assertions(executed=i % 4, sites=1))
        for i in range(count)
    )


ODD_TESTS = (
    _test(0, "failed", "passed", message_a=ODD, raw_ids=[ODD, "two"]),
    _test(1, "error", "missing", message_b="", base_a="failed", failed_at_base=True),
    _test(2, "skipped", "skipped", message_a="xfail: " + ODD),
)
SKIP = Finding(kind="skip_marker", path=MODULE, line=9, message=ODD, test="test_total")


def _written(verdict: Verdict) -> bytes:
    return b"".join(verdictjson.chunks(verdict))


def _one(tests: tuple[TestResult, ...], **fields: object) -> Verdict:
    return classify(Evidence(host_a="pass", host_b="pass", tests=tests, **fields))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "verdict",
    [
        _one(()),
        _one(ODD_TESTS, findings=(SKIP,), notes=(ODD,)),
        _one(_many(1)),
        classify(Evidence(host_a="missing", host_b="missing", invalid=(ODD,), errors=("e",))),
    ],
    ids=["no-tests", "escaped-text", "one-test", "invalid"],
)
def test_the_pieces_are_render_json_byte_for_byte(verdict: Verdict) -> None:
    assert _written(verdict) == summary.render_json(verdict).encode("utf-8")


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_tests_across_batch_boundaries_join_as_one_list(
    monkeypatch: pytest.MonkeyPatch, count: int
) -> None:
    monkeypatch.setattr(verdictjson, "BATCH", 3)  # 7 tests: batches of 3, 3 and 1
    verdict = _one((*ODD_TESTS, *_many(count)))
    assert _written(verdict) == summary.render_json(verdict).encode("utf-8")


def test_no_piece_holds_more_than_a_batch_of_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verdictjson, "BATCH", 10)
    verdict = _one(_many(95))
    pieces = list(verdictjson.chunks(verdict))
    biggest = max(piece.count(b'"id": ') for piece in pieces)
    assert biggest == 10
    assert len(pieces) >= 10


def test_a_rolled_up_verdict_streams_every_propertys_tests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(verdictjson, "BATCH", 2)
    judged = [
        rollup.Judged("first", "tests/test_a.py", _one((*ODD_TESTS, *_many(3)))),
        rollup.Judged("empty", "tests/test_b.py", _one(())),
        rollup.Judged("second", None, _one(_many(5), findings=(SKIP,))),
    ]
    verdict = rollup.roll_up(judged)
    assert verdict.properties is not None
    assert len(verdict.tests) == 11
    assert _written(verdict) == summary.render_json(verdict).encode("utf-8")
