"""`entropy-gate backtest`: a repository's own history replayed as pull requests, on real git
history in temp dirs, each commit through the whole gate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.helpers import Repo

PROPERTY = """\
from fees import late_fee


def test_no_fee_before_the_due_day():
    assert late_fee(0) == 0


def test_fee_after_the_due_day():
    assert late_fee(3) == 30
"""
FEES = "def late_fee(days):\n    return 10 * days if days > 0 else 0\n"


def _manifest(temp_root: Path) -> str:
    return (
        "version: 1\nproperty_id: fees\nmodule: tests/test_fees.py\n"
        f"pins:\n  clock_unix: 1768003200\n  rng_seed: 9173\n  tz: UTC\n  temp_root: {temp_root}\n"
    )


def _history(repo: Repo, tmp_path: Path, *, manifest: bool = True) -> list[str]:
    """A base and three commits a maintainer merged: docs, an honest refactor, a skip."""
    repo.write("fees.py", FEES)
    repo.write("tests/test_fees.py", PROPERTY)
    repo.write("README.md", "# fees\n")
    if manifest:
        repo.write("entropy.yaml", _manifest(tmp_path / "pins"))
    shas = [repo.commit("fees and their property")]
    repo.write("README.md", "# fees\n\nLate fees, in cents.\n")
    shas.append(repo.commit("docs: say the unit"))
    repo.write("fees.py", "def late_fee(days):\n    return 0 if days <= 0 else days * 10\n")
    shas.append(repo.commit("fees: read the guard first"))
    repo.write(
        "tests/test_fees.py",
        PROPERTY.replace(
            "def test_fee_after",
            "import pytest\n\n\n@pytest.mark.skip(reason='flaky')\ndef test_fee_after",
        ),
    )
    shas.append(repo.commit("tests: skip the flaky one"))
    return shas


def _state(repo: Repo) -> tuple[str, ...]:
    """What a backtest must leave as it was in the user's checkout."""
    return (
        repo.git("rev-parse", "HEAD"),
        repo.git("status", "--porcelain", "--untracked-files=all"),
        repo.git("branch", "--list"),
        repo.git("worktree", "list", "--porcelain"),
        repo.git("stash", "list"),
    )


def test_the_last_commits_are_judged_each_against_its_parent(repo: Repo, tmp_path: Path) -> None:
    shas = _history(repo, tmp_path)
    (repo.path / "README.md").write_text("# a change the user has not committed\n")
    before = _state(repo)
    report = tmp_path / "backtest.json"
    result = repo.cli("backtest", "--last", "3", "--json", str(report))
    assert _state(repo) == before  # the checkout, dirty as it is, is left alone
    assert (repo.path / "README.md").read_text() == "# a change the user has not committed\n"
    lines = result.out.splitlines()
    assert lines[0].split() == [
        "commit",
        "subject",
        "classification",
        "seconds",
        "deciding",
        "finding",
    ]
    assert [line[:12] for line in lines[1:4]] == [sha[:12] for sha in shas[1:]]
    assert "docs: say the unit" in lines[1]
    assert " merge_candidate " in lines[1]
    assert "fees: read the guard first" in lines[2]
    assert " merge_candidate " in lines[2]
    assert " entropy_silenced " in lines[3]
    assert "skip_marker tests/test_fees.py:" in lines[3]
    assert "(test_fee_after_the_due_day)" in lines[3]
    assert lines[4] == "3 commits: 2 merge_candidate, 1 entropy_silenced"
    assert result.code == 1  # one would have been rejected
    progress = [line for line in result.err.splitlines() if line.startswith("backtest: [")]
    assert progress[0] == f"backtest: [1/3] {shas[1][:12]} docs: say the unit: judging…"
    assert progress[-1].startswith(f"backtest: [3/3] {shas[3][:12]}: entropy_silenced (")
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["summary"]["line"] == lines[4]
    assert data["summary"]["counts"] == {"merge_candidate": 2, "entropy_silenced": 1}
    rows = data["commits"]
    assert [r["commit"] for r in rows] == shas[1:]
    assert [r["parent"] for r in rows] == shas[:-1]
    assert [r["manifest"] for r in rows] == ["parent"] * 3
    assert rows[2]["verdict"]["classification"] == "entropy_silenced"
    assert rows[2]["deciding"].startswith("skip_marker tests/test_fees.py:")
    assert all(r["error"] is None and r["seconds"] > 0 for r in rows)


def test_a_range_without_a_manifest_is_judged_against_inits_draft_on_a_fresh_machine(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shas = _history(repo, tmp_path, manifest=False)
    for name in (
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
    ):
        monkeypatch.delenv(name, raising=False)  # a fresh machine: no git identity at all
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    report = tmp_path / "first.json"
    first = repo.cli(
        "backtest",
        f"{shas[1]}..{shas[3]}",
        "--module",
        "tests/test_fees.py",
        "--json",
        str(report),
        "--verbose",
    )
    rows = json.loads(report.read_text(encoding="utf-8"))["commits"]
    assert [r["commit"] for r in rows] == shas[2:]
    assert [r["manifest"] for r in rows] == ["draft", "draft"]
    assert [r["classification"] for r in rows] == ["merge_candidate", "entropy_silenced"], first.err
    assert "drafting entropy.yaml for tests/test_fees.py at the parent" in first.err
    # the same range again makes the same base commits, so every base run is reused
    second = repo.cli(
        "backtest", f"{shas[1]}..{shas[3]}", "--module", "tests/test_fees.py", "--verbose"
    )
    assert second.out.splitlines()[-1] == "2 commits: 1 merge_candidate, 1 entropy_silenced"
    assert "base run on host A: reused from the cache" in second.err
    assert repo.git("worktree", "list").count("\n") == 0  # only the checkout itself


def test_a_commit_that_cannot_be_set_up_is_its_row_and_the_run_goes_on(
    repo: Repo, tmp_path: Path
) -> None:
    shas = _history(repo, tmp_path)
    result = repo.cli("backtest", "--last", "4")  # the first is the root commit: no parent
    lines = result.out.splitlines()
    assert lines[1].startswith(shas[0][:12])
    assert " error " in lines[1]
    assert "a root commit: no parent to judge it against" in lines[1]
    assert lines[-1] == "4 commits: 2 merge_candidate, 1 entropy_silenced, 1 error"
    assert result.code == 1


def test_a_parent_without_the_manifest_and_no_module_is_that_commits_error(
    repo: Repo, tmp_path: Path
) -> None:
    shas = _history(repo, tmp_path, manifest=False)
    repo.write("entropy.yaml", _manifest(tmp_path / "pins"))
    shas.append(repo.commit("entropy-gate: pin the property module"))
    repo.write("README.md", "# fees\n\nOne more line.\n")
    shas.append(repo.commit("docs"))
    # the checkout's manifest lists properties: it names no one module to draft for
    repo.write(
        "entropy.yaml",
        "version: 1\nproperties:\n  - property_id: fees\n    module: tests/test_fees.py\n",
    )
    result = repo.cli("backtest", "--last", "3")
    lines = result.out.splitlines()
    assert lines[1].startswith(shas[3][:12])  # no manifest at its parent nor at itself
    assert " error " in lines[1]
    assert "no entropy.yaml at the parent" in lines[1]
    assert "--module" in lines[1]
    assert " merge_candidate " in lines[2]  # the commit that adds it: no baseline
    assert " merge_candidate " in lines[3]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope..HEAD"], "backtest: 'nope..HEAD': 'nope' is not a commit in this clone"),
        (["HEAD~1"], "backtest: 'HEAD~1' is not a range; give OLD..NEW (or --last N)"),
        (["HEAD..HEAD~1"], "backtest: 'HEAD..HEAD~1' holds no commits (is the older one first?)"),
        (
            ["--last", "2", "--module", "tests/test_nope.py"],
            "--module tests/test_nope.py: no such file at {head} (the newest commit judged) nor "
            "at a parent of one; name the module by its path from the repository root",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    repo: Repo, tmp_path: Path, args: list[str], message: str
) -> None:
    shas = _history(repo, tmp_path)
    before = _state(repo)
    result = repo.cli("backtest", *args)
    assert result.code == 2
    assert result.err.strip() == message.format(head=shas[-1][:12])
    assert result.out == ""
    assert _state(repo) == before


def test_a_commit_that_moves_the_module_is_judged_at_its_parent(repo: Repo, tmp_path: Path) -> None:
    """tzlocal d3447f671e58 ("Move tests"): the newest commit lacks the module its parent
    has; the commit is judged (invalid, saying why), not refused as a mistyped --module."""
    _history(repo, tmp_path, manifest=False)
    repo.git("mv", "tests", "checks")
    repo.commit("move the tests")
    report = tmp_path / "backtest.json"
    result = repo.cli(
        "backtest", "--last", "1", "--module", "tests/test_fees.py", "--json", str(report)
    )
    assert result.code == 1, result.err  # a commit that is not a merge candidate
    (row,) = json.loads(report.read_text(encoding="utf-8"))["commits"]
    assert row["classification"] == "invalid"
    assert row["deciding"].startswith(
        "host A: tests/test_fees.py: the property module is not in the tree this host runs"
    ), row["deciding"]


def test_no_manifest_anywhere_and_no_module_is_exit_2(repo: Repo, tmp_path: Path) -> None:
    _history(repo, tmp_path, manifest=False)
    result = repo.cli("backtest", "--last", "2")
    assert result.code == 2
    assert result.err.strip() == (
        "entropy.yaml: at none of the parents of the commits judged; give --module PATH to "
        "judge each against init's draft for that module"
    )


def test_right_after_adoption_the_checkouts_module_is_drafted_at_each_parent(
    repo: Repo, tmp_path: Path
) -> None:
    """The README's line as a maintainer types it the day they adopt: no parent has the
    manifest yet, so each is judged against init's draft for the module the checkout's own
    entropy.yaml names, as `--module` would (it used to exit 2)."""
    shas = _history(repo, tmp_path, manifest=False)
    repo.write("entropy.yaml", _manifest(tmp_path / "pins"))
    shas.append(repo.commit("adopt entropy-gate"))
    report = tmp_path / "adopted.json"
    done = repo.cli("backtest", "--last", "3", "--json", str(report))
    assert done.code == 1, done.err
    assert (
        "backtest: a parent without entropy.yaml is judged against init's draft for "
        "tests/test_fees.py, the module this checkout's entropy.yaml names\n"
    ) in done.err
    document = json.loads(report.read_text(encoding="utf-8"))
    assert document["module"] == "tests/test_fees.py"
    rows = document["commits"]
    assert [r["commit"] for r in rows] == shas[2:]
    # the adoption commit itself is judged as `gate` judges the PR that adds the manifest:
    # no baseline (a draft at its parent, its clock the parent's day, would differ from the
    # pins it adds: a pin_mutation that `gate` never says)
    assert [r["manifest"] for r in rows] == ["draft", "draft", "added"]
    assert [r["classification"] for r in rows] == [
        "merge_candidate",
        "entropy_silenced",
        "merge_candidate",
    ]
    # a manifest that lists properties names no one module: the old one-line refusal stands
    repo.write(
        "entropy.yaml",
        "version: 1\nproperties:\n  - property_id: fees\n    module: tests/test_fees.py\n",
    )
    listed = repo.cli("backtest", "HEAD~3..HEAD~1")
    assert listed.code == 2
    assert listed.err.strip().startswith("entropy.yaml: at none of the parents")


def test_last_and_a_range_together_are_a_usage_error(repo: Repo, tmp_path: Path) -> None:
    _history(repo, tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "entropy_action", "backtest", "HEAD~2..HEAD", "--last", "2"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "not allowed with argument" in done.stderr
