"""The page a PR author sees, locally (#36): `gate --summary FILE` and `--format json`, and
`gate --out` in the layout `verdict` reads, whose `--summary` outside Actions writes the same
page and whose JSON carries the same findings and next steps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.test_verdict_command import BASE as SQUARES
from tests.integration.test_verdict_command import MANIFEST, SKIP_TWO
from tests.support.helpers import Repo

pytestmark = pytest.mark.integration


def _page(path: Path) -> str:
    """The page less its inputs digest (the folders it digests moved into place after)."""
    text = path.read_text(encoding="utf-8")
    assert text.rstrip().splitlines()[-1].startswith("Inputs digest `")
    return "\n".join(text.rstrip().splitlines()[:-1])


def test_the_gate_writes_the_page_and_the_folders_verdict_reads(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("tests/test_sq.py", SQUARES)
    base = repo.commit("base")
    repo.write("tests/test_sq.py", SKIP_TWO)
    repo.commit("skip one")
    out, page = tmp_path / "reports", tmp_path / "page.md"
    gated = repo.cli(
        "gate", "--base-ref", base, "--out", str(out), "--summary", str(page), "--format", "json"
    )
    assert gated.code == 1, gated.err
    verdict = json.loads(gated.out)  # stdout is the verdict JSON, nothing else
    assert verdict["classification"] == "entropy_silenced"
    [step, *_] = verdict["next_steps"]
    assert step["where"].startswith("tests/test_sq.py:")
    assert step["what"].startswith("remove the skip")
    assert all(f["remediation"]["where"] == f"{f['path']}:{f['line']}" for f in verdict["findings"])
    folders = {p.name for p in out.iterdir()}
    assert {"host-a", "host-b"} <= folders
    assert not folders & {"base-a", "base-b", "properties"}  # moved where verdict reads them
    assert (out / "host-a" / "base" / "host.json").is_file()
    text = page.read_text(encoding="utf-8")
    assert text.startswith("## ❌ entropy-gate: `entropy_silenced` (do not merge)\n")
    assert text.index("### What to do") < text.index("| host A |")

    again = tmp_path / "again.md"
    judged = repo.cli(
        "verdict",
        *("--host-a", str(out / "host-a"), "--host-b", str(out / "host-b")),
        *("--base-ref", base, "--json", str(tmp_path / "v.json"), "--summary", str(again)),
    )
    assert judged.code == 1, judged.err
    # the clock test host B fails (as at the base) is attributed whatever decided (#35 part 5)
    assert judged.out.startswith(
        "entropy-gate verdict: entropy_silenced (do not merge)\n"
        "  the failure follows: clock\nwhat to do:\n"
    )
    assert _page(again) == _page(page)
    second = json.loads((tmp_path / "v.json").read_text(encoding="utf-8"))
    assert second["findings"] == verdict["findings"]
    assert second["next_steps"] == verdict["next_steps"]


def test_an_unwritable_summary_is_one_line_naming_the_flag(repo: Repo, tmp_path: Path) -> None:
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("tests/test_sq.py", SQUARES)
    base = repo.commit("base")
    where = tmp_path / "no-such-dir" / "page.md"
    gated = repo.cli("gate", "--base-ref", base, "--no-base-run", "--summary", str(where))
    assert gated.code == 2
    assert f"--summary {where}: cannot write: No such file or directory" in gated.err
