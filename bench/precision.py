"""The precision set (docs/backtests.md): real libraries' merged commits, each replayed with
`entropy-gate backtest` as the pull request it was, against the classification recorded for
it in bench/precision.tsv (library, module, commit, expected, subject).

    python bench/precision.py LIBRARY CLONE VENV [--list FILE] [--out DIR] [--commit SHA]

CLONE is a clone of the library's public repository, history included (`git clone URL`);
VENV a virtual environment with the library installed from CLONE as its own instructions say
(`pip install -e CLONE` with its test extra or test requirements; docs/backtests.md lists what
each needed) and this gate installed in it (`pip install -e PATH_TO_ENTROPY_GATE`). The script
fetches nothing and builds nothing: it runs VENV's `python -m entropy_action backtest OLD..NEW
--module MODULE` in CLONE once per listed commit (its first parent as OLD), writes each JSON to
OUT/LIBRARY-SHA12-MODULE.json (a commit may be listed with several modules), and prints
commit, expected, got, seconds and the deciding finding, then the summary: commits, matches,
false rejections (expected merge_candidate, got anything else), missed rejections, median
seconds. Exit 0 when every commit got what is recorded.
Not a test: a run takes minutes per commit (a whole gate each, mutation included).
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

LIST = Path(__file__).with_name("precision.tsv")
CHECKOUT = Path(__file__).resolve().parents[1] / "entropy_action"


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    rows = [r for r in _rows(args.list) if r["library"] == args.library]
    if args.commit:
        rows = [r for r in rows if any(r["commit"].startswith(c) for c in args.commit)]
    if not rows:
        raise SystemExit(f"{args.list}: no commit listed for {args.library!r}")
    if (wrong := _other_gate(args.venv.absolute(), args.clone)) is not None:
        print(wrong, file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    results = [_replay(row, args) for row in rows]
    _report(results)
    return 0 if all(r.got == r.expected for r in results) else 1


def _other_gate(venv: Path, clone: Path) -> str | None:
    """Why VENV would replay another gate than this checkout's: an editable install left
    pointing at an old worktree judges old code under this checkout's name (it happened:
    six libraries' replays ran a worktree 71 commits behind)."""
    probe = "import entropy_action, pathlib; print(pathlib.Path(entropy_action.__file__).parent)"
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", probe],
        cwd=clone,
        capture_output=True,
        text=True,
        check=False,
    )
    found = done.stdout.strip()
    if done.returncode == 0 and Path(found).resolve() == CHECKOUT:
        return None
    seen = found or (done.stderr.strip().splitlines() or ["no output"])[-1]
    return (
        f"{venv}: its entropy_action is {seen}, not this checkout's {CHECKOUT}: the replay "
        f"would judge other code (pip install --no-deps -e {CHECKOUT.parent} in it)"
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("library", help="the library's name as bench/precision.tsv spells it")
    parser.add_argument("clone", type=Path, help="a clone of its repository, with history")
    parser.add_argument("venv", type=Path, help="its venv: the library and this gate installed")
    parser.add_argument("--list", type=Path, default=LIST, help=f"default: {LIST.name}")
    parser.add_argument("--out", type=Path, default=Path("backtests-out"), help="JSON per commit")
    parser.add_argument("--commit", action="append", default=[], help="only this commit (prefix)")
    return parser


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        lines = (line for line in handle if line.strip() and not line.startswith("#"))
        return list(csv.DictReader(lines, delimiter="\t"))


@dataclass(frozen=True)
class Result:
    commit: str
    expected: str
    got: str
    seconds: float
    deciding: str


def _replay(row: dict[str, str], args: argparse.Namespace) -> Result:
    sha = row["commit"]
    target = args.out.absolute() / f"{args.library}-{sha[:12]}-{Path(row['module']).stem}.json"
    venv = args.venv.absolute()
    argv = [
        str(venv / "bin" / "python"),
        "-m",
        "entropy_action",
        "backtest",
        f"{sha}~1..{sha}",
        "--module",
        row["module"],
        "--python",
        str(venv / "bin" / "python"),
        "--json",
        str(target),
    ]
    print(f"{sha[:12]} {row['subject'][:60]} …", file=sys.stderr, flush=True)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=args.clone, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    got, deciding = "no report", done.stderr.strip().splitlines()[-1:] or [""]
    if target.is_file():
        commits = json.loads(target.read_text(encoding="utf-8"))["commits"]
        got, deciding = commits[0]["classification"], [commits[0]["deciding"]]
    return Result(sha, row["expected"], got, seconds, deciding[0])


def _report(results: list[Result]) -> None:
    for r in results:
        mark = "ok" if r.got == r.expected else "DIFFERS"
        seconds = f"{r.seconds:6.1f} s"
        print(f"{r.commit[:12]}  {r.expected:<17} {r.got:<17} {seconds}  {mark:<7} {r.deciding}")
    honest = [r for r in results if r.expected == "merge_candidate"]
    false = [r for r in honest if r.got != "merge_candidate"]
    other = [r for r in results if r.expected not in ("merge_candidate", r.got)]
    rate = f"{len(false)}/{len(honest)}" if honest else "0/0"
    print(
        f"{len(results)} commits: {sum(r.got == r.expected for r in results)} as recorded; "
        f"false rejections {rate}; other differences {len(other)}; "
        f"median {statistics.median(r.seconds for r in results):.1f} s per commit"
    )


if __name__ == "__main__":
    raise SystemExit(main())
