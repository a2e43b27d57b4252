"""The tests of tests/unit/test_action_contract.py that start a process (pytest runs, git)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.helpers import Repo


def test_validate_sets_the_property_id_output(seed_repo: Repo, tmp_path: Path) -> None:
    output = tmp_path / "output"
    seed_repo.monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    result = seed_repo.cli("validate", "--github-output")
    assert result.code == 0, result.err
    assert re.fullmatch(r"property-id<<(\S+)\ninvoice_total_idempotent\n\1\n", output.read_text())


def test_validate_github_output_outside_a_workflow_is_a_usage_error(seed_repo: Repo) -> None:
    seed_repo.monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    result = seed_repo.cli("validate", "--github-output")
    assert result.code == 2
    expected = "--github-output: $GITHUB_OUTPUT is not set (not in a workflow step?)\n"
    assert result.err.endswith(expected)
