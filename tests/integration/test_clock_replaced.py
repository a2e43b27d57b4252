"""The clock replaced inside the test process, seen at run time (verdict/clockswap.py): the
red team's walk-arounds of 2026-12-06 froze the clock by names the scan cannot read —
time-machine imported through `importlib`, its fixture applied by pytest.ini's
`usefixtures`. Production's clock reads then see the pin on both hosts, and host B's shifted
clock never reaches the code it exists for. Real gates and host jobs on the demo's invoice
example, its production reading the live clock at the base (the defect the freeze hides)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from entropy_action.gate import demo
from tests.support.helpers import Repo

LIVE = Path(demo.__file__).parent / "demo_data" / "patches" / "live-clock" / "invoice_lib.py"
FREEZE = """\
import importlib
import os

import pytest

tm = importlib.import_module("time" + "_machine")


@pytest.fixture({how})
def steady():
    with tm.travel(int(os.environ["ENTROPY_CLOCK_UNIX"]), tick=False):
        yield
"""


def _base(repo: Repo, tmp_path: Path) -> str:
    clock = int(time.time()) // 86400 * 86400
    demo.build_base(repo.path, clock_unix=clock, temp_root=tmp_path / "tmp")
    (repo.path / "invoice_lib.py").write_text(LIVE.read_text(encoding="utf-8"), encoding="utf-8")
    return repo.commit("the late fee by the live clock (host B fails it)")


def _frozen(verdict: dict[str, Any]) -> list[tuple[str, str, bool]]:
    return [
        (f["test"], f["path"], f["introduced"])
        for f in verdict["findings"]
        if f["kind"] == "entropy_patched"
    ]


@pytest.mark.parametrize(
    "files",
    [
        {"tests/conftest.py": FREEZE.format(how="autouse=True")},
        {
            "tests/conftest.py": FREEZE.format(how=""),
            "pytest.ini": "[pytest]\nusefixtures = steady\n",
        },
    ],
    ids=["importlib-autouse", "ini-usefixtures"],
)
def test_a_clock_frozen_by_names_the_scan_cannot_read_is_entropy_patched(
    repo: Repo, tmp_path: Path, files: dict[str, str]
) -> None:
    base = _base(repo, tmp_path)
    for path, text in files.items():
        repo.write(path, text)
    repo.commit("hold the clock still")
    out = tmp_path / "gate.json"
    done = repo.cli("gate", "--base-ref", base, "--json", str(out), "--no-cache")
    judged = {"gate": (done.code, json.loads(out.read_text(encoding="utf-8")))}
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        ran = repo.cli("run", "--host", host, "--base-ref", base, "--out", f"../wf-{host}", *extra)
        assert ran.code == 0, ran.err  # green on both hosts: the freeze hides the defect
    judged.update(repo.verdict_and_compare("../wf-a", "../wf-b", base))
    for command, (code, verdict) in judged.items():
        assert (code, verdict["classification"]) == (1, "entropy_silenced"), command
        assert sorted(_frozen(verdict)) == [
            ("test_late_fee_after_due", "invoice_lib.py", True),
            ("test_no_late_fee_before_due", "invoice_lib.py", True),
        ], command
    said = next(f for f in judged["gate"][1]["findings"] if f["kind"] == "entropy_patched")
    stamp = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
    assert re.fullmatch(
        rf"datetime\.now\(\) returned {stamp} on host A while its clock read {stamp} to "
        rf"{stamp} \(in tests/properties/test_invoice_total\.py::test_\w+\): something in the "
        "test process stands in for the clock the code under test reads, so the property no "
        "longer sees the time it runs at",
        said["message"],
    ), said["message"]


def test_a_freeze_the_base_had_is_a_notice(repo: Repo, tmp_path: Path) -> None:
    """A suite that froze the clock before the patch (on purpose): an unrelated change merges,
    the freeze stays a notice."""
    _base(repo, tmp_path)
    repo.write("tests/conftest.py", FREEZE.format(how="autouse=True"))
    base = repo.commit("a suite that freezes the clock")
    repo.write("README.md", "# invoices\n\nhow to run the tests\n")
    repo.write("invoice_lib.py", (repo.path / "invoice_lib.py").read_text() + "\n# a comment\n")
    repo.commit("a comment")
    out = tmp_path / "gate.json"
    done = repo.cli("gate", "--base-ref", base, "--json", str(out), "--no-cache")
    verdict = json.loads(out.read_text(encoding="utf-8"))
    assert (done.code, verdict["classification"]) == (0, "merge_candidate"), verdict["reasons"]
    assert {introduced for _, _, introduced in _frozen(verdict)} == {False}
