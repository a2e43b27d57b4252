"""Live reads of code under test (the audit in host.json) as findings of kind `live_entropy`.

A live read is a missing seam, not silencing: it explains an env_coupled verdict and names the
production line to fix, at warning level. With `constraints.forbid_live_entropy` a read the
patch introduced rejects. A read is introduced when the base ref's run on the same host kind
recorded no read of the same API (and variable or host) in the same file: lines move under a
patch, files rarely do. Without a base run's audit every read counts as introduced.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from entropy_action.core.findings import Finding
from entropy_action.core.hostinfo import Audit, AuditRecord
from entropy_action.manifest.pinfile import Pins
from entropy_action.verdict import detection, removed

MAX_REASONS = 5  # live reads spelled out in the verdict's reasons; the rest are counted

_CLOCK = ("time.", "datetime.", "date.")
_UNSEEDABLE = ("os.urandom", "secrets.", "uuid.")


def findings(
    head: Iterable[Audit | None],
    base: Iterable[Audit | None],
    pins: Pins | None,
    *,
    forbid: bool = False,
) -> list[Finding]:
    """One finding per (API, name, path, line) read on either host, in path and line order."""
    first: dict[tuple[str, str | None, str, int], AuditRecord] = {}
    for audit in head:
        for record in audit.records if audit else ():
            if removed.is_gate_variable(record) or detection.is_detection(record):
                continue  # the gate's or pytest's own variable (removed.pin_reads, detection)
            first.setdefault((record.api, record.name, record.path, record.line), record)
    known = _base_keys(base)
    out = []
    for record in first.values():
        introduced = known is None or (record.api, record.name, record.path) not in known
        out.append(
            Finding(
                kind="live_entropy",
                path=record.path,
                line=record.line,
                message=advice(record, pins),
                introduced=introduced,
                test=record.test,
                level="error" if forbid and introduced else "warning",
            )
        )
    return sorted(out, key=lambda f: (f.path, f.line, f.message))


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
