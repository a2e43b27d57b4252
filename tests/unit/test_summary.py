"""The reporters over a Verdict: the readable summary (exact output), the JSON and its schema."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from entropy_action.cli.commands.schema import verdict_schema
from entropy_action.core.findings import Finding
from entropy_action.manifest.pindiff import PinChange, PinDiff
from entropy_action.render import summary
from entropy_action.verdict import model
from entropy_action.verdict.classify import Evidence, classify
from entropy_action.verdict.model import Verdict

SCHEMA = Path(__file__).parents[2] / "schema" / "verdict.schema.json"
MODULE = "tests/properties/test_invoice_total.py"


def result(name: str, a: str = "passed", b: str = "passed", **fields: object) -> model.TestResult:
    return model.TEST_RESULT.validate_python(
        {"id": f"{MODULE}::{name}", "raw_ids": [f"{MODULE}::{name}"], "host_a": a, "host_b": b}
        | fields
    )


GREEN = (result("test_total"), result("test_rounding"), result("test_currency"))
SKIP = Finding(
    kind="skip_marker",
    path=MODULE,
    line=14,
    message="skip marker 'flaky' on property test_total (forbid_skip_markers lists it)",
    test="test_total",
)
OLD_XFAIL = Finding(
    kind="skip_marker",
    path=MODULE,
    line=30,
    message="xfail on test_windows_paths — consider removing it from the property module",
    introduced=False,
)
RNG_CHANGED = PinChange(
    kind="changed",
    key="pins.rng_seed",
    old=9173,
    new=1,
    path="entropy.yaml",
    line=6,
    message="pin rng_seed changed: 9173 → 1",
    rejects=True,
)
TZ_ADDED = PinChange(
    kind="added",
    key="pins.env.TZ_NAME",
    new="UTC",
    path="entropy.yaml",
    line=12,
    message="pin env.TZ_NAME added: 'UTC'",
    rejects=False,
)


def text(verdict: Verdict) -> str:
    return summary.render_text(verdict)


def block(expected: str) -> str:
    return textwrap.dedent(expected).lstrip("\n")


def test_a_merge_candidate_summarizes_all_pass_tests_as_a_count():
    verdict = classify(Evidence(host_a="pass", host_b="pass", tests=GREEN))
    assert text(verdict) == block(
        """
        entropy-gate verdict: merge_candidate (merge candidate)
          table row: pass | pass | pins intact | no silencing → merge candidate
          host A: pass, host B: pass, pins intact
        tests: 3; 3 passed on both hosts
        reasons:
          - host A: pass
          - host B: pass
        """
    )


def test_silencing_lists_the_tests_that_did_not_pass_and_each_finding_at_its_line():
    tests = (
        result("test_total", "skipped", "skipped", message_a="flaky", message_b="flaky"),
        result("test_rounding"),
        result("test_windows_paths", "skipped", "skipped", message_a="xfail: paths"),
    )
    verdict = classify(
        Evidence(host_a="pass", host_b="pass", tests=tests, findings=(SKIP, OLD_XFAIL))
    )
    assert text(verdict) == block(
        """
        entropy-gate verdict: entropy_silenced (do not merge)
          table row: pass | * | * | silencing present → entropy silenced in the test; reject
          host A: pass, host B: pass, pins intact
        tests: 3; 1 passed on both hosts; 1 skipped on both; 1 differs between hosts or did not pass:
          A skipped  B skipped  tests/properties/test_invoice_total.py::test_total
              A: flaky
              B: flaky
        findings:
          tests/properties/test_invoice_total.py:14: skip marker 'flaky' on property test_total (forbid_skip_markers lists it)
          tests/properties/test_invoice_total.py:30: notice: pre-existing — xfail on test_windows_paths — consider removing it from the property module
        reasons:
          - entropy silenced: 1 finding(s) introduced by the patch (1 skip_marker)
          - 1 pre-existing finding(s) stood at the base ref (notices only)
          - host A: pass
          - host B: pass
        """  # noqa: E501
    )


def test_a_pin_mutation_shows_each_change_at_its_line():
    diff = PinDiff(
        baseline="main:entropy.yaml", baseline_found=True, changes=[RNG_CHANGED, TZ_ADDED]
    )
    verdict = classify(
        Evidence(
            host_a="pass",
            host_b="pass",
            pins_intact=diff.intact,
            pin_changes=diff.summary(),
            pin_diff=tuple(diff.changes),
            tests=GREEN[:1],
        )
    )
    expected_head = block(
        """
        entropy-gate verdict: pin_mutation (do not merge)
          table row: pass | pass | pins changed | no silencing → pin mutation; reject even if green
          host A: pass, host B: pass, pins changed
        tests: 1; 1 passed on both hosts
        """
    )
    assert text(verdict) == expected_head + block(
        """
        pin changes:
          entropy.yaml:6: pin rng_seed changed: 9173 → 1
          entropy.yaml:12: pin env.TZ_NAME added: 'UTC' (does not reject)
        reasons:
          - pin mutation against the baseline (changed: pins.rng_seed)
          - host A: pass
          - host B: pass
        """
    )
    without_lines = verdict.model_copy(update={"pin_diff": []})
    assert text(without_lines) == expected_head + block(
        """
        pin changes:
          changed: pins.rng_seed
          added: pins.env.TZ_NAME
        reasons:
          - pin mutation against the baseline (changed: pins.rng_seed)
          - host A: pass
          - host B: pass
        """
    )


def test_tests_that_differ_between_hosts_show_both_outcomes_and_the_normalized_id():
    tests = (
        result(
            "test_now[<root>/data]",
            "passed",
            "failed",
            raw_ids=[f"{MODULE}::test_now[/home/a/data]", f"{MODULE}::test_now[/tmp/b/data]"],
            message_b="AssertionError: assert 2031 == 2026\nassert 2031 == 2026",
        ),
        result("test_new", "missing", "passed"),
        result("test_total"),
    )
    verdict = classify(Evidence(host_a="pass", host_b="fail", tests=tests))
    assert text(verdict).split("reasons:")[0] == block(
        """
        entropy-gate verdict: env_coupled (do not merge)
          table row: pass | fail | pins intact | no silencing → env-coupled behavior; do not merge
          host A: pass, host B: fail, pins intact
        tests: 3; 1 passed on both hosts; 2 differ between hosts or did not pass:
          A passed   B failed   tests/properties/test_invoice_total.py::test_now[<root>/data]
              B: AssertionError: assert 2031 == 2026
          A missing  B passed   tests/properties/test_invoice_total.py::test_new
        """
    )


def test_an_invalid_verdict_shows_why_and_the_host_errors_indented():
    verdict = classify(
        Evidence(
            host_a="fail",
            host_b="missing",
            invalid=("host B: out/b/junit.xml: refused: it declares a document type (DTD)",),
            errors=("host A: collection failure in t.py:\nE   ImportError: no x",),
        )
    )
    assert text(verdict) == block(
        """
        entropy-gate verdict: invalid (invalid input; nothing was judged)
          table row: the inputs cannot be judged → invalid; fix the run and try again
          host A: fail, host B: missing, pins intact
        tests: none reported
        reasons:
          - invalid input: host B: out/b/junit.xml: refused: it declares a document type (DTD)
          - host A: fail
        host errors:
          - host A: collection failure in t.py:
              E   ImportError: no x
        """
    )


def test_a_long_message_is_cut_on_its_summary_line():
    long = "AssertionError: " + "x" * 300
    verdict = classify(
        Evidence(
            host_a="fail", host_b="fail", tests=(result("t", "failed", "failed", message_a=long),)
        )
    )
    (line,) = [ln for ln in text(verdict).splitlines() if ln.startswith("      A: ")]
    assert len(line) == len("      A: ") + summary.MAX_SHOWN_MESSAGE
    assert line.endswith("x…")


# -- the JSON and its schema ------------------------------------------------------------------


def test_the_json_is_the_verdict_model_and_reads_back_equal():
    verdict = classify(Evidence(host_a="pass", host_b="fail", tests=GREEN, findings=(OLD_XFAIL,)))
    written = summary.render_json(verdict)
    assert written.endswith("}\n")
    assert Verdict.model_validate_json(written) == verdict
    assert list(json.loads(written)) == [
        "classification",
        "merge",
        "row",
        "host_a",
        "host_b",
        "pins_intact",
        "pin_changes",
        "pin_diff",
        "strict_baseline",
        "findings",
        "reasons",
        "next_steps",
        "tests",
        "errors",
        "inputs",
        "inputs_sha256",
        "coupled_to",
        "coupled_reads",
        "order_dependence",
        "mutation",
        "host_b_variations",
        "crash",
        "properties",
    ]
    assert json.loads(written)["properties"] is None  # the one-property form: no roll-up


def test_the_committed_verdict_schema_is_the_models_schema():
    assert SCHEMA.read_text(encoding="utf-8") == verdict_schema(), (
        "regenerate: .venv/bin/entropy-gate schema --verdict > schema/verdict.schema.json"
    )


@pytest.mark.parametrize(
    "evidence",
    [
        Evidence(host_a="pass", host_b="pass", tests=GREEN),
        Evidence(host_a="pass", host_b="fail", findings=(SKIP, OLD_XFAIL), tests=GREEN),
        Evidence(host_a="missing", host_b="missing", invalid=("no reports",), errors=("e",)),
    ],
    ids=["merge", "silenced", "invalid"],
)
def test_verdicts_validate_against_the_published_schema(evidence):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    document = json.loads(summary.render_json(classify(evidence)))
    jsonschema.Draft202012Validator(schema).validate(document)
    document["classification"] = "flaky_but_fine"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(document)
