"""What every bench script shares: alternate a measure with its floor, print the ratios.

Each measure runs in a fresh subprocess (so imports, caches and the peak RSS are its own),
the measure and its floor alternate (so a burst of load on a shared machine hits both), and
the script prints min / median / max of the per-pair ratio. Not a test: timings depend on
the machine; `--smoke` runs small sizes once so CI keeps the scripts working.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

PINS = """\
  clock_unix: 1768003200
  rng_seed: 9173
  tz: UTC
  lang: C.UTF-8
  umask: "0022"
"""  # the benches' shared pins: the seed's own, the clock at 2026-01-10


def manifest(
    module: str,
    property_id: str,
    temp_root: object = None,
    args: str = "",
    tail: str = "",
    pins: str = "",
) -> str:
    """An entropy.yaml for one property module under PINS, `temp_root` and `pins` (more pin
    lines), pytest run with the project's addopts cleared and `args` (`, "-p", "no:cov"`),
    then `tail` (the bench's own constraints)."""
    root = f"  temp_root: {temp_root}\n" if temp_root is not None else ""
    return (
        f"version: 1\nproperty_id: {property_id}\nmodule: {module}\npins:\n{PINS}{root}{pins}"
        f'run:\n  pytest_args: ["-o", "addopts="{args}]\n{tail}'
    )


def compile_gate(checkout: object = None) -> None:
    """Bytecode for every module of the gate, as an installed wheel has it: an editable
    install under PYTHONDONTWRITEBYTECODE=1 (as on this machine) otherwise compiles the gate
    from source in every process it starts, and its copied plugin files in every test process
    (hosts.testfiles.copy_module copies the gate's own bytecode, stale after an edit)."""
    import compileall  # noqa: PLC0415
    import re  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    package = Path(str(checkout or Path(__file__).parent.parent)) / "entropy_action"
    # Not the demo's data: its files are a repository's, copied into demo commits, not modules
    # of the gate (bytecode there once reached a demo's base commit).
    compileall.compile_dir(str(package), quiet=1, rx=re.compile(r"[/\\]demo_data[/\\]"))


@dataclass(frozen=True)
class Sample:
    seconds: float
    peak_rss: int  # bytes: the process's peak resident set (ru_maxrss)
    start_rss: int  # bytes: the peak before the measured work (interpreter and imports)
    cpu: float = 0.0  # seconds of CPU (user + system) the process took, where measured


def peak_rss() -> int:
    """This process's peak resident set size in bytes (Linux reports KiB, macOS bytes)."""
    value = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return value if sys.platform == "darwin" else value * 1024


def child_report(work: Callable[[], object]) -> None:
    """In a child process: time `work` once and print a Sample as JSON on stdout."""
    before = peak_rss()
    started = time.perf_counter()
    work()
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "peak_rss": peak_rss(), "start_rss": before}))


def run_child(argv: Sequence[str], cwd: str | None = None) -> Sample:
    """Run a child that ends with child_report's line; its Sample."""
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{argv[:4]} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return Sample(**json.loads(done.stdout.strip().splitlines()[-1]))


def wall(argv: Sequence[str], cwd: str | None = None, env: dict[str, str] | None = None) -> Sample:
    """The wall time of a whole command (and the children's peak RSS so far)."""
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{argv[:4]} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return Sample(seconds=seconds, peak_rss=rss, start_rss=0)


def process(
    argv: Sequence[str],
    cwd: str | None = None,
    ok: tuple[int, ...] = (0, 1),
    env: dict[str, str] | None = None,
) -> Sample:
    """One command's wall time, CPU time and peak RSS, its own (os.wait4's rusage of that
    process alone: RUSAGE_CHILDREN's peak is the largest of every child so far); an exit
    code outside `ok` stops the script."""
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode not in ok:
            err.seek(0)
            tail = err.read()[-2000:].decode(errors="replace")
            raise SystemExit(f"{argv[:4]} failed ({child.returncode}):\n{tail}")
    rss = usage.ru_maxrss if sys.platform == "darwin" else usage.ru_maxrss * 1024
    return Sample(seconds, rss, 0, usage.ru_utime + usage.ru_stime)


def alternate(
    measure: Callable[[], Sample], floor: Callable[[], Sample], repeat: int
) -> tuple[list[Sample], list[Sample]]:
    """`repeat` pairs, the order within a pair swapped every time."""
    ours: list[Sample] = []
    base: list[Sample] = []
    for index in range(repeat):
        if index % 2:
            base.append(floor())
            ours.append(measure())
        else:
            ours.append(measure())
            base.append(floor())
    return ours, base


def stats(values: Sequence[float]) -> str:
    return (
        f"min {min(values):6.2f}  median {statistics.median(values):6.2f}  max {max(values):6.2f}"
    )


def print_ratio(name: str, floor_name: str, ours: list[Sample], base: list[Sample]) -> float:
    """Print the medians and the per-pair ratios; return the median ratio."""
    ratios = [o.seconds / b.seconds for o, b in zip(ours, base, strict=True)]
    print(f"{name}: median {statistics.median(s.seconds for s in ours) * 1000:9.1f} ms")
    print(f"{floor_name}: median {statistics.median(s.seconds for s in base) * 1000:9.1f} ms")
    print(f"ratio over {len(ratios)} alternating pairs: {stats(ratios)}")
    return statistics.median(ratios)


def load_note() -> str:
    """The machine and its load while measuring, for the record."""
    try:
        with open("/proc/loadavg", encoding="ascii") as handle:
            load = " ".join(handle.read().split()[:3])
    except OSError:
        load = "unknown"
    import os  # noqa: PLC0415
    import platform  # noqa: PLC0415

    return (
        f"{platform.python_implementation()} {platform.python_version()} on {platform.system()}, "
        f"{os.cpu_count()} cores, load average {load}"
    )


GIT_ENV = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
IDENT = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]


def git(root: object, *args: str) -> str:
    """Run git in `root` with no user or system config; its stdout."""
    import os  # noqa: PLC0415

    done = subprocess.run(
        ["git", *IDENT, *args],
        cwd=str(root),
        env={**os.environ, **GIT_ENV},
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def commit_all(root: object, message: str) -> str:
    """Stage everything and commit (initializing the repository first); the commit's sha."""
    import os  # noqa: PLC0415

    if not os.path.isdir(os.path.join(str(root), ".git")):
        git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)
    return git(root, "rev-parse", "HEAD").strip()


def seconds_stats(name: str, samples: Sequence[Sample]) -> None:
    print(f"{name}: seconds {stats([s.seconds for s in samples])}")
