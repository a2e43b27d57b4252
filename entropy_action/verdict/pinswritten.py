"""Pins that did not take because the patch's own tests write them.

A host whose test process did not see a pin as pinned (host.json `pins_mismatch`) ran
outside the manifest's conditions, so its run is normally unusable: the verdict is
`invalid`. When the patch itself writes that pin's variable in the tests — an
`os.environ["TZ"] = …` at the top of the module, the scan's counted `env_write` finding —
the cause is not the run but the patch: the verdict is then judged with that finding (a
counted finding never lets a patch merge: `entropy_silenced`, or `masked_defect` where both
hosts fail), and a reason says which pin did not take and why. A mismatch no counted
finding explains (a runner that drops a variable, a locale that is not installed, a umask,
an `env_write` that stood at the base) keeps the run invalid. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from entropy_action.core.findings import Finding
from entropy_action.testproc.protocol import PIN_ENV

# scan.environment's message: "TZ, LANG written in …" or "every pinned variable written in …"
_WRITTEN = re.compile(
    r"^(?P<names>[A-Za-z_][A-Za-z0-9_]*(?:, [A-Za-z_][A-Za-z0-9_]*)*) written in "
)
EVERY = "every pinned variable"


def written(findings: Iterable[Finding]) -> frozenset[str]:
    """The pinned variables the counted `env_write` findings write (pass counted ones only)."""
    names: set[str] = set()
    for finding in findings:
        if finding.kind != "env_write":
            continue
        if finding.message.startswith(f"{EVERY} written in "):
            names.update(name for names_ in PIN_ENV.values() for name in names_)
        elif (match := _WRITTEN.match(finding.message)) is not None:
            names.update(match["names"].split(", "))
    return frozenset(names)


def unexplained(mismatch: Sequence[str], names: frozenset[str]) -> list[str]:
    """The `pins_mismatch` lines (`pinsseen`: "tz: TZ pinned 'UTC', …") that no written
    variable explains: one whose pin's variables (protocol.PIN_ENV) the tests write is
    explained; any other line, or a pin with no variable (umask), is not."""
    return [line for line in mismatch if not names & set(PIN_ENV.get(_pin(line), ()))]


def reason(host: str, mismatch: Sequence[str], names: frozenset[str]) -> str:
    """The reason for a host whose every mismatch is explained."""
    pins = ", ".join(dict.fromkeys(_pin(line) for line in mismatch))
    wrote = ", ".join(
        sorted(n for n in names if any(n in PIN_ENV.get(_pin(m), ()) for m in mismatch))
    )
    return (
        f"host {host}: the pins of {pins} did not take because the patch's tests write "
        f"{wrote} (env_write): judged with that finding, not as a run that cannot be judged"
    )


def _pin(line: str) -> str:
    return line.split(":", 1)[0]
