"""Cheap exits in production code, judged as values: `verdict.removed` over audits and paired
results (live_read_removed, gate_pin_read), `verdict.basepolicy.removed_read`, and the scan's
production rules (`scan.production.compare` over parsed sources: live_read_constant,
gate_pin_read, seams). The runs through the gate are tests/integration/test_gate_live_reads.py."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest

from entropy_action.core.findings import Finding
from entropy_action.core.hostinfo import Audit, AuditRecord
from entropy_action.scan import production
from entropy_action.scan.source import WorkTree
from entropy_action.verdict import live_entropy, removed
from entropy_action.verdict.model import TestOutcome, TestResult

TEST = "tests/properties/test_invoice_total.py::test_late_fee_after_due"


def rec(
    api: str,
    line: int = 14,
    name: str | None = None,
    path: str = "invoice_lib.py",
    test: str = TEST,
):
    return AuditRecord(api=api, name=name, path=path, line=line, test=test, count=1)


def audit(*records: AuditRecord) -> Audit:
    return Audit(mechanism="sys.monitoring + sys.addaudithook", records=list(records))


def result(
    base_a: TestOutcome = "passed",
    base_b: TestOutcome = "failed",
    a: TestOutcome = "passed",
    b: TestOutcome = "passed",
) -> TestResult:
    return TestResult(id=TEST, raw_ids=[TEST], host_a=a, host_b=b, base_a=base_a, base_b=base_b)


def kinds(found: Sequence[Finding]) -> list[tuple[str, str]]:
    return [(f.kind, f.location()) for f in found]


# --- live_read_removed -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base_a", "base_b", "a", "b", "fires"),
    [
        ("passed", "failed", "passed", "passed", True),  # env-coupled at the base
        ("failed", "passed", "passed", "passed", True),  # env-coupled the other way
        ("failed", "failed", "passed", "passed", True),  # failing at the base
        ("error", "missing", "passed", "missing", True),  # host B off, base erred on A
        ("passed", "passed", "passed", "passed", False),  # outcomes alike
        ("passed", "missing", "passed", "passed", False),  # host B's base unknown, A passed
        ("failed", "failed", "failed", "passed", False),  # still failing at the head
        ("skipped", "skipped", "passed", "passed", False),  # a skip is not a failure
    ],
)
def test_a_removed_read_counts_only_when_its_test_changed_to_pass(
    base_a: TestOutcome, base_b: TestOutcome, a: TestOutcome, b: TestOutcome, fires: bool
) -> None:
    found = removed.findings(
        [audit(rec("datetime.now()"))], [audit()], [result(base_a, base_b, a, b)]
    )
    assert kinds(found) == ([("live_read_removed", "invoice_lib.py:14")] if fires else [])


FROZEN = "freeze_time('2026-01-15') patched with freezegun in property x: freeze_time(…)"


@pytest.mark.parametrize(
    ("message", "test", "fires"),
    [
        (f"{FROZEN} — the clock is faked inside the test process, so …", None, False),
        (f"{FROZEN} — the clock is faked inside …", "test_late_fee_after_due", False),
        ("clock fixture 'freezer' requested by t — the clock is frozen inside …", None, False),
        (f"{FROZEN} — the clock is faked inside the test process, so …", "test_other", True),
        ("random.seed patched with monkeypatch — the RNG is faked inside …", None, True),
    ],
)  # fmt: skip
def test_a_clock_the_heads_test_fakes_is_unseen_there_not_removed(
    message: str, test: str | None, fires: bool
) -> None:
    """freezegun's fakes stand in for the clock functions: the head's audit records no read
    in that test, which proves no removal (the scan finds the freeze itself)."""
    path = TEST.split("::", maxsplit=1)[0]
    static = [Finding(kind="entropy_patched", path=path, line=9, message=message, test=test)]
    found = removed.findings([audit(rec("datetime.now()"))], [audit()], [result()], (), static)
    assert kinds(found) == ([("live_read_removed", "invoice_lib.py:14")] if fires else [])


def test_the_message_names_the_read_the_test_and_the_hosts_it_failed_on() -> None:
    found = removed.findings([audit(rec("date.today()"))], [audit()], [result("failed", "failed")])
    assert found[0].message == (
        f"the base read `date.today()` here in production and {TEST} failed at the base on "
        "host A and host B; at the head no production code reads the live clock and the test "
        "passes: the source was removed, not pinned (inject it: a Clock, a random.Random, a "
        "parameter)"
    )
    assert (found[0].level, found[0].introduced, found[0].test) == ("error", True, TEST)


@pytest.mark.parametrize(
    ("head", "fires"),
    [
        (rec("time.time()", 30, path="clock.py"), False),  # the clock, read elsewhere: moved
        (rec("datetime.utcnow()", 3), False),  # another clock API: still the live clock
        (rec("random.random()"), True),  # another source does not keep the clock
        (rec("os.environ", name="ENTROPY_CLOCK_UNIX"), True),  # the pin is not the clock
    ],
)
def test_sources_are_matched_as_families_never_by_line(head: AuditRecord, fires: bool) -> None:
    found = removed.findings([audit(rec("datetime.now()"))], [audit(head)], [result()])
    assert bool(found) is fires


def test_an_environment_variable_is_one_source_per_name() -> None:
    base = audit(rec("os.environ", 9, name="INVOICE_LEGACY_FEES"))
    other = audit(rec("os.environ", 9, name="HOME"))
    same = audit(rec("os.environ", 22, name="INVOICE_LEGACY_FEES", path="settings.py"))
    assert kinds(removed.findings([base], [other], [result()])) == [
        ("live_read_removed", "invoice_lib.py:9")
    ]
    assert removed.findings([base], [same], [result()]) == []


def test_without_a_head_audit_or_a_base_audit_nothing_is_told_removed() -> None:
    base = [audit(rec("datetime.now()"))]
    assert removed.findings(base, [None, None], [result()]) == []
    assert removed.findings([None], [audit()], [result()]) == []
    assert removed.removed(base, []) == []


def test_a_seam_over_the_base_line_is_not_a_removal() -> None:
    base = [audit(rec("datetime.now()", 14))]
    assert (
        removed.findings(base, [audit()], [result()], [removed.Seam("invoice_lib.py", 10, 17)])
        == []
    )
    elsewhere = [removed.Seam("invoice_lib.py", 20, 30), removed.Seam("other.py", 1, 99)]
    assert kinds(removed.findings(base, [audit()], [result()], elsewhere)) == [
        ("live_read_removed", "invoice_lib.py:14")
    ]


def test_a_read_in_a_test_whose_outcome_stayed_is_not_a_finding() -> None:
    base = [audit(rec("datetime.now()", test="t.py::test_other"))]
    assert removed.findings(base, [audit()], [result()]) == []


def test_network_temp_dirs_and_ids_are_not_pinned_sources() -> None:
    for api in ("socket.connect()", "tempfile.mkdtemp()", "uuid.uuid4()", "os.urandom()"):
        assert removed.findings([audit(rec(api))], [audit()], [result()]) == []


# --- gate_pin_read at run time ---------------------------------------------------------------


def test_a_pin_read_is_a_gate_pin_read_and_no_live_entropy_warning() -> None:
    head = audit(rec("os.environ", 16, name="ENTROPY_CLOCK_UNIX"), rec("time.time()", 16))
    pins = removed.pin_reads([head], [])
    assert kinds(pins) == [("gate_pin_read", "invoice_lib.py:16")]
    assert (pins[0].level, pins[0].introduced) == ("error", True)
    assert pins[0].message.startswith("production code reads `ENTROPY_CLOCK_UNIX`, the gate's")
    live = live_entropy.findings([head], [], None)
    assert [f.message for f in live] == [
        "reads `time.time()`, the live clock: pin clock_unix and take a Clock"
    ]


def test_a_pin_read_that_stood_at_the_base_is_a_notice() -> None:
    read = rec("os.environ", 16, name="ENTROPY_RNG_SEED")
    moved = rec("os.environ", 30, name="ENTROPY_RNG_SEED")
    assert [f.introduced for f in removed.pin_reads([audit(moved)], [audit(read)])] == [False]
    assert [f.introduced for f in removed.pin_reads([audit(moved)], [audit()])] == [True]


# --- the scan's production rules --------------------------------------------------------------


def module(source: str) -> production.Module:
    return production.build(ast.parse(textwrap.dedent(source)))


LIVE = """
    from datetime import datetime, timezone

    def total_for(amounts, as_of, due=None):
        total = sum(amounts)
        if due is not None and datetime.now(timezone.utc) > due:
            total += 500
        return total
"""


def scan(head: str, base: str = LIVE, path: str = "invoice_lib.py") -> production.Production:
    return production.compare({path: module(base)}, {path: module(head)})


@pytest.mark.parametrize(
    "head",
    [
        # a module constant in place of the call
        LIVE.replace("from datetime import datetime, timezone", "from datetime import datetime, timezone\n    REF = datetime(2026, 1, 10, tzinfo=timezone.utc)").replace("datetime.now(timezone.utc)", "REF"),  # noqa: E501
        # the constant inline, through a module alias
        LIVE.replace("from datetime import datetime, timezone", "import datetime as dt").replace("datetime.now(timezone.utc)", "dt.datetime(2026, 1, 10, tzinfo=dt.timezone.utc)"),  # noqa: E501
        # from a Unix time, with arithmetic
        LIVE.replace("datetime.now(timezone.utc)", "datetime.fromtimestamp(1768003200 + 12 * 3600)"),  # noqa: E501
        # from a Unix time literal
        LIVE.replace("datetime.now(timezone.utc)", "datetime.fromtimestamp(1768003200, tz=timezone.utc)"),  # noqa: E501
        # a new parameter whose default is the constant
        LIVE.replace("due=None):", "due=None, now=datetime(2026, 1, 10, tzinfo=timezone.utc)):").replace("datetime.now(timezone.utc)", "now"),  # noqa: E501
    ],
)  # fmt: skip
def test_a_clock_read_replaced_by_a_constant_is_found(head: str) -> None:
    found = scan(head)
    assert [f.kind for f in found.findings] == ["live_read_constant"]
    assert "replaces the live clock `datetime.now()` (base invoice_lib.py:6) with the constant" in (
        found.findings[0].message
    )


@pytest.mark.parametrize(
    ("head", "seam"),
    [
        (LIVE.replace("datetime.now(timezone.utc)", "as_of"), True),  # the parameter it had
        (LIVE.replace("due=None):", "due=None, clock=SYSTEM):").replace("datetime.now(timezone.utc)", "clock.now()"), True),  # noqa: E501
        (LIVE.replace("due=None):", "due=None, today=None):").replace("datetime.now(timezone.utc)", "(today or datetime.now(timezone.utc))"), True),  # noqa: E501
        (LIVE.replace("datetime.now(timezone.utc)", "_now()") + "\n    def _now():\n        return datetime.now(timezone.utc)\n", False),  # noqa: E501
        (LIVE.replace("total = sum(amounts)", "total = sum(amounts) + 0"), False),  # unrelated
    ],
)  # fmt: skip
def test_injected_or_moved_clocks_are_no_finding(head: str, seam: bool) -> None:
    found = scan(head)
    assert found.findings == ()
    assert bool(found.seams) is seam


def test_epoch_arithmetic_beside_an_injected_clock_is_no_constant() -> None:
    epoch = "\n    EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)"
    head = (
        LIVE.replace(
            "from datetime import datetime, timezone",
            "from datetime import datetime, timezone" + epoch,
        )
        .replace("due=None):", "due=None, clock=None):")
        .replace("datetime.now(timezone.utc) > due", "EPOCH + (clock.now() - EPOCH) > due")
    )
    assert scan(head).findings == ()


def test_a_constant_with_a_parameter_read_more_often_is_still_a_constant() -> None:
    head = LIVE.replace("total = sum(amounts)", "total = sum(amounts) if as_of else 0").replace(
        "datetime.now(timezone.utc)", "datetime(2026, 1, 10, tzinfo=timezone.utc)"
    )
    found = scan(head)
    assert [f.kind for f in found.findings] == ["live_read_constant"]
    assert found.seams == ()


def test_a_date_built_from_a_parameter_is_no_constant() -> None:
    head = LIVE.replace("due=None):", "due=None, year=2026):").replace(
        "datetime.now(timezone.utc)", "datetime(year, 1, 10)"
    )
    assert scan(head).findings == ()


def test_a_read_moved_to_another_changed_file_is_no_finding() -> None:
    head = LIVE.replace("datetime.now(timezone.utc)", "datetime.fromtimestamp(1768003200)")
    clock = "import time\n\ndef now():\n    return time.time()\n"
    assert [f.kind for f in scan(head).findings] == ["live_read_constant"]
    base = {"invoice_lib.py": module(LIVE), "clock.py": module("")}
    moved = production.compare(base, {"invoice_lib.py": module(head), "clock.py": module(clock)})
    assert moved.findings == ()


@pytest.mark.parametrize(
    ("base", "head", "found"),
    [
        ("X = 1\n", 'import os\nV = os.environ.get("ENTROPY_CLOCK_UNIX")\n', [("gate_pin_read", "invoice_lib.py:2")]),  # noqa: E501
        ('V = "ENTROPY_CLOCK_UNIX"\n', 'V = "ENTROPY_CLOCK_UNIX"\n', []),  # stood at the base
        ("X = 1\n", '"""Reads ENTROPY_CLOCK_UNIX? no: a docstring."""\n', []),
        # the prefix alone names them all: `any(k.startswith("ENTROPY_") ...)` (the red team's E)
        ("X = 1\n", 'V = "ENTROPY_"\n', [("gate_pin_read", "invoice_lib.py:1")]),
        # the pins read from their own file (the red team's C): with a fallback to the clock
        ("X = 1\n", 'from pathlib import Path\nCFG = Path(__file__).with_name("entropy.yaml")\n', [("gate_pin_read", "invoice_lib.py:2")]),  # noqa: E501
        ("X = 1\n", 'DOC = "see entropy-gate\'s README"\n', []),
    ],
)  # fmt: skip
def test_the_gate_variables_named_in_production(
    base: str, head: str, found: list[tuple[str, str]]
) -> None:
    assert kinds(scan(head, base).findings) == found


def test_a_new_production_file_naming_a_pin_is_found() -> None:
    made = production.compare(
        {}, {"clock.py": module('import os\nos.getenv("ENTROPY_RNG_SEED")\n')}
    )
    assert kinds(made.findings) == [("gate_pin_read", "clock.py:2")]


@pytest.mark.parametrize(
    ("path", "production_file"),
    [
        ("invoice_lib.py", True),
        ("src/billing/fees.py", True),
        ("tests/helpers.py", False),
        ("conftest.py", False),
        ("billing/test_fees.py", False),
        (".venv/lib/python3.12/site-packages/x.py", False),
        ("README.md", False),
    ],
)
def test_which_changed_files_are_production(path: str, production_file: bool) -> None:
    assert production._production(path, "tests/properties/test_invoice_total.py") is production_file


def test_an_unreadable_file_is_left_out(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("def (:\n", encoding="utf-8")
    assert production.read(WorkTree(tmp_path), "broken.py") is None
    assert production.read(WorkTree(tmp_path), "absent.py") is None


RETRY = """
    import random

    def backoff(attempt):
        return attempt * random.uniform(0.5, 1.5)
"""


@pytest.mark.parametrize(
    ("head", "found", "seam"),
    [
        (RETRY.replace("random.uniform(0.5, 1.5)", "1.0"), True, False),
        (RETRY.replace("import random", "import random\n    JITTER = 1.0").replace("random.uniform(0.5, 1.5)", "JITTER"), True, False),  # noqa: E501
        (RETRY.replace("(attempt)", "(attempt, rng)").replace("random.uniform", "rng.uniform"), False, True),  # noqa: E501
        (RETRY.replace("random.uniform(0.5, 1.5)", "_jitter()") + "\n    def _jitter():\n        return random.uniform(0.5, 1.5)\n", False, False),  # noqa: E501
    ],
)  # fmt: skip
def test_the_global_rng_replaced_by_a_number_is_found(head: str, found: bool, seam: bool) -> None:
    made = scan(head, RETRY, "retry.py")
    assert [f.kind for f in made.findings] == (["live_read_constant"] if found else [])
    if found:
        assert made.findings[0].message.startswith(
            "replaces the global RNG `random.uniform()` (base retry.py:5) with the constant `"
        )
    assert bool(made.seams) is seam


def test_a_new_number_beside_an_injected_clock_keeps_the_seam() -> None:
    head = LIVE.replace("datetime.now(timezone.utc)", "as_of").replace(
        "return total", "return round(total, 2)"
    )
    made = scan(head)
    assert made.findings == ()
    assert [(s.path, s.first) for s in made.seams] == [("invoice_lib.py", 4)]


def test_a_copy_of_the_environment_reads_no_pin() -> None:
    """click's pager (`env = dict(os.environ)`) read every variable at one line on both
    trial hosts, the gate's among them: no pin read, and no live-entropy warning of the
    gate's own variables (docs/adoption-trials.md)."""
    names = ["PATH", "HOME", "PAGER", "ENTROPY_CLOCK_UNIX", "ENTROPY_GATE_CHILD", "TERM"]
    copied = audit(
        *(rec("os.environ", 561, name=n, path="src/click/_termui_impl.py") for n in names)
    )
    assert removed.pin_reads([copied], []) == []
    live = live_entropy.findings([copied], [], None)
    assert [(f.location(), f.folded, f.message) for f in live] == [
        ("src/click/_termui_impl.py:561", 3, "copies or walks `os.environ` (4 unpinned variables: "
         "'HOME', 'PAGER', 'PATH' and 1 more), which no pin fixes: pass in the variables it needs"),
    ]  # one finding for the copy, the gate's variables not among its names  # fmt: skip
    # four names at one line are still reads, each for its value
    few = audit(*(rec("os.environ", 9, name=n) for n in ["A", "B", "C", "ENTROPY_CLOCK_UNIX"]))
    assert kinds(removed.pin_reads([few], [])) == [("gate_pin_read", "invoice_lib.py:9")]


def test_the_gates_control_variables_are_no_pins() -> None:
    controls = audit(
        rec("os.environ", 5, name="ENTROPY_GATE_LOCK"),
        rec("os.environ", 6, name="ENTROPY_GATE_CHILD"),
    )
    assert removed.pin_reads([controls], []) == []
    assert live_entropy.findings([controls], [], None) == []
    assert removed.source(rec("os.environ", 5, name="ENTROPY_GATE_LOCK")) is None


OPTIONAL = """
    from datetime import datetime, timezone

    def days_until(due, now=None, *, strict=False):
        now = now or datetime.now(timezone.utc)
        return (due - now).days
"""


@pytest.mark.parametrize(
    ("head", "seam"),
    [
        # the fix the gate recommends: `now` required, its live fallback gone (issue 32, class 5)
        (OPTIONAL.replace("now=None, ", "now, ").replace("        now = now or datetime.now(timezone.utc)\n", ""), True),  # noqa: E501
        # keyword-only made required the same way
        (OPTIONAL.replace("due, now=None, *, strict=False", "due, *, now, strict=False").replace("        now = now or datetime.now(timezone.utc)\n", ""), True),  # noqa: E501
        # required, but the clock is still read: nothing was injected in its place
        (OPTIONAL.replace("now=None, ", "now, "), False),
        # another parameter made required, the clock gone: the value comes from `due` (read
        # more often: the seam the base's `as_of` rule already knew)
        (OPTIONAL.replace("        now = now or datetime.now(timezone.utc)\n", "        now = now or due\n"), True),  # noqa: E501
        # the default kept, the clock gone and nothing read in its place
        (OPTIONAL.replace("now = now or datetime.now(timezone.utc)", "now = now or None"), False),
    ],
)  # fmt: skip
def test_a_parameter_made_required_in_the_reads_place_is_a_seam(head: str, seam: bool) -> None:
    found = production.compare({"due.py": module(OPTIONAL)}, {"due.py": module(head)})
    assert found.findings == ()
    assert bool(found.seams) is seam


def test_a_loop_over_the_gates_variables_by_their_bare_prefix_is_a_pin_read() -> None:
    """The red team's E (2026-12-06): `any(k.startswith("ENTROPY_") for k in os.environ)`
    picks the pinned path under the gate; the bare prefix names the gate's variables too."""
    head = LIVE.replace(
        "from datetime import datetime, timezone",
        "import os\n    from datetime import datetime, timezone",
    ).replace(
        "datetime.now(timezone.utc) > due",
        '(as_of if any(k.startswith("ENTROPY_") for k in os.environ) else datetime.now()) > due',
    )
    found = scan(head).findings
    assert [(f.kind, f.line) for f in found if f.kind == "gate_pin_read"] == [("gate_pin_read", 7)]
