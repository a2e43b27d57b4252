"""Host B's order probes (issue 35 part 4): `entropy-gate run --host b --isolate --base-ref`
on a patch that adds two tests at the end of the property module (the module runs again in
reverse of host A's order and with the new tests first: two probes; "last" is host A's order)
against the same run whose base ref is the head (nothing added: no probe), each alternating
with bare pytest.

    .venv/bin/python bench/bench_orderprobes.py [--tests 500] [--repeat 3] [--smoke]

The module is bench_variations.py's (`--tests` cases, one in ten listing 50 files). The
script checks that probes.json exists after the probed leg and not after the other, so it
cannot time two equal runs. Not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

import bench_variations
import benchlib

ADDED = """

def test_new_total_is_positive():
    assert sum(range(10)) > 0


def test_new_listing_is_stable():
    assert sorted(os.listdir(DATA)) == sorted(os.listdir(DATA))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="small sizes, one pair")
    args = parser.parse_args()
    if args.smoke:
        args.tests, args.repeat = 20, 1
    with tempfile.TemporaryDirectory(prefix="bench-probes-") as scratch:
        folder = Path(scratch)
        root = bench_variations.make_repo(folder, args.tests)
        module = root / bench_variations.MODULE
        module.write_text(module.read_text() + ADDED)
        benchlib.commit_all(root, "two new tests of the property")

        def host_b(base: str, name: str) -> list[str]:
            return [
                sys.executable, "-m", "entropy_action", "run", "--host", "b", "--isolate",
                "--out", str(folder / name), "--manifest", str(root / "with.yaml"),
                "--base-ref", base,
            ]  # fmt: skip

        bare = [sys.executable, "-m", "pytest", bench_variations.MODULE, "-q"]
        bare += ["-p", "no:cacheprovider", "-o", "addopts="]
        env = {**os.environ, "PYTHONHASHSEED": "0", "TZ": "UTC"}
        benchlib.wall(bare, cwd=str(root), env=env)  # warm the file cache and .pyc files
        probed, plain, floor = [], [], []
        for _ in range(args.repeat):
            floor.append(benchlib.wall(bare, cwd=str(root), env=env).seconds)
            probed.append(benchlib.wall(host_b("HEAD~1", "probed"), str(root), env).seconds)
            plain.append(benchlib.wall(host_b("HEAD", "plain"), str(root), env).seconds)
            found = json.loads((folder / "probed" / "probes.json").read_text())
            count = len(found["probes"])
            if count < 2 or (folder / "plain" / "probes.json").exists():
                raise SystemExit("the probed leg must run its probes, the plain leg none")
    print(benchlib.load_note())
    print(f"a property module of {args.tests} cases and two new tests ({count} probes)")
    for name, times in (("host B with order probes", probed), ("host B, no probe", plain)):
        over = benchlib.stats([t / b for t, b in zip(times, floor, strict=True)])
        print(
            f"{name}: median {statistics.median(times):.2f} s, bare "
            f"{statistics.median(floor):.2f} s: {over} x bare"
        )
    ratios = [p / q for p, q in zip(probed, plain, strict=True)]
    print(f"probed / plain per run: {benchlib.stats(ratios)}")
    print(f"order probes: ratio {statistics.median(ratios):.2f}x the same host B run without")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
