"""Mutation strength, base vs head: mutants of the code the property exercises, run under the
base's and the head's module; what the base kills and the head lets survive.

Why a small operator set of our own and not mutmut or cosmic-ray: both mutate a whole
project and need their own configuration, state and runner (mutmut's trampolines rewrite
the sources it runs from, with a `mutants/` copy and a results database; cosmic-ray keeps a
session database and a distributor), while the gate needs mutants of a handful of functions
the property reached, drawn reproducibly from the pinned seed, and run under the pins by
its own runner against two modules at once. Their users' reports are mostly about time
("90 seconds * 522 is 13 hours"), tests selected from coverage missing a kill, and whole-suite
runs; the gate sidesteps those by budget (`max_mutants`, `time_budget_seconds`), by
mutating only what the property reached, and by counting only tests that pass unmutated.
Six classic operators on `ast` (operators.py) are small enough to test exhaustively.

The steps: one run of both modules on the unmutated head code, traced (which production
functions each test calls, via the probe); the functions to mutate (`changed`: those the
patch touched or its changed tests reach; `all`: every one reached); the mutants, drawn with
`rng_seed`; for each, the tests that reach its function, both modules side by side: one
pytest session per core collects them once and runs each mutant in a forked child (the
probe), which a process of its own replaces where the fork cannot apply the mutant; each
mutant stopped at its time budget and remembered per (mutant, modules, tests) digest.
Starting pytest costs about a second here; forking costs milliseconds, which is what keeps
the step under the gate's own time on the demo (bench/bench_strength.py).
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import queue
import shutil
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from entropy_action.mutation import operators
from entropy_action.mutation.harness import Imports, Outcome, Workspace
from entropy_action.mutation.operators import Mutant, Target

SUPPORT_DIRS = frozenset({"test", "tests", "testing", "conftest"})
SKIP_DIRS = frozenset({".git", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".nox"})
MIN_MUTANT_SECONDS = 5.0
MUTANT_FACTOR = 10.0  # a mutant may take this many times the unmutated run
SATURATED = ("*", 0)  # the probe stopped tracing this test: it may reach anything


@dataclass(frozen=True)
class Budget:
    mode: str  # "off" | "changed" | "all"
    max_mutants: int
    seconds: float


@dataclass(frozen=True)
class Inputs:
    """Everything the measurement reads, gathered by the caller."""

    root: Path
    base_module: bytes
    head_module: bytes
    touched: frozenset[tuple[str, str]]  # (path, qualified name) of functions the patch changed
    seed: int
    budget: Budget
    cache: Path | None = None


@dataclass(frozen=True)
class Result:
    """One mutant under both modules."""

    mutant: Mutant
    base_killers: tuple[str, ...]  # base tests (names) that failed on it
    head_killers: tuple[str, ...]
    timed_out: bool = False


@dataclass(frozen=True)
class Measured:
    results: tuple[Result, ...] = ()
    notes: tuple[str, ...] = ()
    skipped: int = 0  # mutants left out by the time budget
    seconds: float = 0.0
    extra: dict[str, int] = field(default_factory=dict)


def measure(
    inputs: Inputs,
    make_workspace: Callable[[Path], Workspace],
    progress: Callable[[str], None] = lambda line: None,
) -> Measured:
    """Run the mutation step; `make_workspace(scratch)` copies the tree for one worker."""
    started = time.monotonic()
    workers = max(1, os.cpu_count() or 1)
    first = make_workspace(Path("0"))
    t0 = time.monotonic()
    baseline = first.run(
        [first.head_module, first.base_module], inputs.budget.seconds, _watch(first)
    )
    unmutated = time.monotonic() - t0
    if baseline.timed_out:
        return Measured(notes=("mutation: the unmutated run did not finish in the time budget",))
    if baseline.outside is not None:
        return Measured(notes=(cannot_measure(baseline.outside),), seconds=_since(started))
    passing = _passing(baseline, first)
    mutants = _mutants(inputs, first, baseline, passing)
    if not mutants:
        return Measured(notes=(_nothing_to_mutate(baseline, passing),), seconds=_since(started))
    progress(f"mutation: {len(mutants)} mutant(s) on {workers} worker(s)…")
    plans = [(m, _selection(m, baseline, passing)) for m in mutants]
    spaces = [first, *(make_workspace(Path(str(i))) for i in range(1, min(workers, len(plans))))]
    timeout = max(MIN_MUTANT_SECONDS, MUTANT_FACTOR * unmutated)
    found = _outcomes(plans, spaces, timeout, started + inputs.budget.seconds, inputs)
    outside = next((o.outside for o in found.values() if o.outside is not None), None)
    if outside is not None:
        return Measured(notes=(cannot_measure(outside),), seconds=_since(started))
    results = tuple(
        _result(mutant, selection, found[index], passing)
        for index, (mutant, selection) in enumerate(plans)
        if index in found
    )
    notes: list[str] = []
    skipped = len(plans) - len(results)
    if skipped:
        notes.append(
            f"mutation: {skipped} of {len(plans)} mutant(s) not run within "
            f"time_budget_seconds={inputs.budget.seconds:g}"
        )
    timed = sum(r.timed_out for r in results)
    if timed:
        notes.append(f"mutation: {timed} mutant(s) stopped at their time budget, not counted")
    return Measured(results, tuple(notes), skipped, _since(started))


Plan = tuple[Mutant, list[str]]


def _nothing_to_mutate(baseline: Outcome, passing: dict[str, list[str]]) -> str:
    if any(baseline.reached.get(n) for n in (*passing["head"], *passing["base"])):
        return "mutation: no function to mutate"
    return (
        "mutation: no function to mutate: the passing tests reached no production code of "
        "the checkout (code installed elsewhere, not editable, is not mutated)"
    )


def cannot_measure(outside: Imports) -> str:
    """Fail closed: survivors of mutants that never ran would read as "no weakening"."""
    return f"mutation: cannot measure, no score: {outside.reason()}"


def _outcomes(
    plans: Sequence[Plan],
    spaces: Sequence[Workspace],
    timeout: float,
    deadline: float,
    inputs: Inputs,
) -> dict[int, Outcome]:
    """Each mutant's outcome: from the cache, else from a forked child in one session per
    worker, else (the fork could not apply it) from a process of its own. A mutant left
    out by the time budget has none."""
    found: dict[int, Outcome] = {}
    todo: list[int] = []
    for index, (mutant, selection) in enumerate(plans):
        cached = _cached(inputs.cache, _key(mutant, selection, inputs)) if selection else None
        if not selection:
            found[index] = Outcome({}, {})
        elif cached is not None:
            found[index] = cached
        else:
            todo.append(index)
    alone: list[int] = [] if hasattr(os, "fork") else list(todo)
    batches = [todo[w :: len(spaces)] for w in range(len(spaces))] if not alone else []

    def batch(space: Workspace, indexes: list[int]) -> dict[str, Outcome | None]:
        spec = [(str(i), *_spec(plans[i])) for i in indexes]
        left = deadline - time.monotonic()
        return space.run_mutants(spec, timeout, left) if spec and left > 0 else {}

    with ThreadPoolExecutor(max_workers=len(spaces), thread_name_prefix="mutants") as pool:
        for got in pool.map(batch, spaces, batches):
            for key, outcome in got.items():
                if outcome is None:
                    alone.append(int(key))
                else:
                    found[int(key)] = outcome
        free: queue.Queue[Workspace] = queue.Queue()
        for space in spaces:
            free.put(space)

        def one(index: int) -> tuple[int, Outcome] | None:
            if time.monotonic() > deadline:
                return None
            space = free.get()
            try:
                return index, _execute(space, *plans[index], timeout)
            finally:
                free.put(space)

        for done in pool.map(one, alone):
            if done is not None:
                found[done[0]] = done[1]
    for index in todo:
        if index in found and found[index].outside is None:
            _store(inputs.cache, _key(*plans[index], inputs=inputs), found[index])
    return found


def _spec(plan: Plan) -> tuple[str, str, int, str, list[str]]:
    mutant, selection = plan
    return mutant.path, mutant.function, mutant.span[0], mutant.source, selection


def _since(started: float) -> float:
    return time.monotonic() - started


def _watch(space: Workspace) -> list[str]:
    """The production files of the tree: Python files outside test folders and modules."""
    found: list[str] = []
    for folder, dirs, files in os.walk(space.tree):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            relative = (Path(folder) / name).relative_to(space.tree).as_posix()
            if name.endswith(".py") and not is_support(relative):
                found.append(relative)
    return found


def is_support(path: str) -> bool:
    pure = PurePosixPath(path)
    name = pure.name
    if name == "conftest.py" or name.startswith("test") or name.endswith("_test.py"):
        return True
    return any(part in SUPPORT_DIRS for part in pure.parts[:-1])


def test_name(nodeid: str) -> str:
    """`path::Class::test[param]` → `Class::test`."""
    bare = nodeid.split("[", 1)[0]
    return bare.split("::", 1)[1] if "::" in bare else bare


def _passing(baseline: Outcome, space: Workspace) -> dict[str, list[str]]:
    """Node ids that passed unmutated, per module ("head", "base")."""
    out: dict[str, list[str]] = {"head": [], "base": []}
    for nodeid, outcome in baseline.outcomes.items():
        if outcome != "passed":
            continue
        path = nodeid.split("::", 1)[0]
        if path == space.head_module:
            out["head"].append(nodeid)
        elif path == space.base_module:
            out["base"].append(nodeid)
    return out


def _mutants(
    inputs: Inputs, space: Workspace, baseline: Outcome, passing: dict[str, list[str]]
) -> list[Mutant]:
    reached: set[tuple[str, int]] = set()
    changed = _changed_tests(inputs.base_module, inputs.head_module)
    near_change: set[tuple[str, int]] = set()
    for nodeid in (*passing["head"], *passing["base"]):
        found = baseline.reached.get(nodeid, [])
        reached.update(found)
        if test_name(nodeid) in changed:
            near_change.update(found)
    sources: dict[str, str] = {}
    targets: list[Target] = []
    for path in sorted({p for p, _ in reached}):
        try:
            text = (space.tree / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        sources[path] = text
        for line, first, _, name in operators.functions(text):
            if (path, line) not in reached and (path, first) not in reached:
                continue
            hit = (path, line) in near_change or (path, first) in near_change
            if inputs.budget.mode == "all" or hit or (path, name) in inputs.touched:
                targets.append(Target(path, line, name))
    return operators.mutants(sources, targets, inputs.seed, inputs.budget.max_mutants)


def _changed_tests(base: bytes, head: bytes) -> frozenset[str]:
    """Test functions (`name`, `Class::name`) added, removed or changed between the modules."""
    old, new = _bodies(base), _bodies(head)
    return frozenset(n for n in old.keys() | new.keys() if old.get(n) != new.get(n))


def _bodies(source: bytes) -> dict[str, str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    out: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[stmt.name] = ast.dump(stmt)
        elif isinstance(stmt, ast.ClassDef):
            for inner in stmt.body:
                if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[f"{stmt.name}::{inner.name}"] = ast.dump(inner)
    return out


def _selection(mutant: Mutant, baseline: Outcome, passing: dict[str, list[str]]) -> list[str]:
    """The tests, passing unmutated, that called the mutated function."""
    first, end = mutant.span
    return [
        nodeid
        for nodeid in (*passing["head"], *passing["base"])
        if any(
            (path == mutant.path and first <= line <= end) or (path, line) == SATURATED
            for path, line in baseline.reached.get(nodeid, [])
        )
    ]


def _result(
    mutant: Mutant, selection: list[str], outcome: Outcome, passing: dict[str, list[str]]
) -> Result:
    if outcome.timed_out:
        return Result(mutant, (), (), timed_out=True)
    killers = {
        which: tuple(
            dict.fromkeys(
                test_name(n)
                for n in passing[which]
                if n in selection and outcome.outcomes.get(n, "failed") != "passed"
            )
        )
        for which in ("base", "head")
    }
    return Result(mutant, killers["base"], killers["head"])


def _execute(space: Workspace, mutant: Mutant, selection: list[str], timeout: float) -> Outcome:
    target = space.tree / mutant.path
    original = target.read_bytes()
    try:
        target.write_text(mutant.source, encoding="utf-8")
        shutil.rmtree(target.parent / "__pycache__", ignore_errors=True)
        return space.run(selection, timeout)
    finally:
        target.write_bytes(original)
        shutil.rmtree(target.parent / "__pycache__", ignore_errors=True)


def _key(mutant: Mutant, selection: Sequence[str], inputs: Inputs) -> str:
    digest = hashlib.sha256()
    for part in (
        mutant.digest,
        hashlib.sha256(inputs.base_module).hexdigest(),
        hashlib.sha256(inputs.head_module).hexdigest(),
        "\0".join(selection),
    ):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def _cached(cache: Path | None, key: str) -> Outcome | None:
    if cache is None:
        return None
    try:
        data = json.loads((cache / f"{key}.json").read_text(encoding="utf-8"))
        outcomes = {str(k): str(v) for k, v in data["outcomes"].items()}
        return Outcome(outcomes, {}, bool(data["timed_out"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _store(cache: Path | None, key: str, outcome: Outcome) -> None:
    if cache is None:
        return
    try:
        cache.mkdir(parents=True, exist_ok=True)
        data = {"outcomes": outcome.outcomes, "timed_out": outcome.timed_out}
        (cache / f"{key}.json").write_text(json.dumps(data), encoding="utf-8")
    except OSError:
        pass


def killed_counts(results: Sequence[Result]) -> tuple[int, int, int]:
    """(mutants counted, killed by the base's module, killed by the head's module)."""
    counted = [r for r in results if not r.timed_out]
    return (
        len(counted),
        sum(bool(r.base_killers) for r in counted),
        sum(bool(r.head_killers) for r in counted),
    )
