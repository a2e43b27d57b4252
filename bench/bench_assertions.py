"""The cost of counting assertions: pytest on a 1,000-test module, with and without it.

    .venv/bin/python bench/bench_assertions.py [--runs 7] [--tests 1000] [--loop 1] [--smoke]

Writes a module of `--tests` tests, each running three asserts over a small computation and
`--loop` more in a loop, then runs pytest on it three ways, in rotation, each a fresh process
with the JUnit report the gate asks for:

- off: the gate's plugin alone (no counting: the floor);
- counted: plus `-p entropy_action.testproc.assertcount -o enable_assertion_pass_hook=true`, as the
  gate's host runs do (assertcount.py counts each passing assert without its explanation);
- hook: the same plus a plugin that implements `pytest_assertion_pass`, so pytest builds the
  explanation of every passing assert as it did when the gate counted through that hook.

Prints the medians of wall and CPU time of the pytest process and the per-round CPU ratios
against `off` (min / median / max). `--loop 50` is a heavy case: 53,000 passing asserts.
Not a test.
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

PROPERTY = """\
import pytest


def total(lines):
    return sum(line * 3 // 2 for line in lines)


@pytest.mark.parametrize("n", range({tests}))
def test_total(n):
    lines = [(n * 7 + i) % 1000 for i in range(50)]
    result = total(lines)
    assert result >= 0
    assert result == total(list(reversed(lines)))
    assert isinstance(result, int)
    for line in lines[:{loop}]:
        assert line < 1000
"""
HOOK_PLUGIN = "def pytest_assertion_pass(item, lineno, orig, expl):\n    pass\n"
MODES = ("off", "counted", "hook")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(folder: Path, mode: str) -> tuple[float, float]:
    argv = [sys.executable, "-m", "pytest", "test_many.py", "-q", "-p", "entropy_action.plugin"]
    argv += ["-p", "no:cacheprovider", "-o", "addopts=", f"--junitxml={folder / 'junit.xml'}"]
    if mode != "off":
        argv += [
            "-p",
            "entropy_action.testproc.assertcount",
            "-o",
            "enable_assertion_pass_hook=true",
        ]
    if mode == "hook":
        argv += ["-p", "bench_pass_hook"]
    path = os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": path}
    cpu, start = _children_cpu(), time.perf_counter()
    done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, check=False)
    elapsed, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"pytest failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    counted = "entropy_assertions" in (folder / "junit.xml").read_text()
    if counted != (mode != "off"):
        raise SystemExit(f"{mode}: the counts were {'' if counted else 'not '}recorded")
    return elapsed, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--tests", type=int, default=1000)
    parser.add_argument("--loop", type=int, default=1, help="asserts per test in a loop (<= 50)")
    parser.add_argument("--smoke", action="store_true", help="50 tests, one round")
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.tests = 1, 50
    times: dict[str, list[tuple[float, float]]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory(prefix="entropy-bench-assertions-") as tmp:
        folder = Path(tmp)
        text = PROPERTY.replace("{tests}", str(args.tests)).replace("{loop}", str(args.loop))
        (folder / "test_many.py").write_text(text)
        (folder / "bench_pass_hook.py").write_text(HOOK_PLUGIN)
        _run(folder, "counted")  # warm the file cache
        for index in range(args.runs):
            order = MODES if index % 2 == 0 else MODES[::-1]
            for mode in order:
                times[mode].append(_run(folder, mode))
    asserts = args.tests * (3 + min(args.loop, 50))
    print(f"{args.tests} tests, {asserts} passing asserts, median of {args.runs} runs each:")
    for index, what in enumerate(("wall", "cpu")):
        medians = {mode: statistics.median(t[index] for t in times[mode]) for mode in MODES}
        shown = ", ".join(f"{mode} {medians[mode] * 1000:6.0f} ms" for mode in MODES)
        print(f"  {what}: {shown}")
    for mode in MODES[1:]:
        ratios = [on[1] / off[1] for on, off in zip(times[mode], times["off"], strict=True)]
        print(
            f"  cpu {mode} / off over {args.runs} rounds: median x{statistics.median(ratios):.3f}"
            f" (min {min(ratios):.3f}, max {max(ratios):.3f})"
        )
    print(f"load average {os.getloadavg()[0]:.1f}, {sys.version.split()[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
