"""The strength check on host B (the red team's walk-arounds of 2026-12-06): production reads
the live clock, which only host B shows (its clock runs years ahead), and the patch changes
or deletes the test that would see it. Host A's strength step runs the base's test on the
head's code under host A's clock, where the defect is invisible; host B's step runs it under
host B's, where it fails. Real gates and real host jobs on the demo's invoice example."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from entropy_action.gate import demo
from tests.support.helpers import Repo

MODULE = "tests/properties/test_invoice_total.py"
LIVE = Path(demo.__file__).parent / "demo_data" / "patches" / "live-clock" / "invoice_lib.py"
CHECK = (
    "    assert total_for(lines, as_of=when, due=when + timedelta(days=30)) "
    "== expected_total(lines)\n"
)


def _far_due(text: str) -> str:
    """The test's due date a century out: no clock reaches it, so the defect stays quiet."""
    assert CHECK in text
    return text.replace(CHECK, CHECK.replace("days=30", "days=36500"))


def _deleted(text: str) -> str:
    start = text.index("def test_no_late_fee_before_due")
    end = text.index("def test_late_fee_after_due")
    return text[:start] + text[end:]


def _judged(repo: Repo, base: str, tmp_path: Path) -> dict[str, tuple[int, dict[str, Any]]]:
    """The local gate, and verdict and compare on the host jobs' folders."""
    out = tmp_path / "gate.json"
    done = repo.cli("gate", "--base-ref", base, "--json", str(out), "--no-cache")
    judged = {"gate": (done.code, json.loads(out.read_text(encoding="utf-8")))}
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        ran = repo.cli("run", "--host", host, "--base-ref", base, "--out", f"../wf-{host}", *extra)
        assert ran.code == 0, ran.err  # both hosts pass at the head: the test hides the defect
    judged.update(repo.verdict_and_compare("../wf-a", "../wf-b", base))
    return judged


def _errors(verdict: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["kind"], f["test"]) for f in verdict["findings"] if f["level"] == "error"]


@pytest.mark.parametrize(
    ("rewrite", "kind"),
    [(_far_due, "test_changed_to_pass"), (_deleted, "test_removed")],
    ids=["due-a-century-out", "test-deleted"],
)
def test_a_test_changed_so_host_b_cannot_see_a_live_clock_is_silencing(
    repo: Repo, tmp_path: Path, rewrite: Any, kind: str
) -> None:
    """Both were `merge_candidate` on every path: host A's base-on-head run passes (its clock
    is the pin's day), and the deleted test counted as "moved" (its mutants are killed by the
    others and it passed on the head's code on host A)."""
    clock = int(time.time()) // 86400 * 86400
    base = demo.build_base(repo.path, clock_unix=clock, temp_root=tmp_path / "tmp")
    (repo.path / "invoice_lib.py").write_text(LIVE.read_text(encoding="utf-8"), encoding="utf-8")
    module = repo.path / MODULE
    module.write_text(rewrite(module.read_text(encoding="utf-8")), encoding="utf-8")
    repo.commit("the late fee by the clock; the test adjusted")
    for command, (code, verdict) in _judged(repo, base, tmp_path).items():
        assert (code, verdict["classification"]) == (1, "entropy_silenced"), (command, verdict)
        assert _errors(verdict) == [(kind, "test_no_late_fee_before_due")], command


def test_a_test_changed_to_hide_a_defect_main_already_had_on_host_b_is_silencing(
    repo: Repo, tmp_path: Path
) -> None:
    """Main is red on host B (production reads the live clock: let in before the gate, or by
    an override); the patch only moves the test's due date. The base's test failed on host B
    at the base too, but through the code under test, not a live read of its own: the patch
    hid the defect, it did not fix a test."""
    clock = int(time.time()) // 86400 * 86400
    demo.build_base(repo.path, clock_unix=clock, temp_root=tmp_path / "tmp")
    (repo.path / "invoice_lib.py").write_text(LIVE.read_text(encoding="utf-8"), encoding="utf-8")
    base = repo.commit("the late fee by the live clock")
    module = repo.path / MODULE
    module.write_text(_far_due(module.read_text(encoding="utf-8")), encoding="utf-8")
    repo.commit("make the test pass")
    out = tmp_path / "gate.json"
    done = repo.cli("gate", "--base-ref", base, "--json", str(out), "--no-cache")
    verdict = json.loads(out.read_text(encoding="utf-8"))
    assert (done.code, verdict["classification"]) == (1, "entropy_silenced"), verdict["reasons"]
    assert _errors(verdict) == [("test_changed_to_pass", "test_no_late_fee_before_due")]


def test_a_test_that_read_the_live_clock_itself_fixed_is_a_merge_candidate(
    repo: Repo, tmp_path: Path
) -> None:
    """The honest twin: at the base the test (not production) reads the live clock for its
    `as_of`, so it fails on host B at the base already (host B's clock is past the due
    date); the patch makes it read the pin. Host B's step sees
    the base's test fail on the head's code there too, and the base's own run on host B says
    it failed before, reading the live clock in the test's own code: pre-existing, a note."""
    clock = int(time.time()) // 86400 * 86400
    demo.build_base(repo.path, clock_unix=clock, temp_root=tmp_path / "tmp")
    module = repo.path / MODULE
    pinned = module.read_text(encoding="utf-8")
    live = pinned.replace(CHECK, CHECK.replace("as_of=when", "as_of=datetime.now(timezone.utc)"))
    assert live != pinned
    module.write_text(live, encoding="utf-8")
    base = repo.commit("a test that reads the live clock for its due date")
    module.write_text(pinned, encoding="utf-8")
    repo.commit("the test's due date from the pinned clock")
    out = tmp_path / "gate.json"
    done = repo.cli("gate", "--base-ref", base, "--json", str(out), "--no-cache")
    verdict = json.loads(out.read_text(encoding="utf-8"))
    assert (done.code, verdict["classification"]) == (0, "merge_candidate"), verdict["reasons"]
    assert _errors(verdict) == []
    assert any(
        "the base's test_no_late_fee_before_due fails on host B at the base too" in reason
        for reason in verdict["reasons"]
    ), verdict["reasons"]
