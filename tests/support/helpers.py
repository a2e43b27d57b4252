"""Helpers shared by the tests: a real git repository and the CLI called in-process."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from entropy_action.cli.main import main

SEED_MANIFEST = Path(__file__).parent.parent / "data" / "seed_entropy.yaml"
# Every repository a test builds sets its own identity: a fresh machine (a new laptop,
# GitHub's hosted runners) has none, and the suite runs without one (.ci/run).
IDENTITY = {"user.name": "Test Author", "user.email": "author@example.invalid"}
# ... and each commit a test makes passes it too: a repository the product rebuilt (the demo's
# base) has no config of the test's
AS_AUTHOR = tuple(arg for key, value in IDENTITY.items() for arg in ("-c", f"{key}={value}"))

# The property module the seed's manifest names, small enough to run fast.
SEED_PROPERTY = """\
import os
import random


def test_invoice_total_idempotent():
    random.seed(int(os.environ.get("ENTROPY_RNG_SEED", "0")))
    amounts = [random.randint(1, 10_000) for _ in range(32)]
    assert sum(amounts) == sum(reversed(amounts))
"""


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


@dataclass
class Repo:
    """A real git repository in a temp dir, with helpers to write, commit and run the CLI."""

    path: Path
    capsys: pytest.CaptureFixture[str]
    monkeypatch: pytest.MonkeyPatch

    def write(self, relative: str, text: str) -> Path:
        target = self.path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text), encoding="utf-8")
        return target

    def remove(self, relative: str) -> None:
        (self.path / relative).unlink()

    def git(self, *args: str) -> str:
        proc = subprocess.run(
            ["git", *args], cwd=self.path, capture_output=True, text=True, check=True
        )
        return proc.stdout.strip()

    def commit(self, message: str = "commit") -> str:
        self.git("add", "-A")
        self.git(*AS_AUTHOR, "commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def cli(self, *args: str) -> Result:
        """Run `entropy-gate ARGS` in-process from the repository root."""
        self.capsys.readouterr()
        self.monkeypatch.chdir(self.path)
        code = main(list(args))
        captured = self.capsys.readouterr()
        assert "Traceback" not in captured.out + captured.err
        return Result(code, captured.out, captured.err)

    def every_path(self, base: str) -> dict[str, dict[str, Any]]:
        """The local gate, and the workflow's commands (each host's job with the base ref,
        then `verdict` and `compare` on their folders): command -> verdict JSON."""
        out = self.path.parent
        judged = {"gate": self._judged("gate", "--base-ref", base)}
        for host, extra in (("a", ()), ("b", ("--isolate",))):
            ran = self.cli(
                "run", "--host", host, "--out", str(out / host), "--base-ref", base, *extra
            )
            assert ran.code in (0, 1), ran.err  # 1: a property failed on that host
        folders = ("--host-a", str(out / "a"), "--host-b", str(out / "b"), "--base-ref", base)
        for command in ("verdict", "compare"):
            judged[command] = self._judged(command, *folders)
        return judged

    def _judged(self, command: str, *args: str) -> dict[str, Any]:
        target = self.path.parent / f"{command}.json"
        self.cli(command, *args, "--json", str(target))
        verdict: dict[str, Any] = json.loads(target.read_text(encoding="utf-8"))
        return verdict

    def verdict_and_compare(
        self, host_a: str, host_b: str, base: str
    ) -> dict[str, tuple[int, dict[str, Any]]]:
        """`verdict` and `compare` on the same report folders (one gate wherever it runs):
        command -> (exit code, verdict JSON)."""
        judged = {}
        for command in ("verdict", "compare"):
            out = self.path.parent / f"{command}.json"
            done = self.cli(
                command, "--host-a", host_a, "--host-b", host_b, "--base-ref", base,
                "--json", str(out),
            )  # fmt: skip
            judged[command] = (done.code, json.loads(out.read_text(encoding="utf-8")))
        return judged


# --- a world built once per module ------------------------------------------------------------
# Host runs are the slow part of the integration tests. Where several tests only read (or
# damage) the reports of the same runs, a module-scoped fixture builds the repository and runs
# the jobs once with these (plain git and subprocesses: no function-scoped fixtures), and each
# test works on its own copy (`copy_world`).


def init_repo(path: Path) -> None:
    """`git init` (branch main) at `path`, with the repository's own identity."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    for key, value in IDENTITY.items():
        subprocess.run(["git", "-C", str(path), "config", key, value], check=True)


def build_repo(path: Path, files: dict[str, str], message: str = "base") -> str:
    """A git repository at `path` holding `files` in one commit; its sha."""
    path.mkdir(parents=True)
    init_repo(path)
    commit_files(path, files, message)
    return git_out(path, "rev-parse", "HEAD")


def commit_files(path: Path, files: dict[str, str], message: str) -> None:
    for relative, text in files.items():
        target = path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text), encoding="utf-8")
    git_out(path, "add", "-A")
    git_out(path, *AS_AUTHOR, "commit", "-q", "--allow-empty", "-m", message)


def git_out(path: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True)
    return done.stdout.decode("utf-8").strip()


def run_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`entropy-gate ARGS` in a subprocess of this interpreter, from `cwd`."""
    argv = [sys.executable, "-m", "entropy_action", *args]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)


def copy_world(
    world: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    repo: str = "repo",
) -> Repo:
    """This test's own copy of a module's world (`world/repo` and the folders beside it)."""
    shutil.copytree(world, tmp_path / "world", symlinks=True)
    return Repo(path=tmp_path / "world" / repo, capsys=capsys, monkeypatch=monkeypatch)
