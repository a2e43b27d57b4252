"""What the property's test side costs (issue 35): `gate` on the demo's patches, this checkout
side by side with another (`--main`), cold and with a warm cache.

    .venv/bin/python bench/bench_testside.py [--runs 3] [--main CHECKOUT] [--patch NAME ...]

Builds the demo's invoice example once per patch (default: `support-file`, whose only
change to the test side is a helper in tests/support, so this checkout runs the base's test
side on the head's code and mutation in two copies where main runs no strength step;
`honest-fix`, production only, where the closure is computed and nothing more runs;
`tautology`, the property module changed, where both run the strength step) and times
`entropy-gate gate` there with each checkout first on the gate's sys.path, alternately:
cold (a fresh XDG_CACHE_HOME: no base evidence, no mutation cache, no base-on-head entry),
then warm (a second run over the cache the cold run left). Wall and CPU seconds (the gate
and every process it waited for), medians, and the ratio of this checkout to the other;
without `--main` the other side is this checkout too (the ratio is the noise). Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import benchlib

from entropy_action.gate import demo

HERE = Path(__file__).resolve().parents[1]
PATCHES = ("support-file", "honest-fix", "tautology")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--main", type=Path, default=None, help="another checkout of the gate")
    parser.add_argument("--patch", action="append", default=[], choices=PATCHES)
    parser.add_argument("--smoke", action="store_true", help="one run of honest-fix")
    args = parser.parse_args(argv)
    runs, patches = (1, ["honest-fix"]) if args.smoke else (args.runs, args.patch or PATCHES)
    sides = {"branch": HERE, "other": (args.main or HERE).resolve()}
    print(_load())
    with tempfile.TemporaryDirectory(prefix="bench-testside-") as scratch:
        for name in patches:
            repo, base = _repo(Path(scratch), name)
            times = {(side, warm): [] for side in sides for warm in (False, True)}
            verdicts: dict[str, str] = {}
            for index in range(runs):
                order = list(sides) if index % 2 == 0 else list(reversed(sides))
                for side in order:
                    cache = Path(scratch) / f"cache-{name}-{side}-{index}"
                    for warm in (False, True):
                        sample, verdict = _gate(repo, base, sides[side], cache)
                        times[(side, warm)].append(sample)
                        verdicts[side] = verdict
            _report(name, times, verdicts)
    return 0


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} on {os.cpu_count()} cores, {time.ctime()}"


def _repo(scratch: Path, name: str) -> tuple[Path, str]:
    repo = scratch / name
    (patch,) = [p for p in demo.patches() if p.name == name]
    clock = int(time.time()) // 86_400 * 86_400
    base = demo.build_base(repo, clock_unix=clock, temp_root=scratch / "tmp" / name)
    demo.apply_patch(repo, patch)
    return repo, base


def _gate(repo: Path, base: str, checkout: Path, cache: Path) -> tuple[benchlib.Sample, str]:
    out = cache.parent / f"{cache.name}-verdict.json"
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    # the checkout first on this process's sys.path only: a PYTHONPATH would reach the host
    # runs too, and the checkout's own `tests` package would shadow the demo's
    code = (
        f"import sys; sys.path.insert(0, {str(checkout)!r}); "
        "from entropy_action.cli.main import main; raise SystemExit(main(sys.argv[1:]))"
    )
    argv = [sys.executable, "-c", code, "gate", "--base-ref", base, "--json", str(out)]
    sample = benchlib.process(argv, cwd=str(repo), env=env)
    return sample, json.loads(out.read_text(encoding="utf-8"))["classification"]


def _report(
    name: str,
    times: dict[tuple[str, bool], list[benchlib.Sample]],
    verdicts: dict[str, str],
) -> None:
    print(f"-- {name}: branch {verdicts['branch']}, other {verdicts['other']}")
    for warm in (False, True):
        label = "warm" if warm else "cold"
        wall = {s: statistics.median(x.seconds for x in times[(s, warm)]) for s in verdicts}
        cpu = {s: statistics.median(x.cpu for x in times[(s, warm)]) for s in verdicts}
        ratio = wall["branch"] / wall["other"]
        print(
            f"   {label}: branch {wall['branch']:.2f} s (CPU {cpu['branch']:.2f} s), other "
            f"{wall['other']:.2f} s (CPU {cpu['other']:.2f} s): ratio {ratio:.2f}x, CPU "
            f"{cpu['branch'] / cpu['other']:.2f}x"
        )


if __name__ == "__main__":
    raise SystemExit(main())
