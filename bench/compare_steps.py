"""The whole `entropy-gate compare`, in this process, each of its steps timed where it runs
(bench_compare.py --profile starts it): CPU time, calls and the peak RSS after each step; or
cProfile's top functions by their own time. The steps are the command's own functions,
wrapped in place, so the command runs exactly as `entropy-gate compare` runs it.

    python bench/compare_steps.py steps|cprofile compare --host-a A --host-b B --json OUT ...
"""

from __future__ import annotations

import time

STARTED = time.process_time()  # the interpreter's start-up, before anything of the gate

import contextlib  # noqa: E402 (after the start-up's measure)
import cProfile  # noqa: E402
import functools  # noqa: E402
import importlib  # noqa: E402
import io  # noqa: E402
import pstats  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from typing import Any  # noqa: E402

# (module, function, step): where each step of the command runs
STEPS = (
    ("entropy_action.evidence.hostreport", "read_info", "host.json (read, validated)"),
    ("entropy_action.evidence.hostreport", "parse", "junit.xml (streamed parse, cases)"),
    ("entropy_action.evidence.hostreport", "_read_outcomes", "outcomes.json (read, checked)"),
    ("entropy_action.evidence.hostreport", "_cross_check", "junit.xml against outcomes.json"),
    ("entropy_action.verdict.pairing", "pair", "pairing the tests"),
    ("entropy_action.verdict.pairing", "classify", "the verdict (the seed's table)"),
    ("entropy_action.gate.judge", "_with_inputs", "the inputs (report digests, trees)"),
    ("entropy_action.render.summary", "render_text", "the text summary"),
    ("entropy_action.cli.commands.compare", "write_verdict", "the verdict JSON (written)"),
)
# what `compare` imports when it runs (lazily: --help imports no model)
IMPORTS = (
    "entropy_action.cli.main",
    "entropy_action.gate.judge",
    "entropy_action.render.summary",
    "entropy_action.render.verdictjson",
)


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _timed(function: Callable[..., Any], row: list[float]) -> Callable[..., Any]:
    @functools.wraps(function)
    def inner(*args: Any, **kwargs: Any) -> Any:
        started = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            row[0] += 1
            row[1] += time.process_time() - started
            row[2] = _peak_mib()

    return inner


def steps(argv: Sequence[str]) -> None:
    before = time.process_time()
    for name in IMPORTS:
        importlib.import_module(name)
    imported = time.process_time() - before
    rows: dict[str, list[float]] = {}
    for module_name, function, label in STEPS:
        module = importlib.import_module(module_name)
        rows[label] = [0, 0.0, 0.0]  # calls, CPU seconds, peak RSS after (MiB)
        setattr(module, function, _timed(getattr(module, function), rows[label]))
    main = importlib.import_module("entropy_action.cli.main").main
    started = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):
        main(list(argv))
    total = time.process_time()
    table = [("interpreter start-up", 1, STARTED, 0.0), ("imports", 1, imported, 0.0)]
    table += [(label, int(c), cpu, rss) for label, (c, cpu, rss) in rows.items()]
    table.append(("the rest", 1, total - started - sum(r[1] for r in rows.values()), 0.0))
    print(f"-- the command's steps (CPU seconds in one process; {total:.2f} s in all)")
    for label, calls, cpu, rss in table:
        after = f"peak RSS after {rss:6.1f} MiB" if rss else ""
        print(f"   {label:<36} x{calls:<2} {cpu:6.2f} s {cpu / total:5.1%}  {after}")
    print(f"   peak RSS {_peak_mib():.1f} MiB")


def profiled(argv: Sequence[str]) -> None:
    main = importlib.import_module("entropy_action.cli.main").main
    profile = cProfile.Profile()
    with contextlib.redirect_stdout(io.StringIO()):
        profile.runcall(main, list(argv))
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(15)
    lines = [line for line in out.getvalue().splitlines() if line.strip()]
    print("-- cProfile of the command, top 15 by own time (the profiler inflates Python calls)")
    print("\n".join(f"   {line[:150]}" for line in lines[-16:]))


def run(kind: str, argv: Sequence[str]) -> None:
    (steps if kind == "steps" else profiled)(argv)


if __name__ == "__main__":
    run(sys.argv[1], sys.argv[2:])
