"""The judge's view of hosts whose pytest died of a signal: their crash records and the base
ref's run on each, read from the report folders as data, for verdict.crash to weigh."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Literal

from entropy_action.core.errors import GateError
from entropy_action.core.hostinfo import HostInfo
from entropy_action.core.layout import HOST_JSON
from entropy_action.evidence import hostreport
from entropy_action.evidence.hostreport import HostReport
from entropy_action.verdict import crash
from entropy_action.verdict.model import CrashCause

Source = Path | HostReport | None
_HOSTS: tuple[Literal["A", "B"], ...] = ("A", "B")


def cause(
    hosts: Sequence[tuple[Source, Source]], changed: Callable[[], Collection[str] | None]
) -> CrashCause | None:
    """(head, base) of host A and host B: the patch or the environment, for each head whose
    crash record says it died of a signal (none where the gate killed it: a timeout, the
    temp root's cap); `changed` gives the files the patch changed, asked only then."""
    found = []
    for host, (head, base) in zip(_HOSTS, hosts, strict=True):
        info = _info(head) if isinstance(head, Path) else None
        if info is not None and info.returncode < 0 and info.crash is not None:
            found.append(crash.Crashed(host, info.crash, _base_state(base)))
    return crash.cause(found, changed()) if found else None


def _base_state(source: Source) -> crash.Base:
    """Whether the base ref's run on a host died of a signal, finished, or is not there."""
    info = source.info if isinstance(source, HostReport) else _info(source)
    if info is None:
        return "none"
    return "crashed" if info.returncode < 0 else "finished"


def _info(source: Path | None) -> HostInfo | None:
    if source is None:
        return None
    try:
        return hostreport.read_info(source / HOST_JSON)
    except GateError:
        return None
