"""What each layer of a host run costs, per run and per test (issue 38 part 5).

    .venv/bin/python bench/bench_layers.py [--sizes 200 1000] [--repeat 5] [--smoke]

A host run is bare pytest plus layers the gate adds. Each row below is a fresh process (or
process tree) measured by its CPU time (os.wait4: the process and the children it waited
for), alternating with the others round by round, at two module sizes; the cost of a layer
is its row minus the row before, and the two sizes split it into a cost per run (the
intercept) and a cost per test (the slope):

  bare pytest                  the floor (the pins' environment, no report)
  + JUnit XML                  pytest's own writer (--junitxml): the report the verdict reads
  + the gate's run, plain      launch.run_host with no namespaces, no audit, no counting:
                               the gate's process (its imports, git, the plugin's copy,
                               host.json) and the plugin in the test process (seeding, the
                               channel, the hook inventory, provenance, test data)
  + namespaces                 unshare and nsinit (PID and mount namespace, temp root bind)
  + audit                      audit.py: live reads of the code under test
  + assertion counting         assertcount.py and pytest's assertion pass hook
  the `run` command            `entropy-gate run --host a`: the CLI's own imports and the
                               report read back against the channel (host.json, junit.xml)

Then the gate's own process alone: its imports (`python -c "import ..."` of what `run`
imports, against `python -c pass`), and the plugin's hooks, timed inside a full run by a
timing plugin (bench/layers_hooktimes.py, loaded with `-p` from the manifest's pytest_args):
each hook implementation of the gate's plugins and pytest's JUnit writer, per test. Not a
test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import benchlib

BENCH = Path(__file__).resolve().parent
MODULE = "tests/properties/test_many.py"
PROPERTY = """\
import pytest


@pytest.mark.parametrize("i", range({tests}))
def test_sum_is_stable(i):
    assert sum(range(i)) == i * (i - 1) // 2
"""
# launch.run_host with some layers off: python bench_layers.py --one ROOT OUT NS AUDIT COUNT
ONE = "--one"
PLAIN = {"namespaces": False, "audit": False, "count_assertions": False}
LAYERS = [  # (row, RunSettings switches); None: not a run_host row
    ("bare pytest", None),
    ("+ JUnit XML", None),
    ("+ the gate's run, plain", PLAIN),
    ("+ namespaces", {**PLAIN, "namespaces": True}),
    ("+ audit", {**PLAIN, "namespaces": True, "audit": True}),
    ("+ assertion counting", {"namespaces": True, "audit": True, "count_assertions": True}),
    ("the `run` command", None),
]
IMPORTS = (
    "import entropy_action.cli.main, entropy_action.cli.commands.run, "
    "entropy_action.hosts.launch, entropy_action.hosts.sessions, entropy_action.evidence.hostreport"
)


def make_repo(folder: Path, tests: int, extra: str = "") -> Path:
    root = folder / f"repo-{tests}{'-timed' if extra else ''}"
    (root / "tests" / "properties").mkdir(parents=True)
    temp_root = folder / f"entropy-tmp-{root.name}"
    text = benchlib.manifest(MODULE, "many", temp_root, extra)
    (root / "entropy.yaml").write_text(text)
    (root / MODULE).write_text(PROPERTY.format(tests=tests))
    benchlib.commit_all(root, "base")
    return root


def one(root: Path, out: Path, switches: dict[str, bool]) -> int:
    """The driver of a run_host row: the manifest loaded as `run` loads it, then one run."""
    from entropy_action.hosts import launch, runsettings  # noqa: PLC0415
    from entropy_action.manifest import pinfile  # noqa: PLC0415

    path = root / "entropy.yaml"
    loaded = pinfile.parse_file(pinfile.read(path, str(path)), str(path), root).views[0]
    settings = runsettings.RunSettings(
        host="a", out=out, root=root, loaded=loaded, environ=dict(os.environ), **switches
    )
    info = launch.run_host(settings)
    return 0 if info.returncode == 0 else 1


class Rows:
    """Each row's command at each size, and its CPU seconds (and wall seconds) per round."""

    def __init__(self, folder: Path, sizes: list[int]) -> None:
        self.folder, self.sizes = folder, sizes
        self.cpu: dict[tuple[str, int], list[float]] = {}
        self.wall: dict[tuple[str, int], list[float]] = {}
        self.commands: dict[tuple[str, int], Callable[[], benchlib.Sample]] = {}
        for size in sizes:
            root = make_repo(folder, size)
            for row, switches in LAYERS:
                self.commands[row, size] = self._command(row, switches, root)

    def _command(
        self, row: str, switches: dict[str, bool] | None, root: Path
    ) -> Callable[[], benchlib.Sample]:
        out = self.folder / f"out-{root.name}"
        bare = [sys.executable, "-m", "pytest", MODULE, "-q", "-p", "no:cacheprovider"]
        bare += ["-o", "addopts="]
        temp = self.folder / f"bare-tmp-{root.name}"
        temp.mkdir(exist_ok=True)
        pins = {"TZ": "UTC", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "0"}
        bare_env = {**os.environ, **pins, "TMPDIR": str(temp)}
        if row == "bare pytest":
            argv, env = bare, bare_env
        elif row == "+ JUnit XML":
            argv = [*bare, f"--junitxml={self.folder / 'bare.xml'}", "-o", "junit_family=xunit1"]
            env = bare_env
        elif switches is not None:
            flags = [str(int(switches.get(k, True))) for k in ("namespaces", "audit")]
            flags.append(str(int(switches.get("count_assertions", True))))
            argv = [sys.executable, __file__, ONE, str(root), str(out), *flags]
            env = dict(os.environ)
        else:
            argv = [sys.executable, "-m", "entropy_action", "run", "--host", "a", "--out"]
            argv += [str(out), "--manifest", str(root / "entropy.yaml")]
            env = dict(os.environ)
        return lambda: benchlib.process(argv, cwd=str(root), ok=(0,), env=env)

    def measure(self, repeat: int) -> None:
        keys = list(self.commands)
        for key in keys:  # warm the file cache and each size's first run
            self.commands[key]()
        for index in range(repeat):
            for key in keys if index % 2 == 0 else reversed(keys):
                sample = self.commands[key]()
                self.cpu.setdefault(key, []).append(sample.cpu or 0.0)
                self.wall.setdefault(key, []).append(sample.seconds)

    def median(self, row: str, size: int, wall: bool = False) -> float:
        return statistics.median((self.wall if wall else self.cpu)[row, size]) * 1000


def split(small: tuple[int, float], large: tuple[int, float]) -> tuple[float, float]:
    """(ms per run, ms per test) of a cost measured at two sizes: the line through both."""
    (n1, c1), (n2, c2) = small, large
    per_test = (c2 - c1) / (n2 - n1)
    return c1 - per_test * n1, per_test


def print_layers(rows: Rows) -> None:
    small, large = rows.sizes[0], rows.sizes[-1]
    floor = rows.median("bare pytest", large)
    print(f"-- a host run by layer: CPU ms (median), at {small} and {large} tests")
    print(f"{'row':30s} {small:>8d} {large:>8d}  ratio@{large}  layer: per run   per test")
    previous: str | None = None
    for row, _ in LAYERS:
        at = [rows.median(row, size) for size in (small, large)]
        line = f"{row:30s} {at[0]:8.0f} {at[1]:8.0f}  {at[1] / floor:7.2f}×"
        if previous is not None:
            before = [rows.median(previous, size) for size in (small, large)]
            run, test = split((small, at[0] - before[0]), (large, at[1] - before[1]))
            line += f"  {run:+13.0f} ms {test * 1000:+8.1f} µs"
        print(line)
        previous = row
    wall = rows.median("the `run` command", large, wall=True)
    bare_wall = rows.median("bare pytest", large, wall=True)
    print(
        f"wall at {large} tests: `run` {wall:.0f} ms, bare {bare_wall:.0f} ms, "
        f"{wall / bare_wall:.2f}×"
    )


def print_imports(repeat: int) -> None:
    """The imports `run` makes before it starts pytest, in a fresh process, against `pass`."""
    ours, floor = benchlib.alternate(
        lambda: benchlib.process([sys.executable, "-c", IMPORTS], ok=(0,)),
        lambda: benchlib.process([sys.executable, "-c", "pass"], ok=(0,)),
        repeat,
    )
    extra = [(o.cpu or 0.0) - (b.cpu or 0.0) for o, b in zip(ours, floor, strict=True)]
    start = statistics.median(b.cpu or 0.0 for b in floor) * 1000
    print(
        f"-- the gate's imports for `run`: {statistics.median(extra) * 1000:.0f} ms of CPU "
        f"beyond the interpreter's start ({start:.0f} ms)"
    )


def print_hooks(folder: Path, size: int) -> None:
    """One `run --host a` with the timing plugin: each hook's time per test."""
    extra = ', "-p", "layers_hooktimes"'
    root = make_repo(folder, size, extra)
    report = folder / "hooktimes.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(BENCH), os.environ.get("PYTHONPATH")])),
    }
    env["BENCH_HOOKTIMES"] = str(report)
    argv = [sys.executable, "-m", "entropy_action", "run", "--host", "a", "--out"]
    argv += [str(folder / "out-timed"), "--manifest", str(root / "entropy.yaml")]
    benchlib.process(argv, cwd=str(root), ok=(0,), env=env)
    times = json.loads(report.read_text())
    print(f"-- hook implementations inside one run of {size} tests (timed in the test process)")
    for entry in sorted(times, key=lambda e: -e["seconds"]):
        seconds, calls = entry["seconds"], entry["calls"]
        if not calls:  # registered, never called in this run
            continue
        each = f"{seconds * 1e6 / size:7.1f} µs a test" if calls >= size else " " * 17
        name = f"{entry['plugin']:24s} {entry['hook']:30s}"
        print(f"{name} {seconds * 1000:6.1f} ms {calls:6d} calls {each}")


def main() -> int:
    if sys.argv[1:2] == [ONE]:
        root, out, *flags = sys.argv[2:]
        names = ("namespaces", "audit", "count_assertions")
        return one(Path(root), Path(out), {k: v == "1" for k, v in zip(names, flags, strict=True)})
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[200, 1000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="small sizes, one round")
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.repeat = [5, 20], 1
    benchlib.compile_gate()
    with tempfile.TemporaryDirectory(prefix="bench-layers-") as scratch:
        folder = Path(scratch)
        rows = Rows(folder, sorted(args.sizes))
        rows.measure(args.repeat)
        print(benchlib.load_note())
        print_layers(rows)
        print_imports(args.repeat)
        print_hooks(folder, max(args.sizes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
