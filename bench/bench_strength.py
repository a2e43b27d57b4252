"""Wall time of the mutation step: the gate on the demo's tautology patch with and without it.

    .venv/bin/python bench/bench_strength.py [--runs 3]

Builds the demo's invoice example and its `tautology` patch twice — once as it is
(`constraints.mutation: changed`, the default) and once with `mutation: "off"` in the base
and the head — and times `run_gate` on each, the mutation cache emptied before every run.
The difference is the mutation step's cost (the base's module against the head's code runs
in both). Prints medians and the ratio to the gate without it. Not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from entropy_action import demo, gate, git

OFF = '  mutation: "off"\n'


def _repo(folder: Path, mutation: bool) -> tuple[Path, str]:
    repo = folder / ("on" if mutation else "off")
    patch = {p.name: p for p in demo.patches()}["tautology"]
    base = demo.build_base(repo, clock_unix=1768003200, temp_root=folder / "tmp")
    if not mutation:
        manifest = repo / "entropy.yaml"
        text = manifest.read_text(encoding="utf-8")
        manifest.write_text(text.replace("constraints:\n", "constraints:\n" + OFF), "utf-8")
        base = git.commit_all(repo, "mutation off")
    demo.apply_patch(repo, patch)
    return repo, base


def _time(repo: Path, base: str, folder: Path) -> float:
    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=folder))
    environ = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    settings = gate.GateSettings(
        manifest=repo / "entropy.yaml", base_ref=base, environ=environ, out=folder / "out"
    )
    start = time.perf_counter()
    verdict = gate.run_gate(settings).verdict
    elapsed = time.perf_counter() - start
    assert verdict.classification == "entropy_silenced" or repo.name == "off", verdict.reasons
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="one run each")
    parsed = parser.parse_args()
    runs = 1 if parsed.smoke else parsed.runs
    with tempfile.TemporaryDirectory(prefix="bench-strength-") as scratch:
        folder = Path(scratch)
        on, on_base = _repo(folder, mutation=True)
        off, off_base = _repo(folder, mutation=False)
        times: dict[str, list[float]] = {"off": [], "on": []}
        for _ in range(runs):  # interleaved, so load on the machine hits both alike
            times["off"].append(_time(off, off_base, folder))
            times["on"].append(_time(on, on_base, folder))
    without, with_ = statistics.median(times["off"]), statistics.median(times["on"])
    print(f"gate, mutation off:     median {without:.2f} s over {runs} runs")
    print(f"gate, mutation changed: median {with_:.2f} s over {runs} runs")
    print(f"extra: {with_ - without:.2f} s, ratio {with_ / without:.2f}x (goal: under 2x)")


if __name__ == "__main__":
    main()
