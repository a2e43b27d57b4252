"""Running planned mutants on the workers' copies, within the time budget.

Each mutant's outcome comes from the cache, else from a forked child in one pytest session
per worker (the probe), else — the fork could not apply it — from a pytest process of its
own. Nothing starts after the deadline, and nothing runs past it: a session stops at the
deadline and a process of its own is killed there; a mutant cut short has no outcome (left
out by the budget, never a survivor).
"""

from __future__ import annotations

import os
import queue
import shutil
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from entropy_action.strength.mutation import cache
from entropy_action.strength.mutation.harness import Outcome, Spec, Workspace
from entropy_action.strength.mutation.operators import Mutant


@dataclass(frozen=True)
class Plan:
    """A mutant, the tests to run against it, and how long it may take."""

    mutant: Mutant
    selection: list[str]
    timeout: float
    until_killed: bool = False  # one killing test is enough (the rest may not run)
    # where the two `sides` of the selection disagree, these run too, until one kills it
    confirm: tuple[str, ...] = ()
    sides: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    confirm_timeout: float = 0.0


@dataclass(frozen=True)
class Store:
    """Where outcomes are remembered, and the modules they were measured with."""

    folder: Path | None
    base_module: bytes
    head_module: bytes
    side: str = ""  # the base's test side where the patch changed it (scan.closure's digest)

    def key(self, plan: Plan) -> str:
        selection = [*plan.selection, *(["<until killed>"] if plan.until_killed else [])]
        if plan.confirm:
            selection += ["<confirm>", *plan.confirm]
        if self.side:
            selection += ["<test side>", self.side]
        return cache.key(plan.mutant, selection, self.base_module, self.head_module)


def outcomes(
    plans: Sequence[Plan],
    spaces: Sequence[Workspace],
    deadline: float,
    store: Store,
    alone_timeout: float,
) -> dict[int, Outcome]:
    """Each plan's outcome by index; a plan the budget left out has none."""
    found: dict[int, Outcome] = {}
    todo: list[int] = []
    for index, plan in enumerate(plans):
        cached = cache.load(store.folder, store.key(plan)) if plan.selection else None
        if not plan.selection:
            found[index] = Outcome({}, {})
        elif cached is not None:
            found[index] = cached
        else:
            todo.append(index)
    alone = _forked(plans, spaces, todo, deadline, found) if hasattr(os, "fork") else todo
    _alone(plans, spaces, sorted(alone), deadline, found, alone_timeout)
    for index in todo:
        if index in found:
            cache.store(store.folder, store.key(plans[index]), found[index])
    return found


def _forked(
    plans: Sequence[Plan],
    spaces: Sequence[Workspace],
    todo: list[int],
    deadline: float,
    found: dict[int, Outcome],
) -> list[int]:
    """One session per worker, the mutants dealt round-robin; those it could not apply."""
    batches = [todo[w :: len(spaces)] for w in range(len(spaces))]

    def batch(space: Workspace, indexes: list[int]) -> dict[str, Outcome | None]:
        spec = [_spec(i, plans[i]) for i in indexes]
        left = deadline - time.monotonic()
        return space.run_mutants(spec, left) if spec and left > 0 else {}

    alone: list[int] = []
    with ThreadPoolExecutor(max_workers=len(spaces), thread_name_prefix="mutants") as pool:
        for got in pool.map(batch, spaces, batches):
            for key, outcome in got.items():
                if outcome is None:
                    alone.append(int(key))
                else:
                    found[int(key)] = outcome
    return alone


def _alone(
    plans: Sequence[Plan],
    spaces: Sequence[Workspace],
    indexes: list[int],
    deadline: float,
    found: dict[int, Outcome],
    timeout: float,
) -> None:
    free: queue.Queue[Workspace] = queue.Queue()
    for space in spaces:
        free.put(space)

    def one(index: int) -> tuple[int, Outcome] | None:
        space = free.get()
        try:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            outcome = execute(
                space, plans[index].mutant, plans[index].selection, min(timeout, left)
            )
            return None if outcome.timed_out and left < timeout else (index, outcome)
        finally:
            free.put(space)

    with ThreadPoolExecutor(max_workers=len(spaces), thread_name_prefix="mutants") as pool:
        for done in pool.map(one, indexes):
            if done is not None:
                found[done[0]] = done[1]


def _spec(index: int, plan: Plan) -> Spec:
    mutant = plan.mutant
    return Spec(
        str(index),
        mutant.path,
        mutant.function,
        mutant.span[0],
        mutant.source,
        plan.selection,
        plan.timeout,
        plan.until_killed,
        plan.confirm,
        plan.sides,
        plan.confirm_timeout,
    )


def execute(space: Workspace, mutant: Mutant, selection: list[str], timeout: float) -> Outcome:
    """The mutant written into the copy (both, for a pair: paired.py), the tests in a pytest
    process of their own."""
    targets = [tree / mutant.path for tree in space.trees()]
    originals = [target.read_bytes() for target in targets]
    try:
        for target in targets:
            target.write_text(mutant.source, encoding="utf-8")
            shutil.rmtree(target.parent / "__pycache__", ignore_errors=True)
        return space.run(selection, timeout)
    finally:
        for target, original in zip(targets, originals, strict=True):
            target.write_bytes(original)
            shutil.rmtree(target.parent / "__pycache__", ignore_errors=True)
