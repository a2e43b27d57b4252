"""`entropy-gate gate` on a docs-only patch against one bare pytest run of the module.

    .venv/bin/python bench/bench_gate.py [--tests 1000] [--repeat 5] [--smoke]

A scratch repository: the base commit holds the manifest and a property module of 1,000
cases; the patch changes README.md only. Two measures, each alternating with bare pytest:
the first run on a base (a fresh, empty user cache directory each time) and the second run
on the same base (a cache directory the gate filled once before). Prints min / median / max
of the per-pair ratios. Not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import benchlib
from bench_run import MODULE, make_repo, pinned_env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="small sizes, one pair")
    args = parser.parse_args()
    if args.smoke:
        args.tests, args.repeat = 10, 1
    with tempfile.TemporaryDirectory(prefix="bench-gate-") as scratch:
        folder = Path(scratch)
        root = make_repo(folder, args.tests)
        base = benchlib.git(root, "rev-parse", "HEAD").strip()
        (root / "README.md").write_text("# bench\n\nDocs only.\n")
        benchlib.commit_all(root, "docs only")
        bare = [sys.executable, "-m", "pytest", MODULE, "-q", "-p", "no:cacheprovider"]
        bare += ["-o", "addopts="]
        bare_env = pinned_env(folder)
        counter = iter(range(1_000_000))

        def gate(cache: Path | None) -> benchlib.Sample:
            run = next(counter)
            cache_home = cache or folder / f"cache-{run}"
            argv = [sys.executable, "-m", "entropy_action", "gate", "--base-ref", base]
            argv += ["--out", str(folder / f"out-{run}")]
            env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
            return benchlib.wall(argv, cwd=str(root), env=env)

        def floor() -> benchlib.Sample:
            return benchlib.wall(bare, cwd=str(root), env=bare_env)

        floor()  # warm the file cache and .pyc files
        first = benchlib.alternate(lambda: gate(None), floor, args.repeat)
        warm = folder / "cache-warm"
        gate(warm)  # the first push fills the cache
        second = benchlib.alternate(lambda: gate(warm), floor, args.repeat)
    print(benchlib.load_note())
    print(f"a docs-only patch; a property module of {args.tests} test cases")
    print("-- first run on the base (empty cache)")
    benchlib.print_ratio("entropy-gate gate", "bare pytest", *first)
    print("-- second run on the same base")
    benchlib.print_ratio("entropy-gate gate", "bare pytest", *second)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
