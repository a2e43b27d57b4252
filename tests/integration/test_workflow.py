"""The tests of tests/unit/test_workflow.py that start a process (pytest runs, git)."""

from __future__ import annotations

import re

from tests.integration.test_run_host_a import MODULE, manifest_yaml
from tests.support.helpers import Repo


def test_run_fences_the_echoed_pytest_log_in_github_actions(repo: Repo):
    repo.write("entropy.yaml", manifest_yaml(None))
    repo.write(
        MODULE,
        """\
        def test_ok():
            print("::error file=x.py,line=1::forged by a test")
            assert False
        """,
    )
    repo.commit()
    repo.monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = repo.cli("run", "--host", "a", "--out", "out")
    lines = result.out.splitlines()
    start = re.fullmatch(r"::stop-commands::([0-9a-f]{32})", lines[0])
    assert start is not None, lines[:3]
    assert lines[-1] == f"::{start.group(1)}::"
    assert any("forged by a test" in line for line in lines[1:-1])


def test_run_does_not_fence_outside_github_actions(repo: Repo):
    repo.write("entropy.yaml", manifest_yaml(None))
    repo.write(MODULE, "def test_ok():\n    pass\n")
    repo.commit()
    repo.monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    result = repo.cli("run", "--host", "a", "--out", "out")
    assert "::stop-commands::" not in result.out
