"""Runtime assertion counts: a test that executed its assertions at the base and (almost) none
of them at the head, on the same host, passes by not checking.

The test process counts the rewritten `assert` statements and unittest's `self.assert*` calls
that passed in each test (assertcount.py: how many executed, and at how many distinct
statements). A patch that makes a test return
before its assertions through a helper no static rule reads (`if not _should_check(): return`)
leaves the source's assertions in place; only the count of what ran shows it.

Counts are compared per normalized test id (each parametrized case on its own), only where
the test passed at the base and at the head on the same host (host A always; host B when the
base also ran there), because a test that fails is judged by its outcome. The rule fires when:

- the head executed no assertion where the base executed some; or
- the head executed at most half the base's assertions *and* at most half of its distinct
  assert statements (with at least two at the base: one of one is the rule above).

At most half, not fewer than half: one of two asserts replaced by a check the counter does
not count (a broad `pytest.raises(Exception)`, which counts as no assertion anywhere) is
exactly half, and "fewer than half" let it through on the boundary. Both counts are of the
same thing at the base and at the head (passing `assert`s and unittest assertions; an
`assertRaises` of a broad exception is not counted, assertcount.py), so they compare like
with like.

Both measures must fall for the second, because each alone moves for honest reasons: a loop
over data the patch changed runs its one statement fewer times (count falls, statements do
not), and a refactor that turns four asserts into a loop over a table of four runs one
statement four times (statements fall, count does not). A guard that skips most of a test's
assertions lowers both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from entropy_action.core.findings import Finding
from entropy_action.scan.runtime import bare_id
from entropy_action.testproc import vocabulary
from entropy_action.verdict.model import Assertions, TestResult

Host = Literal["a", "b"]
HOSTS: tuple[Host, ...] = ("a", "b")


def skipped(base: Assertions, head: Assertions) -> bool:
    """Whether `head` lost the base's assertions by the rule above (pure)."""
    if base.executed == 0:
        return False
    if head.executed == 0:
        return True
    return 2 * head.executed <= base.executed and 2 * head.sites <= base.sites


def assertions_skipped(results: Sequence[TestResult]) -> list[Finding]:
    """One `assertions_skipped_at_runtime` finding per test id that lost its assertions."""
    found = []
    for result in results:
        lost = {host: pair for host in HOSTS if (pair := _lost(result, host)) is not None}
        if lost:
            found.append(_finding(result, lost))
    return found


def _lost(result: TestResult, host: Host) -> tuple[Assertions, Assertions] | None:
    base = result.base_assertions_a if host == "a" else result.base_assertions_b
    head = result.assertions_a if host == "a" else result.assertions_b
    base_outcome = result.base_a if host == "a" else result.base_b
    if base is None or head is None or base_outcome != "passed":
        return None
    if result.outcome(host) != "passed" or not skipped(base, head):
        return None
    return base, head


def _finding(result: TestResult, lost: dict[Host, tuple[Assertions, Assertions]]) -> Finding:
    function = bare_id(result.id)
    path, _, name = function.partition("::")
    case = result.id[len(function) :]
    parts = [
        f"host {host.upper()} ran {_count(head)}, the base {_count(base)}"
        for host, (base, head) in sorted(lost.items())
    ]
    return Finding(
        kind="assertions_skipped_at_runtime",
        path=result.path or path,
        line=result.line or 1,
        message=f"property {name or function}{case} passed without running its assertions: "
        f"{'; '.join(parts)} — a test that returns before its checks proves nothing "
        f"(counted: {vocabulary.COUNTED_TEXT})",
        test=name or None,
    )


def _count(counts: Assertions) -> str:
    noun = "assertion" if counts.executed == 1 else "assertions"
    return f"{counts.executed} {noun} at {counts.sites} statement(s)"
