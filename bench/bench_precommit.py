"""The pre-commit hook on the demo repository: `entropy-gate pre-commit` against `python -c
pass` (the interpreter alone) and `git diff --cached` (git reading the same index).

    .venv/bin/python bench/bench_precommit.py [--repeat 15] [--smoke]

The demo's invoice repository (scripts/demo-repo.sh) with its skip-defect patch staged, not
committed: the hook reads the staged entropy.yaml and scans the staged files (it finds the
skip marker and exits 1, checked on every run). Each command is a fresh process with bytecode
writing on (a warm-up run first, as a user's second commit would be); the three alternate and
the script prints the medians, the CPU seconds (user + system, the children's) and the
per-pair ratios. Not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchlib

ROOT = Path(__file__).resolve().parent.parent
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def demo_repo(where: Path) -> Path:
    """The invoice example committed, its skip-defect patch staged on top."""
    repo = where / "demo"
    script = ROOT / "scripts" / "demo-repo.sh"
    subprocess.run(["bash", str(script), str(repo), "skip-defect"], check=True, capture_output=True)
    benchlib.git(repo, "reset", "-q", "--soft", "HEAD~1")
    return repo


def timed(argv: list[str], repo: Path, expect: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run, which must exit `expect`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=repo, env=ENV, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != expect:
        raise SystemExit(f"{argv[:3]} exited {done.returncode}, not {expect}:\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--smoke", action="store_true", help="one round")
    args = parser.parse_args()
    repeat = 1 if args.smoke else args.repeat
    hook = [sys.executable, "-m", "entropy_action", "pre-commit"]
    floors = {
        "python -c pass": ([sys.executable, "-c", "pass"], 0),
        "git diff --cached": (["git", "diff", "--cached", "--quiet"], 1),  # 1: staged changes
    }
    with tempfile.TemporaryDirectory(prefix="bench-precommit-") as scratch:
        repo = demo_repo(Path(scratch))
        timed(hook, repo, expect=1)  # warm-up: the bytecode a user's first run writes
        runs: dict[str, list[tuple[float, float]]] = {"hook": [], **{n: [] for n in floors}}
        for index in range(repeat):
            order = [("hook", (hook, 1)), *floors.items()]
            for name, (argv, expect) in order if index % 2 == 0 else reversed(order):
                runs[name].append(timed(argv, repo, expect))
    print(benchlib.load_note())
    samples = {name: [benchlib.Sample(w, 0, 0) for w, _ in got] for name, got in runs.items()}
    benchlib.print_ratio(
        "entropy-gate pre-commit", "python -c pass", samples["hook"], samples["python -c pass"]
    )
    git_diff = samples["git diff --cached"]
    ratios = [h.seconds / g.seconds for h, g in zip(samples["hook"], git_diff, strict=True)]
    git_ms = statistics.median(s.seconds for s in git_diff) * 1000
    print(f"git diff --cached: median {git_ms:9.1f} ms; ratio {benchlib.stats(ratios)}")
    hook_wall = statistics.median(s.seconds for s in samples["hook"])
    hook_cpu = statistics.median(c for _, c in runs["hook"])
    print(f"entropy-gate pre-commit: median CPU {hook_cpu * 1000:9.1f} ms (user + system)")
    print(f"under one second: {'yes' if hook_wall < 1.0 else 'NO'} (median wall {hook_wall:.2f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
