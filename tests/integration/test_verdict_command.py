"""`entropy-gate verdict` (the workflow's last job) and `entropy-gate run --base-ref`."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from entropy_action.evidence import inputs
from entropy_action.gate.judge import NO_BASE
from tests.support.github_api import GitHubAPI
from tests.support.helpers import Repo, build_repo, commit_files, copy_world, run_cli

MANIFEST = """\
version: 1
property_id: squares
module: tests/test_sq.py
pins:
  tz: UTC
  temp_root: {temp_root}
"""

BASE = """\
import time

import pytest


def test_clock_is_this_decade():
    assert time.localtime().tm_year < 2030


@pytest.mark.parametrize("n", [1, 2, 3])
def test_square(n):
    assert n * n >= n
"""
SKIP_TWO = BASE.replace(
    "    assert n * n", "    if n == 2:\n        pytest.skip('slow')\n    assert n * n"
)


@pytest.fixture
def squares(repo: Repo, tmp_path: Path) -> tuple[Repo, str]:
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("tests/test_sq.py", BASE)
    return repo, repo.commit("base")


def _hosts(repo: Repo, base: str, label: str) -> None:
    """Both hosts with their base runs, as the two matrix jobs of the workflow do."""
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        out = f"../{label}-{host}"
        result = repo.cli("run", "--host", host, "--out", out, "--base-ref", base, *extra)
        assert result.code in (0, 1), result.err


def squares_repo(root: Path, head: str | None) -> str:
    """The squares repository at `root/repo`: the base commit (its sha returned) and, when
    given, `head` as the property module of a second commit (helpers.build_repo)."""
    path = root / "repo"
    files = {"entropy.yaml": MANIFEST.format(temp_root=root / "pins-tmp"), "tests/test_sq.py": BASE}
    base = build_repo(path, files)
    if head is not None:
        commit_files(path, {"tests/test_sq.py": head}, "head")
    return base


def host_jobs(repo: Path, base: str, label: str, *extra_a: str) -> None:
    """`run` as the workflow's two host jobs call it, in a subprocess, into `../LABEL-a|b`."""
    for host, extra in (("a", extra_a), ("b", ("--isolate",))):
        ran = run_cli(
            repo, "run", "--host", host, "--out", f"../{label}-{host}", "--base-ref", base, *extra
        )
        assert ran.returncode in (0, 1), ran.stderr


def _world(root: Path, head: str | None) -> None:
    """The repository whose two host jobs ran into `root/head-a` and `root/head-b`: built
    once per module, since the runs are the slow part and the tests read (copies of) them."""
    host_jobs(root / "repo", squares_repo(root, head), "head")


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    built = {"base": tmp_path_factory.mktemp("base"), "skip": tmp_path_factory.mktemp("skip")}
    _world(built["base"], None)
    _world(built["skip"], SKIP_TWO)
    return built


Copy = Callable[[str], tuple[Repo, str]]


@pytest.fixture
def world(
    worlds: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> Copy:
    """A module world copied into this test's own folder: its reports are the test's."""

    def copy(name: str) -> tuple[Repo, str]:
        copied = copy_world(worlds[name], tmp_path, capsys, monkeypatch)
        return copied, copied.git("rev-list", "--max-parents=0", "HEAD")

    return copy


@pytest.fixture
def ran(world: Copy) -> tuple[Repo, str]:
    """The base commit, its two host jobs run with their base runs (`../head-a`, `../head-b`)."""
    return world("base")


@pytest.fixture
def ran_skip(world: Copy) -> tuple[Repo, str]:
    """A head that skips one parametrized case, both host jobs run with their base runs."""
    return world("skip")


def _verdict(
    repo: Repo, base: str, label: str, monkeypatch: pytest.MonkeyPatch, job: str = "verdict"
) -> tuple[int, dict[str, Any], str, str]:
    runner = repo.path.parent / f"runner-{job}"
    runner.mkdir()
    monkeypatch.setenv("GITHUB_OUTPUT", str(runner / "output"))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(runner / "summary"))
    out = runner / "verdict.json"
    result = repo.cli(
        "verdict", "--host-a", f"../{label}-a", "--host-b", f"../{label}-b",
        "--base-ref", base, "--json", str(out),
    )  # fmt: skip
    outputs = (runner / "output").read_text(encoding="utf-8")
    return (
        result.code,
        json.loads(out.read_text(encoding="utf-8")),
        outputs,
        (runner / "summary").read_text(encoding="utf-8"),
    )


def _outputs(text: str) -> dict[str, str]:
    """Parse the runner's `name<<DELIM` … `DELIM` file format."""
    found = re.findall(r"^(\S+)<<(\S+)\n(.*?)\n\2$", text, flags=re.MULTILINE | re.DOTALL)
    return {name: value for name, _, value in found}


def test_run_base_ref_writes_the_base_run_beside_the_head_run(
    ran_skip: tuple[Repo, str],
) -> None:
    repo, _base = ran_skip
    root = repo.path.parent
    assert (root / "head-a" / "base" / "host.json").is_file()
    # Host B failed (its clock is shifted past 2030): the base ran there too.
    assert (root / "head-b" / "base" / "host.json").is_file()
    assert not list(root.glob("head-*/base-tree-*")), "the temporary worktree is removed"
    assert "base-tree" not in repo.git("worktree", "list")


def test_verdict_judges_against_the_base_runs_in_each_folder(
    ran_skip: tuple[Repo, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, base = ran_skip
    code, verdict, outputs, summary = _verdict(repo, base, "head", monkeypatch)
    assert (code, verdict["classification"]) == (1, "entropy_silenced")
    assert sorted(f["kind"] for f in verdict["findings"]) == ["not_executed", "skip_call"]
    assert _outputs(outputs) == {
        "classification": "entropy_silenced",
        "merge": "false",
        "verdict-path": str(repo.path.parent / "runner-verdict" / "verdict.json"),
    }
    assert "entropy_silenced" in summary


def test_the_base_runs_explain_a_failure_that_stood_at_the_base_and_never_approve_it(
    squares: tuple[Repo, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, base = squares
    repo.write("README.md", "docs only\n")
    repo.commit("honest")
    _hosts(repo, base, "honest")
    code, verdict, outputs, _ = _verdict(repo, base, "honest", monkeypatch)
    # head outcomes decide (#9): host B fails at the head, so the docs-only patch is rejected
    assert (code, verdict["classification"]) == (1, "env_coupled")
    assert _outputs(outputs)["merge"] == "false"
    failing = [t for t in verdict["tests"] if t["host_b"] == "failed"]
    assert failing
    assert all(t["failed_at_base"] for t in failing)  # ... and the base run says why
    # Without host B's base run the verdict is the same; only the explanation is gone.
    shutil.rmtree(repo.path.parent / "honest-b" / "base")
    code, verdict, _, _ = _verdict(repo, base, "honest", monkeypatch, job="again")
    assert (code, verdict["classification"]) == (1, "env_coupled")
    assert not any(t["failed_at_base"] for t in verdict["tests"])


@pytest.mark.parametrize("state", ["missing", "empty", "symlink"])
def test_a_host_that_uploaded_nothing_makes_the_verdict_invalid(
    ran: tuple[Repo, str], monkeypatch: pytest.MonkeyPatch, state: str
) -> None:
    repo, base = ran
    host_b = repo.path.parent / "head-b"
    shutil.rmtree(host_b)
    if state == "empty":
        host_b.mkdir()
    elif state == "symlink":
        host_b.symlink_to(repo.path.parent / "head-a")
    code, verdict, outputs, _ = _verdict(repo, base, "head", monkeypatch)
    assert (code, verdict["classification"]) == (2, "invalid")
    why = {
        "missing": "no report folder head-b",
        "empty": "report folder head-b is empty",
        "symlink": "report folder head-b is a symbolic link",
    }[state]
    said = [r for r in verdict["reasons"] if "host B" in r]
    assert said == [  # one reason for the one fact
        f"invalid input: host B: {why} (the host job failed before it uploaded "
        "its report, was cancelled or was skipped)"
    ], verdict["reasons"]
    assert _outputs(outputs)["merge"] == "false"
    recorded = verdict["inputs"]["reports_b"]
    if state == "empty":
        assert recorded == inputs.report_digest(host_b)
    else:
        assert recorded == {"missing": "missing", "symlink": "unreadable"}[state]


def test_verdict_without_runner_files_writes_only_the_json(
    ran: tuple[Repo, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, _base = ran
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    out = repo.path.parent / "v.json"
    result = repo.cli(
        "verdict", "--host-a", "../head-a", "--host-b", "../head-b", "--json", str(out)
    )
    verdict = json.loads(out.read_text(encoding="utf-8"))
    # without a base neither the pin check nor the scan can run: never a pass
    assert (result.code, verdict["classification"]) == (2, "invalid")
    assert f"invalid input: {NO_BASE}" in verdict["reasons"]
    assert not list(repo.path.parent.glob("runner-*"))


@pytest.mark.parametrize("base_ref", [None, ""])
def test_a_verdict_with_no_base_is_never_a_merge_candidate(
    ran: tuple[Repo, str], monkeypatch: pytest.MonkeyPatch, base_ref: str | None
) -> None:
    """A push, a manual run or an unknown event gives the action no base: the verdict is
    invalid with one line saying which input to set, whatever the hosts did."""
    repo, _base = ran
    out = repo.path.parent / "v.json"
    extra = () if base_ref is None else ("--base-ref", base_ref)
    result = repo.cli(
        "verdict", "--host-a", "../head-a", "--host-b", "../head-b", "--json", str(out), *extra
    )
    verdict = json.loads(out.read_text(encoding="utf-8"))
    assert (result.code, verdict["classification"], verdict["merge"]) == (2, "invalid", False)
    assert verdict["reasons"][0] == f"invalid input: {NO_BASE}"
    assert "set the base-ref input" in NO_BASE


def test_publish_takes_the_verdict_jobs_verdict_and_refuses_it_over_other_reports(
    ran: tuple[Repo, str], monkeypatch: pytest.MonkeyPatch, github_api: GitHubAPI
) -> None:
    """The workflow's verdict job: `verdict`, then `publish` over the same downloaded folders."""
    repo, base = ran
    _, verdict, _, _ = _verdict(repo, base, "head", monkeypatch)
    assert verdict["inputs"]["reports_a"] == inputs.report_digest(repo.path.parent / "head-a")
    monkeypatch.setenv("GITHUB_API_URL", github_api.url)
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/widgets")
    monkeypatch.setenv("GITHUB_TOKEN", github_api.token)
    path = str(repo.path.parent / "runner-verdict" / "verdict.json")
    folders = ("--host-a", "../head-a", "--host-b", "../head-b", "--head-sha", "a" * 40)
    result = repo.cli("publish", "--verdict", path, *folders)
    assert result.code == 0, result.err
    assert [call[:2] for call in github_api.calls()] == [("POST", "/repos/octo/widgets/check-runs")]
    (repo.path.parent / "head-b" / "pytest.log").write_text("rewritten\n", encoding="utf-8")
    result = repo.cli("publish", "--verdict", path, *folders)
    assert result.code == 2
    assert result.err.count("\n") == 1
    assert "does not match host B's report folder ../head-b" in result.err
    assert len(github_api.calls()) == 1
