"""Wall time of the mutation step: the gate with and without it, on the demo or a real suite.

    .venv/bin/python bench/bench_strength.py [--runs 3]
    .venv/bin/python bench/bench_strength.py --suite DIR --module PATH [--python PY] [--runs 3]
        [--mode changed|all] [--patch refactor|comment]

Demo: builds the demo's invoice example and its `tautology` patch twice — once as it is
(`constraints.mutation: changed`, the default) and once with `mutation: "off"` in the base
and the head.

Suite: copies the checkout DIR (without .git, venvs and caches) into a fresh git repo twice,
writes an entropy.yaml for MODULE in each — identical but for `constraints.mutation`: MODE
(`--mode`, default `changed`, the default budget: max_mutants 40, time_budget_seconds 300)
in one, `"off"` in the other — commits that as the base, then patches MODULE honestly
(`--patch refactor`, the default: the first test gains `_ = None` as its first statement, a
changed test whose assertions stay; `--patch comment`: one comment line appended, which
changes no test, so `changed` starts no mutant). `added(text)` (a copy of the first test) is
the adoption trials' other patch. The gate, the hosts and the mutants run with PY (the
suite's own venv, which has its dependencies): the script re-executes itself under PY with
this checkout first on PYTHONPATH, so the code measured is this checkout's. A src layout gets
a relative `src` first on PYTHONPATH, so each run (hosts, mutants) imports its own copy's
code: an editable install of DIR points at DIR itself, not at the copies.

Both: times `run_gate` on each, alternately, every run cold alike — the mutation cache
emptied before every run, no base evidence cache. The difference is the mutation step's
cost (the base's module against the head's code runs in both). Prints medians and the
ratio to the gate without it. Not a test.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchlib

from entropy_action.core import git
from entropy_action.gate import demo, local

OFF = '  mutation: "off"\n'
REEXEC = "BENCH_STRENGTH_UNDER_PYTHON"
SKIP = shutil.ignore_patterns(
    ".git", ".venv", "venv", ".tox", ".nox", "__pycache__", ".pytest_cache", ".hypothesis"
)
PATCH = "\n# reviewed: no change in behaviour\n"


def _repo(folder: Path, mutation: bool) -> tuple[Path, str]:
    repo = folder / ("on" if mutation else "off")
    patch = {p.name: p for p in demo.patches()}["tautology"]
    base = demo.build_base(repo, clock_unix=1768003200, temp_root=folder / "tmp")
    if not mutation:
        manifest = repo / "entropy.yaml"
        text = manifest.read_text(encoding="utf-8")
        manifest.write_text(text.replace("constraints:\n", "constraints:\n" + OFF), "utf-8")
        base = git.commit_all(repo, "mutation off")
    demo.apply_patch(repo, patch)
    return repo, base


def _suite_repo(folder: Path, suite: Path, module: str, mode: str, patch: str) -> tuple[Path, str]:
    repo = folder / mode.strip('"')
    shutil.copytree(suite, repo, ignore=SKIP, symlinks=True)
    temp_root = folder / "tmp" / repo.name
    manifest = benchlib.manifest(
        module,
        "bench_strength",
        temp_root,
        ', "-p", "no:cov"',
        f"constraints:\n  mutation: {mode}\n",
    )
    (repo / "entropy.yaml").write_text(manifest, encoding="utf-8")
    git.init(repo)
    base = git.commit_all(repo, "the suite with its pins")
    target = repo / module
    text = target.read_text(encoding="utf-8")
    target.write_text(text + PATCH if patch == "comment" else refactor(text), encoding="utf-8")
    git.commit_all(repo, f"patch: {patch} in the property module")
    return repo, base


def _first_test(text: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    tests = [
        node
        for node in ast.walk(ast.parse(text))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.name.startswith("test")
    ]
    return min(tests, key=lambda node: node.lineno)


def added(text: str) -> str:
    """A copy of the first test function (decorators too) right after it, as `NAME_again`:
    an added test, the module otherwise as it was."""
    test = _first_test(text)
    lines = text.splitlines(keepends=True)
    start = min([test.lineno, *(d.lineno for d in test.decorator_list)]) - 1
    end = test.end_lineno or test.lineno
    copy = "".join(lines[start:end]).replace(f"def {test.name}(", f"def {test.name}_again(", 1)
    return "".join([*lines[:end], "\n", copy, *lines[end:]])


def refactor(text: str) -> str:
    """The first test function gains a statement that changes nothing (`_ = None`): a test
    the patch changed, whose assertions stay, so `changed` mutates what it reaches."""
    first = _first_test(text).body[0]
    lines = text.splitlines(keepends=True)
    line = first.lineno - 1
    lines.insert(line, " " * first.col_offset + "_ = None  # reviewed: no change\n")
    return "".join(lines)


def _time(repo: Path, base: str, folder: Path, expected: str | None) -> tuple[float, str]:
    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=folder))
    environ = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    if (repo / "src").is_dir():  # a src layout: each run imports its own copy's code (relative)
        environ["PYTHONPATH"] = os.pathsep.join(["src", *filter(None, [os.getenv("PYTHONPATH")])])
    settings = local.GateSettings(
        manifest=repo / "entropy.yaml", base_ref=base, environ=environ, out=folder / "out"
    )
    start = time.perf_counter()
    verdict = local.run_gate(settings).verdict
    elapsed = time.perf_counter() - start
    shutil.rmtree(cache, ignore_errors=True)
    assert expected is None or verdict.classification == expected, verdict.reasons
    score = verdict.mutation
    mutants = f", {score.mutants} mutants ({score.not_counted} not counted)" if score else ""
    notes = [n for n in verdict.reasons if n.startswith("mutation")]
    return elapsed, verdict.classification + mutants + "".join(f"; {n}" for n in notes)


def _reexec(python: str) -> None:
    """Run this script again under `python`, this checkout first on its path."""
    checkout = str(Path(__file__).resolve().parent.parent)
    old = os.environ.get("PYTHONPATH")
    path = os.pathsep.join([checkout, *([old] if old else [])])
    env = {**os.environ, "PYTHONPATH": path, REEXEC: "1"}
    done = subprocess.run([python, __file__, *sys.argv[1:]], env=env, check=False)
    raise SystemExit(done.returncode)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="one run each")
    parser.add_argument("--suite", type=Path, help="a real checkout to measure instead")
    parser.add_argument("--module", help="the property module in --suite, e.g. tests/test_x.py")
    parser.add_argument("--python", help="the suite's interpreter (its venv's python)")
    parser.add_argument("--mode", choices=("changed", "all"), default="changed")
    parser.add_argument(
        "--patch",
        choices=("refactor", "comment"),
        default="refactor",
        help="refactor: the first test gains a no-op statement; comment: a comment line",
    )
    parsed = parser.parse_args()
    if parsed.suite is not None and parsed.module is None:
        parser.error("--suite needs --module")
    if parsed.python and os.environ.get(REEXEC) != "1":
        _reexec(parsed.python)
    runs = 1 if parsed.smoke else parsed.runs
    mode = parsed.mode if parsed.suite else "changed"
    with tempfile.TemporaryDirectory(prefix="bench-strength-") as scratch:
        folder = Path(scratch)
        if parsed.suite is None:
            on, on_base = _repo(folder, mutation=True)
            off, off_base = _repo(folder, mutation=False)
            expect_on: str | None = "entropy_silenced"
        else:
            suite = parsed.suite.resolve()
            on, on_base = _suite_repo(folder, suite, parsed.module, mode, parsed.patch)
            off, off_base = _suite_repo(folder, suite, parsed.module, '"off"', parsed.patch)
            expect_on = None  # whatever a real suite's verdict is, both pay the same steps
        times: dict[str, list[float]] = {"off": [], "on": []}
        seen = {"off": "", "on": ""}
        for _ in range(runs):  # interleaved, so load on the machine hits both alike
            elapsed, seen["off"] = _time(off, off_base, folder, None)
            times["off"].append(elapsed)
            elapsed, seen["on"] = _time(on, on_base, folder, expect_on)
            times["on"].append(elapsed)
    without, with_ = statistics.median(times["off"]), statistics.median(times["on"])
    print(f"gate, mutation off:     median {without:.2f} s over {runs} runs")
    print(f"gate, mutation {mode + ':':<8} median {with_:.2f} s over {runs} runs")
    print(f"verdicts: off {seen['off']}; on {seen['on']}")
    print(f"extra: {with_ - without:.2f} s, ratio {with_ / without:.2f}x (goal: under 2x)")


if __name__ == "__main__":
    main()
