"""The host legs of the reusable workflow: which properties each matrix job runs.

Pure: a function of the HEAD manifest's groups (manifest.groups) and a weight per property,
so the check job builds the matrix, the verdict job names the leg that carried a property,
and host A and host B get the same assignment. One property is never split across legs: its
one session's evidence (channel completeness, hook inventory, provenance) is judged whole.

The rules, in order: one leg per group while the groups fit under the cap of legs per host;
more groups than that are packed whole into the cap's legs (heaviest first, each into the
lightest leg); fewer groups leave spare legs, which go one at a time to the group whose
heaviest leg weighs most, split by whole properties into contiguous runs (in the manifest's
order) that make its heaviest run as light as possible. A leg of one property is never split
further, so the spare legs are only spent where they shorten the critical path.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

from entropy_action.core import pyast
from entropy_action.core.errors import GateError

MAX_JOBS = 256  # GitHub's limit of jobs one matrix may generate
HOSTS = ("a", "b")
DEFAULT_LEGS_PER_HOST = 4


@dataclass(frozen=True)
class Weighted:
    """One property and its weight (its test functions, counted statically; at least 1)."""

    property_id: str
    weight: int


@dataclass(frozen=True)
class Leg:
    """One matrix job's properties on each host; `number` counts from 1."""

    number: int
    ids: tuple[str, ...]
    weight: int


def cap(legs_per_host: int, hosts: int = len(HOSTS)) -> int:
    """The legs per host the matrix may have: the asked cap within GitHub's job limit."""
    if legs_per_host < 1:
        raise GateError(f"--legs-per-host: give at least 1, got {legs_per_host}")
    return min(legs_per_host, MAX_JOBS // hosts)


def plan(groups: Sequence[Sequence[Weighted]], legs_per_host: int) -> list[Leg]:
    """The legs for `groups` (each a session group's properties in the manifest's order)."""
    limit = cap(legs_per_host)
    order = {w.property_id: i for i, w in enumerate(w for g in groups for w in g)}
    if len(groups) > limit:
        runs = _pack(groups, limit)
    else:
        counts = _spread(groups, limit)
        runs = [run for group, k in zip(groups, counts, strict=True) for run in _cut(group, k)]
    legs = []
    for number, run in enumerate(runs, start=1):
        ordered = sorted(run, key=lambda w: order[w.property_id])
        legs.append(Leg(number, tuple(w.property_id for w in ordered), _sum(ordered)))
    return legs


def _sum(run: Sequence[Weighted]) -> int:
    return sum(w.weight for w in run)


def _pack(groups: Sequence[Sequence[Weighted]], limit: int) -> list[list[Weighted]]:
    """Whole groups into `limit` legs: heaviest first (ties: the manifest's order), each into
    the lightest leg (ties: the first)."""
    bins: list[list[Weighted]] = [[] for _ in range(limit)]
    ranked = sorted(range(len(groups)), key=lambda i: (-_sum(groups[i]), i))
    for i in ranked:
        lightest = min(range(limit), key=lambda b: (_sum(bins[b]), b))
        bins[lightest].extend(groups[i])
    return bins


def _spread(groups: Sequence[Sequence[Weighted]], limit: int) -> list[int]:
    """How many legs each group gets: one each, then each spare leg to the group whose
    heaviest leg weighs most (ties: the first), while that group can still be split."""
    counts = [1] * len(groups)
    while sum(counts) < limit and groups:
        heaviest = max(range(len(groups)), key=lambda i: (_heaviest(groups[i], counts[i]), -i))
        if counts[heaviest] >= len(groups[heaviest]):
            break  # its heaviest leg is one property: no spare leg makes the path shorter
        counts[heaviest] += 1
    return counts


def _heaviest(group: Sequence[Weighted], k: int) -> int:
    return max(_sum(run) for run in _cut(group, k))


def _cut(group: Sequence[Weighted], k: int) -> list[list[Weighted]]:
    """`group` in at most `k` contiguous runs whose heaviest is as light as it can be."""
    low, high = max(w.weight for w in group), _sum(group)
    while low < high:  # the least capacity that k runs can hold
        middle = (low + high) // 2
        if len(_fill(group, middle)) <= k:
            high = middle
        else:
            low = middle + 1
    return _fill(group, low)


def _fill(group: Sequence[Weighted], capacity: int) -> list[list[Weighted]]:
    runs: list[list[Weighted]] = [[]]
    for weighted in group:
        if runs[-1] and _sum(runs[-1]) + weighted.weight > capacity:
            runs.append([])
        runs[-1].append(weighted)
    return runs


def matrix(legs: Sequence[Leg], *, many: bool) -> dict[str, list[dict[str, str]]]:
    """`strategy.matrix` for the host jobs (via fromJSON): one entry per leg and host, host A
    first. `properties` is the leg's ids, space-separated; empty for a manifest in the
    one-property form (the leg runs the manifest's one property, as before lists existed)."""
    return {
        "include": [
            {"host": host, "leg": str(leg.number), "properties": " ".join(leg.ids) if many else ""}
            for host in HOSTS
            for leg in legs
        ]
    }


def carrier(legs: Sequence[Leg], property_id: str) -> Leg | None:
    """The leg that carries `property_id` (None: no leg does)."""
    return next((leg for leg in legs if property_id in leg.ids), None)


def count_tests(source: str) -> int:
    """The test functions pytest would collect from a module by its default names, counted
    from its syntax (nothing runs): module-level `test*` functions and `test*` methods of
    `Test*` classes. At least 1, so a module that does not parse still weighs something."""
    try:
        tree = pyast.parse(source)
    except (SyntaxError, ValueError):
        return 1
    found = 0
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found += node.name.startswith("test")
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            found += sum(
                isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                and item.name.startswith("test")
                for item in node.body
            )
    return max(found, 1)


MAX_MATRIX_BYTES = 1 << 20


def carried(text: str) -> dict[str, int]:
    """Which leg carried each property, from a `matrix` JSON (the check job's output, which
    the verdict job takes to name the leg behind a missing folder); GateError on anything
    that is not one."""
    import json  # noqa: PLC0415 (only the verdict reads a matrix)

    if len(text.encode()) > MAX_MATRIX_BYTES:
        raise GateError(f"--matrix: {len(text.encode())} bytes; the limit is {MAX_MATRIX_BYTES}")
    try:
        loaded = json.loads(text)
    except ValueError as exc:
        raise GateError(f"--matrix: not JSON ({exc})") from None
    include = loaded.get("include") if isinstance(loaded, dict) else None
    if not isinstance(include, list) or len(include) > MAX_JOBS:
        raise GateError(f"--matrix: not a matrix (an object with 'include', at most {MAX_JOBS})")
    legs: dict[str, int] = {}
    for i, entry in enumerate(include):
        fields = entry if isinstance(entry, dict) else {}
        host, leg, ids = fields.get("host"), fields.get("leg"), fields.get("properties")
        if host not in HOSTS or not isinstance(leg, str) or not leg.isdigit():
            raise GateError(f"--matrix: include[{i}]: needs host a or b and a leg number")
        if not isinstance(ids, str):
            raise GateError(f"--matrix: include[{i}]: properties must be a string")
        for property_id in ids.split():
            legs.setdefault(property_id, int(leg))
    return legs
