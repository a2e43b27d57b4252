"""Two checkouts of the gate side by side against bare pytest: what one change costs or saves.

    .venv/bin/python bench/bench_versions.py --before DIR [--after DIR] [--repeat 5] [--smoke]

DIR is a checkout of the gate (`git worktree add /tmp/before HEAD~1`); --after defaults to
this one. Each runs from its own `entropy_action` (PYTHONPATH, bytecode compiled), in a fresh
process, on the same scratch repositories as the other scripts: bench_gate.py's (one
property of 1,000 cases, a docs-only patch, the second run on a warm cache) and
bench_properties.py's twelve modules of 18 tests sharing every pin and its default twenty
modules of 50 tests (three with a time zone of their own). Each round runs bare pytest, the
before and the after gate, the order reversed every round, and keeps each one's wall time
and CPU time (user + system of it and its children). Prints medians, min-max and the ratios
against bare pytest. Not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import bench_gate
import bench_properties
import benchlib
from bench_run import MODULE, pinned_env

Measure = tuple[str, Path, str, list[str]]  # name, repository, base commit, bare's modules


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="small sizes, one round")
    args = parser.parse_args()
    sides = {"before": args.before.resolve(), "after": args.after.resolve()}
    for side in sides.values():
        if not (side / "entropy_action" / "__init__.py").is_file():
            raise SystemExit(f"{side}: not a checkout of the gate (no entropy_action/)")
        benchlib.compile_gate(side)
    tests, twelve, twenty = (
        (10, (3, 0, 5), (3, 1, 5)) if args.smoke else (1000, (12, 0, 18), (20, 3, 50))
    )
    rounds = 1 if args.smoke else args.repeat
    print(benchlib.load_note())
    with tempfile.TemporaryDirectory(prefix="bench-versions-") as scratch:
        folder = Path(scratch)
        measures: list[Measure] = []
        root, base = bench_gate._repo(folder / "one", tests)
        measures.append((f"gate, one property of {tests} cases", root, base, [MODULE]))
        for label, (count, own, size) in (("twelve", twelve), ("twenty", twenty)):
            root, base = bench_properties.make_repo(folder / label, count, own, size)
            modules = [f"tests/test_p{i:02d}.py" for i in range(count)]
            measures.append(
                (f"gate, {count} properties of {size} tests ({own} own tz)", root, base, modules)
            )
        for measure in measures:
            _compare(measure, sides, folder, rounds)
    print(benchlib.load_note())
    return 0


def _compare(measure: Measure, sides: dict[str, Path], folder: Path, rounds: int) -> None:
    name, root, base, modules = measure
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    bare_env = pinned_env(root.parent)
    bare_env.pop("PYTHONDONTWRITEBYTECODE", None)
    bare = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts="]
    runs: dict[str, Callable[[], tuple[float, float]]] = {
        "bare": lambda: _timed([*bare, *modules], root, bare_env)
    }
    for side, checkout in sides.items():
        env = {
            **environ,
            "PYTHONPATH": str(checkout),
            "XDG_CACHE_HOME": str(folder / f"cache-{side}"),
        }
        argv = [sys.executable, "-m", "entropy_action", "gate", "--base-ref", base, "--out"]
        runs[side] = (lambda argv=argv, env=env, side=side: _timed(
            [*argv, str(folder / f"out-{side}")], root, env))  # fmt: skip
    for run in runs.values():
        run()  # warm: the file cache, .pyc files, each side's evidence cache
    seen: dict[str, list[tuple[float, float]]] = {key: [] for key in runs}
    order = list(runs)
    for _ in range(rounds):
        for key in order:
            seen[key].append(runs[key]())
        order.reverse()
    print(f"-- {name}: medians of {rounds} round(s), wall / CPU, ratio to bare (min-max)")
    floor = seen["bare"]
    for key, samples in seen.items():
        wall = [s[0] for s in samples]
        cpu = [s[1] for s in samples]
        wall_ms, cpu_ms = statistics.median(wall) * 1000, statistics.median(cpu) * 1000
        line = f"  {key:<7} wall {wall_ms:7.0f} ms  cpu {cpu_ms:7.0f} ms"
        if key != "bare":
            ratios = [s[0] / f[0] for s, f in zip(samples, floor, strict=True)]
            cpus = [s[1] / f[1] for s, f in zip(samples, floor, strict=True)]
            line += f"  wall {benchlib.stats(ratios)}  cpu {benchlib.stats(cpus)}"
        print(line)


def _timed(argv: list[str], root: Path, env: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    sample = benchlib.wall(argv, cwd=str(root), env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return sample.seconds, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


if __name__ == "__main__":
    raise SystemExit(main())
