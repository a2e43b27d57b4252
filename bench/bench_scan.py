"""`entropy-gate scan` in a tree of 2,000 test files, for patches of growing size.

    .venv/bin/python bench/bench_scan.py [--files 2000] [--repeat 5] [--smoke]

A scratch repository of FILES test modules in packages of 50, each package with a
conftest.py, and the property module that imports a helper from the repository. Patches
change 1 file (the property module), then 10, 100 and 1,000 test files besides it. Each
scan is a fresh `entropy-gate scan --base-ref BASE` process alternating with
`python -c pass` (the interpreter alone); the goal is at most 2 s, the cost growing with
what the patch reaches rather than with the tree. Not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import benchlib

MODULE = "tests/properties/test_prop.py"
MANIFEST = f"""\
version: 1
property_id: prop
module: {MODULE}
pins:
  rng_seed: 9173
  tz: UTC
"""
PROPERTY = """\
from tests.support.helpers import double


def test_double_is_even():
    assert double(3) % 2 == 0
"""
TEST_FILE = """\
import pytest


@pytest.mark.parametrize("n", range(3))
def test_{i}(n):
    assert n + {i} >= {i}


def test_{i}_again():
    assert True
"""
CONFTEST = "import pytest\n\n\n@pytest.fixture\ndef value():\n    return 1\n"


def make_tree(root: Path, files: int) -> list[Path]:
    """The tree at the base; the paths of its generated test files."""
    (root / "tests" / "properties").mkdir(parents=True)
    (root / "tests" / "__init__.py").write_text("")
    (root / "tests" / "helpers.py").write_text("def double(x):\n    return 2 * x\n")
    (root / "tests" / "conftest.py").write_text(CONFTEST)
    (root / "entropy.yaml").write_text(MANIFEST)
    (root / MODULE).write_text(PROPERTY)
    paths = []
    for i in range(files):
        package = root / "tests" / f"group_{i // 50:03d}"
        if not package.exists():
            package.mkdir()
            (package / "conftest.py").write_text(CONFTEST)
        path = package / f"test_file_{i:05d}.py"
        path.write_text(TEST_FILE.format(i=i))
        paths.append(path)
    benchlib.commit_all(root, "base")
    return paths


def patch(root: Path, paths: list[Path], others: int) -> None:
    """Reset to the base, then change the property module and `others` test files."""
    benchlib.git(root, "checkout", "-q", "--", ".")
    with (root / MODULE).open("a") as handle:
        handle.write("\n\ndef test_double_of_zero():\n    assert double(0) == 0\n")
    for path in paths[:others]:
        with path.open("a") as handle:
            handle.write("\n\ndef test_added():\n    assert 1\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="small sizes, one pair")
    args = parser.parse_args()
    if args.smoke:
        args.files, args.repeat = 20, 1
    sizes = [n for n in (0, 9, 99, 999) if n < args.files]
    scan = [sys.executable, "-m", "entropy_action", "scan", "--base-ref", "HEAD"]
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-scan-") as scratch:
        root = Path(scratch) / "repo"
        paths = make_tree(root, args.files)
        for others in sizes:
            patch(root, paths, others)
            results.append(
                (
                    others + 1,
                    *benchlib.alternate(
                        lambda: benchlib.wall(scan, cwd=str(root)),
                        lambda: benchlib.wall([sys.executable, "-c", "pass"]),
                        args.repeat,
                    ),
                )
            )
    print(benchlib.load_note())
    print(f"a tree of {args.files} test files")
    for changed, ours, base in results:
        print(f"-- a patch of {changed} file(s)")
        benchlib.seconds_stats("entropy-gate scan", ours)
        benchlib.print_ratio("entropy-gate scan", "python -c pass", ours, base)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
