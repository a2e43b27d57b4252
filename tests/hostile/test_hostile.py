"""The hostile-input corpus: every case in tests/hostile/ through the real CLI, in a subprocess.

Each case is one file (see tests/hostile/README.md) with its golden NAME.expected beside it:
the exit code and the one line that must name the file and the line or field at fault.
Each case asserts all of: the exit code; that line exactly once, and no other line naming
the culprit; no traceback; no `merge: true` in a verdict JSON; nothing from a file the input
pointed at (a planted secret) and no token anywhere in the output; and an end within
CASE_TIMEOUT seconds (a subprocess timeout, not a timed assertion).

Regenerate the goldens after a deliberate change (and review the diff):
    .venv/bin/python -m tests.hostile.test_hostile
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.hostile import generate
from tests.hostile.build import Workspace, build

CORPUS = Path(__file__).parent
FOLDERS = ("validate", "run", "junit", "hostjson", "recipes")
CASE_TIMEOUT = 90  # seconds: a loaded 2-core machine; a hang is what this bounds
REGENERATE = "regenerate with: .venv/bin/python -m tests.hostile.test_hostile"
SECRET = "TOPSECRET-d41d8cd98f00b204e9800998ecf8427e"
TOKEN = "ghs_hostileTokenNeverPrinted0123456789"
_NAMES_FILE_OR_FIELD = re.compile(
    r"(\.(yaml|xml|json)(:\d+)?:)|(--[a-z-]+ )|(\bpins\.|\brun\.)|(\.py::)|(host [AB]: )"
)


@dataclass(frozen=True)
class Case:
    path: Path  # the case's input file (data or NAME.case.json recipe)
    folder: str

    @property
    def name(self) -> str:
        return self.path.name.split(".")[0]

    @property
    def expected(self) -> Path:
        return self.path.with_name(f"{self.name}.expected")

    def recipe(self) -> dict[str, Any]:
        if self.folder != "recipes":
            return {}
        data: dict[str, Any] = json.loads(self.path.read_text(encoding="utf-8"))
        return data


def cases() -> list[Case]:
    found = []
    for folder in FOLDERS:
        for path in sorted((CORPUS / folder).iterdir()):
            if path.name.endswith((".expected", ".md")) or path.name.startswith("."):
                continue
            found.append(Case(path, folder))
    return found


@dataclass
class Outcome:
    code: int
    lines: list[str]  # stdout and stderr, normalized, stripped, bullets removed
    raw: str  # everything the command printed or wrote (verdict JSON included), unnormalized
    verdict: dict[str, Any] | None
    culprit: str
    leftovers: list[str] = field(default_factory=list)  # files that must not exist but do


def run_case(case: Case, tmp: Path) -> Outcome:
    """Build the case's workspace, run its command in a subprocess, collect what it left."""
    recipe = case.recipe()
    space: Workspace = build(case.path, case.folder, recipe, tmp, SECRET)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "ENTROPY_"))}
    env.update(space.env)
    env.update({"GITHUB_TOKEN": TOKEN, "HOME": str(space.home), "COLUMNS": "200"})
    proc = subprocess.run(
        [sys.executable, "-m", "entropy_action", *space.argv],
        cwd=space.cwd,
        env=env,
        capture_output=True,
        timeout=recipe.get("timeout", CASE_TIMEOUT),
        check=False,
    )
    out = proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")
    verdict = None
    raw = out
    if space.verdict.exists():
        text = space.verdict.read_text(encoding="utf-8")
        raw += text
        verdict = json.loads(text)
    lines = [space.normalize(line).strip().removeprefix("- ") for line in out.splitlines()]
    leftovers = [p for p in recipe.get("must_not_create", []) if (space.cwd / p).exists()]
    return Outcome(proc.returncode, lines, raw, verdict, space.culprit, leftovers)


def message_line(outcome: Outcome) -> str:
    """The one line naming the culprit file or field; AssertionError if none or several."""
    naming = [line for line in outcome.lines if outcome.culprit in line]
    assert len(naming) == 1, f"{len(naming)} lines name {outcome.culprit!r}:\n" + "\n".join(
        outcome.lines
    )
    return naming[0]


def render(outcome: Outcome) -> str:
    return f"exit: {outcome.code}\nline: {message_line(outcome)}\n"


ALL = cases()


@pytest.mark.parametrize("case", ALL, ids=[f"{c.folder}/{c.name}" for c in ALL])
def test_hostile_input_fails_closed_with_one_clear_line(case: Case, tmp_path: Path) -> None:
    assert case.expected.exists(), f"{case.expected.name} is missing; {REGENERATE}"
    expected = case.expected.read_text(encoding="utf-8")
    outcome = run_case(case, tmp_path)
    assert "Traceback" not in outcome.raw
    assert "internal error" not in outcome.raw
    assert outcome.code in (1, 2), outcome.lines
    assert SECRET not in outcome.raw
    assert TOKEN not in outcome.raw
    assert outcome.leftovers == []
    if outcome.verdict is not None:
        assert outcome.verdict["merge"] is False
        assert outcome.verdict["classification"] != "merge_candidate"
    assert render(outcome) == expected, REGENERATE
    line = expected.splitlines()[1].removeprefix("line: ")
    assert _NAMES_FILE_OR_FIELD.search(line), f"the message names no file, line or field: {line}"


def test_the_corpus_has_at_least_forty_cases_each_with_its_golden() -> None:
    assert len(ALL) >= 40
    names = [f"{c.folder}/{c.name}" for c in ALL]
    assert len(names) == len(set(names))
    goldens = {p.relative_to(CORPUS).with_suffix("").as_posix() for p in CORPUS.rglob("*.expected")}
    assert goldens == set(names)


def test_a_well_formed_case_passes_the_same_harness(tmp_path: Path) -> None:
    """The harness's baseline: without the hostile part the same commands succeed, so a
    case fails for its hostile input, not because the workspace is broken."""
    control = CORPUS / "recipes" / ".control.case.json"
    outcome = run_case(Case(control, "recipes"), tmp_path)
    assert outcome.code == 0, outcome.lines
    assert outcome.verdict is not None
    assert outcome.verdict["merge"] is True


def test_the_generators_make_what_the_cases_claim(tmp_path: Path) -> None:
    big = generate.sparse(tmp_path / "big", 1 << 30)
    assert big.stat().st_size == 1 << 30
    assert big.stat().st_blocks * 512 < 1 << 20  # sparse: no gigabyte is written
    yaml_50 = generate.yaml_50mb(tmp_path / "entropy.yaml")
    assert yaml_50.stat().st_size >= 50 * 1000 * 1000


def regenerate() -> None:
    import tempfile  # noqa: PLC0415

    only = sys.argv[1:]  # names (or parts of them) to regenerate; default: all
    for case in ALL:
        if only and not any(part in f"{case.folder}/{case.name}" for part in only):
            continue
        with tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
            outcome = run_case(case, Path(tmp))
        try:
            text = render(outcome)
        except AssertionError as exc:
            print(f"{case.folder}/{case.name}: NOT WRITTEN: {exc}")
            continue
        case.expected.write_text(text, encoding="utf-8")
        print(f"{case.folder}/{case.name}: {text.splitlines()[1]}")


if __name__ == "__main__":
    regenerate()
