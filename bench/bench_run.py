"""Wall time of one host run against bare pytest, on a trivial property module.

    .venv/bin/python bench/bench_run.py [--runs 5]

Builds a scratch git repository with the seed's manifest (temp_root pinned) and a one-test
property module, then times `python -m pytest MODULE` alone, `run_host` on host A and the
isolated host B, and prints the medians and their ratios to bare pytest. Not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from entropy_action import manifest, runner

MODULE = "tests/properties/test_trivial.py"
MANIFEST = f"""\
version: 1
property_id: trivial
module: {MODULE}
pins:
  clock_unix: 1768003200
  rng_seed: 9173
  tz: UTC
  lang: C.UTF-8
  umask: "0022"
  temp_root: {{temp_root}}
"""
PROPERTY = "def test_trivial():\n    assert sum(range(10)) == 45\n"


def _repo(folder: Path) -> Path:
    root = folder / "repo"
    (root / "tests" / "properties").mkdir(parents=True)
    (root / "entropy.yaml").write_text(MANIFEST.format(temp_root=folder / "entropy-tmp"))
    (root / MODULE).write_text(PROPERTY)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)
    ident = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    subprocess.run(["git", *ident, "commit", "-qm", "base"], cwd=root, env=env, check=True)
    return root


def _median(runs: int, job: Callable[[], None]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        job()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="entropy-bench-") as tmp:
        root = _repo(Path(tmp))
        loaded = manifest.load(root / "entropy.yaml", repo_root=root)
        bare_cmd = [sys.executable, "-m", "pytest", MODULE, "-q", "-p", "no:cacheprovider"]

        def bare() -> None:
            subprocess.run(bare_cmd, cwd=root, check=True, capture_output=True)

        def host(isolated: bool) -> Callable[[], None]:
            def job() -> None:
                info = runner.run_host(
                    runner.RunSettings(
                        host="b" if isolated else "a",
                        out=Path(tmp) / ("b" if isolated else "a"),
                        root=root,
                        loaded=loaded,
                        environ=dict(os.environ),
                        isolate=isolated,
                    )
                )
                if info.returncode or info.pins_mismatch:
                    raise SystemExit(f"the run did not pass: {info}")

            return job

        bare()  # warm the file cache
        medians = {
            "bare pytest": _median(args.runs, bare),
            "host A": _median(args.runs, host(False)),
            "host B (isolated)": _median(args.runs, host(True)),
        }
    base = medians["bare pytest"]
    print(f"median of {args.runs} runs each:")
    for name, seconds in medians.items():
        print(f"  {name:<18} {seconds * 1000:7.0f} ms   x{seconds / base:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
