"""Helpers shared by the tests: a real git repository and the CLI called in-process."""

from __future__ import annotations

import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from entropy_action.cli.main import main

SEED_MANIFEST = Path(__file__).parent.parent / "data" / "seed_entropy.yaml"

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
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def cli(self, *args: str) -> Result:
        """Run `entropy-gate ARGS` in-process from the repository root."""
        self.capsys.readouterr()
        self.monkeypatch.chdir(self.path)
        code = main(list(args))
        captured = self.capsys.readouterr()
        assert "Traceback" not in captured.out + captured.err
        return Result(code, captured.out, captured.err)
