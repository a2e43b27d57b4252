"""What finding the functions a property reaches costs: the probe against coverage.py.

    .venv/bin/python bench/bench_probe.py ROOT MODULE [--python PATH] [--runs 5]
    .venv/bin/python bench/bench_probe.py --smoke   # a tiny generated package, one run

Times `python -m pytest MODULE` in ROOT bare, with the mutation probe watching every
production file (call events only: `sys.settrace` before 3.12, `sys.monitoring` after), and,
when the interpreter has it, under `coverage run` restricted to those files (line coverage).
Prints medians and ratios to bare pytest. Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from entropy_action.hosts import testfiles
from entropy_action.strength.mutation import harness, measure


def _median(runs: int, argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, env=env, check=False, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _production(root: Path) -> list[str]:
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in measure.SKIP_DIRS and not d.startswith(".")]
        for name in files:
            relative = (Path(folder) / name).relative_to(root).as_posix()
            if name.endswith(".py") and not measure.is_support(relative):
                found.append(relative)
    return sorted(found)


SMOKE_LIB = "def fee(days):\n    return 0 if days <= 30 else days - 30\n"
SMOKE_TEST = """\
import pytest
from smokelib import fee


@pytest.mark.parametrize("days", range(20))
def test_fee(days):
    assert fee(days + 30) == days
"""


def _smoke_tree(folder: Path) -> Path:
    root = folder / "smoke"
    (root / "tests").mkdir(parents=True)
    (root / "smokelib.py").write_text(SMOKE_LIB)
    (root / "conftest.py").write_text("")
    (root / "tests" / "test_fee.py").write_text(SMOKE_TEST)
    return root


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root", type=Path, nargs="?")
    parser.add_argument("module", nargs="?")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="a tiny generated tree, one run")
    args = parser.parse_args()
    if args.smoke:
        args.module, args.runs = "tests/test_fee.py", 1
    elif args.root is None or args.module is None:
        parser.error("ROOT and MODULE are required (or --smoke)")
    with tempfile.TemporaryDirectory(prefix="bench-probe-") as scratch:
        folder = Path(scratch)
        root = (_smoke_tree(folder) if args.smoke else args.root).resolve()  # removed with it
        watch = _production(root)
        base = [args.python, "-m", "pytest", args.module, "-q", "-p", "no:cacheprovider"]
        probe_dir = folder / "probe"
        probe_dir.mkdir()
        shutil.copyfile(testfiles.TESTPROC / "probe.py", probe_dir / f"{harness.PROBE_MODULE}.py")
        config = folder / "probe.json"
        config.write_text(
            json.dumps({"report": str(folder / "out.json"), "root": str(root), "watch": watch})
        )
        env = dict(os.environ)
        probed = {**env, "PYTHONPATH": str(probe_dir), harness.PROBE_ENV: str(config)}
        bare = _median(args.runs, base, root, env)
        probe = _median(args.runs, [*base, "-p", harness.PROBE_MODULE], root, probed)
        print(f"bare pytest:          {bare:.2f} s (median of {args.runs})")
        print(f"with the probe:       {probe:.2f} s  ratio {probe / bare:.2f}x")
        has_coverage = subprocess.run(
            [args.python, "-c", "import coverage"], capture_output=True, check=False
        )
        if has_coverage.returncode != 0:
            print("coverage.py: not installed in that interpreter (--python one that has it)")
            return
        include = ",".join(str(root / w) for w in watch)
        covered = [
            args.python, "-m", "coverage", "run", f"--data-file={folder / 'cov'}",
            f"--include={include}", "-m", "pytest", *base[3:],
        ]  # fmt: skip
        line = _median(args.runs, covered, root, env)
        print(f"under coverage.py:    {line:.2f} s  ratio {line / bare:.2f}x")


if __name__ == "__main__":
    main()
