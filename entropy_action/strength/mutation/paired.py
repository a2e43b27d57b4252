"""A worker's two copies, where the patch changed the property's test side beyond its module.

One session holds both modules when only the module differs (harness.Workspace): they share
the conftests, helpers, data and configuration. When the patch changed any of those
(scan.closure), the base's module must run under the base's test side and the head's under
the head's, which no one session can hold: conftests apply to a whole folder, and a helper is
one module under one name. So each worker keeps two copies of the head's tree — this one with
the head's test side, `other` with the base's whole test side written in (its module at
`harness.base_path`) — and every run is two sessions, one per copy, side by side, whose
reports are merged as one session's would be. The node ids differ by module path, so the
merge loses nothing. Side by side, not one after the other: a mutant counts only once both
copies ran it, and a first session that took the whole budget left the second none, so no
mutant counted (mimesis's 1,861-test module: `budget reached: 0 of 40`, every time).

The mutation step runs unfocused on such a pair (every test of both modules against every
mutant: a changed conftest or helper may change any test), so no spec asks a child to compare
the two sides (`confirm`); both sessions get each mutant, written into both copies when it
runs alone (schedule.execute).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from entropy_action.strength.mutation.harness import Outcome, Spec, Workspace, joined, merge

T = TypeVar("T")


@dataclass(frozen=True)
class Paired(Workspace):
    """This copy runs the head's module; `other` the base's, under the base's test side."""

    other: Workspace

    def trees(self) -> tuple[Path, ...]:
        return (self.tree, self.other.tree)

    def _mine(self, node: str) -> bool:
        return node.split("::", 1)[0] != self.base_module

    def run(
        self,
        selection: Sequence[str],
        timeout: float,
        watch: Sequence[str] = (),
        only: Sequence[str] | None = None,
        whole: Sequence[str] = (),
        whole_max: int = 0,
    ) -> Outcome:
        head = [n for n in selection if self._mine(n)]
        base = [n for n in selection if not self._mine(n)]
        mine = None if only is None else [n for n in only if self._mine(n)]
        theirs = None if only is None else [n for n in only if not self._mine(n)]
        found = _both(
            (lambda: Workspace.run(self, head, timeout, watch, mine, whole, whole_max))
            if head
            else None,
            (lambda: self.other.run(base, timeout, watch, theirs)) if base else None,
        )
        return merge([outcome for outcome in found if outcome is not None])

    def run_mutants(self, batch: Sequence[Spec], budget: float) -> dict[str, Outcome | None]:
        parts = {
            s.id: [
                replace(s, id=f"{s.id}.head", select=[n for n in s.select if self._mine(n)]),
                replace(s, id=f"{s.id}.base", select=[n for n in s.select if not self._mine(n)]),
            ]
            for s in batch
        }
        heads = [specs[0] for specs in parts.values() if specs[0].select]
        bases = [specs[1] for specs in parts.values() if specs[1].select]
        first, second = _both(
            (lambda: Workspace.run_mutants(self, heads, budget)) if heads else None,
            (lambda: self.other.run_mutants(bases, budget)) if bases else None,
        )
        return joined(parts, {**(first or {}), **(second or {})})


def _both(one: Callable[[], T] | None, other: Callable[[], T] | None) -> tuple[T | None, T | None]:
    """`one` and `other` side by side (a copy's session each); None where not given."""
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="paired") as pool:
        futures = [pool.submit(call) if call is not None else None for call in (one, other)]
        first, second = (future.result() if future is not None else None for future in futures)
    return first, second


def pair(head: Workspace, base: Workspace) -> Paired:
    """`head`'s copy with `base`'s beside it."""
    return Paired(
        head.tree,
        head.head_module,
        head.base_module,
        head.env,
        head.options,
        head.python,
        head.scratch,
        other=base,
    )
