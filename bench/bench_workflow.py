"""The reusable workflow's cost under act, against a plain workflow on the same pull request.

The PR is the demo's honest fix (entropy_action/gate/demo_data), made a project: a
pyproject.toml at the root with a `test` extra (pytest). The gate side is the README's
workflow lines calling `entropy-gate.yml` (the check beside host A and host B, then the
verdict) with `install: pip install -e '.[test]'`, as on GitHub's runners: no machine-wide venv
cache, so each host job and the check job build entropy-gate's venv (the verdict unpacks the
check's). The floor is the one job users compare
with: check out, set up Python, install the project with its test extra (the same command,
from the same local wheelhouse), run pytest on the property module once. Every act run gets
a fresh tool cache (a clean interpreter per Python version, nothing installed), as a hosted
runner starts clean. The two alternate, in fresh act runs; each run's wall time is its
critical path (act runs the jobs as the `needs:` graph allows), and the per-job times come
from act's JSON log. Prints the median of the ratios.

Under act a job starts in well under a second; on GitHub each job waits for a runner and sets
it up first. The GitHub estimate adds, for every job on the critical path (the depth of the
`needs:` graph: 2 for the check beside host A and host B, then the verdict; 1 for the plain
job), the modelled start of a job (GITHUB_JOB_START, with its sources) and the checkout act
skips, and prints that ratio next to act's.

    python bench/bench_workflow.py [--repeat 3] [--smoke] [--warm-venv-cache]
        [--project-installer uv]
    python bench/bench_workflow.py --properties [--repeat 3]

--warm-venv-cache: the gate's runs start with entropy-gate's venv in act's cache, as a PR's
later push finds it (the host jobs restore it instead of building): one untimed run of the
reusable workflow without the base evidence cache saves the venv entries first, and every
timed run starts from a copy of that cache (the base evidence stays cold, as without it).

--project-installer uv: the caller opts in to the project's install by uv (issue 38 part 1:
the project's install follows the gate's own path); the floor keeps pip, as users' plain
jobs do.

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
import dataclasses
import json
import re
import shutil
import statistics
import sys
import tempfile
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import benchlib
from tests.support import e2e_kit

INSTALL = "python -m pip install -e '.[test]'"  # the project with its test extra, both sides
GATE = f"""\
name: entropy-gate
on: pull_request
permissions: {{}}
jobs:
  entropy-gate:
    uses: entropy-gate/entropy-gate/.github/workflows/entropy-gate.yml@v1
    permissions: {{contents: read, checks: write}}
    with:
      manifest: honest-fix/entropy.yaml
      install: {INSTALL}
"""
# --project-installer uv: the caller's opt-in, the default install (the same test extra) by uv
GATE_UV = GATE.replace(f"      install: {INSTALL}\n", "      project-installer: uv\n")
assert GATE_UV != GATE, "the gate's install line moved: --project-installer would measure pip"
# The untimed run of --warm-venv-cache: the same workflow, saving no base evidence.
WARM = "      cache-base-evidence: false\n"
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
      - run: {INSTALL}
      # the module reads its pinned clock, as the property runs it
      - run: >-
          ENTROPY_CLOCK_UNIX=$(sed -n 's/^  clock_unix: //p' honest-fix/entropy.yaml)
          ENTROPY_RNG_SEED=$(sed -n 's/^  rng_seed: //p' honest-fix/entropy.yaml) TZ=UTC
          python -m pytest -q honest-fix/tests/properties
"""
# The honest fix as a project: invoice_lib from its folder, pytest as the test extra.
PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "invoices"
version = "0"

[project.optional-dependencies]
test = ["pytest"]

[tool.setuptools]
package-dir = {"" = "honest-fix"}
py-modules = ["invoice_lib"]
"""

# What a job on GitHub's hosted runners costs before its first step, which act does not
# have (its jobs start in well under a second, on this machine). Measured by others:
# - github/gh-aw#21703, the timing analysis of one run on GitHub-hosted runners
#   (run 23264510315): 6 s of scheduling between a job's end and the start of the job that
#   needs it, then 2-3 s of runner provisioning and action downloads inside each job;
#   actions/checkout of a small repository 1 s;
# - CarbonRunner's published statistics (carbonrunner.io/stats), from GitHub creating a job
#   to a runner starting it: P50 5-6 s, P90 55-60 s, P95 180-210 s (its own runner pool;
#   GitHub's webhook alone: P50 2 s, P90 3 s, P95 140-160 s);
# - the GitHub community thread on `ubuntu-slim` hosted runners (summarized at
#   devactivity.com): P90 queue time approaching a minute, P95 and P99 five minutes;
# - actions/runner#2609's log: 7 s from "Waiting for a runner to pick up this job" to
#   "Job is about to start running on the hosted runner".
# The model: a job starts 9 s after the job it needs ends at the median (6 s scheduling +
# 3 s set-up) and 60 s at the 90th percentile; each job also checks out (1 s), which act
# skips (it copies the working tree).
GITHUB_JOB_START = {"median": 9.0, "p90": 60.0}
GITHUB_CHECKOUT = 1.0


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
    parser.add_argument(
        "--project-installer",
        choices=("pip", "uv"),
        default="pip",
        help="uv: the caller opts in, the host jobs install the project with uv (no install input)",
    )
    parser.add_argument(
        "--warm-venv-cache",
        action="store_true",
        help="the gate's runs start with entropy-gate's venv in act's cache (a later push)",
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
        world = _world(root, GATE_UV if args.project_installer == "uv" else GATE)
        _literal_max_parallel(world.project)  # host A and host B side by side, as on GitHub
        gate_runs: list[dict[str, float]] = []
        plain_runs: list[dict[str, float]] = []
        counter = iter(range(1_000))
        warm = None
        if args.warm_venv_cache:  # the venv entries a first run saved, and nothing else
            _act(world, "warm.yml", root / "warm")
            warm = root / "warm" / "cache"

        def gate() -> benchlib.Sample:
            jobs = _act(world, "gate.yml", root / f"run-{next(counter)}", cache=warm)
            gate_runs.append(jobs)
            return benchlib.Sample(jobs["(critical path)"], 0, 0)

        def plain() -> benchlib.Sample:
            jobs = _act(world, "plain.yml", root / f"run-{next(counter)}")
            plain_runs.append(jobs)
            return benchlib.Sample(jobs["(critical path)"], 0, 0)

        ours, floor = benchlib.alternate(gate, plain, repeat)
        legs = {job for run in gate_runs for job in run if re.search(r"host [ab] leg [2-9]", job)}
        assert not legs, f"the one-property demo ran legs beyond the first: {sorted(legs)}"
        stages = {"gate": _stages(GATE, world.project), "plain": _stages(PLAIN, world.project)}
    print(benchlib.load_note())
    print("the demo's honest fix; act on this machine, each job on the same 2 cores")
    if args.warm_venv_cache:
        print("the gate's runs start with entropy-gate's venv in act's cache (--warm-venv-cache)")
    if args.project_installer == "uv":
        print("the gate's host jobs install the project with project-installer: uv (plain: pip)")
    print(f"floor: one job, {INSTALL}, then pytest on the property module")
    benchlib.print_ratio("the reusable workflow", "the plain job", ours, floor)
    _print_github(ours, floor, stages)
    for name, runs in (("reusable workflow", gate_runs), ("plain workflow", plain_runs)):
        print(f"-- {name}: per job, median of {len(runs)} run(s)")
        for job in sorted({j for run in runs for j in run}):
            values = [run[job] for run in runs if job in run]
            print(f"   {job:<60} {statistics.median(values):7.1f} s")
    return 0


def _print_github(
    ours: list[benchlib.Sample], floor: list[benchlib.Sample], stages: dict[str, int]
) -> None:
    """Each pair with GITHUB_JOB_START + GITHUB_CHECKOUT added per job on the critical path."""
    print(
        f"-- on GitHub (modelled): {stages['gate']} jobs in series against "
        f"{stages['plain']}, each starting as GITHUB_JOB_START says and checking out "
        f"({GITHUB_CHECKOUT:.0f} s)"
    )
    for name, start in GITHUB_JOB_START.items():
        per_job = start + GITHUB_CHECKOUT
        gate = [o.seconds + stages["gate"] * per_job for o in ours]
        plain = [f.seconds + stages["plain"] * per_job for f in floor]
        ratios = [g / p for g, p in zip(gate, plain, strict=True)]
        print(
            f"   job start {name} {start:4.0f} s: reusable workflow "
            f"{statistics.median(gate):6.1f} s, plain job {statistics.median(plain):6.1f} s; "
            f"ratio {benchlib.stats(ratios)}"
        )


SKIPPED = frozenset({"hosts-more"})  # legs 2 and up: a one-property manifest has none


def _stages(text: str, project: Path, skipped: frozenset[str] = SKIPPED) -> int:
    """The jobs on the longest `needs:` chain of a workflow; a job that calls a reusable
    workflow of the project counts as that workflow's chain (it starts no runner itself), and
    a job this run skips (`skipped`: the reusable workflow's hosts-more, on the one-property
    demo) starts none either."""
    jobs: dict[str, dict[str, Any]] = yaml.safe_load(text)["jobs"]
    depth: dict[str, int] = {}

    def of(name: str) -> int:
        if name not in depth:
            job = jobs[name]
            needs = job.get("needs") or []
            before = max((of(n) for n in ([needs] if isinstance(needs, str) else needs)), default=0)
            uses = str(job.get("uses", ""))
            called = re.search(r"/(\.github/workflows/[^@]+)@", uses)
            own = _stages((project / called.group(1)).read_text("utf-8"), project) if called else 1
            depth[name] = before + (0 if name in skipped else own)
        return depth[name]

    return max(of(name) for name in jobs)


def _as_project(sample: e2e_kit.Sample) -> e2e_kit.Sample:
    """The sample's PR head with a pyproject.toml at the root (PYPROJECT), committed on
    `fix`; its remote-tracking ref and the event file follow the new head."""
    (sample.path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    benchlib.git(sample.path, "add", "pyproject.toml")
    benchlib.git(sample.path, "commit", "-qm", "the invoices as a project, with a test extra")
    head = benchlib.git(sample.path, "rev-parse", "HEAD").strip()
    benchlib.git(sample.path, "update-ref", "refs/remotes/origin/fix", head)
    event = json.loads(sample.event.read_text(encoding="utf-8"))
    event["pull_request"]["head"]["sha"] = head
    sample.event.write_text(json.dumps(event), encoding="utf-8")
    return dataclasses.replace(sample, head=head)


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
    one after another: host B then waited for host A, which no runner on GitHub does)."""
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
    def __init__(self, root: Path, sample: object | None = None, gate: str = GATE) -> None:
        self.kit = e2e_kit.kit_dir()
        self.wheels = e2e_kit.wheelhouse(root / "wheelhouse")
        self.project = e2e_kit.project_copy(root / "entropy-gate")
        if sample is not None:
            self.sample = sample
            return
        workflows = root / "workflows"
        workflows.mkdir()
        (workflows / "gate.yml").write_text(gate, encoding="utf-8")
        (workflows / "plain.yml").write_text(PLAIN, encoding="utf-8")
        (workflows / "warm.yml").write_text(gate + WARM, encoding="utf-8")
        self.sample = _as_project(
            e2e_kit.sample_repo(root / "sample", root / "pins-tmp", workflows)
        )


def _world(root: Path, gate: str = GATE) -> World:
    return World(root, gate=gate)


def _act(
    world: World, workflow: str, folder: Path, *, rejects: bool = False, cache: Path | None = None
) -> dict[str, float]:
    """One act run: seconds per job (first to last log line) and the whole run's wall time.
    `rejects`: the verdict may reject (act then exits 1), as long as one was reached; `cache`:
    act's cache server starts as a copy of that folder (else empty)."""
    folder.mkdir()
    if cache is not None:
        shutil.copytree(cache, folder / "cache")
    toolcache = folder / "toolcache"  # a clean interpreter per version, as a runner starts
    e2e_kit.tool_cache(toolcache, world.wheels, with_pytest=False)
    sample = world.sample
    api = e2e_kit.ApiServer.start(folder, world=e2e_kit.pulls_of(sample.base, sample.head))  # type: ignore[attr-defined]
    try:
        run = e2e_kit.run_act(
            world.sample, workflow, folder, kit=world.kit, project=world.project, api=api,  # type: ignore[arg-type]
            toolcache=toolcache, wheels=world.wheels, cache_server=folder / "cache",
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
        took, said = entry.get("executionTime"), str(entry.get("msg", ""))
        # the step's own name from its result line: a composite action's steps (the gate's
        # install, the project's) log under the action's `step`, each with its own result
        step = re.search(r"(?:Success|Failure) - (?:Main )?(.*?) \[", said)
        if isinstance(job, str) and isinstance(took, int) and step:
            steps[f"{job.rsplit('/', 1)[-1].strip()}: {step[1][:48]}"] = took / 1e9
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
