"""The reusable workflow's cost under act, against a plain workflow on the same pull request.

The PR is the demo's honest fix (entropy_action/gate/demo_data). The gate side is the
README's workflow lines calling `entropy-gate.yml` (check -> host A, host B -> verdict), as on
GitHub's runners: no machine-wide venv cache, so each runner image builds entropy-gate's venv
once. The floor is what a project's CI already does: check out, set up Python, install the
project with pytest, run pytest on the property module once. The two alternate, in fresh act
runs; each run's wall time is its critical path (act runs the jobs as the `needs:` graph
allows), and the per-job times come from act's JSON log. Prints the median of the ratios.

    python bench/bench_workflow.py [--repeat 3] [--smoke]
    python bench/bench_workflow.py --properties [--repeat 3]

--properties (issue 21): the repository of tests/support/many_sample.py (20 properties in
three session groups), gated with the default 4 legs per host and with 1 (every property in
one job per host), against the reusable workflow on one of its properties alone (the
one-property form). Prints each variant's critical path (median), the longest host leg of
each run, and the growth over the single property next to that leg.

Needs what the act end-to-end test needs (act, the offline actions kit, Python 3.11 and 3.12;
see tests/e2e_kit.py); without them it says what is missing and exits 2.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from collections import defaultdict
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import benchlib
from tests.support import e2e_kit

GATE = """\
name: entropy-gate
on: pull_request
permissions: {}
jobs:
  entropy-gate:
    uses: entropy-gate/entropy-gate/.github/workflows/entropy-gate.yml@v1
    permissions: {contents: read, checks: write}
    with:
      manifest: honest-fix/entropy.yaml
      install: python -m pip install pytest
"""
PLAIN = f"""\
name: plain
on: pull_request
permissions: {{}}
jobs:
  tests:
    runs-on: ubuntu-24.04
    permissions: {{contents: read}}
    steps:
      - uses: actions/checkout@{e2e_kit.PINNED["actions/checkout"]}
        with: {{persist-credentials: false}}
      - uses: actions/setup-python@{e2e_kit.PINNED["actions/setup-python"]}
        with: {{python-version: "3.12"}}
      - run: python -m pip install pytest
      # the module reads its pinned clock, as the property runs it
      - run: >-
          ENTROPY_CLOCK_UNIX=$(sed -n 's/^  clock_unix: //p' honest-fix/entropy.yaml)
          ENTROPY_RNG_SEED=$(sed -n 's/^  rng_seed: //p' honest-fix/entropy.yaml) TZ=UTC
          python -m pytest -q -o pythonpath=honest-fix honest-fix/tests/properties
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="one pair")
    parser.add_argument(
        "--properties", action="store_true", help="20 properties in legs vs one property"
    )
    parser.add_argument(
        "--concurrent-jobs",
        type=int,
        metavar="N",
        help="act runs N jobs at once (default: its own, the number of CPUs)",
    )
    args = parser.parse_args(argv)
    missing = e2e_kit.missing_prerequisites()
    if missing:
        print(f"bench_workflow needs {'; '.join(missing)}", file=sys.stderr)
        return 2
    repeat = 1 if args.smoke else args.repeat
    if args.concurrent_jobs:
        ACT_EXTRA.extend(["--concurrent-jobs", str(args.concurrent_jobs)])
    if args.properties:
        return _properties(repeat)
    with tempfile.TemporaryDirectory(prefix="bench-workflow-") as tmp:
        root = Path(tmp)
        world = _world(root)
        gate_runs: list[dict[str, float]] = []
        plain_runs: list[dict[str, float]] = []
        counter = iter(range(1_000))

        def gate() -> benchlib.Sample:
            jobs = _act(world, "gate.yml", root / f"run-{next(counter)}")
            gate_runs.append(jobs)
            return benchlib.Sample(jobs["(critical path)"], 0, 0)

        def plain() -> benchlib.Sample:
            jobs = _act(world, "plain.yml", root / f"run-{next(counter)}")
            plain_runs.append(jobs)
            return benchlib.Sample(jobs["(critical path)"], 0, 0)

        ours, floor = benchlib.alternate(gate, plain, repeat)
    print(benchlib.load_note())
    print("the demo's honest fix; act on this machine, each job on the same 2 cores")
    benchlib.print_ratio("the reusable workflow", "a plain pytest workflow", ours, floor)
    for name, runs in (("reusable workflow", gate_runs), ("plain workflow", plain_runs)):
        print(f"-- {name}: per job, median of {len(runs)} run(s)")
        for job in sorted({j for run in runs for j in run}):
            values = [run[job] for run in runs if job in run]
            print(f"   {job:<60} {statistics.median(values):7.1f} s")
    return 0


LEGS = """\
name: {name}
on: pull_request
permissions: {{}}
jobs:
  entropy-gate:
    uses: entropy-gate/entropy-gate/.github/workflows/entropy-gate.yml@v1
    permissions: {{contents: read, checks: write}}
    with:
      manifest: {manifest}
      legs-per-host: {legs}
      cache-base-evidence: false
      install: python -m pip install pytest
"""
ACT_EXTRA: list[str] = []  # --concurrent-jobs
VARIANTS = {  # workflow -> (manifest, legs per host)
    "single.yml": ("single.yaml", 1),
    "legs-4.yml": ("entropy.yaml", 4),
    "legs-1.yml": ("entropy.yaml", 1),
}


def _properties(repeat: int) -> int:
    from tests.support import many_sample  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="bench-workflow-properties-") as tmp:
        root = Path(tmp)
        workflows = root / "workflows"
        workflows.mkdir()
        for name, (manifest, legs) in VARIANTS.items():
            text = LEGS.format(name=name.removesuffix(".yml"), manifest=manifest, legs=legs)
            (workflows / name).write_text(text, encoding="utf-8")
        world = World(root, sample=many_sample.sample(root / "sample", workflows))
        if ACT_EXTRA:  # act cannot parse an expression in max-parallel: it runs one job at a time
            _literal_max_parallel(world.project)
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in VARIANTS}
        counter = iter(range(1_000))
        for index in range(repeat):  # the order rotates, so no variant always goes first
            order = list(VARIANTS)[index % 3 :] + list(VARIANTS)[: index % 3]
            for name in order:
                folder = root / f"run-{next(counter)}"
                runs[name].append(_act(world, name, folder, rejects=name != "single.yml"))
    print(benchlib.load_note())
    print("20 properties (3 session groups) vs 1; act on this machine, every job on 2 cores")
    single = statistics.median(r["(critical path)"] for r in runs["single.yml"])
    for name, measured in runs.items():
        path = statistics.median(r["(critical path)"] for r in measured)
        longest = statistics.median(_longest_leg(r) for r in measured)
        print(
            f"{name:<12} critical path median {path:7.1f} s over {len(measured)} run(s); "
            f"longest host leg {longest:6.1f} s; growth over one property {path - single:+7.1f} s"
        )
    for name, measured in runs.items():
        print(f"-- {name}: per job, median of {len(measured)} run(s)")
        for job in sorted({j for run in measured for j in run if not j.startswith("  ")}):
            values = [run[job] for run in measured if job in run]
            print(f"   {job:<60} {statistics.median(values):7.1f} s")
    return 0


def _literal_max_parallel(project: Path) -> None:
    """In the copy act serves (never this checkout): `max-parallel: 8` for the input, as
    GitHub evaluates it (act logs "Failed to parse 'max-parallel' option" and runs the legs
    one after another)."""
    workflow = project / ".github" / "workflows" / "entropy-gate.yml"
    text = workflow.read_text(encoding="utf-8")
    expression = "max-parallel: ${{ inputs.max-parallel }}"
    assert expression in text, "the reusable workflow's max-parallel moved"
    workflow.write_text(text.replace(expression, "max-parallel: 8"), encoding="utf-8")


def _longest_leg(jobs: dict[str, float]) -> float:
    """The longest host job of a run (act names them `host a leg 1` and so on)."""
    legs = [
        seconds
        for job, seconds in jobs.items()
        if not job.startswith(("@ ", "  ")) and ("host a leg" in job or "host b leg" in job)
    ]
    return max(legs, default=0.0)


class World:
    def __init__(self, root: Path, sample: object | None = None) -> None:
        self.kit = e2e_kit.kit_dir()
        self.wheels = e2e_kit.wheelhouse(root / "wheelhouse")
        self.toolcache = root / "toolcache"
        e2e_kit.tool_cache(self.toolcache, self.wheels, with_pytest=False)
        e2e_kit.serialize_pip(self.toolcache)
        self.project = e2e_kit.project_copy(root / "entropy-gate")
        if sample is not None:
            self.sample = sample
            return
        workflows = root / "workflows"
        workflows.mkdir()
        (workflows / "gate.yml").write_text(GATE, encoding="utf-8")
        (workflows / "plain.yml").write_text(PLAIN, encoding="utf-8")
        self.sample = e2e_kit.sample_repo(root / "sample", root / "pins-tmp", workflows)


def _world(root: Path) -> World:
    return World(root)


def _act(world: World, workflow: str, folder: Path, *, rejects: bool = False) -> dict[str, float]:
    """One act run: seconds per job (first to last log line) and the whole run's wall time.
    `rejects`: the verdict may reject (act then exits 1), as long as one was reached."""
    folder.mkdir()
    sample = world.sample
    api = e2e_kit.ApiServer.start(folder, world=e2e_kit.pulls_of(sample.base, sample.head))  # type: ignore[attr-defined]
    try:
        run = e2e_kit.run_act(
            world.sample, workflow, folder, kit=world.kit, project=world.project, api=api,  # type: ignore[arg-type]
            toolcache=world.toolcache, wheels=world.wheels, cache_server=folder / "cache",
            venv_cache=False, extra=("--json", *ACT_EXTRA), event_file=world.sample.event,  # type: ignore[attr-defined]
        )  # fmt: skip
    finally:
        api.stop()
    (folder / "act.log").write_text(run.log, encoding="utf-8")
    reached = rejects and run.code == 1 and "entropy-gate verdict: " in run.log
    if run.code != 0 and not reached:
        tail = "\n".join(run.log.splitlines()[-25:])
        raise SystemExit(f"act {workflow} failed ({run.code}); the log ends:\n{tail}")
    spans: dict[str, list[float]] = defaultdict(list)
    steps: dict[str, float] = {}
    for line in run.log.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        job, when = entry.get("job"), entry.get("time")
        if isinstance(job, str) and isinstance(when, str):
            spans[job].append(_epoch(when))
        took, step = entry.get("executionTime"), entry.get("step")
        if isinstance(job, str) and isinstance(took, int) and isinstance(step, str):
            steps[f"{job.rsplit('/', 1)[-1]}: {step[:48]}"] = took / 1e9
    jobs = {job: max(times) - min(times) for job, times in spans.items() if times}
    first = min((min(times) for times in spans.values() if times), default=0.0)
    # when each job's first line came, from the run's first (act's scheduling, "@ job")
    jobs.update({f"@ {job}": min(times) - first for job, times in spans.items() if times})
    # the steps that take a second or more, as "  job: step"
    jobs.update({f"  {name}": seconds for name, seconds in steps.items() if seconds >= 1.0})
    jobs["(critical path)"] = run.seconds
    return jobs


def _epoch(stamp: str) -> float:
    """act's RFC 3339 time (its nanoseconds cut to the microseconds datetime reads)."""
    trimmed = re.sub(r"(\.\d{6})\d+", r"\1", stamp).replace("Z", "+00:00")
    return datetime.fromisoformat(trimmed).timestamp()


if __name__ == "__main__":
    raise SystemExit(main())
