"""`entropy-gate run --host a` on a 1,000-test property module against bare pytest.

    .venv/bin/python bench/bench_run.py [--tests 1000] [--repeat 7] [--host a|b] [--smoke]
        [--base-ref] [--gate CHECKOUT]

A scratch git repository holds the seed's manifest and a module of one parametrized test
with 1,000 cases. Bare pytest runs the module with the pins' environment (TZ, LANG,
PYTHONHASHSEED, TMPDIR); the gate's run writes junit.xml and host.json as in CI. The two
alternate, each a fresh process, and the script prints min / median / max of the per-pair
ratio, of wall time and of CPU time (the process and its children: steadier than wall time
on a shared machine, and it counts the gate's own start-up, which wall time on an idle
second core would not). Not a test: timings depend on the machine.

`--base-ref` measures a host job's run as the workflow makes it: a second commit changes a
production file (not docs-only), and the run is `run --base-ref HEAD~1`, the base's module
run too (no evidence cache); bare pytest stays the floor (one run of the module). `--gate
CHECKOUT` puts another checkout of entropy-gate first on the gate's PYTHONPATH (an older
commit, `git worktree add`), to measure a change side by side.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
from pathlib import Path

import benchlib

MODULE = "tests/properties/test_many.py"
PROPERTY = """\
import pytest


@pytest.mark.parametrize("i", range({tests}))
def test_sum_is_stable(i):
    assert sum(range(i)) == i * (i - 1) // 2
"""


def make_repo(folder: Path, tests: int) -> Path:
    """A git repository with the manifest and a property module of `tests` cases."""
    root = folder / "repo"
    (root / "tests" / "properties").mkdir(parents=True)
    (root / "entropy.yaml").write_text(benchlib.manifest(MODULE, "many", folder / "entropy-tmp"))
    (root / MODULE).write_text(PROPERTY.format(tests=tests))
    (root / "README.md").write_text("# bench\n")
    benchlib.commit_all(root, "base")
    return root


def pinned_env(folder: Path) -> dict[str, str]:
    """The environment bare pytest gets: this one plus what the pins set."""
    tmp = folder / "bare-tmp"
    tmp.mkdir(exist_ok=True)
    pins = {"TZ": "UTC", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "0"}
    return {**os.environ, **pins, "TMPDIR": str(tmp)}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class _Timed:
    """benchlib.wall, noting the CPU time each command took (its process and children)."""

    def __init__(self, argv: list[str], cwd: str, env: dict[str, str]) -> None:
        self.argv, self.cwd, self.env = argv, cwd, env
        self.cpu: list[float] = []

    def __call__(self) -> benchlib.Sample:
        before = _children_cpu()
        sample = benchlib.wall(self.argv, cwd=self.cwd, env=self.env)
        self.cpu.append(_children_cpu() - before)
        return sample


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--host", choices=("a", "b"), default="a")
    parser.add_argument("--smoke", action="store_true", help="small sizes, one pair")
    parser.add_argument("--base-ref", action="store_true", help="the host job's base run too")
    parser.add_argument("--gate", type=Path, help="another checkout of the gate to measure")
    args = parser.parse_args()
    if args.smoke:
        args.tests, args.repeat = 20, 1
    with tempfile.TemporaryDirectory(prefix="bench-run-") as scratch:
        folder = Path(scratch)
        root = make_repo(folder, args.tests)
        if args.base_ref:
            (root / "fees.py").write_text("RATE = 10\n")
            benchlib.commit_all(root, "a production change: not docs-only")
        env = pinned_env(folder)
        bare = [sys.executable, "-m", "pytest", MODULE, "-q", "-p", "no:cacheprovider"]
        bare += ["-o", "addopts="]
        ours = [sys.executable, "-m", "entropy_action", "run", "--host", args.host]
        ours += ["--out", str(folder / "out"), "--manifest", str(root / "entropy.yaml")]
        if args.host == "b":
            ours.append("--isolate")
        if args.base_ref:
            ours += ["--base-ref", "HEAD~1"]
        gate_env = dict(os.environ)
        if args.gate is not None:
            gate_env["PYTHONPATH"] = os.pathsep.join(
                [str(args.gate.resolve()), *filter(None, [os.environ.get("PYTHONPATH")])]
            )
        benchlib.compile_gate(args.gate)
        benchlib.wall(bare, cwd=str(root), env=env)  # warm the file cache and .pyc files
        ours_timed = _Timed(ours, str(root), gate_env)
        bare_timed = _Timed(bare, str(root), env)
        gate, floor = benchlib.alternate(ours_timed, bare_timed, args.repeat)
    print(benchlib.load_note())
    print(f"a property module of {args.tests} test cases")
    name = f"entropy-gate run --host {args.host}" + (" --base-ref HEAD~1" if args.base_ref else "")
    if args.gate is not None:
        name += f" (the gate from {args.gate})"
    benchlib.print_ratio(name, "bare pytest", gate, floor)
    cpu = [o / b for o, b in zip(ours_timed.cpu, bare_timed.cpu, strict=True)]
    print(
        f"cpu: gate {statistics.median(ours_timed.cpu) * 1000:.0f} ms, bare "
        f"{statistics.median(bare_timed.cpu) * 1000:.0f} ms; ratio over {len(cpu)} pairs: "
        f"{benchlib.stats(cpu)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
