"""How often the precision set (bench/precision.tsv, docs/backtests.md) meets a change to the
property's test side beyond its module (issue 35, part 7): from git alone, per listed commit.

    .venv/bin/python bench/precision_closure.py CLONES [--list FILE] [--library NAME ...]

CLONES is a folder holding a clone of each library's public repository, history included,
named as bench/precision.tsv spells the library (CLONES/toolz, CLONES/python-semver, ...).
For each commit the script checks it out in a temporary worktree (the clone's own checkout is
left alone), computes the closure of the commit against its first parent as the gate does
(`scan.closure.between`: the module, conftests, helpers, pytest's configuration section), and
lists the test-area files other than Python the commit changed (the data files the closure
would hold if the tests open them: host A's record decides that in a gate run). It prints
one line per commit (expected classification, module changed or not, the closure's other
changed files, the changed test data) and the counts. Not a test; no network.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from entropy_action.scan import closure

LIST = Path(__file__).with_name("precision.tsv")


@dataclass(frozen=True)
class Met:
    library: str
    commit: str
    expected: str
    module_changed: bool
    side: tuple[str, ...]  # the closure's changed files besides the module (Python, config)
    data: tuple[str, ...]  # test-area files other than Python the commit changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("clones", type=Path)
    parser.add_argument("--list", type=Path, default=LIST)
    parser.add_argument("--library", action="append", default=[])
    args = parser.parse_args(argv)
    with args.list.open(encoding="utf-8", newline="") as handle:
        lines = (line for line in handle if line.strip() and not line.startswith("#"))
        rows = list(csv.DictReader(lines, delimiter="\t"))
    rows = [r for r in rows if not args.library or r["library"] in args.library]
    missing = sorted({r["library"] for r in rows if not (args.clones / r["library"]).is_dir()})
    for library in missing:
        print(f"{library}: no clone at {args.clones / library}, skipped")
    rows = [r for r in rows if r["library"] not in missing]
    found = [_one(args.clones / row["library"], row) for row in rows]
    for met in found:
        print(
            f"{met.library:<14} {met.commit[:12]} {met.expected:<17} module "
            f"{'changed' if met.module_changed else 'same   '} side {list(met.side)} "
            f"data {list(met.data)}"
        )
    side = [m for m in found if m.side or m.data]
    print(
        f"{len(found)} commits: {len(side)} change the test side beyond the module "
        f"({sum(1 for m in side if not m.module_changed)} with the module unchanged; "
        f"{sum(1 for m in found if m.data)} change test data)"
    )
    return 0


def _one(clone: Path, row: dict[str, str]) -> Met:
    sha = row["commit"]
    with tempfile.TemporaryDirectory(prefix="precision-closure-") as scratch:
        tree = Path(scratch) / "wt"
        _git(clone, "worktree", "add", "-q", "--detach", str(tree), sha)
        try:
            parent = _git(clone, "rev-parse", f"{sha}^1").strip()
            found = closure.between(closure.Revisions(tree, parent, row["module"], row["module"]))
            names = _git(clone, "diff", "--name-only", "--no-renames", parent, sha).split()
        finally:
            _git(clone, "worktree", "remove", "--force", str(tree))
    data = tuple(
        n
        for n in names
        if closure.in_test_area(n) and PurePosixPath(n).suffix not in closure.NOT_DATA
    )
    return Met(
        row["library"],
        sha,
        row["expected"],
        row["module"] in found.changed,
        found.side_changed,
        data,
    )


def _git(clone: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(clone), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


if __name__ == "__main__":
    raise SystemExit(main())
