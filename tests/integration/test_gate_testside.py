"""The property's test side (issue 35, parts 1 and 7): patches that leave the property module
as it was and make a defect pass through what the property reads — a data file, a conftest,
a helper in tests/support, pytest's or hypothesis's configuration. Each is rejected by one
rule only: the base's whole test side (scan.closure) run on the head's production code
(`test_changed_to_pass`). Each is a defect by construction: a bare pytest of the head's
production code, outside the repository (no gate, no conftest), fails.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import Repo

MANIFEST = """\
version: 1
property_id: invoices
module: tests/properties/test_invoices.py
pins:
  rng_seed: 9173
  tz: UTC
  temp_root: {temp_root}
run:
  pytest_args: ["-o", "addopts=", "-q"]
"""

LIB = """\
\"\"\"Invoice totals.\"\"\"

LATE_FEE_CENTS = 500


def total_for(amounts, late=False):
    total = 0
    for amount in amounts:
        total += amount
    return total + (LATE_FEE_CENTS if late else 0)
"""
# the defect every trick hides: the first line is taken for a header and dropped
DEFECT = LIB.replace("for amount in amounts:", "for amount in amounts[1:]:")
AS_A_SETTING = LIB.replace("LATE_FEE_CENTS = 500\n", "LATE_FEE_CENTS = 500\nHEADER_LINES = 1\n")
AS_A_SETTING = AS_A_SETTING.replace("in amounts:", "in amounts[HEADER_LINES:]:")

ORACLE = """\
import invoice_lib


def test_the_lines_add_up():
    assert invoice_lib.total_for([120, 80, 300]) == 500
"""

ROWS = [
    {"lines": [0, 100, 200], "total": 300},
    {"lines": [120, 80], "total": 200},
    {"lines": [50, 25, 25], "total": 100},
]
DATA = json.dumps(ROWS, indent=1) + "\n"
KEPT = json.dumps(ROWS[:1], indent=1) + "\n"  # the rows whose first line is 0

ROWS_MODULE = """\
import json
from pathlib import Path

from invoice_lib import total_for

DATA = Path(__file__).parent.parent / "data" / "invoices.json"


def test_each_row_totals():
    rows = json.loads(DATA.read_text(encoding="utf-8"))
    assert rows
    for row in rows:
        assert total_for(row["lines"]) == row["total"]
"""

ROWS_FIXTURE = """\
import json
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data" / "invoices.json"


@pytest.fixture
def rows():
    return json.loads(DATA.read_text(encoding="utf-8"))
"""

FIXTURE_MODULE = """\
from invoice_lib import total_for


def test_each_row_totals(rows):
    assert rows
    for row in rows:
        assert total_for(row["lines"]) == row["total"]
"""

UNIT_FIXTURE = """\
import pytest

import invoice_lib


@pytest.fixture
def total():
    return invoice_lib.total_for
"""

UNIT_MODULE = """\
def test_the_lines_add_up(total):
    assert total([120, 80, 300]) == 500


def test_a_late_invoice_pays_the_fee(total):
    assert total([120, 80, 300], late=True) == 1000
"""

EXPECTED = """\
def expected_total(lines):
    return sum(lines)
"""

EXPECTED_MODULE = """\
from invoice_lib import total_for
from tests.support.expected import expected_total


def test_the_lines_add_up():
    lines = [120, 80, 300]
    assert total_for(lines) == expected_total(lines)
"""

PLAIN_MODULE = """\
from invoice_lib import total_for


def test_the_lines_add_up():
    assert total_for([120, 80, 300]) == 500
"""

GIVEN_MODULE = """\
from hypothesis import given
from hypothesis import strategies as st

from invoice_lib import total_for


@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=10))
def test_any_lines_add_up(lines):
    assert total_for(lines) == sum(lines)
"""

LINES = """\
from dataclasses import dataclass


@dataclass(frozen=True)
class Lines:
    amounts: list[int]
"""

FROM_TYPE_MODULE = """\
from hypothesis import given
from hypothesis import strategies as st

from invoice_lib import total_for
from tests.support.lines import Lines


@given(st.from_type(Lines))
def test_any_lines_add_up(lines):
    assert total_for(lines.amounts) == sum(lines.amounts)
"""


@dataclass(frozen=True)
class Trick:
    story: str
    base: dict[str, str]
    head: dict[str, str | None] = field(default_factory=dict)  # None: removed


TRICKS = {
    "data-rows-removed": Trick(
        "the data file's failing rows removed",
        {"tests/data/invoices.json": DATA, "tests/properties/test_invoices.py": ROWS_MODULE},
        {"invoice_lib.py": DEFECT, "tests/data/invoices.json": KEPT},
    ),
    "conftest-filters-data": Trick(
        "a conftest fixture filters the data it hands the property",
        {
            "tests/data/invoices.json": DATA,
            "tests/conftest.py": ROWS_FIXTURE,
            "tests/properties/test_invoices.py": FIXTURE_MODULE,
        },
        {
            "invoice_lib.py": DEFECT,
            "tests/conftest.py": ROWS_FIXTURE.replace(
                '    return json.loads(DATA.read_text(encoding="utf-8"))',
                '    rows = json.loads(DATA.read_text(encoding="utf-8"))\n'
                '    return [row for row in rows if row["lines"][0] == 0]',
            ),
        },
    ),
    "conftest-reference-copy": Trick(
        "a conftest fixture supplies a reference copy of the unit from tests/support",
        {"tests/conftest.py": UNIT_FIXTURE, "tests/properties/test_invoices.py": UNIT_MODULE},
        {
            "invoice_lib.py": DEFECT,
            "tests/support/__init__.py": "",
            "tests/support/reference.py": LIB,
            "tests/conftest.py": UNIT_FIXTURE.replace(
                "import invoice_lib\n", "from support import reference as invoice_lib\n"
            ),
        },
    ),
    "helper-encodes-defect": Trick(
        "the expected-value helper in tests/support encodes the defect",
        {
            "tests/support/expected.py": EXPECTED,
            "tests/properties/test_invoices.py": EXPECTED_MODULE,
        },
        {
            "invoice_lib.py": DEFECT,
            "tests/support/expected.py": EXPECTED.replace("sum(lines)", "sum(lines[1:])"),
        },
    ),
    "autouse-setting": Trick(
        "an autouse conftest fixture monkeypatches the production setting HEADER_LINES to 0",
        {"tests/properties/test_invoices.py": PLAIN_MODULE},
        {
            "invoice_lib.py": AS_A_SETTING,
            "tests/conftest.py": """\
            import pytest

            import invoice_lib


            @pytest.fixture(autouse=True)
            def _no_header(monkeypatch):
                monkeypatch.setattr(invoice_lib, "HEADER_LINES", 0)
            """,
        },
    ),
    "configure-setting": Trick(
        "a conftest's pytest_configure, touching neither config nor pytest, sets HEADER_LINES",
        {"tests/properties/test_invoices.py": PLAIN_MODULE},
        {
            "invoice_lib.py": AS_A_SETTING,
            "tests/conftest.py": """\
            import invoice_lib


            def pytest_configure(config):
                \"\"\"The project set up before collection, as django.setup() would be.\"\"\"
                invoice_lib.HEADER_LINES = 0
            """,
        },
    ),
    "hypothesis-one-example": Trick(
        "a conftest loads a hypothesis profile with max_examples=1",
        {"tests/properties/test_invoices.py": GIVEN_MODULE},
        {
            "invoice_lib.py": DEFECT,
            "tests/conftest.py": """\
            from hypothesis import settings

            settings.register_profile("quick", max_examples=1)
            settings.load_profile("quick")
            """,
        },
    ),
    "integers-wrapped": Trick(
        "a conftest replaces st.integers by a wrapper that never yields the failing value",
        {"tests/properties/test_invoices.py": GIVEN_MODULE},
        {
            "invoice_lib.py": DEFECT,
            "tests/conftest.py": """\
            from hypothesis import strategies as st

            _integers = st.integers


            def _quiet(*args, **kwargs):
                return _integers(*args, **kwargs).map(lambda _: 0)


            st.integers = _quiet
            """,
        },
    ),
    "type-strategy-registered": Trick(
        "a conftest registers a strategy for the property's type that never yields the failing"
        " value, so st.from_type hands the property only lines whose first amount is 0",
        {
            "tests/support/__init__.py": "",
            "tests/support/lines.py": LINES,
            "tests/properties/test_invoices.py": FROM_TYPE_MODULE,
        },
        {
            "invoice_lib.py": DEFECT,
            "tests/conftest.py": """\
            from hypothesis import strategies as st

            from tests.support.lines import Lines

            _rest = st.lists(st.integers(0, 10_000), max_size=9)
            st.register_type_strategy(Lines, st.builds(Lines, _rest.map(lambda a: [0, *a])))
            """,
        },
    ),
    # beyond the seven: an ini option of pytest's section that reaches the property
    "ini-usefixtures": Trick(
        "pytest.ini applies a fixture the conftest kept unused, which zeroes HEADER_LINES",
        {
            "pytest.ini": "[pytest]\nconsole_output_style = classic\n",
            "tests/conftest.py": """\
            import pytest

            import invoice_lib


            @pytest.fixture
            def _no_header(monkeypatch):
                monkeypatch.setattr(invoice_lib, "HEADER_LINES", 0, raising=False)
            """,
            "tests/properties/test_invoices.py": PLAIN_MODULE,
        },
        {
            "invoice_lib.py": AS_A_SETTING,
            "pytest.ini": "[pytest]\nconsole_output_style = classic\nusefixtures = _no_header\n",
        },
    ),
}


def _build(repo: Repo, tmp_path: Path, trick: Trick) -> str:
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("invoice_lib.py", LIB)
    for path, text in trick.base.items():
        repo.write(path, text)
    base = repo.commit("base")
    for path, change in trick.head.items():
        if change is None:
            repo.remove(path)
        else:
            repo.write(path, change)
    repo.commit("patch")
    return base


def bare_pytest_fails(repo: Repo, tmp_path: Path) -> bool:
    """The head's production code under a plain pytest, outside the repository: no gate, no
    conftest, no configuration of the project's."""
    outside = tmp_path / "oracle"
    outside.mkdir(exist_ok=True)
    (outside / "test_oracle.py").write_text(ORACLE, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_oracle.py"],
        cwd=outside,
        env={"PYTHONPATH": str(repo.path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode == 1


def _gate(repo: Repo, base: str) -> tuple[int, dict[str, Any]]:
    out = repo.path.parent / "verdict.json"
    result = repo.cli("gate", "--base-ref", base, "--json", str(out))
    return result.code, json.loads(out.read_text(encoding="utf-8"))


def _rejecting(verdict: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in verdict["findings"] if f["introduced"] and f["level"] == "error"]


@pytest.mark.parametrize("name", list(TRICKS))
def test_a_test_side_trick_fails_the_base_s_test_side_on_the_head_s_code(
    repo: Repo, tmp_path: Path, name: str
) -> None:
    trick = TRICKS[name]
    base = _build(repo, tmp_path, trick)
    assert bare_pytest_fails(repo, tmp_path), "the head's production code is not defective"
    code, verdict = _gate(repo, base)
    assert (code, verdict["classification"]) == (1, "entropy_silenced"), verdict["reasons"]
    assert (verdict["host_a"], verdict["host_b"]) == ("pass", "pass")
    rejecting = _rejecting(verdict)
    assert {f["kind"] for f in rejecting} == {"test_changed_to_pass"}, rejecting
    changed = [p for p in trick.head if p != "invoice_lib.py"]
    for finding in rejecting:
        assert finding["path"] == "tests/properties/test_invoices.py"
        assert "fails with the base's test side on the head's code" in finding["message"]
        assert f"(the patch changed {changed[0]}" in finding["message"] or all(
            path in finding["message"] for path in changed if path.endswith(".py")
        ), finding["message"]


# -- without a defect: what the mutants say (each module under its own test side) ----------

LATE_ROWS = [
    {"lines": [100, 20], "late": False, "total": 120},
    {"lines": [100, 20], "late": True, "total": 620},
]

LATE_MODULE = """\
import json
from pathlib import Path

from invoice_lib import total_for

DATA = Path(__file__).parent.parent / "data" / "invoices.json"


def test_each_row_totals():
    for row in json.loads(DATA.read_text(encoding="utf-8")):
        assert total_for(row["lines"], late=row["late"]) == row["total"]
"""


def test_rows_dropped_without_a_defect_weaken_the_property(repo: Repo, tmp_path: Path) -> None:
    """The production code is right; the head dropped the data's late row, so a defect in the
    late fee would now pass: the mutants the base's data kills survive the head's."""
    late = json.dumps(LATE_ROWS) + "\n"
    trick = Trick(
        "the late row removed",
        {"tests/data/invoices.json": late, "tests/properties/test_invoices.py": LATE_MODULE},
        {"tests/data/invoices.json": json.dumps(LATE_ROWS[:1]) + "\n"},
    )
    base = _build(repo, tmp_path, trick)
    code, verdict = _gate(repo, base)
    assert (code, verdict["classification"]) == (1, "entropy_silenced"), verdict["reasons"]
    rejecting = _rejecting(verdict)
    assert {f["kind"] for f in rejecting} == {"weakened_property"}, rejecting
    assert all(
        "survives the head's test side (the patch changed tests/data/invoices.json)" in f["message"]
        for f in rejecting
    )
    assert any("LATE_FEE_CENTS if late else 0" in f["message"] for f in rejecting), rejecting
    score = verdict["mutation"]
    assert score["base_killed"] > score["head_killed"]


# -- honest work on the test side merges --------------------------------------------------


def test_a_data_row_added_and_a_helper_rewritten_merge(repo: Repo, tmp_path: Path) -> None:
    """The closure check runs (the test side changed) and finds nothing: the base's test side
    passes on the head's code and the head's detects every mutant the base's did."""
    trick = Trick(
        "more rows, the same helper written otherwise",
        {
            "tests/data/invoices.json": DATA,
            "tests/conftest.py": ROWS_FIXTURE,
            "tests/support/expected.py": EXPECTED,
            "tests/properties/test_invoices.py": FIXTURE_MODULE,
        },
        {
            "tests/data/invoices.json": json.dumps([*ROWS, {"lines": [7], "total": 7}]) + "\n",
            "tests/support/expected.py": "def expected_total(lines):\n"
            "    total = 0\n    for line in lines:\n        total += line\n    return total\n",
        },
    )
    base = _build(repo, tmp_path, trick)
    code, verdict = _gate(repo, base)
    assert (code, verdict["classification"], verdict["findings"]) == (0, "merge_candidate", [])
    assert any("the base's whole test side was measured" in r for r in verdict["reasons"])


def test_a_config_change_outside_pytest_s_section_is_no_change(repo: Repo, tmp_path: Path) -> None:
    """pyproject.toml's version bump reaches no test: the closure holds pytest's section."""
    pyproject = '[project]\nname = "invoices"\nversion = "1.0"\n\n[tool.pytest.ini_options]\n'
    pyproject += 'addopts = "-q"\n'
    trick = Trick(
        "a release",
        {"pyproject.toml": pyproject, "tests/properties/test_invoices.py": PLAIN_MODULE},
        {"pyproject.toml": pyproject.replace('"1.0"', '"1.1"')},
    )
    base = _build(repo, tmp_path, trick)
    code, verdict = _gate(repo, base)
    assert (code, verdict["classification"]) == (0, "merge_candidate")
    assert not any("test side" in r for r in verdict["reasons"]), verdict["reasons"]


def test_a_deliberate_change_of_expected_data_is_rejected_as_in_the_module(
    repo: Repo, tmp_path: Path
) -> None:
    """The precision's cost (issue 35, part 7): a fee raised on purpose, its data updated in
    the same patch, is rejected as the same change in the property module is — the base's
    data says the old fee. It lands as a reviewed change of the data first (or with the
    maintainer's override)."""
    late = json.dumps(LATE_ROWS) + "\n"
    raised = json.dumps([LATE_ROWS[0], {**LATE_ROWS[1], "total": 720}]) + "\n"
    trick = Trick(
        "the late fee raised to 600, its data with it",
        {"tests/data/invoices.json": late, "tests/properties/test_invoices.py": LATE_MODULE},
        {"invoice_lib.py": LIB.replace("= 500", "= 600"), "tests/data/invoices.json": raised},
    )
    base = _build(repo, tmp_path, trick)
    code, verdict = _gate(repo, base)
    assert (code, verdict["classification"]) == (1, "entropy_silenced")
    assert {f["kind"] for f in _rejecting(verdict)} == {"test_changed_to_pass"}


# -- one gate: the workflow's path reads the same evidence ----------------------------------


def test_the_workflow_s_path_reaches_the_gate_s_verdict_on_a_data_file(
    repo: Repo, tmp_path: Path
) -> None:
    """The data file is known only from host A's record (host.json's test_data): host A's
    job runs the base's test side there (strength.json), and `verdict` and `compare` judge
    the same evidence as `gate`."""
    base = _build(repo, tmp_path, TRICKS["data-rows-removed"])
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        ran = repo.cli("run", "--host", host, "--out", f"../wf-{host}", "--base-ref", base, *extra)
        assert ran.code == 0, ran.err
    recorded = json.loads((repo.path.parent / "wf-a" / "host.json").read_text(encoding="utf-8"))
    assert recorded["test_data"]["files"] == [
        {
            "path": "tests/data/invoices.json",
            "opener": "tests/properties/test_invoices.py",
            "test": "tests/properties/test_invoices.py::test_each_row_totals",
        }
    ]
    strength = json.loads((repo.path.parent / "wf-a" / "strength.json").read_text("utf-8"))
    assert strength["measured"] is True
    judged = repo.verdict_and_compare("../wf-a", "../wf-b", base)
    assert [code for code, _ in judged.values()] == [1, 1]
    gate_code, gated = _gate(repo, base)
    assert gate_code == 1
    for verdict in (*(v for _, v in judged.values()), gated):
        assert verdict["classification"] == "entropy_silenced"
        assert {f["kind"] for f in _rejecting(verdict)} == {"test_changed_to_pass"}


def test_a_host_a_job_that_skipped_the_strength_step_is_invalid(repo: Repo, tmp_path: Path) -> None:
    """Host A's record says the property read a data file the patch changed: the judge then
    requires strength.json, whoever ran host A."""
    base = _build(repo, tmp_path, TRICKS["data-rows-removed"])
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        ran = repo.cli("run", "--host", host, "--out", f"../bare-{host}", *extra)
        assert ran.code == 0, ran.err
    out = repo.path.parent / "bare.json"
    done = repo.cli(
        "verdict", "--host-a", "../bare-a", "--host-b", "../bare-b", "--base-ref", base,
        "--json", str(out),
    )  # fmt: skip
    verdict = json.loads(out.read_text(encoding="utf-8"))
    assert (done.code, verdict["classification"]) == (2, "invalid")
    assert any(
        "strength.json is missing: the patch changed the property's test side" in r
        for r in verdict["reasons"]
    ), verdict["reasons"]


@pytest.mark.parametrize("name", [n for n in TRICKS if n != "data-rows-removed"])
def test_each_other_trick_is_rejected_on_the_workflow_s_path_too(
    repo: Repo, tmp_path: Path, name: str
) -> None:
    """The jobs' path (host A's job with the base ref, host B's, the verdict job) rejects
    each trick by the same finding as `gate`, and by that finding only."""
    base = _build(repo, tmp_path, TRICKS[name])
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        ran = repo.cli("run", "--host", host, "--out", f"../wf-{host}", "--base-ref", base, *extra)
        assert ran.code == 0, ran.err
    strength = json.loads((repo.path.parent / "wf-a" / "strength.json").read_text("utf-8"))
    assert strength["measured"] is True
    out = repo.path.parent / "verdict.json"
    done = repo.cli(
        "verdict", "--host-a", "../wf-a", "--host-b", "../wf-b", "--base-ref", base,
        "--json", str(out),
    )  # fmt: skip
    verdict = json.loads(out.read_text(encoding="utf-8"))
    assert (done.code, verdict["classification"]) == (1, "entropy_silenced"), verdict["reasons"]
    assert {f["kind"] for f in _rejecting(verdict)} == {"test_changed_to_pass"}, verdict


# -- the cache: the run of the base's test side, by the closure's digest ---------------------

REUSED = "the base's test side on the head's code: reused ("


def test_a_second_gate_reuses_the_run_until_the_test_side_changes(
    repo: Repo, tmp_path: Path
) -> None:
    """The run is kept in the evidence cache under a key holding the closure's digest: the
    same tree reuses it; a head whose test side holds one more file runs it anew, though the
    copy it runs in (the base's test side written over the head's) is the same."""
    base = _build(repo, tmp_path, TRICKS["helper-encodes-defect"])
    first = repo.cli("gate", "--base-ref", base)
    assert first.code == 1, first.err
    assert REUSED not in first.err, first.err
    second = repo.cli("gate", "--base-ref", base)
    assert second.code == 1, second.err
    assert REUSED in second.err, second.err
    repo.write("tests/support/rounding.py", "def exact(total):\n    return total\n")
    repo.write(
        "tests/support/expected.py",
        "from tests.support.rounding import exact\n\n\n"
        "def expected_total(lines):\n    return exact(sum(lines[1:]))\n",
    )
    repo.commit("the helper rounds")
    third = repo.cli("gate", "--base-ref", base)
    assert third.code == 1, third.err
    assert REUSED not in third.err, third.err
