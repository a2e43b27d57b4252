"""A host that ran a tree its commit does not hold (a step of its job rewrote a tracked file:
the project's install, a setup.py, a test) says so in host.json's `tree`, and the verdict,
judged from a checkout of that commit as the verdict job's is, is invalid; a host that ran
its commit as checked out is judged as usual."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import build_repo, commit_files, git_out, run_cli

pytestmark = pytest.mark.integration
MANIFEST = """\
version: 1
property_id: squares
module: tests/test_sq.py
pins:
  tz: UTC
  temp_root: {temp_root}
"""
PROPERTY = """\
from squares import square


def test_square():
    assert square(3) == 9
"""
DEFECT = "def square(n):\n    return n + n\n"
FIXED = "def square(n):\n    return n * n\n"


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The repository: the base, then the head whose `squares.py` has the defect."""
    root = tmp_path_factory.mktemp("tree-state")
    files = {
        "entropy.yaml": MANIFEST.format(temp_root=root / "pins-tmp"),
        "tests/test_sq.py": PROPERTY,
        "squares.py": FIXED,
        "pytest.ini": "[pytest]\npythonpath = .\n",
    }
    base = build_repo(root / "origin", files)
    commit_files(root / "origin", {"squares.py": DEFECT, "README.md": "squares\n"}, "head")
    return root / "origin", base


def clone(origin: Path, target: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(origin), str(target)], check=True)
    return target


def hosts(checkout: Path, base: str) -> None:
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        ran = run_cli(checkout, "run", "--host", host, "--out", f"../host-{host}", "--base-ref",
                      base, "--timeout", "120", *extra)  # fmt: skip
        assert ran.returncode in (0, 1), ran.stderr


def verdict(checkout: Path, base: str) -> tuple[int, dict[str, Any]]:
    done = run_cli(checkout, "verdict", "--host-a", "../host-a", "--host-b", "../host-b",
                   "--base-ref", base, "--json", "../verdict.json")  # fmt: skip
    return done.returncode, json.loads((checkout.parent / "verdict.json").read_text())


def test_a_host_whose_tree_was_rewritten_after_the_checkout_makes_the_verdict_invalid(
    origin: tuple[Path, str], tmp_path: Path
) -> None:
    """What issue 34's setup.py did: the defect undone in the working tree only, before the
    run. Both hosts pass; the host.json names the head; the verdict job's own checkout of
    the head tells the truth."""
    repo, base = origin
    checkout = clone(repo, tmp_path / "hosts")
    (checkout / "squares.py").write_text(FIXED, encoding="utf-8")
    hosts(checkout, base)
    recorded = json.loads((tmp_path / "host-a" / "host.json").read_text())
    assert recorded["commit"] == git_out(checkout, "rev-parse", "HEAD")
    assert recorded["tree"]["changed"] == ["squares.py"]
    assert recorded["tree"]["changed_count"] == 1
    code, judged = verdict(clone(repo, tmp_path / "verdict"), base)
    assert code == 2
    assert judged["classification"] == "invalid"
    head = git_out(checkout, "rev-parse", "HEAD")[:12]
    expected = (
        f"host A: its working tree differed from commit {head} at the end of its run in 1 "
        "tracked file (squares.py): it did not run the commit it names"
    )
    assert any(expected in str(r) for r in judged["reasons"]), judged["reasons"]


def test_hosts_that_ran_the_commit_as_checked_out_are_judged_as_usual(
    origin: tuple[Path, str], tmp_path: Path
) -> None:
    repo, base = origin
    checkout = clone(repo, tmp_path / "hosts")
    hosts(checkout, base)
    recorded = json.loads((tmp_path / "host-b" / "host.json").read_text())
    assert recorded["tree"]["changed"] == []
    code, judged = verdict(clone(repo, tmp_path / "verdict"), base)
    assert (code, judged["classification"]) == (1, "real_defect"), judged["reasons"]
    assert not any("working tree" in str(r) for r in judged["reasons"])
