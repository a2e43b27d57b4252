"""The issue's case through real gates on the demo's invoice example: a patch adds two tests
that pass in collection order only. Host B runs them swapped; attribution names the
state-setter (the second test needs the first's module-level cache) or the polluter (the
first breaks the second), and the fixed patch (each test sets up its own state) merges."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from entropy_action.core import git
from entropy_action.gate import demo, local
from entropy_action.hosts import isolate
from entropy_action.render import markdown, summary
from entropy_action.testproc import order
from entropy_action.verdict.model import Verdict
from tests.support.helpers import Repo

MODULE = "tests/properties/test_invoice_total.py"
CLASS = f"{MODULE}::TestCache"

STATE_SETTER = """

_CACHE: dict[str, int] = {}


class TestCache:
    def test_fill_cache(self) -> None:
        _CACHE["total"] = total_for(invoice_lines(), as_of=frozen_now())
        assert _CACHE["total"] >= 0

    def test_cached_total(self) -> None:
        assert _CACHE["total"] == total_for(invoice_lines(), as_of=frozen_now())
"""

POLLUTER = """

_RATE = {"fee": LATE_FEE_CENTS}


class TestCache:
    def test_fee_is_the_late_fee(self) -> None:
        assert _RATE["fee"] == LATE_FEE_CENTS

    def test_waived_fee(self) -> None:
        _RATE["fee"] = 0
        assert total_for([1], as_of=frozen_now()) == 1
"""

FIXED = """

class TestCache:
    def test_fill_cache(self) -> None:
        cache = {"total": total_for(invoice_lines(), as_of=frozen_now())}
        assert cache["total"] >= 0

    def test_cached_total(self) -> None:
        cache = {"total": total_for(invoice_lines(), as_of=frozen_now())}
        assert cache["total"] == total_for(invoice_lines(), as_of=frozen_now())
"""


def gate(tmp_path: Path, added: str) -> Verdict:
    repo = tmp_path / "repo"
    clock = int(time.time()) // 86400 * 86400
    base = demo.build_base(repo, clock_unix=clock, temp_root=tmp_path / "tmp")
    module = repo / MODULE
    module.write_text(module.read_text(encoding="utf-8") + added, encoding="utf-8")
    git.commit_all(repo, "two tests that share state")
    settings = local.GateSettings(
        manifest=repo / "entropy.yaml",
        base_ref=base,
        environ={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        out=tmp_path / "reports",
        progress=lambda line: None,
    )
    return local.run_gate(settings).verdict


def test_a_test_that_needs_anothers_cache_is_coupled_to_the_order_and_names_it(
    tmp_path: Path,
) -> None:
    verdict = gate(tmp_path, STATE_SETTER)
    assert verdict.classification == "env_coupled", verdict.reasons
    assert verdict.coupled_to == ["test_order"]
    [pair] = verdict.order_dependence
    assert (pair.victim, pair.other, pair.kind) == (
        f"{CLASS}::test_cached_total",
        f"{CLASS}::test_fill_cache",
        "state_setter",
    )
    assert pair.replay == (
        f"entropy-gate replay --report host-b --after {CLASS}::test_fill_cache "
        f"{CLASS}::test_cached_total"
    )
    assert any("passes only after" in reason for reason in verdict.reasons)
    assert f"replay the pair: {pair.replay}" in summary.render_text(verdict)
    assert pair.replay in markdown.render(verdict)
    assert replayed(tmp_path, pair.replay) == 0  # the setter first: the victim passes


def test_a_test_that_breaks_a_later_one_is_named_the_polluter(tmp_path: Path) -> None:
    verdict = gate(tmp_path, POLLUTER)
    assert verdict.classification == "env_coupled", verdict.reasons
    assert verdict.coupled_to == ["test_order"]
    [pair] = verdict.order_dependence
    assert (pair.victim, pair.other, pair.kind) == (
        f"{CLASS}::test_fee_is_the_late_fee",
        f"{CLASS}::test_waived_fee",
        "polluter",
    )
    assert pair.replay is not None
    assert replayed(tmp_path, pair.replay) == 1  # the polluter first: the victim fails


def replayed(tmp_path: Path, command: str) -> int:
    """The summary's replay command, pasted in the repository, with the host's report folder
    the gate left (`host-b`: here in `reports/`) where the command expects it."""
    words = shlex.split(command)
    assert words[:4] == ["entropy-gate", "replay", "--report", "host-b"]
    report = str(tmp_path / "reports" / "host-b")
    argv = [sys.executable, "-m", "entropy_action", "replay", "--report", report, *words[4:]]
    done = subprocess.run(argv, cwd=tmp_path / "repo", capture_output=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode


@pytest.mark.parametrize("added", [FIXED], ids=["each-test-sets-up-its-own-state"])
def test_the_fixed_tests_are_a_merge_candidate(tmp_path: Path, added: str) -> None:
    verdict = gate(tmp_path, added)
    assert verdict.classification == "merge_candidate", verdict.reasons
    assert verdict.order_dependence == []


# --- order probes by design (issue 35 part 4) ------------------------------------------------


def _luckily_ordered() -> tuple[str, str]:
    """(setter, victim): two new module-level tests host B's shuffle (the demo's pinned
    rng_seed) happens to run setter first — as host A does — so the shuffle alone misses
    the pair."""
    names = ["test_fill_total", "test_read_total"]
    ids = [f"{MODULE}::{n}" for n in (*BASE_TESTS, *names)]
    ran = order.shuffled(ids, isolate.derived_seed("test_order", 9173))
    first, second = sorted(names, key=lambda n: ran.index(f"{MODULE}::{n}"))
    return first, second


BASE_TESTS = (
    "test_invoice_total_idempotent",
    "test_no_late_fee_before_due",
    "test_late_fee_after_due",
)
LUCKY = """

_TOTALS: dict[str, int] = {{}}


def {setter}() -> None:
    _TOTALS["total"] = total_for(invoice_lines(), as_of=frozen_now())
    assert _TOTALS["total"] >= 0


def {victim}() -> None:
    assert _TOTALS["total"] == total_for(invoice_lines(), as_of=frozen_now())
"""


def test_a_pair_the_shuffle_kept_in_order_is_found_by_the_order_probes(tmp_path: Path) -> None:
    setter, victim = _luckily_ordered()
    verdict = gate(tmp_path, LUCKY.format(setter=setter, victim=victim))
    assert verdict.classification == "env_coupled", verdict.reasons
    assert verdict.coupled_to == ["test_order"]
    [pair] = verdict.order_dependence
    assert (pair.victim, pair.other, pair.kind) == (
        f"{MODULE}::{victim}",
        f"{MODULE}::{setter}",
        "state_setter",
    )
    assert (
        f"host B: {MODULE}::{victim} passed in its shuffled run and failed when host B ran the "
        "module with its tests in reverse of host A's order (order probe)"
    ) in verdict.reasons
    probes = tmp_path / "reports" / "host-b" / "probes.json"
    assert probes.is_file()


# --- one gate when only a probe fails (issue 35 part 3) ---------------------------------------


def _judged(repo: Repo, tmp_path: Path, *argv: str) -> tuple[int, dict[str, Any]]:
    out = tmp_path / f"{argv[0]}.json"
    done = repo.cli(*argv, "--json", str(out))
    return done.code, json.loads(out.read_text(encoding="utf-8"))


def _same(verdict: dict[str, Any]) -> dict[str, Any]:
    """What both paths must agree on: the classification, the findings, the order pair, the
    tests with their outcomes at the base."""
    # the tests: each with its outcome in the base's runs on host A and host B
    keys = ("classification", "findings", "coupled_to", "order_dependence", "host_a", "host_b",
            "tests")  # fmt: skip
    return {key: verdict[key] for key in keys}


def test_a_pair_only_a_probe_fails_is_judged_alike_by_gate_and_the_workflow(
    repo: Repo, tmp_path: Path
) -> None:
    """Host B's single run passes; its reverse-order probe fails the victim. The workflow's
    host B job runs the base beside its passing head and the judge reads it (a probe's
    failure is host B's); the gate decided on the base run on host B before its probes ran
    and judged without it (each test's `base_b` empty). It now decides after them."""
    clock = int(time.time()) // 86400 * 86400
    base = demo.build_base(repo.path, clock_unix=clock, temp_root=tmp_path / "tmp")
    setter, victim = _luckily_ordered()
    module = repo.path / MODULE
    added = LUCKY.format(setter=setter, victim=victim)
    module.write_text(module.read_text(encoding="utf-8") + added, encoding="utf-8")
    repo.commit("two tests that share a module-level total")
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        ran = repo.cli("run", "--host", host, "--out", f"../wf-{host}", "--base-ref", base, *extra)
        assert ran.code == 0, ran.err  # host B's own run passed: only a probe failed
    assert (tmp_path / "wf-b" / "probes.json").is_file()
    wf_code, workflow = _judged(
        repo, tmp_path, "verdict", "--host-a", "../wf-a", "--host-b", "../wf-b", "--base-ref", base
    )
    gate_code, gated = _judged(
        repo, tmp_path, "gate", "--base-ref", base, "--out", str(tmp_path / "reports")
    )
    assert (gate_code, gated["classification"]) == (1, "env_coupled"), gated["reasons"]
    assert wf_code == gate_code
    assert _same(workflow) == _same(gated)
    assert sorted(workflow["reasons"]) == sorted(gated["reasons"])
    assert {t["base_b"] for t in gated["tests"]} == {"passed", "missing"}
    assert (tmp_path / "reports" / "host-b" / "base" / "host.json").is_file()


# --- a probe's failure the base shares ----------------------------------------------------------


def _lucky_at_both(new: str) -> tuple[str, str]:
    """(setter, victim): names host B's shuffle runs setter first both at the base (the
    pair alone) and at the head (the pair and `new`), so only a probe fails the victim."""
    pool = ["test_fill_total", "test_read_total", "test_keep_total", "test_check_total"]
    seed = isolate.derived_seed("test_order", 9173)
    for setter in pool:
        for victim in (name for name in pool if name != setter):
            runs = [
                order.shuffled([f"{MODULE}::{n}" for n in (*BASE_TESTS, *names)], seed)
                for names in ((setter, victim), (setter, victim, new))
            ]
            if all(r.index(f"{MODULE}::{setter}") < r.index(f"{MODULE}::{victim}") for r in runs):
                return setter, victim
    raise AssertionError("no pair of names the shuffle keeps in order")


NEW_TEST = """

def test_total_is_an_int() -> None:
    assert isinstance(total_for(invoice_lines(), as_of=frozen_now()), int)
"""


def test_a_probe_failure_the_base_shares_in_the_same_order_is_told_pre_existing(
    repo: Repo, tmp_path: Path
) -> None:
    """jdatetime's seven: an old test leaves state a later one trips on in reverse order; a
    patch that only adds a test makes the probes run, and the reverse probe fails the old
    victim. The verdict stands (host B failed), and now says the base fails it in that order
    too: host B's base run in the probe's order (the base's tests of it), on both paths."""
    clock = int(time.time()) // 86400 * 86400
    demo.build_base(repo.path, clock_unix=clock, temp_root=tmp_path / "tmp")
    setter, victim = _lucky_at_both("test_total_is_an_int")
    module = repo.path / MODULE
    module.write_text(
        module.read_text(encoding="utf-8") + LUCKY.format(setter=setter, victim=victim),
        encoding="utf-8",
    )
    base = repo.commit("two tests that share a module-level total")
    module.write_text(module.read_text(encoding="utf-8") + NEW_TEST, encoding="utf-8")
    repo.commit("a new test")
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        ran = repo.cli("run", "--host", host, "--out", f"../wf-{host}", "--base-ref", base, *extra)
        assert ran.code == 0, ran.err  # host B's own run passed: only a probe failed
    wf_code, workflow = _judged(
        repo, tmp_path, "verdict", "--host-a", "../wf-a", "--host-b", "../wf-b", "--base-ref", base
    )
    gate_code, gated = _judged(
        repo, tmp_path, "gate", "--base-ref", base, "--out", str(tmp_path / "reports")
    )
    assert (gate_code, gated["classification"]) == (1, "env_coupled"), gated["reasons"]
    assert (wf_code, _same(workflow)) == (gate_code, _same(gated))
    assert sorted(workflow["reasons"]) == sorted(gated["reasons"])
    [failed] = [t for t in gated["tests"] if t["host_b"] == "failed"]
    assert (failed["id"], failed["base_b"], failed["failed_at_base"]) == (
        f"{MODULE}::{victim}",
        "failed",
        True,
    )
    assert (
        f"host B: {MODULE}::{victim} passed in its shuffled run and failed when host B ran the "
        "module with its tests in reverse of host A's order; the base fails it in the same "
        "order (order probe)"
    ) in gated["reasons"]
    for folder in (tmp_path / "wf-b", tmp_path / "reports" / "host-b"):
        probes = json.loads((folder / "probes.json").read_text(encoding="utf-8"))
        assert probes["probes"][0]["base"][f"{MODULE}::{victim}"] == "failed"
        assert f"{MODULE}::test_total_is_an_int" not in probes["probes"][0]["base"]
