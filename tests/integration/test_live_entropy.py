"""The tests of tests/unit/test_live_entropy.py that start a process (pytest runs, git)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from entropy_action.core.layout import HOST_JSON
from entropy_action.gate import demo
from entropy_action.manifest import pinfile
from entropy_action.verdict import pairing
from tests.unit.test_live_entropy import _rewrite


@pytest.fixture(scope="module")
def live_clock(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The demo's live-clock row, gated once; its reports are kept for the cases below."""
    workdir = tmp_path_factory.mktemp("demo")
    rows = demo.run_demo(workdir, {"PATH": "/usr/bin:/bin"}, int(time.time()), only="live-clock")
    return workdir, rows[0].verdict


def test_the_live_clock_verdict_names_the_production_line(live_clock: tuple[Path, Any]) -> None:
    _, verdict = live_clock
    assert verdict.classification == "env_coupled"
    live = [f for f in verdict.findings if f.kind == "live_entropy"]
    assert [(f.location(), f.level, f.introduced) for f in live] == [
        ("invoice_lib.py:14", "warning", True)
    ]
    assert live[0].test == "tests/properties/test_invoice_total.py::test_no_late_fee_before_due"
    assert (
        "`invoice_lib.py:14` reads `datetime.now()` while the property pins the clock: take a Clock"
    ) in verdict.reasons


def test_forbid_live_entropy_rejects_and_needs_an_audit_on_each_host(
    live_clock: tuple[Path, Any],
) -> None:
    workdir, _ = live_clock
    reports = workdir / "live-clock-reports"
    loaded = pinfile.load(workdir / "live-clock" / "entropy.yaml", name="entropy.yaml")
    judged = pairing.evaluate(
        reports / "host-a",
        reports / "host-b",
        loaded=loaded,
        pin_diff=None,
        base_a=reports / "base-a",
        forbid_live_entropy=True,
    )
    assert judged.classification == "entropy_silenced"
    assert [f.level for f in judged.findings if f.kind == "live_entropy"] == ["error"]
    _rewrite(reports / "host-b" / HOST_JSON, audit=None)
    judged = pairing.evaluate(
        reports / "host-a", reports / "host-b", loaded=loaded, pin_diff=None,
        forbid_live_entropy=True,
    )  # fmt: skip
    assert judged.classification == "invalid"
    assert judged.reasons[0] == (
        "invalid input: host B: the live-entropy audit did not run, and "
        "constraints.forbid_live_entropy needs it"
    )
