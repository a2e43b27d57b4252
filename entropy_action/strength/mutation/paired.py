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

from entropy_action.strength.mutation.harness import Outcome, Spec, Workspace

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
        heads = [replace(s, select=[n for n in s.select if self._mine(n)]) for s in batch]
        bases = [replace(s, select=[n for n in s.select if not self._mine(n)]) for s in batch]
        ran_heads, ran_bases = [s for s in heads if s.select], [s for s in bases if s.select]
        first, second = _both(
            (lambda: Workspace.run_mutants(self, ran_heads, budget)) if ran_heads else None,
            (lambda: self.other.run_mutants(ran_bases, budget)) if ran_bases else None,
        )
        first, second = first or {}, second or {}
        out: dict[str, Outcome | None] = {}
        for head, base in zip(heads, bases, strict=True):
            parts = [_part(head, first), _part(base, second)]
            if any(part is False for part in parts):
                continue  # not run in one copy: the budget ran out first
            if any(part is None for part in parts):
                out[head.id] = None  # not applied in one copy: it runs alone
                continue
            out[head.id] = merge([p for p in parts if isinstance(p, Outcome)])
        return out


def _both(one: Callable[[], T] | None, other: Callable[[], T] | None) -> tuple[T | None, T | None]:
    """`one` and `other` side by side (a copy's session each); None where not given."""
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="paired") as pool:
        futures = [pool.submit(call) if call is not None else None for call in (one, other)]
        first, second = (future.result() if future is not None else None for future in futures)
    return first, second


def _part(spec: Spec, found: dict[str, Outcome | None]) -> Outcome | bool | None:
    """One copy's result for `spec`: an Outcome, None (not applied), or False (not run)."""
    if not spec.select:
        return Outcome({}, {})
    return found.get(spec.id, False)


def merge(found: Sequence[Outcome]) -> Outcome:
    """The two sessions' reports as one session's."""
    if not found:
        return Outcome({}, {})
    return Outcome(
        outcomes={k: v for o in found for k, v in o.outcomes.items()},
        reached={k: v for o in found for k, v in o.reached.items()},
        timed_out=any(o.timed_out for o in found),
        outside=next((o.outside for o in found if o.outside is not None), None),
        durations={k: v for o in found for k, v in o.durations.items()},
        confirmed=all(o.confirmed for o in found),
        whole=found[0].whole,
        messages={k: v for o in found for k, v in o.messages.items()},
    )


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
