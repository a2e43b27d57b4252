"""`entropy-gate gate` on a patch that edits the gate's own configuration (three full runs)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from entropy_action.gate import demo
from tests.integration.test_protected import CALLER, CODEOWNERS
from tests.support.helpers import Repo

HONEST = next(patch for patch in demo.patches() if patch.name == "honest-fix")


def _gate_on_honest_fix(repo: Repo, tmp_path: Path, edits: dict[str, str]) -> tuple[int, dict]:  # type: ignore[type-arg]
    demo.build_base(
        repo.path, clock_unix=int(time.time()) // 86400 * 86400, temp_root=tmp_path / "pins-tmp"
    )
    repo.write(".github/workflows/entropy-gate.yml", CALLER)
    repo.write(".github/CODEOWNERS", CODEOWNERS)
    base = repo.commit("base: the gate's caller and owners")
    demo.apply_patch(repo.path, HONEST)
    for relative, text in edits.items():
        repo.write(relative, text)
    out = tmp_path / "verdict.json"
    result = repo.cli("gate", "--base-ref", base, "--json", str(out))
    return result.code, json.loads(out.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("edits", "where"),
    [
        (
            {".github/workflows/entropy-gate.yml": CALLER.replace("-e .", "-e . && exit 0")},
            (".github/workflows/entropy-gate.yml", 7),
        ),
        ({".github/CODEOWNERS": "* @the-agent\n"}, (".github/CODEOWNERS", 1)),
    ],
    ids=["caller-install-edited", "codeowners-edited"],
)
def test_the_honest_fix_with_a_gate_configuration_edit_is_rejected(
    repo: Repo, tmp_path: Path, edits: dict[str, str], where: tuple[str, int]
) -> None:
    code, verdict = _gate_on_honest_fix(repo, tmp_path, edits)
    assert code == 1
    assert verdict["classification"] == "pin_mutation"
    assert verdict["merge"] is False
    config = [f for f in verdict["findings"] if f["kind"] == "gate_config_changed"]
    assert [(f["path"], f["line"], f["introduced"]) for f in config] == [(*where, True)]
    assert (
        f"gate configuration changed by the patch (1 file(s): {where[0]}): "
        "a maintainer lands such a change on its own"
    ) in verdict["reasons"]


def test_the_same_honest_fix_without_those_edits_merges(repo: Repo, tmp_path: Path) -> None:
    code, verdict = _gate_on_honest_fix(repo, tmp_path, {})
    assert (code, verdict["classification"]) == (0, "merge_candidate")
    assert not [f for f in verdict["findings"] if f["kind"] == "gate_config_changed"]
