"""The live-entropy audit's overhead: one host run of a 1,000-test module, with and without it.

    .venv/bin/python bench/bench_audit.py [--runs 7] [--tests 1000] [--python PATH] [--stack]

Builds a scratch git repository whose property module has 1,000 tests, each calling a small
production package (a loop over invoice lines, a `datetime` computed from the pinned clock and,
in one test of ten, a live `datetime.now()`), then times `run_host` on host A with the audit
and without it, alternating the two so drift hits both, and prints the medians and the ratios
of wall time and of the pytest process's CPU time (steadier on a shared machine).
`--python` measures another interpreter (3.12+ uses sys.monitoring, 3.10-3.11 sys.setprofile).
The goal is a ratio of at most 1.05. `--stack`: the production package also reads the stack
in every test as honest code does (a logging call's findCaller, a helper taking its caller's
name, inspect.currentframe): three `sys._getframe` audit events a test, each placed and
found to name no test, and a conftest sets pytest's `sys._called_from_test` (every read of
`sys` then goes through the audit's class of it; issue 35's run-time detection). Run the
same script with another checkout's venv to compare two gates. Not a test.
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

from entropy_action.hosts import launch, runsettings
from entropy_action.manifest import pinfile

MODULE = "tests/properties/test_many.py"
MANIFEST = f"""\
version: 1
property_id: many
module: {MODULE}
pins:
  clock_unix: 1768003200
  rng_seed: 9173
  tz: UTC
run:
  pytest_args: ["-o", "addopts=", "-q"]
"""
LIB = """\
import datetime
import os


def total(lines, as_of, live=False):
    due = as_of + datetime.timedelta(days=30)
    fee = 500 if (datetime.datetime.now(datetime.timezone.utc) if live else as_of) > due else 0
    return sum(line * 3 // 2 for line in lines) + fee
"""
STACK_LIB = """\
import inspect
import logging
import sys

log = logging.getLogger("billing")
log.addHandler(logging.NullHandler())
log.propagate = False


def _caller():
    return sys._getframe(1).f_code.co_name


def _stack_reads():
    log.warning("totalling for %s", _caller())
    return inspect.currentframe()
"""
STACK_CALL = "    _stack_reads()\n    due = as_of"
MARKER_CONFTEST = (
    "import sys\n\n\ndef pytest_configure(config):\n    sys._called_from_test = True\n"
)
PROPERTY = """\
import datetime
import os

import pytest

from billing import total

CLOCK = datetime.datetime.fromtimestamp(int(os.environ["ENTROPY_CLOCK_UNIX"]), datetime.UTC
    if hasattr(datetime, "UTC") else datetime.timezone.utc)


@pytest.mark.parametrize("n", range({tests}))
def test_total(n):
    lines = [(n * 7 + i) % 1000 for i in range(50)]
    assert total(lines, CLOCK, live=n % 10 == 0) >= 0
"""


def _repo(folder: Path, tests: int, stack: bool = False) -> Path:
    root = folder / "repo"
    (root / "tests" / "properties").mkdir(parents=True)
    (root / "billing").mkdir()
    (root / "entropy.yaml").write_text(MANIFEST)
    lib = STACK_LIB + LIB.replace("    due = as_of", STACK_CALL) if stack else LIB
    (root / "billing" / "__init__.py").write_text(lib)
    (root / MODULE).write_text(PROPERTY.replace("{tests}", str(tests)))
    if stack:  # pytest's marker recipe: the audit moves it behind sys's class for the session
        (root / "tests" / "conftest.py").write_text(MARKER_CONFTEST)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)
    ident = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    subprocess.run(["git", *ident, "commit", "-qm", "base"], cwd=root, env=env, check=True)
    return root


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--tests", type=int, default=1000)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--smoke", action="store_true", help="small sizes, one run")
    parser.add_argument("--stack", action="store_true", help="honest stack reads in every test")
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.tests = 1, 20
    times: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    with tempfile.TemporaryDirectory(prefix="entropy-bench-audit-") as tmp:
        root = _repo(Path(tmp), args.tests, args.stack)
        loaded = pinfile.load(root / "entropy.yaml", repo_root=root)

        def run(audit: bool) -> tuple[float, float]:
            settings = runsettings.RunSettings(
                host="a",
                out=Path(tmp) / ("on" if audit else "off"),
                root=root,
                loaded=loaded,
                environ=dict(os.environ),
                python=args.python,
                audit=audit,
            )
            cpu, start = _children_cpu(), time.perf_counter()
            info = launch.run_host(settings)
            elapsed, cpu = time.perf_counter() - start, _children_cpu() - cpu
            if info.returncode or info.pins_mismatch:
                raise SystemExit(f"the run did not pass: {info.notes} {info.pins_mismatch}")
            if audit and (info.audit is None or len(info.audit.records) != args.tests // 10):
                raise SystemExit(f"the audit did not record the live reads: {info.audit}")
            return elapsed, cpu

        run(True)  # warm the file cache and the bytecode
        for _ in range(args.runs):
            for audit in (False, True):
                times[audit].append(run(audit))
    stack = ", honest stack reads in each test" if args.stack else ""
    print(f"{args.tests} tests{stack}, {args.python}, median of {args.runs} runs each:")
    for index, what in enumerate(("wall", "cpu")):
        off = statistics.median(t[index] for t in times[False])
        on = statistics.median(t[index] for t in times[True])
        line = f"  {what}: without the audit {off * 1000:6.0f} ms, with {on * 1000:6.0f} ms"
        print(f"{line}: x{on / off:.3f}")
    return 0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    raise SystemExit(main())
