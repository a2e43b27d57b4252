"""One gate, the same evidence (issue 35 part 3): the workflow's host jobs (`run --host a`,
`run --host b --isolate`, each with `--base-ref`) and its verdict job (`verdict` over the two
folders) reach the verdict `entropy-gate gate` reaches on patches only host B's base run can
judge: a live clock replaced by a constant from a new config module, and "now" taken from a
fresh temp file's modification time (the kernel's clock; host B's shift moves file times too,
so there the defect shows on host B as well). Real git repositories, real host runs."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from entropy_action.gate import demo
from tests.support.helpers import Repo

DAY = 86_400
HEAD = '''"""Invoice totals: the application code under test in the demo."""

from __future__ import annotations

{imports}

LATE_FEE_CENTS = 500


def total_for(amounts: list[int], as_of: datetime, due: datetime | None = None) -> int:
    """The invoice total in cents as of `as_of`: its lines, plus a late fee once `due` passed."""
    total = sum(amounts)
    if due is not None and {when} > due:
        total += LATE_FEE_CENTS
    return total
'''
CONSTANT = {  # the constant lives in a module the patch adds: the scan sees no literal
    "invoice_config.py": (
        "from datetime import datetime, timezone\n\n"
        "REFERENCE_NOW = datetime.fromtimestamp({noon}, tz=timezone.utc)\n"
    ),
    "invoice_lib.py": HEAD.format(
        imports="from datetime import datetime\n\nfrom invoice_config import REFERENCE_NOW",
        when="REFERENCE_NOW",
    ),
}
MTIME = {  # the kernel's clock through a file's mtime: host B's shift moves file times too
    "invoice_lib.py": HEAD.format(
        imports="import os\nimport tempfile\nfrom datetime import datetime, timezone",
        when="_stamp()",
    ).replace(
        "\n\ndef total_for",
        "\n\ndef _stamp() -> datetime:\n"
        "    with tempfile.NamedTemporaryFile() as handle:\n"
        "        return datetime.fromtimestamp(os.stat(handle.name).st_mtime, tz=timezone.utc)\n"
        "\n\ndef total_for",
    ),
}


def _pin() -> int:
    return int(time.time()) // DAY * DAY  # today's midnight, as the demo pins it


def _patched(repo: Repo, tmp_path: Path, files: dict[str, str]) -> str:
    """The demo's live-clock patch as the base (green on host A, red on host B), `files` as
    the head's working tree; the base commit."""
    demo.build_base(repo.path, clock_unix=_pin(), temp_root=tmp_path / "pins-tmp")
    shutil.copy(demo.DATA / "patches" / "live-clock" / "invoice_lib.py", repo.path)
    base = repo.commit("base: the late fee follows the live clock")
    for name, text in files.items():
        repo.write(name, text.replace("{noon}", str(_pin() + DAY // 2)))
    repo.commit("head: the clock made quiet")
    return base


def _workflow(repo: Repo, base: str, tmp_path: Path) -> tuple[int, dict[str, Any]]:
    """The workflow's three commands, as its jobs run them."""
    folders = {host: tmp_path / "wf" / f"host-{host}" for host in "ab"}
    assert repo.cli("run", "--host", "a", "--out", str(folders["a"]), "--base-ref", base).code == 0
    ran_b = repo.cli(
        "run", "--host", "b", "--isolate", "--out", str(folders["b"]), "--base-ref", base
    )
    assert ran_b.code in (0, 1), ran_b.err[-2000:]  # 1: a property failed there
    out = tmp_path / "wf-verdict.json"
    args = ["--host-a", str(folders["a"]), "--host-b", str(folders["b"]), "--base-ref", base]
    code = repo.cli("verdict", *args, "--json", str(out)).code
    return code, json.loads(out.read_text(encoding="utf-8"))


def _gate(repo: Repo, base: str, tmp_path: Path) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "gate-verdict.json"
    result = repo.cli("gate", "--base-ref", base, "--json", str(out), "--out", str(tmp_path / "g"))
    return result.code, json.loads(out.read_text(encoding="utf-8"))


def _kinds(verdict: dict[str, Any]) -> list[tuple[str, str, int, bool]]:
    return sorted((f["kind"], f["path"], f["line"], f["introduced"]) for f in verdict["findings"])


def _outcomes(verdict: dict[str, Any]) -> list[tuple[str, str, str]]:
    return sorted((t["id"], t["host_a"], t["host_b"]) for t in verdict["tests"])


@pytest.mark.parametrize(
    ("files", "expected", "host_b"),
    [
        (CONSTANT, "entropy_silenced", "pass"),
        # host B's file times follow its clock (testproc/filetimes.py): the defect shows
        (MTIME, "env_coupled", "fail"),
    ],
    ids=["config-constant", "file-mtime"],
)
def test_the_workflows_jobs_reject_a_quieted_clock_as_the_gate_does(
    repo: Repo, tmp_path: Path, files: dict[str, str], expected: str, host_b: str
) -> None:
    base = _patched(repo, tmp_path, files)
    code, workflow = _workflow(repo, base, tmp_path)
    gate_code, gated = _gate(repo, base, tmp_path)
    assert (gate_code, gated["classification"]) == (1, expected), gated["reasons"]
    assert (code, workflow["classification"]) == (1, expected), workflow["reasons"]
    assert (workflow["host_a"], workflow["host_b"]) == ("pass", host_b)
    assert _kinds(workflow) == _kinds(gated)
    if host_b == "pass":  # judged by host B's base run: the read the patch removed
        assert ("live_read_removed", "invoice_lib.py", 14, True) in _kinds(workflow)
    assert _outcomes(workflow) == _outcomes(gated)
    # host B passed, yet its job ran the base, as the gate did: the evidence the verdict read
    assert (tmp_path / "wf" / "host-b" / "base" / "host.json").is_file()


def test_host_bs_base_run_the_gate_would_not_make_is_not_read(repo: Repo, tmp_path: Path) -> None:
    """The honest fix on the demo's base: host B's job runs the base (it cannot know host A's
    audit), yet the verdict reads it only where the gate would have run it, so both paths
    judge the same evidence."""
    demo.build_base(repo.path, clock_unix=_pin(), temp_root=tmp_path / "pins-tmp")
    base = repo.commit("base")
    shutil.copy(demo.DATA / "patches" / "honest-fix" / "invoice_lib.py", repo.path)
    repo.commit("head: the honest fix")
    code, workflow = _workflow(repo, base, tmp_path)
    gate_code, gated = _gate(repo, base, tmp_path)
    assert (code, workflow["classification"]) == (0, "merge_candidate")
    assert (gate_code, gated["classification"]) == (0, "merge_candidate")
    assert (tmp_path / "wf" / "host-b" / "base" / "host.json").is_file()
    assert not (tmp_path / "g" / "host-b" / "base").exists()
    assert workflow["tests"] == gated["tests"]
