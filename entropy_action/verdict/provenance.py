"""Where the code under test came from (`provenance` in host.json) as `unit_replaced` findings.

A property proves something about production code only when the tests call production code.
Each host's test process records the file every repository module the property module
imports was loaded from, and each replacement it saw (testproc/provenance.py): a module of
production's name loaded from the tests area (`shadowed`), a `sys.modules` entry that is not
what the import system loads for its name (`substituted`), a production function the
property module names that is test code or a mock when a test is called (`reassigned`).
Each is a finding on the head's report alone. With the base's run on host A, a module the
base's tests loaded from production that the head's load from the tests area is one too
(the copy replaced the production file), and a replacement the base's run saw the same is a
notice (`introduced=False`), as the scan's pre-existing findings are.
"""

from __future__ import annotations

from collections.abc import Iterable

from entropy_action.core.findings import Finding
from entropy_action.core.hostinfo import Provenance, ProvenanceUnit, Replacement

_HOW = {
    "shadowed": "a copy next to the tests shadows it",
    "substituted": "sys.modules holds another module under its name",
    "reassigned": "test code replaced it",
}


def findings(head: Iterable[Provenance | None], base: Provenance | None) -> list[Finding]:
    """One finding per replacement either host saw, and per module the head loads from the
    tests area that the base's run loaded from production."""
    seen: dict[tuple[str, str, str | None, str | None], Replacement] = {}
    units: dict[str, ProvenanceUnit] = {}  # module -> where the head loaded it
    for provenance in head:
        for replaced in provenance.replaced if provenance else ():
            seen.setdefault(replaced.key(), replaced)
        for unit in provenance.units if provenance else ():
            units.setdefault(unit.module, unit)
    known = {r.key() for r in base.replaced} if base is not None else set()
    digests = {u.sha256: u.path for u in base.units if u.sha256} if base is not None else {}
    out = [_finding(r, r.key() not in known, digests) for r in seen.values()]
    covered = {r.module for r in seen.values()}
    for unit in base.units if base is not None else ():
        now = units.get(unit.module)
        if unit.tests_area or now is None or now.path == unit.path or unit.module in covered:
            continue
        if now.tests_area:
            out.append(_moved(unit.module, unit.path, now.path, "a file in the tests area"))
        elif unit.path in now.candidates:
            still = f"while {unit.path} is still there: a copy put first on sys.path"
            out.append(_moved(unit.module, unit.path, now.path, still))
    return sorted(out, key=lambda f: (f.path, f.line, f.message))


def _finding(replaced: Replacement, introduced: bool, digests: dict[str, str]) -> Finding:
    subject = replaced.module + (f".{replaced.name}" if replaced.name else "")
    where = replaced.path or replaced.production
    copy = " (a verbatim copy)" if replaced.same_source else ""
    if replaced.sha256 in digests and not replaced.same_source:
        copy = f" (a verbatim copy of the base's {digests[replaced.sha256]})"
    by = replaced.path or "code with no file of its own (a mock, an exec'd copy)"
    message = (
        f"{subject}: {_HOW[replaced.how]} — the tests ran {by}{copy}, not the production "
        f"code in {replaced.production} ({replaced.detail}); the property checks the copy"
    )
    return Finding(
        kind="unit_replaced",
        path=where,
        line=replaced.line or 1,
        message=message,
        introduced=introduced,
        test=replaced.test,
    )


def _moved(module: str, production: str, copy: str, what: str) -> Finding:
    return Finding(
        kind="unit_replaced",
        path=copy,
        line=1,
        message=(
            f"{module}: the base's tests ran the production code in {production}, the head's "
            f"run {copy}, {what} — the property checks the copy"
        ),
    )


def suspicious(provenance: Provenance | None) -> bool:
    """Whether a host saw a replacement: the base run then tells one the patch brought from
    one that stood at the base. (A test helper module the tests import is no reason: on a
    real suite the tests import their own modules all the time.)"""
    return provenance is not None and bool(provenance.replaced)
