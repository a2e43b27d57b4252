"""Live reads of code under test (the audit in host.json) as findings of kind `live_entropy`.

A live read is a missing seam, not silencing: it explains an env_coupled verdict and names the
production line to fix, at warning level. With `constraints.forbid_live_entropy` a read the
patch introduced rejects. A read is introduced when the base ref's run on the same host kind
recorded no read of the same API (and variable or host) in the same file: lines move under a
patch, files rarely do. Without a base run's audit every read counts as introduced. A line
that copied or walked the environment (`dict(os.environ)`, a subprocess's `{**os.environ}`)
read every unpinned variable: one finding names the copy, not one per variable.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from entropy_action.core.findings import Finding
from entropy_action.core.hostinfo import Audit, AuditRecord
from entropy_action.manifest.pinfile import Pins
from entropy_action.verdict import detection, removed

MAX_REASONS = 5  # live reads spelled out in the verdict's reasons; the rest are counted
SHOWN_NAMES = 3  # variables named in a copy of the environment's finding

_CLOCK = ("time.", "datetime.", "date.")
_UNSEEDABLE = ("os.urandom", "secrets.", "uuid.")


def findings(
    head: Iterable[Audit | None],
    base: Iterable[Audit | None],
    pins: Pins | None,
    *,
    forbid: bool = False,
) -> list[Finding]:
    """One finding per (API, name, path, line) read on either host, in path and line order;
    a line that copied or walked the environment (`removed.env_copies`) is one finding for all
    the variables it read, introduced when any of them is."""
    audits = [audit for audit in head if audit is not None]
    copies = frozenset().union(*(removed.env_copies(audit) for audit in audits))
    first: dict[tuple[str, str | None, str, int], AuditRecord] = {}
    for audit in audits:
        for record in audit.records:
            if removed.is_gate_variable(record) or detection.is_detection(record):
                continue  # the gate's or pytest's own variable (removed.pin_reads, detection)
            first.setdefault((record.api, record.name, record.path, record.line), record)
    known = _base_keys(base)
    copied: dict[tuple[str, int], list[tuple[AuditRecord, bool]]] = {}
    out = []
    for record in first.values():
        introduced = known is None or (record.api, record.name, record.path) not in known
        if record.api == "os.environ" and (record.path, record.line) in copies:
            copied.setdefault((record.path, record.line), []).append((record, introduced))
            continue
        out.append(_finding(record, advice(record, pins), introduced, forbid))
    for reads in copied.values():
        names = sorted(record.name or "" for record, _ in reads)
        introduced = any(new for _, new in reads)
        found = _finding(reads[0][0], copy_advice(names), introduced, forbid)
        out.append(found.model_copy(update={"folded": len(reads) - 1}))
    return sorted(out, key=lambda f: (f.path, f.line, f.message))


def _finding(record: AuditRecord, message: str, introduced: bool, forbid: bool) -> Finding:
    return Finding(
        kind="live_entropy",
        path=record.path,
        line=record.line,
        message=message,
        introduced=introduced,
        test=record.test,
        level="error" if forbid and introduced else "warning",
    )


def copy_advice(names: Sequence[str]) -> str:
    """A copy of the environment (`dict(os.environ)`, a loop over it), in one line."""
    shown = ", ".join(repr(name) for name in names[:SHOWN_NAMES])
    more = f" and {len(names) - SHOWN_NAMES} more" if len(names) > SHOWN_NAMES else ""
    return (
        f"copies or walks `os.environ` ({len(names)} unpinned variables: {shown}{more}), "
        "which no pin fixes: pass in the variables it needs"
    )


def _base_keys(base: Iterable[Audit | None]) -> set[tuple[str, str | None, str]] | None:
    audits = [audit for audit in base if audit is not None]
    if not audits:
        return None
    return {(r.api, r.name, r.path) for audit in audits for r in audit.records}


def advice(record: AuditRecord, pins: Pins | None) -> str:
    """What the read is and the seam that would fix it, in one line."""
    call, api = f"`{record.call()}`", record.api
    if api.startswith(_CLOCK):
        if pins is not None and pins.clock_unix is not None:
            return f"reads {call} while the property pins the clock: take a Clock"
        return f"reads {call}, the live clock: pin clock_unix and take a Clock"
    if api.startswith("random."):
        if pins is not None and pins.rng_seed is not None:
            return f"reads {call}, the global RNG, while rng_seed is pinned: take a random.Random"
        return f"reads {call}, the global RNG: pin rng_seed and take a random.Random"
    if api.startswith(_UNSEEDABLE):
        return f"reads {call}, which no seed fixes: take the id or token source as a parameter"
    if api == "os.environ":
        return f"reads {call}, which no pin fixes: pin it (pins.env) or pass the value in"
    if api == "socket.gethostname()":
        return f"reads {call}, the machine's name: pass it in"
    if api.startswith("socket."):
        return f"reaches the network ({call}): pin a cassette or take a client as a parameter"
    if pins is not None and pins.temp_root is not None:
        return f"makes a temp file or dir outside the pinned temp_root ({call}): take a directory"
    return f"makes a temp file or dir ({call}) and temp_root is not pinned: pin temp_root"


def reasons(found: Sequence[Finding]) -> list[str]:
    """The verdict's lines for live reads: the first few by name, then a count."""
    live = [f for f in found if f.kind == "live_entropy"]
    lines = [f"`{f.location()}` {f.message}" for f in live[:MAX_REASONS]]
    if len(live) > MAX_REASONS:
        lines.append(f"… and {len(live) - MAX_REASONS} more live read(s) (see findings)")
    return lines
