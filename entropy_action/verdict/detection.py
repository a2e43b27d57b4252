"""`test_detection` from the audits: code under test read a `PYTEST_*` variable, or looked
at the stack for a test.

pytest sets `PYTEST_CURRENT_TEST` around every test and `PYTEST_VERSION` for the session;
code under test that reads them can take one path under the gate and another in production.
The audit records such a read by name when the first repository frame is code under test
(test code reading them is not recorded: a test may ask which test it is). It records a look
at the stack (`sys._getframe`, which `inspect.stack()` and traceback's walks call;
`sys._current_frames`) when the code under test that looked, or one of its callers there,
names a test in its code (`"test_"`, `"pytest"`: testproc.audit), by the name it holds. One
finding per (read, file, line); one the base's run made the same way in the same file stood
there (introduced=False). The scan finds the same places in the diff (scan.detection) and
the shapes the test process cannot observe (`sys.modules` membership, `sys.argv`, a conftest's
marker: plain reads CPython announces to no hook); the pairing says each place once.
"""

from __future__ import annotations

from collections.abc import Iterable

from entropy_action.core.findings import Finding
from entropy_action.core.hostinfo import Audit, AuditRecord

PYTEST_PREFIX = "PYTEST_"
# the audit's APIs for a look at the stack by code under test that names a test
STACK_APIS = frozenset({"sys._getframe()", "sys._current_frames()", "sys._getframemodulename()"})
MARKER_API = "sys"  # a read of an attribute the test side set on sys (its name: the record's)
_SAID = {
    "env": "reads `{}`",
    "modules": "asks whether `{}` is in `sys.modules`",
    "env_scan": "walks the environment for `PYTEST_*` variables",
    "modules_scan": "walks `sys.modules` for a test framework's modules",
    "argv": "looks for pytest in `sys.argv`",
    "stack": "looks for a test among its callers' frames",
    "marker": "reads `sys.{}`, which a conftest sets",
    "pinned": "compares {}, the value the property pins",
}


def is_detection(record: AuditRecord) -> bool:
    """A read of one of pytest's own variables (PYTEST_CURRENT_TEST, PYTEST_VERSION...), a
    look at the stack by code that names a test, or a read of a marker the test side set on
    `sys`."""
    if record.api in STACK_APIS or record.api == MARKER_API:
        return True
    return record.api == "os.environ" and (record.name or "").startswith(PYTEST_PREFIX)


def _said(record: AuditRecord) -> str:
    if record.api == MARKER_API:
        return message("marker", record.name or "")
    if record.api in STACK_APIS:
        return message("stack", record.name or "")
    return message("env", record.name or "")


def message(shape: str, subject: str) -> str:
    """What detecting the test run at this place means, in one line."""
    what = _SAID.get(shape, "detects pytest").format(subject)
    return (
        f"production code {what}: it can tell a test run from production, so under pytest "
        "it may take a path production never runs and the property tests that path, not "
        "the code (remove the branch; pass in what must differ)"
    )


def findings(head: Iterable[Audit | None], base: Iterable[Audit | None]) -> list[Finding]:
    """One `test_detection` per (read, file, line) code under test made at the head."""
    audits = [audit for audit in base if audit is not None]
    known = {(r.api, r.name, r.path) for audit in audits for r in audit.records if is_detection(r)}
    out: dict[tuple[str, str, int], Finding] = {}
    for audit in head:
        for record in audit.records if audit is not None else ():
            if not is_detection(record):
                continue
            said = _said(record)
            key = (said, record.path, record.line)
            if key in out:
                continue
            out[key] = Finding(
                kind="test_detection",
                path=record.path,
                line=record.line,
                message=said,
                introduced=not audits or (record.api, record.name, record.path) not in known,
                test=record.test,
            )
    return sorted(out.values(), key=lambda f: (f.path, f.line, f.message))
