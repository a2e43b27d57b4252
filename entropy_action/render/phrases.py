"""One wording per fact, shared by the reporters (text summary, Markdown, check run).

Each function returns our own words around pieces the caller has already made safe for its
medium (plain text for the summary and annotations, escaped Markdown for the job summary), so a
fact reads the same wherever a reviewer meets it.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Literal

from entropy_action.evidence import ids
from entropy_action.verdict.model import FAILING, OrderPair, PropertyVerdict, TestResult

# Run from the repository root: --rootdir=. gives the node ids (and so the seeds) the gate saw.
# Under the seed alone (the plugin's own option): what the page printed before `replay`.
REPLAY = "python -m pytest -p entropy_action.plugin --rootdir=. --entropy-gate-seed="
# A failing test run again as its host ran it, from the host's report folder (gate.replay).
REPLAY_HOST = "entropy-gate replay --report host-{host}"
_HOSTS: tuple[tuple[str, Literal["a", "b"]], ...] = (("A", "a"), ("B", "b"))


def at_base(hosts: Sequence[str]) -> str:
    """A test failing at the head that failed at the base ref too (#9: it explains, never
    excuses)."""
    on = f" on host {' and '.join(hosts)}" if hosts else ""
    return f"failed at the base ref too{on}: the patch did not cause it, and it does not fix it"


def failed_before_on(test: TestResult) -> list[str]:
    """The hosts ("A", "B") on which `test` fails and already failed at the base ref."""
    return [name for name, key in _HOSTS if test.failed_before(key)]


def at_base_note(test: TestResult) -> str:
    """`at_base` for `test`, or "" when it did not fail at the base ref."""
    hosts = failed_before_on(test)
    return at_base(hosts) if hosts or test.failed_at_base else ""


def replays(test: TestResult, pairs: Sequence[OrderPair] = ()) -> list[tuple[str | None, str]]:
    """The command that runs a failing test again as its host ran it (`entropy-gate replay`,
    from the host's report folder): host B's when only host B failed it, else host A's (a
    test failing on both fails on the laptop); an order pair's victim, the pair's (`pairs`:
    Verdict.order_dependence); none for a test the gate's plugin did not report on that host
    (no seed: a report the gate did not write) or whose id names a host's own checkout.
    (None, command): the command names its host."""
    pair = next((p.replay for p in pairs if p.victim == test.id and p.replay), None)
    if pair is not None:  # alone it passes: the pair, in host B's order, is what fails
        return [(None, pair)]
    host = "a" if test.host_a in FAILING else "b" if test.host_b in FAILING else None
    if host is None or (test.seed_a if host == "a" else test.seed_b) is None:
        return []  # a test the gate's own run did not report (no seed): nothing to replay
    if ids.ROOT_PLACEHOLDER in test.id or ids.TMP_PLACEHOLDER in test.id:
        return []  # an id naming a host's own checkout: no other tree can select it
    return [(None, f"{REPLAY_HOST.format(host=host)} {shlex.quote(test.id)}")]


def order_pair(pair: OrderPair) -> str:
    """An order-dependent test and the one it depends on (Verdict.order_dependence)."""
    if pair.other is None:
        return f"order: {pair.victim} depends on two or more tests that run before it"
    if pair.kind == "polluter":
        return f"order: {pair.victim} fails after {pair.other} (polluter)"
    return f"order: {pair.victim} passes only after {pair.other} (state-setter)"


def coupled(sources: Sequence[str]) -> str:
    """What an env_coupled outcome follows (Verdict.coupled_to), already formatted."""
    return f"the failure follows: {', '.join(sources)}"


def strength(score: str, mode: str, not_counted: int) -> str:
    """The mutation scores (`MutationScore.render()`) with the mode and what was not counted."""
    line = f"{score} (constraints.mutation: {mode})"
    return line + (f"; {not_counted} not counted" if not_counted else "")


def weaker(count: int, kind: str = "weakened_property") -> str:
    """The mutants that now survive, counted: each is a `weakened_property` finding, shown
    there once with its line and the test that killed it."""
    return (
        f"weaker: {count} mutant(s) the base's module killed survive the head's "
        f"(each a {kind} finding)"
    )


def stronger(mutant: str, test: str) -> str:
    return f"stronger: {mutant} (the head's {test} kills it)"


STRONGER_AT_HEAD = "the property is stronger at the head"


def inputs_digest(digest: str) -> str:
    return f"inputs digest {digest}"


WHAT_TO_DO = "what to do"  # the heading of a verdict's next steps, and an annotation's lead
BASE_ON_HEAD = "the base's test fails on your change"


def notices(count: int) -> str:
    """The collapsed block of findings that stood at the base ref."""
    return (
        f"{count} notice{'s' if count != 1 else ''} that stood at the base ref "
        "(not counted against the patch)"
    )


REMOVED = "removed from the manifest"  # a dropped property (PropertyVerdict.module is None)
MAX_NAMED = 3  # properties named in a title before "and N more"


def property_name(property_id: str, module: str | None) -> str:
    """A property as a title names it; a dropped one says so."""
    return property_id if module is not None else f"{property_id} [{REMOVED}]"


def properties_title(classification: str, properties: Sequence[PropertyVerdict]) -> str:
    """A many-property verdict's title: the worst classification, the properties that have it
    (the ones that decide), and how many of how many."""
    total = len(properties)
    plural = "property" if total == 1 else "properties"
    if classification == "merge_candidate":
        every = "the only property passes" if total == 1 else f"all {total} properties pass"
        return f"merge_candidate: {every}"
    named = sorted(
        (p for p in properties if p.verdict.classification == classification),
        key=lambda p: p.property_id,
    )
    names = [property_name(p.property_id, p.module) for p in named[:MAX_NAMED]]
    more = f" and {len(named) - MAX_NAMED} more" if len(named) > MAX_NAMED else ""
    which = "property" if len(named) == 1 else "properties"
    return (
        f"{classification} in {which} {', '.join(names)}{more} ({len(named)} of {total} {plural})"
    )


MAX_HELD_WHY = 120  # characters of a held dimension's reason on the one line


def host_b_variations(varied: Sequence[str], held: Sequence[tuple[str, str]]) -> str:
    """One line over host B's variations: the dimensions it varied, then those it held with
    why (the caller has made names and reasons safe for its medium, and cut the reasons)."""
    shown = ", ".join(varied) if varied else "nothing"
    line = f"host B varied: {shown}"
    if held:
        line += "; held: " + ", ".join(f"{name} ({why})" for name, why in held)
    return line


def cut_why(why: str | None) -> str:
    """A held dimension's reason, cut for the one line."""
    words = " ".join((why or "not varied").split())
    return words if len(words) <= MAX_HELD_WHY else words[: MAX_HELD_WHY - 1] + "…"
