"""The assertion-count hook's overhead: pytest on a 1,000-test module, with and without it.

    .venv/bin/python bench/bench_assertions.py [--runs 7] [--tests 1000] [--loop 1] [--smoke]

Writes a module of `--tests` tests, each running three asserts over a small computation and
`--loop` more in a loop, then runs pytest on it with the gate's plugin loaded, alternately
with `-o enable_assertion_pass_hook=true` (the gate's runs: every passing assert calls the
hook, and pytest builds its explanation text) and without it, and prints the medians of wall
and CPU time of the pytest process and their ratio. `--loop 100` is the worst case the
gate meets: 100,000 passing asserts. Not a test.
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


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(folder: Path, hook: bool) -> tuple[float, float]:
    argv = [sys.executable, "-m", "pytest", "test_many.py", "-q", "-p", "entropy_action.plugin"]
    argv += ["-p", "no:cacheprovider", "-o", "addopts=", f"--junitxml={folder / 'junit.xml'}"]
    if hook:
        argv += ["-o", "enable_assertion_pass_hook=true"]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # each run rewrites afresh
    cpu, start = _children_cpu(), time.perf_counter()
    done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, check=False)
    elapsed, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"pytest failed:\n{done.stdout[-2000:]}")
    counted = "entropy_assertions" in (folder / "junit.xml").read_text()
    if counted != hook:
        raise SystemExit(f"the counts were {'not ' if hook else ''}recorded")
    return elapsed, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--tests", type=int, default=1000)
    parser.add_argument("--loop", type=int, default=1, help="asserts per test in a loop (<= 50)")
    parser.add_argument("--smoke", action="store_true", help="50 tests, one pair")
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.tests = 1, 50
    times: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    ratios = []
    with tempfile.TemporaryDirectory(prefix="entropy-bench-assertions-") as tmp:
        folder = Path(tmp)
        text = PROPERTY.replace("{tests}", str(args.tests)).replace("{loop}", str(args.loop))
        (folder / "test_many.py").write_text(text)
        _run(folder, True)  # warm the file cache
        for _ in range(args.runs):
            for hook in (False, True):
                times[hook].append(_run(folder, hook))
            ratios.append(times[True][-1][1] / times[False][-1][1])
    asserts = args.tests * (3 + min(args.loop, 50))
    print(f"{args.tests} tests, {asserts} passing asserts, median of {args.runs} runs each:")
    for index, what in enumerate(("wall", "cpu")):
        off = statistics.median(t[index] for t in times[False])
        on = statistics.median(t[index] for t in times[True])
        print(
            f"  {what}: without the hook {off * 1000:6.0f} ms, with {on * 1000:6.0f} ms: "
            f"x{on / off:.3f}"
        )
    print(
        f"cpu ratio over {args.runs} alternating pairs: min {min(ratios):.3f}, median "
        f"{statistics.median(ratios):.3f}, max {max(ratios):.3f}; load average "
        f"{os.getloadavg()[0]:.1f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
