"""Host B with issue 22's variations (test order, file-listing order, CPU count, hash seed)
against host B without them, and both against bare pytest.

    .venv/bin/python bench/bench_variations.py [--tests 500] [--repeat 3] [--smoke]

A scratch git repository holds two manifests of one property module: one as a user writes it
(every variation on), one that turns the new ones off (`host_b_off` for test_order,
file_order and cpu_count, `hash_seed` pinned to host A's 0). The module has `--tests` cases;
every tenth lists a directory of 50 files (os.listdir, os.scandir, glob, Path.iterdir) and
reads os.cpu_count(), so the patched functions are called as a real suite calls them.
`entropy-gate run --host b --isolate` runs with each manifest, alternating with bare pytest
(each a fresh process); the script prints min / median / max of the per-pair ratios. Not a
test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

import benchlib

MODULE = "tests/properties/test_listing.py"
OFF = """\
constraints:
  host_b_off:
    test_order: "bench: host B without the new variations"
    file_order: "bench: host B without the new variations"
    cpu_count: "bench: host B without the new variations"
"""
PROPERTY = """\
import glob
import os
import pathlib

import pytest

DATA = pathlib.Path(__file__).parent / "data"


@pytest.mark.parametrize("i", range({tests}))
def test_listing_is_complete(i):
    if i % 10 == 0:
        assert len(os.listdir(DATA)) == 50
        with os.scandir(DATA) as entries:
            assert sum(1 for _ in entries) == 50
        assert len(glob.glob(str(DATA / "*.txt"))) == 50
        assert len(list(DATA.iterdir())) == 50
        assert (os.cpu_count() or 1) >= 1
    assert sum(range(i)) == i * (i - 1) // 2
"""


def make_repo(folder: Path, tests: int) -> Path:
    root = folder / "repo"
    data = root / "tests" / "properties" / "data"
    data.mkdir(parents=True)
    for n in range(50):
        (data / f"f{n:02d}.txt").write_text(str(n))
    (root / MODULE).write_text(PROPERTY.format(tests=tests))
    (root / "with.yaml").write_text(benchlib.manifest(MODULE, "listing"))
    (root / "without.yaml").write_text(
        benchlib.manifest(MODULE, "listing", tail=OFF, pins="  hash_seed: 0\n")
    )
    (root / "README.md").write_text("# bench\n")
    benchlib.commit_all(root, "base")
    return root


NEW = ("hash_seed", "test_order", "file_order", "cpu_count")


def _check_variations(folder: Path) -> None:
    """The two legs measured what they claim: host.json says host B varied the new
    dimensions with the first manifest and held them with the second."""
    for manifest, wanted in (("with.yaml", True), ("without.yaml", False)):
        info = json.loads((folder / f"out-{manifest}" / "host.json").read_text())
        seen = {v["dimension"]: v["varied"] for v in info["variations"]}
        wrong = [name for name in NEW if seen.get(name) is not wanted]
        if wrong:
            raise SystemExit(f"{manifest}: host B's variations {wrong} are not varied={wanted}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="small sizes, one pair")
    args = parser.parse_args()
    if args.smoke:
        args.tests, args.repeat = 20, 1
    with tempfile.TemporaryDirectory(prefix="bench-variations-") as scratch:
        folder = Path(scratch)
        root = make_repo(folder, args.tests)

        def gate(manifest: str) -> list[str]:
            return [
                sys.executable, "-m", "entropy_action", "run", "--host", "b", "--isolate",
                "--out", str(folder / f"out-{manifest}"), "--manifest", str(root / manifest),
            ]  # fmt: skip

        bare = [sys.executable, "-m", "pytest", MODULE, "-q", "-p", "no:cacheprovider"]
        bare += ["-o", "addopts="]
        env = {**os.environ, "PYTHONHASHSEED": "0", "TZ": "UTC"}
        benchlib.wall(bare, cwd=str(root), env=env)  # warm the file cache and .pyc files
        with_b, without_b, floor = [], [], []
        for _ in range(args.repeat):
            floor.append(benchlib.wall(bare, cwd=str(root), env=env).seconds)
            with_b.append(benchlib.wall(gate("with.yaml"), str(root), dict(os.environ)).seconds)
            without_b.append(
                benchlib.wall(gate("without.yaml"), str(root), dict(os.environ)).seconds
            )
            _check_variations(folder)
    print(benchlib.load_note())
    print(f"a property module of {args.tests} test cases, one in ten listing 50 files")
    for name, times in (("host B, new variations on", with_b), ("host B, off", without_b)):
        over_bare = benchlib.stats([t / b for t, b in zip(times, floor, strict=True)])
        print(
            f"{name}: median {statistics.median(times):.2f} s, bare "
            f"{statistics.median(floor):.2f} s: {over_bare} x bare"
        )
    ratios = [w / o for w, o in zip(with_b, without_b, strict=True)]
    print(f"on / off per run: {benchlib.stats(ratios)}; ratio {statistics.median(ratios):.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
