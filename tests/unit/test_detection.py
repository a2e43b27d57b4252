"""`test_detection` as values: the scan's rule over parsed production sources (scan.detection)
and the audit's PYTEST_* records (verdict.detection). Each shape rejects; its honest
neighbour (the same API read for another reason) does not. The runs through the gate are
tests/integration/test_gate_detection.py."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from entropy_action.core.hostinfo import Audit, AuditRecord
from entropy_action.manifest.pinfile import PinFields
from entropy_action.scan import detection
from entropy_action.scan.pinbranch import Pinned
from entropy_action.scan.source import WorkTree
from entropy_action.verdict import detection as runtime
from entropy_action.verdict import live_entropy, removed

BASE = """\
import os
import sys


def total(amounts):
    return sum(amounts)
"""
MARKED = detection.Markers(frozenset({"_called_from_test"}), frozenset({"APP_TESTING"}))


def found(head: str, base: str = BASE, markers: detection.Markers = MARKED) -> list[str]:
    """`kind path:line message-prefix` of each finding on `lib.py`."""
    trees = {"lib.py": ast.parse(textwrap.dedent(base))}
    now = {"lib.py": ast.parse(textwrap.dedent(head))}
    return [f"{f.kind} {f.location()}" for f in detection.findings(trees, now, markers)]


def branch(condition: str, imports: str = "import os\nimport sys") -> str:
    return f"{imports}\n\n\ndef total(amounts):\n    if {condition}:\n        return sum(amounts)\n    return sum(amounts[1:])\n"  # noqa: E501


@pytest.mark.parametrize(
    "condition",
    [
        'os.environ.get("PYTEST_CURRENT_TEST")',
        '"PYTEST_VERSION" in os.environ',
        'os.getenv("PYTEST_XDIST_WORKER") is not None',
        'os.environ["PYTEST_CURRENT_TEST"]',
        '"pytest" in sys.modules',
        '"_pytest" in sys.modules.keys()',
        'sys.modules.get("unittest") is not None',
        '"pytest" in sys.argv[0]',
        'any("py.test" in a for a in sys.argv)',
        'getattr(sys, "_called_from_test", False)',
        'hasattr(sys, "_called_from_test")',
        "sys._called_from_test",
        'os.environ.get("APP_TESTING") == "1"',  # a variable a conftest sets
        # the red team's (2026-12-06): by a prefix, a framework's submodule, a test folder
        'any(k.startswith("PYTEST_") for k in os.environ)',
        'any(n.endswith("pytest") for n in sys.modules)',
        '"_pytest.runner" in sys.modules',
    ],
)
def test_each_shape_of_detecting_the_test_run_is_one_finding_at_its_line(condition: str) -> None:
    assert found(branch(condition)) == ["test_detection lib.py:6"]


def test_a_caller_in_a_tests_folder_is_a_test() -> None:
    head = branch('any("/tests/" in f.filename for f in inspect.stack())', "import inspect")
    assert found(head) == ["test_detection lib.py:5"]


def test_from_imports_are_followed() -> None:
    head = branch('environ.get("PYTEST_CURRENT_TEST")', "from os import environ")
    assert found(head) == ["test_detection lib.py:5"]


def test_a_caller_named_test_in_the_stack_is_found_at_the_inspection() -> None:
    head = """\
        import inspect


        def total(amounts):
            callers = [frame.function for frame in inspect.stack()]
            if any(name.startswith("test_") for name in callers):
                return sum(amounts)
            return sum(amounts[1:])
        """
    assert found(head) == ["test_detection lib.py:5"]
    frame = "import sys\n\ndef total(a):\n    if sys._getframe(1).f_code.co_name.startswith('test'):\n        return 1\n    return 0\n"  # noqa: E501
    assert found(frame) == ["test_detection lib.py:4"]


@pytest.mark.parametrize(
    "head",
    [
        branch('"numpy" in sys.modules'),  # an optional dependency already imported
        branch('sys.modules.get("decimal") is not None'),
        branch('"--verbose" in sys.argv'),  # the program's own options
        branch('os.environ.get("BILLING_REGION")'),  # a live read: the audit's, not this rule's
        branch("sys.platform == 'linux'"),
        branch('getattr(sys, "frozen", False)'),  # PyInstaller's attribute, no conftest sets it
        # a tool that runs pytest in a subprocess writes PYTEST_* for it: a write, not a read
        'import os\n\ndef run():\n    env = {"PYTEST_ADDOPTS": "-q"}\n    os.environ["PYTEST_ADDOPTS"] = "-q"\n    return env\n',  # noqa: E501
        # a logging helper that names its caller: a stack walk that names no test
        "import inspect\n\ndef caller():\n    return inspect.stack()[1].function\n",
        '"""Runs under pytest? The docstring says so, nothing reads it."""\n',
        # a copy of the environment for a subprocess that drops pytest's own variables
        'import os\n\ndef env():\n    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}\n',  # noqa: E501
        branch('any(n.startswith("numpy") for n in sys.modules)'),
    ],
)
def test_honest_neighbours_are_not_detection(head: str) -> None:
    assert found(head) == []


def test_a_detection_that_stood_at_the_base_is_not_new_and_a_second_one_is() -> None:
    once = branch('"pytest" in sys.modules')
    assert found(once, base=once) == []
    twice = once + '\n\ndef late(x):\n    return x if "pytest" in sys.modules else 0\n'
    assert found(twice, base=once) == ["test_detection lib.py:12"]


def test_an_attribute_is_a_marker_only_when_a_conftest_sets_it() -> None:
    head = branch('getattr(sys, "_called_from_test", False)')
    assert found(head, markers=detection.Markers()) == []


def test_markers_are_read_from_the_conftests_hooks_and_assignments(tmp_path: Path) -> None:
    conftest = """\
        import os
        import sys


        def pytest_configure(config):
            sys._called_from_test = True
            setattr(sys, "_gate_run", 1)
            os.environ["APP_TESTING"] = "1"
            os.environ.setdefault("TZ", "UTC")  # not a marker: its name says nothing of tests


        def pytest_unconfigure(config):
            del sys._called_from_test
        """
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text(textwrap.dedent(conftest))
    (tmp_path / "lib.py").write_text("import sys\nsys.flag = 1\n")  # not a conftest
    markers = detection.read_markers(["tests/conftest.py", "lib.py"], WorkTree(tmp_path))
    assert markers == detection.Markers(
        frozenset({"_called_from_test", "_gate_run"}), frozenset({"APP_TESTING"})
    )


# --- at run time: the audit's PYTEST_* records ------------------------------------------------


def rec(name: str, line: int = 9, path: str = "lib.py") -> AuditRecord:
    return AuditRecord(api="os.environ", name=name, path=path, line=line, test="t.py::t", count=1)


def audit(*records: AuditRecord) -> Audit:
    return Audit(mechanism="sys.monitoring + sys.addaudithook", records=list(records))


def test_a_pytest_variable_read_by_code_under_test_is_test_detection_not_live_entropy() -> None:
    head = audit(rec("PYTEST_VERSION"), rec("PYTEST_VERSION"), rec("BILLING_REGION", line=4))
    found_now = runtime.findings([head, None], [])
    assert [(f.kind, f.location(), f.introduced) for f in found_now] == [
        ("test_detection", "lib.py:9", True)
    ]
    assert found_now[0].message.startswith("production code reads `PYTEST_VERSION`: it can tell")
    live = live_entropy.findings([head], [], None)
    assert [(f.kind, f.location()) for f in live] == [("live_entropy", "lib.py:4")]
    assert removed.source(rec("PYTEST_CURRENT_TEST")) is None  # not a pinned source either


def test_a_pytest_variable_the_base_read_in_the_same_file_is_not_introduced() -> None:
    base = audit(rec("PYTEST_CURRENT_TEST", line=3))
    head = audit(rec("PYTEST_CURRENT_TEST", line=5))
    assert [f.introduced for f in runtime.findings([head], [base])] == [False]


# --- the pinned shape (scan.pinbranch): production comparing a source with its pin ---------

PINS = PinFields(
    tz="UTC", lang="en_US.UTF-8", clock_unix=1_700_000_000, temp_root="/tmp/pins/",
    env={"APP_MODE": "prod"},
)  # fmt: skip
PINNED = detection.Markers(pinned=Pinned.of(PINS))
IMPORTS = "import locale\nimport os\nimport tempfile\nimport time\nfrom datetime import datetime"


@pytest.mark.parametrize(
    ("condition", "said"),
    [
        ('os.environ.get("TZ") == "UTC"', "`TZ` with 'UTC'"),
        ('os.getenv("TZ") in ("Etc/UTC", "UTC")', "`TZ` with 'UTC'"),
        ('"UTC" != os.environ["TZ"]', "`TZ` with 'UTC'"),
        ('os.getenv("TZ", "").strip().upper() == "UTC"', "`TZ` with 'UTC'"),
        ('os.environ.get("LC_ALL") == "en_US.UTF-8"', "`LC_ALL` with 'en_US.UTF-8'"),
        ('os.environ.get("APP_MODE") == "prod"', "`APP_MODE` with 'prod'"),
        ('time.tzname[0] == "UTC"', "the time zone's name with 'UTC'"),
        ('locale.getlocale()[0] == "en_US"', "the locale with 'en_US'"),
        ('tempfile.gettempdir() == "/tmp/pins"', "the temporary folder with '/tmp/pins'"),
        ("time.time() < 1_700_003_600", "the clock with 1700003600"),
        ("int(datetime.now().timestamp()) >= 1_699_990_000", "the clock with 1699990000"),
    ],
)
def test_a_branch_on_a_pinned_value_is_detection_at_its_line(condition: str, said: str) -> None:
    head = branch(condition, IMPORTS)
    trees = {"lib.py": ast.parse(BASE)}
    (finding,) = detection.findings(trees, {"lib.py": ast.parse(head)}, PINNED)
    assert (finding.kind, finding.location()) == ("test_detection", "lib.py:9")
    assert finding.message.startswith(
        f"production code compares {said}, the value the property pins: it can tell a test run"
    )


def test_a_read_bound_to_a_name_and_a_module_constant_stand_for_the_read_and_the_pin() -> None:
    head = f'{IMPORTS}\n\nZONE = "UTC"\n\n\ndef total(amounts):\n    zone = os.getenv("TZ")\n    if zone == ZONE:\n        return sum(amounts)\n    return sum(amounts[1:])\n'  # noqa: E501
    assert found(head, markers=PINNED) == ["test_detection lib.py:12"]


@pytest.mark.parametrize(
    "condition",
    [
        'os.environ.get("TZ") == "Europe/Berlin"',  # another value than the pin's
        'os.getenv("TZ", "UTC") is not None',  # the pin's value as a default
        'os.getenv("LANG") == "C"',
        "time.time() < 1_800_000_000",  # a Unix time years from the pinned instant
        'os.environ.get("HOME") == "UTC"',  # a variable no pin sets
        'locale.setlocale(locale.LC_ALL, "en_US") == "en_US"',  # a setting, not a read
    ],
)
def test_a_comparison_with_another_value_or_an_unpinned_source_is_no_place(
    condition: str,
) -> None:
    assert found(branch(condition, IMPORTS), markers=PINNED) == []


def test_a_parameter_that_may_hold_the_variable_is_not_its_read() -> None:
    """dateutil's gettz(name) reads TZ only when no name is given, then asks either value
    `name in ("GMT", "UTC")`: the caller's zone as often as the environment's."""
    gettz = 'import os\n\n\ndef gettz(name=None):\n    if not name:\n        name = os.environ["TZ"]\n    return name in ("GMT", "UTC")\n'  # noqa: E501
    assert found(gettz, markers=PINNED) == []
    local = gettz.replace("(name=None)", "()").replace("if not name:", "if True:")
    assert found(local, markers=PINNED) == ["test_detection lib.py:7"]


def test_a_branch_on_a_pin_the_base_had_and_one_with_nothing_pinned_are_not_new() -> None:
    head = branch('os.environ.get("TZ") == "UTC"', IMPORTS)
    assert found(head, base=head, markers=PINNED) == []
    assert found(head, markers=detection.Markers()) == []


def test_a_module_moved_keeps_its_places() -> None:
    """`src/` layouts: the file the patch removed holds the moved file's places."""
    head = branch('os.environ.get("TZ") == "UTC"', IMPORTS)
    moved = {"src/lib.py": ast.parse(head)}
    assert detection.findings({"lib.py": ast.parse(head)}, moved, PINNED) == []
    assert [f.location() for f in detection.findings({}, moved, PINNED)] == ["src/lib.py:9"]
