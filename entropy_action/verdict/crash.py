"""A host whose pytest died of a signal: is it the patch or the environment?

A pure function of the evidence: each crashed host's `crash` (host.json: the signal and the
frames faulthandler left), whether the base ref's run of the same host died too or finished,
and the files the patch changed. The answer is the one line a verdict's page leads with
(`Verdict.crash`); the verdict stays `invalid` (a run that did not finish judges nothing),
and what the patch was seen doing without running it (the pin check, the silencing scan)
is shown in front of the cause.

In order, the first that holds decides:
- the crash's frame is in the gate's own code: the environment (a bug of the gate);
- the base's run on that host died of a signal too: the environment (not this patch);
- the crash's frame is in a file the patch changed: the patch;
- the base's run on that host finished: the patch;
- else it cannot be told (no base run finished to compare with).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

from entropy_action.core.hostinfo import Crash
from entropy_action.verdict.model import CrashCause

Base = Literal["crashed", "finished", "none"]  # the base ref's run on the same host
_RANK = {"gate": 0, "patch": 1, "environment": 2, "unknown": 3}


@dataclass(frozen=True)
class Crashed:
    """One host whose pytest died of a signal."""

    host: Literal["A", "B"]
    crash: Crash
    base: Base


def cause(crashed: Sequence[Crashed], changed: Collection[str] | None) -> CrashCause | None:
    """The line the page leads with; None when no host died of a signal."""
    if not crashed:
        return None
    judged = [(_judge(one, changed), one) for one in crashed]
    (kind, why), first = min(judged, key=lambda pair: _RANK[pair[0][0]])
    same = [c.host for c in crashed if c.crash.words() == first.crash.words()]
    hosts = " and ".join(f"host {host}" for host in same)
    how = "died of" if first.crash.frames or first.crash.fatal else "was killed by"
    died = f"{hosts}: pytest {how} {first.crash.words()}"
    signal = first.crash.signal
    if kind == "gate":
        return CrashCause(
            blame="environment",
            line=f"The environment, not the patch: {died}, in entropy-gate's own code (a bug "
            f"of the gate: report it with the host's {_LOG}).",
            title=f"Invalid: {hosts} crashed ({signal}) in entropy-gate, not in the patch",
        )
    if kind == "environment":
        return CrashCause(
            blame="environment",
            line=f"The environment, not the patch: {died}; {why}.",
            title=f"Invalid: {hosts} crashed ({signal}) at the base ref too, not by the patch",
        )
    if kind == "patch":
        return CrashCause(
            blame="patch",
            line=f"The patch: {died}; {why}.",
            title=f"Invalid: the patch crashed {hosts} ({signal})",
        )
    return CrashCause(
        blame="unknown",
        line=f"Cannot tell the patch from the environment: {died}; {why}.",
        title=f"Invalid: {hosts} crashed ({signal})",
    )


_LOG = "faulthandler.log"


def _judge(one: Crashed, changed: Collection[str] | None) -> tuple[str, str]:
    """(kind, why in words) for one crashed host."""
    frame = one.crash.frame()
    if frame is not None and frame.place == "gate":
        return "gate", ""
    if one.base == "crashed":
        return "environment", "the base ref's run died of a signal there too"
    in_patch = [
        f.path for f in one.crash.frames if f.place == "repository" and f.path in (changed or ())
    ]
    if in_patch:
        return "patch", f"{in_patch[0]} is a file the patch changes"
    if one.base == "finished":
        return "patch", "the base ref's run of its module finished on that host"
    return "unknown", "no base run finished on that host to compare with"
