"""The verdicts behind the golden pages (tests/golden/pages/*.md, #36 part 7): one per case a
PR author meets, shaped like the TOTP library's (a new test that reads the clock itself, an
account name built from HOME, a polluter, a skip that the base's test exposes, a freeze).

`python -m tests.support.golden_pages` rewrites the pages; tests/unit/test_golden_pages.py
compares them exactly. Each verdict is classified and advised as the judge does."""

from __future__ import annotations

import sys
from pathlib import Path

from entropy_action.core.findings import Finding
from entropy_action.gate import orderdep
from entropy_action.manifest.pindiff import PinChange
from entropy_action.render import markdown
from entropy_action.verdict import remediation, rollup
from entropy_action.verdict.classify import Evidence, classify
from entropy_action.verdict.model import (
    TEST_RESULT,
    CoupledRead,
    OrderPair,
    TestResult,
    Verdict,
)

PAGES = Path(__file__).resolve().parent.parent / "golden" / "pages"
TESTS = "test.py"
DIGEST = "3f" * 32
PINNED = {"clock_unix": 1_700_000_000, "rng_seed": 7}


def _advised(verdict: Verdict, pinned: dict[str, object] | None = None) -> Verdict:
    advised = remediation.advise(verdict, pinned if pinned is not None else PINNED)
    return advised.model_copy(update={"inputs_sha256": DIGEST})


def _case(name: str, a: str = "passed", b: str = "passed", **fields: object) -> TestResult:
    node = f"{TESTS}::TOTPTests::{name}"
    line = 200 + sum(map(ord, name)) % 90
    seeds = {"seed_a": {"rng_seed": 0, "seed": line}, "seed_b": {"rng_seed": 1843, "seed": line}}
    return TEST_RESULT.validate_python(
        {"id": node, "raw_ids": [node], "host_a": a, "host_b": b, "path": TESTS, "line": line}
        | seeds
        | fields
    )


GREEN = [_case(f"test_{n}") for n in ("at", "verify", "provisioning_uri")]


def skip() -> Verdict:
    marker = Finding(
        kind="skip_call",
        path=TESTS,
        line=248,
        message="unittest.skip on property test_valid_window: unittest.skip('the expected "
        "code drifts once a year …') — it skips the property",
        test="TOTPTests::test_valid_window",
    )
    changed = Finding(
        kind="test_changed_to_pass",
        path=TESTS,
        line=248,
        message="property TOTPTests::test_valid_window fails with the base's module on the "
        "head's code (AssertionError: '816065' != '123456') and is skipped with the head's "
        "module: the patch made it go quiet by changing the test, not the code — a property "
        "that really was wrong is changed in a reviewed change of its own",
        test="TOTPTests::test_valid_window",
    )
    mutants = [
        Finding(
            kind="weakened_property",
            path=TESTS,
            line=248,
            message=f"mutant src/pyotp/totp.py:{line}: {op} is killed by the base's "
            "TOTPTests::test_valid_window and survives the head's module: the patch made the "
            "property weaker — a defect like it would now pass",
            test="TOTPTests::test_valid_window",
        )
        for line, op in ((61, "+ → -"), (62, "< → <="), (64, "1 → 2"), (70, "== → !="))
    ]
    skipped = _case("test_valid_window", "skipped", "skipped", base_a="passed")
    evidence = Evidence(
        "pass",
        "pass",
        findings=tuple(remediation.fold((marker, changed, *mutants))),  # as judge folds them
        tests=(*GREEN, skipped),
    )
    return _advised(classify(evidence))


def freeze() -> Verdict:
    frozen = Finding(
        kind="entropy_patched",
        path=TESTS,
        line=251,
        message="patches `datetime.date.today()` inside the test (mock.patch): the property "
        "no longer sees the clock host B shifts",
        test="TOTPTests::test_expiry_year",
    )
    return _advised(classify(Evidence("pass", "pass", findings=(frozen,), tests=tuple(GREEN))))


def _coupled(source: str, test: str, message: str, read: CoupledRead) -> Verdict:
    """An env_coupled verdict as the judge leaves it: attributed to `source`, and the read
    behind it from both hosts' audits (verdict.coupled: the test's own read)."""
    failing = _case(test, "passed", "failed", message_b=message)
    verdict = classify(Evidence("pass", "fail", tests=(*GREEN, failing)))
    update = {"coupled_to": [source], "coupled_reads": [read]}
    return _advised(verdict.model_copy(update=update))


def env_clock() -> Verdict:
    read = CoupledRead(
        source="clock",
        path=TESTS,
        line=250,
        call="date.today()",
        test=f"{TESTS}::TOTPTests::test_expiry_year",
        test_code=True,
        at_base=False,
        seen_a="2026-01-10T09:30:00Z",
        seen_b="2031-01-27T16:43:00Z",
    )
    return _coupled("clock", "test_expiry_year", "AssertionError: 2031 != 2026", read)


def env_variable() -> Verdict:
    read = CoupledRead(
        source="env:HOME",
        path=TESTS,
        line=262,
        call="os.environ['HOME']",
        test=f"{TESTS}::TOTPTests::test_account_name",
        test_code=True,
        at_base=False,
        seen_a="'/home/alice'",
        seen_b="'/tmp/entropy-gate-host-b/home'",
    )
    message = "AssertionError: 'otpauth://totp/alice%40home' != 'otpauth://totp/gate%40home'"
    return _coupled("env:HOME", "test_account_name", message, read)


def env_order() -> Verdict:
    victim = _case("test_cache", "passed", "failed", message_b="AssertionError: 3 != 1")
    verdict = classify(Evidence("pass", "fail", tests=(*GREEN, victim)))
    pair = OrderPair(
        victim=victim.id, other=f"{TESTS}::TOTPTests::test_warm_cache", kind="polluter"
    )
    pair = pair.model_copy(update={"replay": orderdep.replay(pair)})
    update = {"coupled_to": ["test_order"], "order_dependence": [pair]}
    return _advised(verdict.model_copy(update=update))


def invalid() -> Verdict:
    missing = [_case(f"test_{n}", "passed", "missing") for n in range(24)]
    cause = (
        "host B: the run was killed by signal 11 (SIGSEGV) before it wrote junit.xml: "
        "see pytest.log in host B's folder"
    )
    return _advised(classify(Evidence("pass", "missing", tests=tuple(missing), invalid=(cause,))))


def pin_mutation() -> Verdict:
    changed = PinChange(
        kind="changed",
        key="pins.clock_unix",
        old=1_700_000_000,
        new=1_893_456_000,
        path="entropy.yaml",
        line=6,
        message="pins.clock_unix changed from 1700000000 to 1893456000",
        rejects=True,
    )
    evidence = Evidence(
        "pass",
        "pass",
        pins_intact=False,
        pin_changes={"changed": ["pins.clock_unix"]},
        pin_diff=(changed,),
        tests=tuple(GREEN),
    )
    return _advised(classify(evidence))


def many_properties() -> Verdict:
    judged = [
        rollup.Judged("totp", TESTS, env_clock()),
        rollup.Judged("hotp", "test_hotp.py", _advised(classify(Evidence("pass", "pass")))),
        rollup.Judged("uri", "test_uri.py", freeze()),
    ]
    return _advised(rollup.roll_up(judged))


CASES = {
    "skip": skip,
    "freeze": freeze,
    "env_coupled-clock": env_clock,
    "env_coupled-variable": env_variable,
    "env_coupled-order": env_order,
    "invalid": invalid,
    "pin_mutation": pin_mutation,
    "many-properties": many_properties,
}


def page(name: str) -> str:
    return markdown.render(CASES[name]())


def main(argv: list[str]) -> int:
    PAGES.mkdir(parents=True, exist_ok=True)
    for name in argv or CASES:
        (PAGES / f"{name}.md").write_text(page(name), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
