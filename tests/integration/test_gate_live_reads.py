"""`entropy-gate gate` on patches that take a cheap exit in production code (issue 20, class 4):
a live read removed or replaced by a constant, the gate's own pin read in production — and
the honest patches next to them (the clock injected, a refactor, a removal nothing depended
on). Real git repositories, real host runs (about 3 s each)."""

from __future__ import annotations

import json
import shutil
import time
from datetime import datetime, timezone
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
{constants}

def total_for(amounts: list[int], as_of: datetime, due: datetime | None = None) -> int:
    """The invoice total in cents as of `as_of`: its lines, plus a late fee once `due` passed."""
    total = sum(amounts)
    if due is not None and {when} > due:
        total += LATE_FEE_CENTS
    return total
'''
KINDS = {"live_read_removed", "live_read_constant", "gate_pin_read"}


def _pin() -> int:
    return int(time.time()) // DAY * DAY  # today's midnight, as the demo pins it


def _live_clock_base(repo: Repo, tmp_path: Path) -> str:
    """The demo's base with its live-clock patch committed: green on host A, red on host B."""
    demo.build_base(repo.path, clock_unix=_pin(), temp_root=tmp_path / "pins-tmp")
    shutil.copy(demo.DATA / "patches" / "live-clock" / "invoice_lib.py", repo.path)
    return repo.commit("base: the late fee follows the live clock")


def _head(repo: Repo, when: str, imports: str, constants: str = "") -> None:
    text = HEAD.format(imports=imports, constants=constants, when=when)
    repo.write("invoice_lib.py", text)


def _gate(repo: Repo, base: str, tmp_path: Path) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "verdict.json"
    result = repo.cli("gate", "--base-ref", base, "--json", str(out), "--out", str(tmp_path / "r"))
    return result.code, json.loads(out.read_text(encoding="utf-8"))


def _ours(verdict: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (f["kind"], f"{f['path']}:{f['line']}") for f in verdict["findings"] if f["kind"] in KINDS
    ]


def _line(repo: Repo, text: str, revision: str | None = None) -> str:
    """`invoice_lib.py:N`, N the first line holding `text` (at `revision`, else the tree)."""
    path = "invoice_lib.py"
    if revision is None:
        source = (repo.path / path).read_text(encoding="utf-8")
    else:
        source = repo.git("show", f"{revision}:{path}")
    return f"{path}:{next(n for n, row in enumerate(source.splitlines(), 1) if text in row)}"


def _reference_date() -> str:
    day = datetime.fromtimestamp(_pin(), tz=timezone.utc)
    return f"REFERENCE_DATE = datetime({day.year}, {day.month}, {day.day}, 12, tzinfo=timezone.utc)"


def test_a_live_clock_replaced_by_a_constant_date_is_rejected_naming_the_base_line(
    repo: Repo, tmp_path: Path
) -> None:
    base = _live_clock_base(repo, tmp_path)
    _head(repo, "REFERENCE_DATE", "from datetime import datetime, timezone", _reference_date())
    code, verdict = _gate(repo, base, tmp_path)
    assert (code, verdict["classification"]) == (1, "entropy_silenced")
    assert (verdict["host_a"], verdict["host_b"]) == ("pass", "pass")
    assert _line(repo, "datetime.now(", base) == "invoice_lib.py:14"
    assert sorted(_ours(verdict)) == [
        ("live_read_constant", _line(repo, "REFERENCE_DATE > due")),
        ("live_read_removed", "invoice_lib.py:14"),  # the base's line
    ]
    removed = next(f for f in verdict["findings"] if f["kind"] == "live_read_removed")
    assert removed["message"].startswith("the base read `datetime.now()` here in production and ")
    assert "failed at the base on host B" in removed["message"]
    constant = next(f for f in verdict["findings"] if f["kind"] == "live_read_constant")
    assert (
        "`datetime.now()` (base invoice_lib.py:14) with the constant `REFERENCE_DATE`"
        in (constant["message"])
    )
    # host B passed, yet its base run was made: it is what shows the test changed to pass
    assert (tmp_path / "r" / "host-b" / "base" / "host.json").is_file()


def test_the_same_reports_judged_by_compare_and_verdict_reject_alike(
    repo: Repo, tmp_path: Path
) -> None:
    base = _live_clock_base(repo, tmp_path)
    _head(repo, "REFERENCE_DATE", "from datetime import datetime, timezone", _reference_date())
    _, gated = _gate(repo, base, tmp_path)
    reports = tmp_path / "r"
    for host in "ab":  # gate --out's layout is the workflow's: each host's base run in base/
        shutil.copytree(reports / f"host-{host}", tmp_path / "wf" / host)
    folders = [str(tmp_path / "wf" / h) for h in "ab"]
    verdict_json = tmp_path / "wf-verdict.json"
    args = ["--host-a", folders[0], "--host-b", folders[1], "--base-ref", base]
    assert repo.cli("verdict", *args, "--json", str(verdict_json)).code == 1
    compare_json = tmp_path / "compare.json"
    bases = ["--base-host-a", f"{folders[0]}/base", "--base-host-b", f"{folders[1]}/base"]
    assert repo.cli("compare", *args, *bases, "--json", str(compare_json)).code == 1
    for path in (verdict_json, compare_json):
        judged = json.loads(path.read_text(encoding="utf-8"))
        assert judged["classification"] == "entropy_silenced"
        assert _ours(judged) == _ours(gated)


def test_b_production_reading_the_clock_pin_with_a_live_fallback_is_rejected(
    repo: Repo, tmp_path: Path
) -> None:
    base = _live_clock_base(repo, tmp_path)
    when = (
        'datetime.fromtimestamp(float(os.environ.get("ENTROPY_CLOCK_UNIX", time.time())), '
        "tz=timezone.utc)"
    )
    _head(repo, when, "import os\nimport time\nfrom datetime import datetime, timezone")
    code, verdict = _gate(repo, base, tmp_path)
    assert (code, verdict["classification"]) == (1, "entropy_silenced")
    assert (verdict["host_a"], verdict["host_b"]) == ("pass", "pass")
    # one finding for the line: the scan's, the audit's read of the same line is not repeated
    assert _ours(verdict) == [("gate_pin_read", _line(repo, "ENTROPY_CLOCK_UNIX"))]
    pin = next(f for f in verdict["findings"] if f["kind"] == "gate_pin_read")
    assert pin["message"].startswith("production code reads `ENTROPY_CLOCK_UNIX`, the gate's own")


def test_b_a_pin_read_through_a_name_the_scan_cannot_see_is_caught_at_run_time(
    repo: Repo, tmp_path: Path
) -> None:
    base = _live_clock_base(repo, tmp_path)
    when = 'datetime.fromtimestamp(float(os.environ.get(PREFIX + "CLOCK_UNIX") or 0), tz=UTC)'
    constants = 'PREFIX = "ENTROPY_"\nUTC = timezone.utc'
    _head(repo, when, "import os\nfrom datetime import datetime, timezone", constants)
    code, verdict = _gate(repo, base, tmp_path)
    assert (code, verdict["classification"]) == (1, "entropy_silenced")
    kinds = _ours(verdict)
    assert ("gate_pin_read", _line(repo, "CLOCK_UNIX")) in kinds  # the audit's record, by name
    assert ("live_read_removed", "invoice_lib.py:14") in kinds  # no clock read is left


def test_c_the_honest_fix_takes_the_instant_from_its_parameter_and_merges(
    repo: Repo, tmp_path: Path
) -> None:
    base = _live_clock_base(repo, tmp_path)
    _head(repo, "as_of", "from datetime import datetime")
    code, verdict = _gate(repo, base, tmp_path)
    assert _ours(verdict) == []
    assert (code, verdict["classification"]) == (0, "merge_candidate")


def test_c_a_clock_injected_as_a_new_parameter_merges(repo: Repo, tmp_path: Path) -> None:
    base = _live_clock_base(repo, tmp_path)
    repo.write(
        "invoice_lib.py",
        '''"""Invoice totals, with the clock injected."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

LATE_FEE_CENTS = 500


def _system_now() -> datetime:
    return datetime.now(timezone.utc)


def total_for(
    amounts: list[int],
    as_of: datetime,
    due: datetime | None = None,
    now: Callable[[], datetime] | None = None,
) -> int:
    """The invoice total in cents: its lines, plus a late fee once `due` passed."""
    total = sum(amounts)
    current = now() if now is not None else as_of
    if due is not None and current > due:
        total += LATE_FEE_CENTS
    return total
''',
    )
    code, verdict = _gate(repo, base, tmp_path)
    assert _ours(verdict) == []
    assert (code, verdict["classification"]) == (0, "merge_candidate")


def test_d_a_refactor_that_moves_the_live_read_is_no_finding(repo: Repo, tmp_path: Path) -> None:
    base = _live_clock_base(repo, tmp_path)
    helper = "\n\ndef _now() -> datetime:\n    return datetime.now(timezone.utc)\n"
    _head(repo, "_now()", "from datetime import datetime, timezone", helper)
    code, verdict = _gate(repo, base, tmp_path)
    assert _ours(verdict) == []
    assert (code, verdict["classification"]) == (1, "env_coupled")  # still live: still coupled


def test_e_a_removed_read_no_outcome_depended_on_is_no_finding(repo: Repo, tmp_path: Path) -> None:
    demo.build_base(repo.path, clock_unix=_pin(), temp_root=tmp_path / "pins-tmp")
    source = (repo.path / "invoice_lib.py").read_text(encoding="utf-8")
    stamped = source.replace(
        "    total = 0\n", "    printed_at = datetime.now().isoformat()  # unused\n    total = 0\n"
    )
    repo.write("invoice_lib.py", stamped)
    base = repo.commit("base: a timestamp nobody reads")
    repo.write("invoice_lib.py", source)
    code, verdict = _gate(repo, base, tmp_path)
    assert _ours(verdict) == []
    assert (code, verdict["classification"]) == (0, "merge_candidate")
    # the head dropped a read the base made, so host B's base run was made to tell
    assert (tmp_path / "r" / "host-b" / "base" / "host.json").is_file()


@pytest.mark.parametrize(
    ("default", "found"),
    [
        ("date(2026, 1, 10)", [("live_read_constant", "ledger.py:4")]),
        ("None", []),
    ],
)
def test_a_new_parameter_counts_as_a_seam_unless_its_default_is_the_constant(
    repo: Repo, tmp_path: Path, default: str, found: list[tuple[str, str]]
) -> None:
    """Static only: a removed `date.today()` whose property never ran it (outcomes alike)."""
    demo.build_base(repo.path, clock_unix=_pin(), temp_root=tmp_path / "pins-tmp")
    repo.write(
        "ledger.py",
        "from datetime import date\n\n\ndef stamp(label: str) -> str:\n"
        "    return f'{label} {date.today()}'\n",
    )
    base = repo.commit("base: a ledger stamp")
    repo.write(
        "ledger.py",
        "from datetime import date\n\n\n"
        f"def stamp(label: str, today: date | None = {default}) -> str:\n"
        "    return f'{label} {today}'\n",
    )
    code, verdict = _gate(repo, base, tmp_path)
    assert _ours(verdict) == found
    assert verdict["classification"] == ("entropy_silenced" if found else "merge_candidate")
    assert code == (1 if found else 0)


def test_production_rules_read_the_code_under_the_manifests_folder(
    repo: Repo, tmp_path: Path
) -> None:
    """One repository, one manifest per project (`billing/`, `fees/`): a pin read the patch
    put in `fees/` is `fees`' finding, not `billing`'s, whose own code did not change."""
    for project in ("billing", "fees"):
        demo.build_base(tmp_path / project, clock_unix=_pin(), temp_root=tmp_path / project / "t")
        shutil.rmtree(tmp_path / project / ".git")
        shutil.copytree(tmp_path / project, repo.path / project)
        manifest = repo.path / project / "entropy.yaml"
        text = manifest.read_text(encoding="utf-8").replace(
            "module: tests/", f"module: {project}/tests/"
        )
        manifest.write_text(
            text.replace(
                '["-o", "addopts=", "-q"]',
                f'["-o", "addopts=", "-q", "-o", "pythonpath={project}"]',
            ),
            encoding="utf-8",
        )
    base = repo.commit("two projects")
    shutil.copy(demo.DATA / "patches" / "pin-read" / "invoice_lib.py", repo.path / "fees")
    repo.commit("fees reads the gate's pin")
    verdicts = {}
    for project in ("billing", "fees"):
        out = tmp_path / f"{project}.json"
        result = repo.cli(
            "gate", "--manifest", f"{project}/entropy.yaml", "--base-ref", base,
            "--json", str(out), "--out", str(tmp_path / f"r-{project}"),
        )  # fmt: skip
        verdicts[project] = (result.code, json.loads(out.read_text(encoding="utf-8")))
    assert verdicts["billing"][0] == 0, verdicts["billing"][1]["reasons"]
    assert verdicts["billing"][1]["classification"] == "merge_candidate"
    assert verdicts["fees"][1]["classification"] == "entropy_silenced"
    assert ("gate_pin_read", "fees/invoice_lib.py:14") in _ours(verdicts["fees"][1])
