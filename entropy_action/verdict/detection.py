"""`test_detection` from the audits: code under test read a `PYTEST_*` variable.

pytest sets `PYTEST_CURRENT_TEST` around every test and `PYTEST_VERSION` for the session;
code under test that reads them can take one path under the gate and another in production.
The audit records such a read by name when the first repository frame is code under test
(test code reading them is not recorded: a test may ask which test it is). One finding per
(variable, file, line); one the base's run read the same way in the same file stood there
(introduced=False). The scan finds the same reads in the diff (scan.detection) and the other
shapes the test process cannot observe (`sys.modules`, `sys.argv`, the stack, a conftest's
marker); the pairing says each place once.
"""

from __future__ import annotations

from collections.abc import Iterable

from entropy_action.core.findings import Finding
from entropy_action.core.hostinfo import Audit, AuditRecord

PYTEST_PREFIX = "PYTEST_"
_SAID = {
    "env": "reads `{}`",
    "modules": "asks whether `{}` is in `sys.modules`",
    "argv": "looks for pytest in `sys.argv`",
    "stack": "looks for a test among its callers' frames",
    "marker": "reads `sys.{}`, which a conftest sets",
}


def is_detection(record: AuditRecord) -> bool:
    """A read of one of pytest's own variables (PYTEST_CURRENT_TEST, PYTEST_VERSION...)."""
    return record.api == "os.environ" and (record.name or "").startswith(PYTEST_PREFIX)


def message(shape: str, subject: str) -> str:
    """What detecting the test run at this place means, in one line."""
    what = _SAID.get(shape, "detects pytest").format(subject)
    return (
        f"production code {what}: it can tell a test run from production, so under pytest "
        "it may take a path production never runs and the property tests that path, not "
        "the code (remove the branch; pass in what must differ)"
    )


def findings(head: Iterable[Audit | None], base: Iterable[Audit | None]) -> list[Finding]:
    """One `test_detection` per (variable, file, line) code under test read at the head."""
    audits = [audit for audit in base if audit is not None]
    known = {(r.name, r.path) for audit in audits for r in audit.records if is_detection(r)}
    out: dict[tuple[str | None, str, int], Finding] = {}
    for audit in head:
        for record in audit.records if audit is not None else ():
            key = (record.name, record.path, record.line)
            if not is_detection(record) or key in out:
                continue
            out[key] = Finding(
                kind="test_detection",
                path=record.path,
                line=record.line,
                message=message("env", record.name or ""),
                introduced=not audits or (record.name, record.path) not in known,
                test=record.test,
            )
    return sorted(out.values(), key=lambda f: (f.path, f.line, f.message))
