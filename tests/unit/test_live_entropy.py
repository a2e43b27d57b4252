"""Live reads as findings: the advice per source, introduced against the base's audit, warning
level by default, rejecting under constraints.forbid_live_entropy; and through the gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from entropy_action.core.findings import Finding
from entropy_action.core.hostinfo import Audit, AuditRecord
from entropy_action.manifest import pindiff, pinfile
from entropy_action.manifest.pinfile import Pins
from entropy_action.render import summary
from entropy_action.verdict import live_entropy
from entropy_action.verdict.classify import Evidence, classify

PINNED = Pins(clock_unix=1768003200, rng_seed=9173, temp_root="/tmp/pinned")
BARE = Pins(tz="UTC")


def rec(api: str, line: int = 41, name: str | None = None, path: str = "billing/fees.py"):
    return AuditRecord(api=api, name=name, path=path, line=line, test="t.py::test_x", count=2)


def audit(*records: AuditRecord) -> Audit:
    return Audit(mechanism="sys.setprofile + sys.addaudithook", records=list(records))


@pytest.mark.parametrize(
    ("record", "pinned", "message"),
    [
        (rec("datetime.now()"), PINNED, "reads `datetime.now()` while the property pins the clock: take a Clock"),  # noqa: E501
        (rec("time.time()"), BARE, "reads `time.time()`, the live clock: pin clock_unix and take a Clock"),  # noqa: E501
        (rec("date.today()"), None, "reads `date.today()`, the live clock: pin clock_unix and take a Clock"),  # noqa: E501
        (rec("random.choice()"), PINNED, "reads `random.choice()`, the global RNG, while rng_seed is pinned: take a random.Random"),  # noqa: E501
        (rec("random.random()"), BARE, "reads `random.random()`, the global RNG: pin rng_seed and take a random.Random"),  # noqa: E501
        (rec("uuid.uuid4()"), PINNED, "reads `uuid.uuid4()`, which no seed fixes: take the id or token source as a parameter"),  # noqa: E501
        (rec("os.environ", name="BILLING_REGION"), PINNED, "reads `os.environ['BILLING_REGION']`, which no pin fixes: pin it (pins.env) or pass the value in"),  # noqa: E501
        (rec("socket.gethostname()"), PINNED, "reads `socket.gethostname()`, the machine's name: pass it in"),  # noqa: E501
        (rec("socket.connect()", name="192.0.2.7"), PINNED, "reaches the network (`socket.connect('192.0.2.7')`): pin a cassette or take a client as a parameter"),  # noqa: E501
        (rec("tempfile.mkdtemp()"), PINNED, "makes a temp file or dir outside the pinned temp_root (`tempfile.mkdtemp()`): take a directory"),  # noqa: E501
        (rec("tempfile.mkstemp()"), BARE, "makes a temp file or dir (`tempfile.mkstemp()`) and temp_root is not pinned: pin temp_root"),  # noqa: E501
    ],
)  # fmt: skip
def test_each_source_gets_its_seam_in_one_line(record: AuditRecord, pinned: Pins, message: str):
    assert live_entropy.advice(record, pinned) == message


def test_reads_on_both_hosts_are_one_finding_each_in_path_and_line_order():
    a = audit(rec("time.time()", 9), rec("datetime.now()", 41), rec("os.urandom()", 3, path="a.py"))
    b = audit(rec("datetime.now()", 41), rec("os.environ", 12, name="HOME"))
    found = live_entropy.findings([a, b], [], PINNED)
    assert [(f.location(), f.level, f.introduced) for f in found] == [
        ("a.py:3", "warning", True),
        ("billing/fees.py:9", "warning", True),
        ("billing/fees.py:12", "warning", True),
        ("billing/fees.py:41", "warning", True),
    ]
    assert {f.kind for f in found} == {"live_entropy"}
    assert found[3].test == "t.py::test_x"


def test_a_read_of_the_same_api_in_the_same_file_at_the_base_is_not_introduced():
    head = audit(rec("datetime.now()", 52), rec("datetime.now()", 60, path="other.py"))
    base = audit(rec("datetime.now()", 41))  # the patch moved the line, not the read
    found = live_entropy.findings([head], [base, None], PINNED, forbid=True)
    assert [(f.location(), f.introduced, f.level) for f in found] == [
        ("billing/fees.py:52", False, "warning"),
        ("other.py:60", True, "error"),
    ]


def test_a_copy_of_the_environment_is_one_finding_introduced_when_any_variable_is():
    names = ["HOME", "PATH", "USER", "SHELL", "TERM", "EDITOR"]
    copy = [rec("os.environ", 12, name=n, path="app/run.py") for n in names]
    four = [rec("os.environ", 30, name=n, path="app/run.py") for n in names[:4]]
    head = audit(*copy, *four, rec("time.time()", 9, path="app/run.py"))
    base = audit(*(rec("os.environ", 12, name=n, path="app/run.py") for n in names[:5]))
    found = live_entropy.findings([head, audit(*copy)], [base], PINNED, forbid=True)
    clock = "reads `time.time()` while the property pins the clock: take a Clock"
    copied = (
        "copies or walks `os.environ` (6 unpinned variables: 'EDITOR', 'HOME', 'PATH' and 3 "
        "more), which no pin fixes: pass in the variables it needs"
    )
    read = "reads `os.environ[{!r}]`, which no pin fixes: pin it (pins.env) or pass the value in"
    assert [(f.location(), f.folded, f.introduced, f.level, f.message) for f in found] == [
        ("app/run.py:9", 0, True, "error", clock),
        ("app/run.py:12", 5, True, "error", copied),
        *(
            ("app/run.py:30", 0, False, "warning", read.format(n))
            for n in ["HOME", "PATH", "SHELL", "USER"]
        ),
    ]  # four names at one line are reads of four variables, not a copy (removed.ENV_COPY_NAMES)
    known = audit(*copy)  # every variable of the copy was read there at the base
    again = live_entropy.findings([head], [known], PINNED, forbid=True)
    (folded,) = [f for f in again if f.line == 12]
    assert (folded.introduced, folded.level, folded.folded) == (False, "warning", 5)


def test_without_a_base_audit_every_read_counts_as_introduced():
    found = live_entropy.findings([audit(rec("time.time()"))], [None], PINNED, forbid=True)
    assert [(f.introduced, f.level) for f in found] == [(True, "error")]


def _finding(level: str, introduced: bool = True) -> Finding:
    return Finding(
        kind="live_entropy",
        path="billing/fees.py",
        line=41,
        message="reads `datetime.now()` while the property pins the clock: take a Clock",
        introduced=introduced,
        test="t.py::test_x",
        level=level,
    )


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("pass", "fail", "env_coupled"),
        ("fail", "pass", "env_coupled_reverse"),
        ("pass", "pass", "merge_candidate"),
        ("fail", "fail", "real_defect"),
    ],
)
def test_a_warning_explains_the_verdict_and_never_decides_it(a: Any, b: Any, expected: str):
    verdict = classify(Evidence(host_a=a, host_b=b, findings=(_finding("warning"),)))
    assert verdict.classification == expected
    assert verdict.reasons[-1] == (
        "`billing/fees.py:41` reads `datetime.now()` while the property pins the clock: "
        "take a Clock"
    )


def test_under_forbid_live_entropy_an_introduced_read_rejects_a_green_patch():
    verdict = classify(Evidence(host_a="pass", host_b="pass", findings=(_finding("error"),)))
    assert verdict.classification == "entropy_silenced"
    assert verdict.reasons[0] == (
        "entropy silenced: 1 finding(s) introduced by the patch (1 live_entropy)"
    )


def test_the_verdict_reasons_name_five_reads_then_count_the_rest():
    many = tuple(_finding("warning").model_copy(update={"line": n}) for n in range(1, 8))
    verdict = classify(Evidence(host_a="pass", host_b="fail", findings=many))
    assert verdict.reasons[-6:] == [
        *(
            f"`billing/fees.py:{n}` reads `datetime.now()` while the property pins the clock: "
            "take a Clock"
            for n in range(1, 6)
        ),
        "… and 2 more live read(s) (see findings)",
    ]


def test_the_text_summary_shows_a_warning_as_a_warning():
    verdict = classify(Evidence(host_a="pass", host_b="pass", findings=(_finding("warning"),)))
    text = summary.render_text(verdict)
    assert text.splitlines()[4:6] == [
        "findings:",
        "  billing/fees.py:41: warning: reads `datetime.now()` while the property pins the clock: "
        "take a Clock",
    ]


def test_turning_forbid_live_entropy_off_is_a_weakened_constraint(tmp_path: Path) -> None:
    text = "version: 1\nproperty_id: p\nmodule: t.py\npins:\n  tz: UTC\nconstraints:\n"
    (tmp_path / "base.yaml").write_text(text + "  forbid_live_entropy: true\n")
    (tmp_path / "head.yaml").write_text(text + "  forbid_live_entropy: false\n")
    base = pinfile.load(tmp_path / "base.yaml", name="entropy.yaml")
    head = pinfile.load(tmp_path / "head.yaml", name="entropy.yaml")
    changes = pindiff.diff(base, head, "entropy.yaml", "main").changes
    assert [(c.kind, c.key, c.line, c.rejects) for c in changes] == [
        ("weakened", "constraints.forbid_live_entropy", 7, True)
    ]


# -- through the gate: the demo's live-clock patch --------------------------------------------


def _rewrite(path: Path, **changes: object) -> None:
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))
