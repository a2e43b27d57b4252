"""`entropy-gate compare` and `compare.evaluate`: real pytest runs on two trees, paired.

One module-scoped set of real runs (host A in one checkout with a variable leaked from the
caller's shell; host B from another absolute path, with and without it) feeds every test;
each test writes the host.json it needs beside a copy of a run's junit.xml.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from entropy_action.cli.main import main
from entropy_action.core import git, layout
from entropy_action.core.findings import Finding
from entropy_action.core.hostinfo import HostInfo
from entropy_action.core.layout import HOST_JSON, JUNIT_XML
from entropy_action.evidence import hostreport, stepfiles
from entropy_action.evidence.hostreport import HostReport
from entropy_action.evidence.junitcases import CaseOutcome, TestCase
from entropy_action.manifest import pinfile
from entropy_action.manifest.pindiff import PinDiff
from entropy_action.verdict import pairing
from entropy_action.verdict.model import TEST_RESULT
from entropy_action.verdict.remediation import FIX_RUN, NEXT_STEP
from tests.support.helpers import SEED_MANIFEST, Repo
from tests.unit.test_reports import (
    MODULE,
    SECRET_TOKEN,
    SHA,
    fingerprint,
    host_info,
    make_tree,
    run_pytest,
)
from tests.unit.test_reports import write_host as write_report

PROPERTY = """\
    import os

    import pytest

    HERE = os.path.dirname(os.path.abspath(__file__))


    @pytest.mark.parametrize("where", [HERE])
    def test_path_param(where):
        assert os.path.isdir(where)


    def test_reads_the_callers_shell():
        assert os.environ.get("SHAPES_LEAKED") == "1"
"""
PATH_TEST = "tests/properties/test_shapes.py::test_path_param[<root>/tests/properties]"
ENV_TEST = "tests/properties/test_shapes.py::test_reads_the_callers_shell"


@dataclass(frozen=True)
class Run:
    root: Path
    junit: Path
    returncode: int


@dataclass(frozen=True)
class Runs:
    a: Run  # passes: the variable leaked from the shell is there
    b_pass: Run  # another absolute path, same environment: passes
    b_fail: Run  # another absolute path, variable gone: the env test fails
    broken: Run  # the module does not import


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    base = tmp_path_factory.mktemp("runs")

    def one(where: str, text: str, env: dict[str, str]) -> Run:
        root = make_tree(base / where / "checkout", text)
        junit = base / where / JUNIT_XML
        return Run(root, junit, run_pytest(root, junit, env))

    return Runs(
        a=one("laptop", PROPERTY, {"SHAPES_LEAKED": "1"}),
        b_pass=one("elsewhere/b1", PROPERTY, {"SHAPES_LEAKED": "1"}),
        b_fail=one("elsewhere/b2", PROPERTY, {"SHAPES_LEAKED": "0"}),
        broken=one("broken", "import not_a_module_zz\n", {}),
    )


def manifest_sha(repo: Repo) -> str:
    """The sha256 of the repository's entropy.yaml (the test default when there is none)."""
    manifest = repo.path / "entropy.yaml"
    return hashlib.sha256(manifest.read_bytes()).hexdigest() if manifest.exists() else SHA


def manifest_names(repo: Repo) -> dict[str, str]:
    """property_id and module as the repository's entropy.yaml names them (a real report's)."""
    path = repo.path / "entropy.yaml"
    if not path.exists():
        return {}
    loaded = pinfile.load(path)
    return {"property_id": loaded.manifest.property_id, "module": loaded.manifest.module}


def host(repo: Repo, label: str, run: Run, *, into: str = "", **overrides: object) -> Path:
    """A report dir for host `label` beside the repository, from a real run's junit.xml."""
    fields: dict[str, object] = {
        "manifest_sha256": manifest_sha(repo),
        "returncode": run.returncode,
        **manifest_names(repo),
    }
    fields.update(overrides)
    root = fields.pop("root", run.root)
    info = host_info(label, str(root), **fields)
    return write_report(repo.path.parent / "reports" / (into or label), info, run.junit)


def compare_cli(repo: Repo, *args: str) -> tuple[int, str, dict[str, Any], str]:
    """(exit code, stdout, verdict JSON, stderr) of `entropy-gate compare ARGS --json FILE`."""
    out = repo.path.parent / "verdict.json"
    result = repo.cli("compare", *args, "--json", str(out))
    return result.code, result.out, json.loads(out.read_text(encoding="utf-8")), result.err


def test_two_hosts_that_pass_from_different_paths_are_a_merge_candidate(seed_repo, runs):
    a, b = host(seed_repo, "a", runs.a), host(seed_repo, "b", runs.b_pass)
    code, out, verdict, err = compare_cli(seed_repo, "--host-a", str(a), "--host-b", str(b))
    assert (code, verdict["classification"], verdict["merge"]) == (0, "merge_candidate", True)
    assert (verdict["host_a"], verdict["host_b"]) == ("pass", "pass")
    by_id = {t["id"]: t for t in verdict["tests"]}
    assert list(by_id) == [PATH_TEST, ENV_TEST]
    assert by_id[PATH_TEST]["raw_ids"] == [
        f"tests/properties/test_shapes.py::test_path_param[{run.root}/tests/properties]"
        for run in (runs.a, runs.b_pass)
    ]
    assert (by_id[PATH_TEST]["host_a"], by_id[PATH_TEST]["host_b"]) == ("passed", "passed")
    assert pairing.NO_PIN_CHECK in verdict["reasons"]
    assert out.startswith("entropy-gate verdict: merge_candidate (merge candidate)\n")
    assert "tests: 2; 2 passed on both hosts\n" in out
    assert err == ""


def test_a_property_that_reads_the_callers_shell_passes_on_a_and_fails_on_b(seed_repo, runs):
    a, b = host(seed_repo, "a", runs.a), host(seed_repo, "b", runs.b_fail)
    code, out, verdict, _ = compare_cli(seed_repo, "--host-a", str(a), "--host-b", str(b))
    assert (code, verdict["classification"], verdict["merge"]) == (1, "env_coupled", False)
    (failed,) = [t for t in verdict["tests"] if t["host_b"] != "passed"]
    assert (failed["id"], failed["host_a"], failed["host_b"]) == (ENV_TEST, "passed", "failed")
    assert failed["message_b"].startswith("AssertionError: assert '0' == '1'")
    assert (failed["path"], failed["line"]) == ("tests/properties/test_shapes.py", 13)
    assert f"  A passed   B failed   {ENV_TEST}\n      B: AssertionError: assert" in out
    assert "host B: fail (1 failed)" in verdict["reasons"]


def test_a_module_that_does_not_import_is_a_real_defect_with_the_import_error(
    seed_repo, runs, capsys, monkeypatch
):
    a = host(seed_repo, "a", runs.broken)
    b = host(seed_repo, "b", runs.broken, root="/elsewhere/checkout")
    out_json = seed_repo.path.parent / "verdict.json"
    monkeypatch.chdir(seed_repo.path)  # not repo.cli: pytest's import error says "Traceback:"
    code = main(["compare", "--host-a", str(a), "--host-b", str(b), "--json", str(out_json)])
    out = capsys.readouterr().out
    verdict = json.loads(out_json.read_text(encoding="utf-8"))
    assert (code, verdict["classification"]) == (1, "real_defect")
    assert verdict["tests"] == []
    errors = verdict["errors"]
    assert [e.split("\n", 1)[0] for e in errors] == [
        "host A: collection failure in tests/properties/test_shapes.py:",
        "host B: collection failure in tests/properties/test_shapes.py:",
    ]
    assert all(e.endswith("No module named 'not_a_module_zz'") for e in errors)
    assert "  - host A: collection failure in tests/properties/test_shapes.py:\n" in out
    assert "      E   ModuleNotFoundError: No module named 'not_a_module_zz'\n" in out


# -- invalid: every way two reports cannot be compared --------------------------------------


def hosts_for(repo: Repo, runs: Runs, case: str) -> tuple[Path, Path]:
    a, b = host(repo, "a", runs.a), host(repo, "b", runs.b_pass)
    reports_dir = a.parent
    if case == "host B missing":
        return a, reports_dir / "nowhere"
    if case == "host.json missing":
        (a / HOST_JSON).unlink()
    elif case == "junit.xml missing":
        (b / JUNIT_XML).unlink()
    elif case == "required field missing":
        data = json.loads((a / HOST_JSON).read_text())
        del data["manifest_sha256"]
        (a / HOST_JSON).write_text(json.dumps(data))
    elif case == "a report of host B passed as host A":
        return host(repo, "b", runs.b_fail, into="other-b"), b
    elif case == "manifest bytes differ between the hosts":
        b = host(repo, "b", runs.b_pass, manifest_sha256="e" * 64)
    elif case == "the local manifest differs":
        a = host(repo, "a", runs.a, manifest_sha256="d" * 64)
        b = host(repo, "b", runs.b_pass, manifest_sha256="d" * 64)
    elif case == "the same host twice":
        b = host(repo, "b", runs.b_pass, fingerprint=fingerprint(hostname="host-a"))
    elif case == "a pin did not take":
        b = host(repo, "b", runs.b_pass, pins_mismatch=["tz: saw Europe/Berlin, pinned UTC"])
    elif case == "truncated junit.xml":
        (b / JUNIT_XML).write_bytes((b / JUNIT_XML).read_bytes()[:150])
    return a, b


INVALID = {
    "host B missing": "host B: no report folder nowhere (the host job failed "
    "before it uploaded its report, was cancelled or was skipped)",
    "host.json missing": "host A: {a}/host.json: no such file (did the host run write its report "
    "here?)",
    "junit.xml missing": "host B: {b}/junit.xml: no such file (did the host run write its report "
    "here?)",
    "required field missing": "host A: {a}/host.json: missing required field 'manifest_sha256'",
    "a report of host B passed as host A": "host A: {a}/host.json is the report of host B; "
    "--host-a needs host A's report",
    "manifest bytes differ between the hosts": "host B: {b}/host.json: manifest_sha256 is "
    "eeeeeeeeeeee…, entropy.yaml has {sha}…: host B ran other entropy.yaml bytes",
    "the local manifest differs": "host A: {a}/host.json: manifest_sha256 is dddddddddddd…, "
    "entropy.yaml has {sha}…: host A ran other entropy.yaml bytes",
    "the same host twice": "{a}/host.json and {b}/host.json: the fingerprint is the same: "
    "comparing a process to itself is theater (run host B on another machine or with --isolate)",
    "a pin did not take": "host B: {b}/host.json: pins_mismatch: the test process did not see "
    "these pins as pinned: tz: saw Europe/Berlin, pinned UTC",
    "truncated junit.xml": "host B: {b}/junit.xml:1: not well-formed XML: unclosed token "
    "(column 70)",
}


@pytest.mark.parametrize("case", list(INVALID))
def test_reports_that_cannot_be_compared_give_an_invalid_verdict(seed_repo, runs, case):
    a, b = hosts_for(seed_repo, runs, case)
    code, out, verdict, _ = compare_cli(seed_repo, "--host-a", str(a), "--host-b", str(b))
    assert (code, verdict["classification"], verdict["merge"]) == (2, "invalid", False)
    expected = INVALID[case].format(a=a, b=b, sha=manifest_sha(seed_repo)[:12])
    assert f"invalid input: {expected}" == verdict["reasons"][0]
    assert all("\n" not in reason for reason in verdict["reasons"])
    # the cause once, where what to do quotes it (the reasons do not repeat it)
    assert f"  1. {FIX_RUN}\n     {expected}\n" in out
    assert out.count(expected) == 1
    assert out.startswith("entropy-gate verdict: invalid (invalid input; nothing was judged)\n")


def test_without_host_b_the_verdict_is_invalid_when_host_b_is_required(seed_repo, runs):
    a = host(seed_repo, "a", runs.a)
    code, _, verdict, _ = compare_cli(seed_repo, "--host-a", str(a))
    assert (code, verdict["classification"], verdict["host_b"]) == (2, "invalid", "missing")
    assert verdict["reasons"][0] == (
        "invalid input: host B did not report and constraints.require_host_b is true"
    )


def test_without_host_b_host_a_decides_when_the_manifest_allows_it(seed_repo, runs):
    text = (seed_repo.path / "entropy.yaml").read_text(encoding="utf-8")
    seed_repo.write("entropy.yaml", text.replace("require_host_b: true", "require_host_b: false"))
    a = host(seed_repo, "a", runs.a)
    code, _, verdict, _ = compare_cli(seed_repo, "--host-a", str(a))
    assert (code, verdict["classification"]) == (0, "merge_candidate")
    assert (verdict["host_a"], verdict["host_b"]) == ("pass", "missing")
    assert {t["host_b"] for t in verdict["tests"]} == {"missing"}


def test_an_external_entity_pointing_at_a_secret_leaks_nowhere(seed_repo, runs, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET_TOKEN, encoding="utf-8")
    a, b = host(seed_repo, "a", runs.a), host(seed_repo, "b", runs.b_pass)
    (a / JUNIT_XML).write_text(
        f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY s SYSTEM "{secret.as_uri()}">]>'
        '<testsuites><testsuite><testcase classname="m" name="&s;"/></testsuite></testsuites>',
        encoding="utf-8",
    )
    code, out, verdict, err = compare_cli(seed_repo, "--host-a", str(a), "--host-b", str(b))
    written = (seed_repo.path.parent / "verdict.json").read_text(encoding="utf-8")
    assert (code, verdict["classification"]) == (2, "invalid")
    assert verdict["reasons"][0].startswith(f"invalid input: host A: {a}/junit.xml: refused: ")
    for output in (out, err, written):
        assert SECRET_TOKEN not in output


def test_a_billion_laughs_report_is_refused_at_once(seed_repo, runs):
    a, b = host(seed_repo, "a", runs.a), host(seed_repo, "b", runs.b_pass)
    entities = "".join(f'<!ENTITY e{i + 1} "{f"&e{i};" * 10}">' for i in range(9))
    (b / JUNIT_XML).write_text(
        f'<!DOCTYPE r [<!ENTITY e0 "lol">{entities}]><testsuites>&e9;</testsuites>',
        encoding="utf-8",
    )
    code, _, verdict, _ = compare_cli(seed_repo, "--host-a", str(a), "--host-b", str(b))
    assert (code, verdict["classification"]) == (2, "invalid")


def test_a_manifest_named_but_missing_is_an_invalid_verdict(seed_repo, runs):
    a, b = host(seed_repo, "a", runs.a), host(seed_repo, "b", runs.b_pass)
    args = ("--host-a", str(a), "--host-b", str(b), "--manifest", "nope.yaml")
    code, _, verdict, _ = compare_cli(seed_repo, *args)
    assert (code, verdict["classification"]) == (2, "invalid")
    assert verdict["reasons"] == [
        "invalid input: nope.yaml: no such file "
        "(write an entropy.yaml: entropy-gate init drafts one)"
    ]
    assert (verdict["host_a"], verdict["host_b"], verdict["tests"]) == ("missing", "missing", [])


def test_without_a_manifest_the_hosts_are_compared_with_each_other_only(repo, runs):
    a, b = host(repo, "a", runs.a), host(repo, "b", runs.b_pass)
    code, _, verdict, _ = compare_cli(repo, "--host-a", str(a), "--host-b", str(b))
    assert (code, verdict["classification"]) == (0, "merge_candidate")
    assert verdict["reasons"][-1] == (
        "no entropy.yaml here and no --manifest: the hosts' manifest_sha256 were compared "
        "with each other only"
    )


def test_an_unwritable_json_path_is_a_usage_error(seed_repo, runs):
    a, b = host(seed_repo, "a", runs.a), host(seed_repo, "b", runs.b_pass)
    target = seed_repo.path / "entropy.yaml" / "verdict.json"
    result = seed_repo.cli("compare", "--host-a", str(a), "--host-b", str(b), "--json", str(target))
    assert result.code == 2
    assert result.err.startswith(f"{target}: cannot write the verdict JSON: ")


# -- with --base-ref: the pin check and the silencing scan fold in ---------------------------


@pytest.fixture
def shapes_repo(repo: Repo) -> Repo:
    """A repository whose base commit holds a manifest naming the module the runs ran."""
    manifest = SEED_MANIFEST.read_text(encoding="utf-8")
    repo.write("entropy.yaml", manifest.replace("tests/properties/test_invoice_total.py", MODULE))
    repo.write(MODULE, PROPERTY)
    repo.commit("base")
    return repo


def base_ref_args(repo: Repo, runs: Runs) -> tuple[str, ...]:
    a, b = host(repo, "a", runs.a), host(repo, "b", runs.b_pass)
    return ("--host-a", str(a), "--host-b", str(b), "--base-ref", "main")


def test_with_a_base_ref_a_changed_pin_is_a_pin_mutation_even_when_green(shapes_repo, runs):
    text = (shapes_repo.path / "entropy.yaml").read_text(encoding="utf-8")
    shapes_repo.write("entropy.yaml", text.replace("rng_seed: 9173", "rng_seed: 1"))
    code, out, verdict, _ = compare_cli(shapes_repo, *base_ref_args(shapes_repo, runs))
    assert (code, verdict["classification"], verdict["pins_intact"]) == (1, "pin_mutation", False)
    assert verdict["pin_changes"]["changed"] == ["pins.rng_seed"]
    assert "pin changes:\n  entropy.yaml:7: pin rng_seed changed: 9173 → 1\n" in out
    assert pairing.NO_PIN_CHECK not in verdict["reasons"]


def test_with_a_base_ref_intact_pins_and_no_silencing_green_hosts_merge(shapes_repo, runs):
    code, _, verdict, _ = compare_cli(shapes_repo, *base_ref_args(shapes_repo, runs))
    assert (code, verdict["classification"], verdict["pins_intact"]) == (0, "merge_candidate", True)
    assert verdict["findings"] == []


def test_with_a_base_ref_a_skip_the_patch_adds_is_entropy_silenced(shapes_repo, runs):
    text = textwrap.dedent(PROPERTY)
    skipped = "@pytest.mark.skip(reason='flaky on CI')\ndef test_reads_the_callers_shell"
    shapes_repo.write(MODULE, text.replace("def test_reads_the_callers_shell", skipped))
    args = base_ref_args(shapes_repo, runs)
    clean_strength_step(Path(args[1]), shapes_repo)
    clean_strength_step(Path(args[3]), shapes_repo)  # host B's, since host B passed
    code, out, verdict, _ = compare_cli(shapes_repo, *args)
    assert (code, verdict["classification"]) == (1, "entropy_silenced")
    assert [(f["path"], f["line"], f["introduced"]) for f in verdict["findings"]] == [
        (MODULE, 13, True)
    ]
    # the deciding finding leads what to do, with its message, and is not listed again
    assert f"what to do:\n  1. {MODULE}:13: {NEXT_STEP['skip_marker']}\n     skip marker " in out
    assert "findings:" not in out


def test_a_changed_property_module_without_host_as_strength_report_is_invalid(shapes_repo, runs):
    """The patch changed the property module, so host A's job had to run the strength check:
    compare (the one judging pipeline) does not judge the reports without its result."""
    text = textwrap.dedent(PROPERTY)
    skipped = "@pytest.mark.skip(reason='flaky on CI')\ndef test_reads_the_callers_shell"
    shapes_repo.write(MODULE, text.replace("def test_reads_the_callers_shell", skipped))
    code, _, verdict, _ = compare_cli(shapes_repo, *base_ref_args(shapes_repo, runs))
    assert (code, verdict["classification"]) == (2, "invalid")
    assert any(
        "strength.json is missing: the patch changed the property's test side" in reason
        for reason in verdict["reasons"]
    ), verdict["reasons"]
    assert [f["kind"] for f in verdict["findings"]] == ["skip_marker"]  # still named


def test_a_changed_property_module_without_host_bs_strength_report_is_invalid(shapes_repo, runs):
    """Host B passed and the patch changed the test side, so host B's job had to run the
    base's test side on the head's code too (hoststeps.strength_b_step)."""
    text = textwrap.dedent(PROPERTY)
    skipped = "@pytest.mark.skip(reason='flaky on CI')\ndef test_reads_the_callers_shell"
    shapes_repo.write(MODULE, text.replace("def test_reads_the_callers_shell", skipped))
    args = base_ref_args(shapes_repo, runs)
    clean_strength_step(Path(args[1]), shapes_repo)
    code, _, verdict, _ = compare_cli(shapes_repo, *args)
    assert (code, verdict["classification"]) == (2, "invalid")
    assert any(
        reason.startswith("invalid input: host B: ")
        and "strength.json is missing: host B passed and the patch changed the property's test side"
        in reason
        for reason in verdict["reasons"]
    ), verdict["reasons"]


def clean_strength_step(folder: Path, repo: Repo) -> None:
    """What a host's strength step writes when it found nothing (hoststeps.strength_step,
    strength_b_step)."""
    info = hostreport.read_info(folder / HOST_JSON)
    report = stepfiles.StrengthReport(
        property_id=info.property_id,
        manifest_sha256=info.manifest_sha256,
        commit=info.commit,
        base_commit=git.resolve_ref(repo.path, "main"),
        measured=True,
    )
    stepfiles.write(folder, layout.STRENGTH_JSON, report)


def test_with_a_base_ref_a_skip_that_stood_at_the_base_is_only_a_notice(shapes_repo, runs):
    text = textwrap.dedent(PROPERTY)
    skipped = "@pytest.mark.skipif(sys.platform == 'win32', reason='posix paths')\ndef test_path"
    shapes_repo.write(MODULE, "import sys\n" + text.replace("def test_path", skipped))
    shapes_repo.commit("base with a platform skip")
    shapes_repo.write("README.md", "docs only\n")
    code, out, verdict, _ = compare_cli(shapes_repo, *base_ref_args(shapes_repo, runs))
    assert (code, verdict["classification"]) == (0, "merge_candidate")
    assert [(f["line"], f["introduced"]) for f in verdict["findings"]] == [(10, False)]
    assert f"  {MODULE}:10: notice: pre-existing — " in out


def test_an_unknown_base_ref_is_an_invalid_verdict_in_one_line(shapes_repo, runs):
    args = (*base_ref_args(shapes_repo, runs)[:-1], "no-such-ref")
    code, _, verdict, _ = compare_cli(shapes_repo, *args)
    assert (code, verdict["classification"]) == (2, "invalid")
    (reason,) = verdict["reasons"]
    assert reason.startswith("invalid input: ")
    assert "no-such-ref" in reason
    assert "\n" not in reason


# -- evaluate and pair, without the CLI -----------------------------------------------------


def report(label: str, root: str, *tests: TestCase, **overrides: object) -> HostReport:
    info: HostInfo = host_info(label, root, **overrides)
    return HostReport(dir=Path(root), info=info, tests=tests, errors=())


def case(test_id: str, outcome: CaseOutcome = "passed", raw: str | None = None) -> TestCase:
    return TestCase(id=test_id, raw_id=raw or test_id, outcome=outcome, path="t.py", line=3)


def test_pairing_keeps_host_a_order_then_host_b_extras_and_marks_missing():
    a = report("a", "/a", case("t.py::x"), case("t.py::only_a", "failed"), case("t.py::y"))
    b = report("b", "/b", case("t.py::y", "skipped"), case("t.py::only_b"), case("t.py::x"))
    paired = [(r.id, r.host_a, r.host_b) for r in pairing.pair(a, b)]
    assert paired == [
        ("t.py::x", "passed", "passed"),
        ("t.py::only_a", "failed", "missing"),
        ("t.py::y", "passed", "skipped"),
        ("t.py::only_b", "missing", "passed"),
    ]


def test_pairing_keeps_each_hosts_raw_id_once():
    a = report("a", "/a", case("t.py::p[<root>]", raw="t.py::p[/a]"), case("t.py::q"))
    b = report("b", "/b", case("t.py::p[<root>]", raw="t.py::p[/b]"), case("t.py::q"))
    assert [r.raw_ids for r in pairing.pair(a, b)] == [["t.py::p[/a]", "t.py::p[/b]"], ["t.py::q"]]


def test_paired_results_equal_validated_ones_field_and_json_alike():
    """pair() and with_baseline() give the models pydantic validates from the same values."""
    seeded = TestCase("t.py::s", "t.py::s", "failed", "boom", "t.py", 9, seed=7, rng_seed=3)
    a = report("a", "/a", case("t.py::x"), seeded, case("t.py::only_a", "skipped"))
    b = report("b", "/b", case("t.py::x", "failed", raw="t.py::x[b]"), seeded, case("t.py::o"))
    base = report("a", "/a", case("t.py::x"), case("t.py::s", "failed"))
    for built in (pairing.pair(a, b), pairing.with_baseline(pairing.pair(a, b), base, None)):
        for result in built:
            validated = TEST_RESULT.validate_python(TEST_RESULT.dump_python(result))
            assert result == validated
            assert TEST_RESULT.dump_json(result) == TEST_RESULT.dump_json(validated)
            assert type(result.seed_a) is type(validated.seed_a)
    copied = dataclasses.replace(pairing.pair(a, b)[0], base_a="failed")
    assert (copied.base_a, pairing.pair(a, b)[0].base_a) == ("failed", None)
    marked = pairing.with_baseline(pairing.pair(a, b), base, None)
    assert [(r.base_a, r.failed_at_base) for r in marked] == [
        ("passed", False),
        ("failed", True),
        ("missing", False),
        ("missing", False),
    ]


def test_evaluate_reads_nothing_but_the_directories_given(tmp_path, runs):
    a = write_report(tmp_path / "a", host_info("a", runs.a.root), runs.a.junit)
    b = write_report(tmp_path / "b", host_info("b", runs.b_fail.root), runs.b_fail.junit)
    diff = PinDiff(baseline="main:entropy.yaml", baseline_found=True)
    verdict = pairing.evaluate(a, b, loaded=None, pin_diff=diff, notes=["a note"])
    assert verdict.classification == "env_coupled"
    assert verdict.reasons[-1] == "a note"
    assert pairing.NO_PIN_CHECK not in verdict.reasons


def test_runtime_findings_see_the_paired_tests(tmp_path, runs):
    a = write_report(tmp_path / "a", host_info("a", runs.a.root), runs.a.junit)
    b = write_report(tmp_path / "b", host_info("b", runs.b_pass.root), runs.b_pass.junit)
    seen: list[str] = []
    broken: list[str] = []

    def runtime(tests, broken_hosts):
        seen.extend(t.id for t in tests)
        broken.extend(broken_hosts)
        return [Finding(kind="not_executed", path="t.py", line=1, message="gone")]

    verdict = pairing.evaluate(a, b, loaded=None, pin_diff=None, runtime_findings=runtime)
    assert seen == [PATH_TEST, ENV_TEST]
    assert broken == []  # neither host failed to collect
    assert verdict.classification == "entropy_silenced"


def test_caller_reasons_for_invalid_input_come_first(tmp_path, runs):
    a = write_report(tmp_path / "a", host_info("a", runs.a.root), runs.a.junit)
    verdict = pairing.evaluate(a, None, loaded=None, pin_diff=None, invalid=["host B: crashed"])
    assert verdict.classification == "invalid"
    assert verdict.reasons[0] == "invalid input: host B: crashed"


# -- both hosts must report the same properties ----------------------------------------------


def write_case_report(dir: Path, label: str, *cases: tuple[str, str]) -> Path:
    """A hand-built report: (name, outcome) cases of MODULE in a junit.xml, and a host.json."""
    bodies = {
        "passed": "",
        "failed": '<failure message="boom"/>',
        "skipped": '<skipped message="s"/>',
    }
    xml = "".join(
        f'<testcase classname="tests.properties.test_shapes" name="{name}" '
        f'file="{MODULE}" line="3">{bodies[outcome]}</testcase>'
        for name, outcome in cases
    )
    junit = (
        f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{xml}</testsuite></testsuites>'
    )
    returncode = 1 if any(outcome == "failed" for _, outcome in cases) else 0
    info = host_info(label, f"/{label}/checkout", returncode=returncode)
    if label == "b":
        info = info.model_copy(update={"fingerprint": fingerprint(isolated=True, hostname="b")})
    return write_report(dir, info, junit.encode())


def test_a_case_host_b_lacks_makes_the_verdict_invalid_and_names_it(tmp_path):
    a = write_case_report(tmp_path / "a", "a", ("test_x", "passed"), ("test_y", "passed"))
    b = write_case_report(tmp_path / "b", "b", ("test_x", "passed"))
    verdict = pairing.evaluate(a, b, loaded=None, pin_diff=None)
    assert (verdict.classification, verdict.host_a, verdict.host_b) == ("invalid", "pass", "fail")
    assert verdict.reasons[0] == (
        f"invalid input: host B did not run 1 of the tests host A ran: {MODULE}::test_y (absent)"
    )
    assert "host B: fail (1 not run that host A ran)" in verdict.reasons


def test_a_case_host_b_skipped_that_host_a_ran_is_never_a_merge_candidate(tmp_path):
    a = write_case_report(tmp_path / "a", "a", ("test_x", "passed"), ("test_y", "passed"))
    b = write_case_report(tmp_path / "b", "b", ("test_x", "passed"), ("test_y", "skipped"))
    verdict = pairing.evaluate(a, b, loaded=None, pin_diff=None)
    assert (verdict.classification, verdict.host_b, verdict.merge) == ("invalid", "fail", False)
    assert verdict.reasons[0] == (
        f"invalid input: host B did not run 1 of the tests host A ran: {MODULE}::test_y (skipped)"
    )


def test_a_case_only_host_b_ran_fails_host_a_and_many_are_cut(tmp_path):
    names = [f"test_{i}" for i in range(7)]
    a = write_case_report(tmp_path / "a", "a", ("test_x", "passed"))
    b = write_case_report(
        tmp_path / "b", "b", ("test_x", "passed"), *((n, "passed") for n in names)
    )
    verdict = pairing.evaluate(a, b, loaded=None, pin_diff=None)
    assert (verdict.classification, verdict.host_a, verdict.host_b) == ("invalid", "fail", "pass")
    listed = ", ".join(f"{MODULE}::{n} (absent)" for n in names[:5])
    assert verdict.reasons[0] == (
        f"invalid input: host A did not run 7 of the tests host B ran: {listed} and 2 more"
    )


def test_with_a_base_run_the_runtime_rule_decides_a_one_sided_test(tmp_path):
    a = write_case_report(tmp_path / "a", "a", ("test_x", "passed"), ("test_y", "passed"))
    b = write_case_report(tmp_path / "b", "b", ("test_x", "passed"))
    base = write_case_report(tmp_path / "base", "a", ("test_x", "passed"), ("test_y", "passed"))
    gone = Finding(kind="not_executed", path=MODULE, line=3, message="test_y: absent on B")
    verdict = pairing.evaluate(
        a, b, loaded=None, pin_diff=None, runtime_findings=lambda tests, broken: [gone], base_a=base
    )
    assert (verdict.classification, verdict.host_b) == ("entropy_silenced", "fail")
    assert not any(r.startswith("invalid input") for r in verdict.reasons)


def test_two_reports_with_the_same_cases_pair_cleanly(tmp_path):
    a = write_case_report(tmp_path / "a", "a", ("test_x", "passed"), ("test_y", "skipped"))
    b = write_case_report(tmp_path / "b", "b", ("test_x", "passed"), ("test_y", "skipped"))
    verdict = pairing.evaluate(a, b, loaded=None, pin_diff=None)
    assert (verdict.classification, verdict.host_a, verdict.host_b) == (
        "merge_candidate",
        "pass",
        "pass",
    )


def test_compare_cli_names_the_case_host_b_lacks(repo, tmp_path):
    a = write_case_report(tmp_path / "a", "a", ("test_x", "passed"), ("test_y", "passed"))
    b = write_case_report(tmp_path / "b", "b", ("test_x", "passed"))
    code, out, verdict, _ = compare_cli(repo, "--host-a", str(a), "--host-b", str(b))
    assert (code, verdict["classification"]) == (2, "invalid")
    assert f"host B did not run 1 of the tests host A ran: {MODULE}::test_y (absent)\n" in out
    assert f"  A passed   B missing  {MODULE}::test_y\n" in out


@pytest.mark.parametrize("strict", [False, True])
def test_a_failure_that_stood_at_the_base_fails_the_host_strict_or_not(tmp_path, strict):
    a = write_case_report(tmp_path / "a", "a", ("test_x", "failed"), ("test_y", "passed"))
    b = write_case_report(tmp_path / "b", "b", ("test_x", "failed"), ("test_y", "passed"))
    base = write_case_report(tmp_path / "base", "a", ("test_x", "failed"), ("test_y", "passed"))
    verdict = pairing.evaluate(
        a, b, loaded=None, pin_diff=None, base_a=base, base_b=base, strict_baseline=strict
    )
    assert (verdict.classification, verdict.host_a, verdict.host_b) == (
        "real_defect",
        "fail",
        "fail",
    )
    assert [(t.id.split("::")[-1], t.failed_at_base) for t in verdict.tests] == [
        ("test_x", True),
        ("test_y", False),
    ]
