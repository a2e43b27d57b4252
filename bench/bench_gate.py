"""`entropy-gate gate` on a docs-only patch against one bare pytest run of the module.

    .venv/bin/python bench/bench_gate.py [--tests 1000] [--repeat 5] [--smoke] [--profile]

A scratch repository: the base commit holds the manifest, a property module of 1,000 cases
and a .gitignore for `__pycache__/` (as real projects have: pytest writes its rewritten test
modules there, and an untracked cache file would make the patch more than docs); the patch
changes README.md only. Two measures, each alternating with bare pytest: the first run on a
base (a fresh, empty user cache directory each time) and the second run on the same base (a
cache directory the gate filled once before). Prints min / median / max of the per-pair
ratios. Both sides run with bytecode writing on (PYTHONDONTWRITEBYTECODE removed), as on a
CI runner; a machine that sets it recompiles the gate's modules on every run.

`--profile` runs the gate once more (second run) and prints its wall-clock phases (the
elapsed time at each progress line) and the top of a cProfile of the gate process by
cumulative time. Not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchlib
from bench_run import MODULE, make_repo, pinned_env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="small sizes, one pair")
    parser.add_argument("--profile", action="store_true", help="phases and cProfile of one run")
    args = parser.parse_args()
    if args.smoke:
        args.tests, args.repeat = 10, 1
    with tempfile.TemporaryDirectory(prefix="bench-gate-") as scratch:
        folder = Path(scratch)
        root, base = _repo(folder, args.tests)
        environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        bare = [sys.executable, "-m", "pytest", MODULE, "-q", "-p", "no:cacheprovider"]
        bare += ["-o", "addopts="]
        bare_env = pinned_env(folder)
        bare_env.pop("PYTHONDONTWRITEBYTECODE", None)
        counter = iter(range(1_000_000))

        def argv(run: int) -> list[str]:
            return [sys.executable, "-m", "entropy_action", "gate", "--base-ref", base,
                    "--out", str(folder / f"out-{run}")]  # fmt: skip

        cpu: dict[str, list[float]] = {"gate": [], "bare": []}

        def gate(cache: Path | None) -> benchlib.Sample:
            run = next(counter)
            env = {**environ, "XDG_CACHE_HOME": str(cache or folder / f"cache-{run}")}
            return _timed(cpu["gate"], argv(run), str(root), env)

        def floor() -> benchlib.Sample:
            return _timed(cpu["bare"], bare, str(root), bare_env)

        floor()  # warm the file cache and .pyc files
        gate(folder / "cache-warm")  # the first push fills the cache (and writes .pyc files)
        cpu["gate"].clear()
        benchlib.compile_gate()
        first = benchlib.alternate(lambda: gate(None), floor, args.repeat)
        second = benchlib.alternate(lambda: gate(folder / "cache-warm"), floor, args.repeat)
        if args.profile:
            env = {**environ, "XDG_CACHE_HOME": str(folder / "cache-warm")}
            _profile(argv(next(counter)), root, env, folder / "gate.prof")
    print(benchlib.load_note())
    print(f"a docs-only patch; a property module of {args.tests} test cases")
    print("-- first run on the base (empty cache)")
    benchlib.print_ratio("entropy-gate gate", "bare pytest", *first)
    print("-- second run on the same base")
    benchlib.print_ratio("entropy-gate gate", "bare pytest", *second)
    gate_cpu, bare_cpu = statistics.median(cpu["gate"]), statistics.median(cpu["bare"])
    print(
        f"-- CPU time (user + system, the process and its children), all runs: gate median "
        f"{gate_cpu:.2f} s, bare pytest {bare_cpu:.2f} s, ratio {gate_cpu / bare_cpu:.2f} "
        "(the work, whatever the load; the wall ratio can approach it divided by the cores)"
    )
    return 0


def _timed(cpu: list[float], argv: list[str], cwd: str, env: dict[str, str]) -> benchlib.Sample:
    """benchlib.wall, also keeping the CPU time the command and its children used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    sample = benchlib.wall(argv, cwd=cwd, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return sample


def _repo(folder: Path, tests: int) -> tuple[Path, str]:
    """The scratch repository and its base commit; HEAD is the docs-only patch."""
    root = make_repo(folder, tests)
    (root / ".gitignore").write_text("__pycache__/\n")
    base = benchlib.commit_all(root, "ignore bytecode caches")
    (root / "README.md").write_text("# bench\n\nDocs only.\n")
    benchlib.commit_all(root, "docs only")
    return root, base


def _profile(argv: list[str], root: Path, env: dict[str, str], output: Path) -> None:
    """One gate under cProfile: its progress lines with the elapsed time, then the top."""
    profiled = [sys.executable, "-m", "cProfile", "-o", str(output), *argv[1:]]
    started = time.perf_counter()
    child = subprocess.Popen(
        profiled, cwd=str(root), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert child.stderr is not None
    print("-- wall-clock phases of one second run (under cProfile, so a little slower)")
    for line in child.stderr:
        print(f"{time.perf_counter() - started:7.3f} s  {line.rstrip()[:100]}")
    child.wait()
    print(f"{time.perf_counter() - started:7.3f} s  exit {child.returncode}")
    print("-- cProfile of the gate process, by cumulative time")
    pstats.Stats(str(output)).sort_stats("cumulative").print_stats("entropy_action", 25)


if __name__ == "__main__":
    raise SystemExit(main())
