"""Start-up: `entropy-gate --help` against `python -c pass` (the interpreter alone).

    .venv/bin/python bench/bench_startup.py [--repeat 15] [--smoke]

Each is a fresh process; the two alternate and the script prints min / median / max of
the per-pair ratio. Not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import sys

import benchlib


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--smoke", action="store_true", help="one pair")
    args = parser.parse_args()
    repeat = 1 if args.smoke else args.repeat
    help_argv = [sys.executable, "-m", "entropy_action", "--help"]
    ours, base = benchlib.alternate(
        lambda: benchlib.wall(help_argv),
        lambda: benchlib.wall([sys.executable, "-c", "pass"]),
        repeat,
    )
    print(benchlib.load_note())
    benchlib.print_ratio("entropy-gate --help", "python -c pass", ours, base)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
