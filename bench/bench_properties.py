"""`entropy-gate gate` on a manifest of many properties against bare pytest (issue 21).

    .venv/bin/python bench/bench_properties.py [--properties 20] [--own 3] [--tests 50]
                                               [--data-files 0] [--repeat 3] [--smoke]
                                               [--profile]

A scratch repository whose entropy.yaml lists 20 properties, one module of 50 tests each;
17 share every pin (one pytest session per host) and 3 have their own time zone (a session
each). The patch changes README.md only. The gate (a fresh, empty user cache directory each
time) alternates with two floors: (a) bare pytest run once per module, 20 runs one after
the other, and (b) one bare pytest run over all 20 modules. Prints min / median / max of
the per-pair ratios against each; the goal is the gate within 1.5x of (b).

`--data-files N` commits N files of 8 KB (folders of 100 under data/) in the base, as a real
checkout holds far more files than its property modules: what grows with the repository
rather than with its tests (host B's copy of the tree, the judged tree's digest).

`--profile` runs the gate once more and prints the elapsed time at each progress line.
Not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchlib
from bench_run import pinned_env

PROPERTY = """\
import random

import pytest


@pytest.mark.parametrize("case", range({tests}))
def test_{name}(case):
    rng = random.Random(case)
    amounts = [rng.randint(1, 10_000) for _ in range(16)]
    assert sum(amounts) == sum(reversed(amounts))
"""


def manifest(properties: int, own: int) -> str:
    lines = ["version: 1", "pins:", "  clock_unix: 1700000000", "  rng_seed: 7", "  tz: UTC"]
    lines.append("properties:")
    zones = ("Europe/Paris", "Asia/Tokyo", "America/New_York", "Australia/Sydney")
    for index in range(properties):
        lines += [f"  - property_id: p{index:02d}", f"    module: tests/test_p{index:02d}.py"]
        if index >= properties - own:
            lines += ["    pins:", f"      tz: {zones[index % len(zones)]}"]
    return "\n".join(lines) + "\n"


def make_repo(
    folder: Path, properties: int, own: int, tests: int, data_files: int = 0
) -> tuple[Path, str]:
    """The repository and its base commit; HEAD is the docs-only patch."""
    root = folder / "repo"
    (root / "tests").mkdir(parents=True)
    for index in range(data_files):
        data = root / "data" / f"d{index // 100:03d}" / f"f{index % 100:02d}.bin"
        data.parent.mkdir(parents=True, exist_ok=True)
        data.write_bytes(random.Random(index).randbytes(8192))  # noqa: S311 (data, not keys)
    (root / "entropy.yaml").write_text(manifest(properties, own))
    for index in range(properties):
        text = PROPERTY.format(tests=tests, name=f"p{index:02d}")
        (root / "tests" / f"test_p{index:02d}.py").write_text(text)
    (root / "README.md").write_text("# bench\n")
    (root / ".gitignore").write_text("__pycache__/\n")
    base = benchlib.commit_all(root, "base")
    (root / "README.md").write_text("# bench\n\nDocs only.\n")
    benchlib.commit_all(root, "docs only")
    return root, base


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--properties", type=int, default=20)
    parser.add_argument("--own", type=int, default=3, help="properties with their own pins")
    parser.add_argument("--tests", type=int, default=50)
    parser.add_argument("--data-files", type=int, default=0, help="8 KB files in the base")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="small sizes, one pair")
    parser.add_argument("--profile", action="store_true", help="phases of one run")
    args = parser.parse_args()
    if args.smoke:
        args.properties, args.own, args.tests, args.repeat = 3, 1, 5, 1
        args.data_files = min(args.data_files, 150) or 30  # the option's path runs too
    with tempfile.TemporaryDirectory(prefix="bench-properties-") as scratch:
        folder = Path(scratch)
        root, base = make_repo(folder, args.properties, args.own, args.tests, args.data_files)
        modules = [f"tests/test_p{index:02d}.py" for index in range(args.properties)]
        environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        bare_env = pinned_env(folder)
        bare_env.pop("PYTHONDONTWRITEBYTECODE", None)
        bare = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts="]
        counter = iter(range(1_000_000))

        def gate_argv(run: int) -> list[str]:
            return [sys.executable, "-m", "entropy_action", "gate", "--base-ref", base,
                    "--out", str(folder / f"out-{run}")]  # fmt: skip

        cpu: dict[str, list[float]] = {"gate": [], "each": [], "once": []}

        def gate() -> benchlib.Sample:
            run = next(counter)
            env = {**environ, "XDG_CACHE_HOME": str(folder / f"cache-{run}")}
            return _timed(cpu["gate"], gate_argv(run), str(root), env)

        def each() -> benchlib.Sample:
            started, spent = time.perf_counter(), []
            for module in modules:
                _timed(spent, [*bare, module], str(root), bare_env)
            cpu["each"].append(sum(spent))
            return benchlib.Sample(time.perf_counter() - started, 0, 0)

        def once() -> benchlib.Sample:
            return _timed(cpu["once"], [*bare, *modules], str(root), bare_env)

        once()  # warm the file cache and .pyc files
        gate()
        cpu["gate"].clear()
        cpu["once"].clear()
        benchlib.compile_gate()
        against_each = benchlib.alternate(gate, each, args.repeat)
        against_once = benchlib.alternate(gate, once, args.repeat)
        if args.profile:
            env = {**environ, "XDG_CACHE_HOME": str(folder / "cache-profile")}
            _phases(gate_argv(next(counter)), root, env)
    print(benchlib.load_note())
    sessions = args.own + (1 if args.properties > args.own else 0)
    print(
        f"a docs-only patch; {args.properties} properties of {args.tests} tests each, "
        f"{sessions} sessions per host"
        + (f"; {args.data_files} data files of 8 KB in the tree" if args.data_files else "")
    )
    print(f"-- (a) against {args.properties} bare pytest runs, one per module")
    benchlib.print_ratio("entropy-gate gate", "bare pytest per module", *against_each)
    print("-- (b) against one bare pytest run of every module")
    benchlib.print_ratio("entropy-gate gate", "bare pytest once", *against_once)
    medians = {name: statistics.median(spent) for name, spent in cpu.items()}
    print(
        f"-- CPU time (user + system, the process and its children), medians: gate "
        f"{medians['gate']:.2f} s, (a) {medians['each']:.2f} s, (b) {medians['once']:.2f} s; "
        f"gate / (b) {medians['gate'] / medians['once']:.2f} (the work, whatever the load)"
    )
    return 0


def _timed(cpu: list[float], argv: list[str], cwd: str, env: dict[str, str]) -> benchlib.Sample:
    """benchlib.wall, also keeping the CPU time the command and its children used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    sample = benchlib.wall(argv, cwd=cwd, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return sample


def _phases(argv: list[str], root: Path, env: dict[str, str]) -> None:
    """One gate: its progress lines with the elapsed time."""
    started = time.perf_counter()
    child = subprocess.Popen(
        argv, cwd=str(root), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert child.stderr is not None
    print("-- wall-clock phases of one run")
    for line in child.stderr:
        print(f"{time.perf_counter() - started:7.3f} s  {line.rstrip()[:110]}")
    child.wait()
    print(f"{time.perf_counter() - started:7.3f} s  exit {child.returncode}")


if __name__ == "__main__":
    raise SystemExit(main())
