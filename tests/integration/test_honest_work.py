"""Honest work that the gate rejected for a wrong reason (issue 32's classes), each rebuilt as a
scratch repository shaped like the real commit it came from, gated end to end: the verdict is
a merge candidate, and the rule each class tripped still catches what it was built for (the
rules' own tests stay as they are; the last test of each class here is its trick).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from entropy_action.hosts import environments
from entropy_action.manifest.baseline import PinCheck
from tests.support.helpers import Repo

CLOCK = 1768003200


def manifest(module: str, temp_root: Path, constraints: str = "") -> str:
    return textwrap.dedent(
        f"""\
        version: 1
        property_id: honest
        module: {module}
        pins:
          clock_unix: {CLOCK}
          rng_seed: 9173
          tz: UTC
          lang: C.UTF-8
          temp_root: {temp_root}
        """
    ) + (
        f"constraints:\n{textwrap.indent(textwrap.dedent(constraints), '  ')}"
        if constraints
        else ""
    )


def gate(repo: Repo, base: str, *extra: str) -> dict[str, Any]:
    out = repo.path.parent / "verdict.json"
    result = repo.cli("gate", "--base-ref", base, "--json", str(out), "--no-cache", *extra)
    verdict: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    verdict["_exit"] = result.code
    verdict["_out"] = result.out
    return verdict


def kinds(verdict: dict[str, Any]) -> list[str]:
    """The kinds of the findings that count against the patch."""
    return sorted(
        f["kind"] for f in verdict["findings"] if f["level"] == "error" and f["introduced"]
    )


# --- class 1: files the install generates inside the package, which git ignores --------------
# isodate (github.com/gweis/isodate, 4408b60 "release 0.7.2" and later): pyproject.toml has
# `[tool.setuptools_scm] write_to = "src/isodate/version.py"`, .gitignore lists that file, and
# isodate/__init__.py starts with `from isodate.version import version as __version__`.

ISODATE = {
    name: textwrap.dedent(text)
    for name, text in {
        ".gitignore": "isodate/version.py\n",
        "isodate/__init__.py": """\
        from isodate.version import version as __version__
        from isodate.duration import Duration

        __all__ = ["Duration", "__version__"]
        """,
        "isodate/duration.py": """\
        class Duration:
            def __init__(self, days=0):
                self.days = days

            def __add__(self, other):
                return Duration(self.days + other.days)

            def __eq__(self, other):
                return self.days == other.days
        """,
        "tests/test_duration.py": """\
        import isodate


        def test_add():
            assert isodate.Duration(1) + isodate.Duration(2) == isodate.Duration(3)


        def test_version_is_set():
            assert isodate.__version__
        """,
    }.items()
}


def test_a_version_file_the_install_writes_and_git_ignores_reaches_every_copy(
    repo: Repo, tmp_path: Path
) -> None:
    for name, text in ISODATE.items():
        repo.write(name, text)
    repo.write("entropy.yaml", manifest("tests/test_duration.py", tmp_path / "pins"))
    base = repo.commit("isodate's shape")
    repo.write("isodate/version.py", "version = '0.7.3.dev1'\n")  # what pip install -e wrote
    assert repo.git("status", "--porcelain") == ""  # ignored, as upstream
    repo.write(  # an honest change of the code and of the property (strength runs too)
        "isodate/duration.py",
        ISODATE["isodate/duration.py"].replace(
            "return Duration(self.days + other.days)", "return type(self)(self.days + other.days)"
        ),
    )
    repo.write(
        "tests/test_duration.py",
        ISODATE["tests/test_duration.py"]
        + "\n\ndef test_add_zero():\n"
        + "    assert isodate.Duration(1) + isodate.Duration() == isodate.Duration(1)\n",
    )
    repo.commit("duration: keep the subclass")
    verdict = gate(repo, base)
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]
    outcomes = {t["id"].rsplit("::", 1)[1]: (t["host_a"], t["host_b"]) for t in verdict["tests"]}
    assert outcomes == dict.fromkeys(
        ("test_add", "test_add_zero", "test_version_is_set"), ("passed", "passed")
    )
    assert verdict["mutation"] is not None  # the strength copies imported the package too


def test_what_counts_as_generated_inside_the_packages(repo: Repo) -> None:
    """Ignored files inside a package are the install's (a version file, an extension built
    in place); ignored folders, caches and anything outside the packages are not."""
    repo.write(".gitignore", "*.so\n_version.py\n.coverage\nbuild/\n__pycache__/\nscratch/\n")
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/sub/__init__.py", "")
    repo.write("tools/run.py", "")  # no package: a folder without __init__.py
    repo.commit("layout")
    for name in (
        "pkg/_version.py",
        "pkg/sub/_speedups.cpython-311-x86_64-linux-gnu.so",
        "pkg/__pycache__/__init__.cpython-311.pyc",
        "pkg/scratch/out.txt",
        "tools/_version.py",
        ".coverage",
        "build/lib/pkg/__init__.py",
    ):
        repo.write(name, "x")
    assert environments.generated(repo.path) == [
        "pkg/_version.py",
        "pkg/sub/_speedups.cpython-311-x86_64-linux-gnu.so",
    ]
    other = repo.path.parent / "other"
    repo.git("worktree", "add", "-q", "--detach", str(other))
    (other / "pkg" / "_version.py").write_text("its own")
    assert environments.copy_generated(repo.path, other) == 1  # the extension; not its own
    assert (other / "pkg" / "_version.py").read_text() == "its own"
    assert (other / "pkg/sub/_speedups.cpython-311-x86_64-linux-gnu.so").read_text() == "x"
    assert environments.checkouts(other) == [repo.path.resolve()]
    assert environments.checkouts(other, repo.path) == [repo.path]


# --- class 2: a base test that already fails at the base, counted against the head ---------
# The case issue 32 saw, in parsedatetime's shape (github.com/bear/parsedatetime: its tests
# compare parses with the live clock — TestComplexDateTimes' `datetime.now() <
# datetime(self.yr, 6, 30, 12)` — so some fail at some hours; pyupgrade-style commits turn
# every `class X(object)` into `class X`). The failing test fails with the base's and with
# the head's version of the module: neither detects anything there, so it kills no mutant.

CALENDAR = {
    "when.py": """\
        import datetime


        class Calendar(object):
            def hours_until(self, hour, now):
                if hour >= now.hour:
                    return hour - now.hour
                return hour + 24 - now.hour

            def is_morning(self, now):
                return now.hour < 12
        """,
    "tests/test_when.py": """\
        import datetime
        import unittest

        from when import Calendar

        NOON = datetime.datetime(2026, 1, 10, 12, 0)


        class Helper(object):
            calendar = Calendar()


        class TestWhen(unittest.TestCase):
            def test_later_today(self):
                self.assertEqual(Helper.calendar.hours_until(15, NOON), 3)

            def test_tomorrow(self):
                self.assertEqual(Helper.calendar.hours_until(9, NOON), 21)

            def test_afternoon(self):
                self.assertFalse(Helper.calendar.is_morning(NOON))

            def test_the_live_morning(self):
                # reads the live clock: at the base it already fails at this hour of the day
                now = datetime.datetime.now().replace(hour=3)
                self.assertEqual(Helper.calendar.hours_until(5, now), 3)
        """,
}


def test_a_base_test_failing_at_the_base_too_kills_no_mutant(repo: Repo, tmp_path: Path) -> None:
    for name, text in CALENDAR.items():
        repo.write(name, text)
    repo.write("entropy.yaml", manifest("tests/test_when.py", tmp_path / "pins"))
    base = repo.commit("the calendar and its property")
    for name, text in CALENDAR.items():
        repo.write(name, text.replace("(object):", ":"))
    repo.commit("drop the explicit object base (pyupgrade)")
    verdict = gate(repo, base)
    assert "weakened_property" not in kinds(verdict)
    assert kinds(verdict) == []
    assert verdict["classification"] == "real_defect"  # it fails on both hosts, as at the base
    failing = [t for t in verdict["tests"] if t["host_a"] == "failed"]
    assert [t["id"].rsplit("::", 1)[1] for t in failing] == ["test_the_live_morning"]
    assert failing[0]["failed_at_base"] is True


# --- class 4: a test double updated because production now passes an argument -------------
# The case issue 32 saw (a `MockDate(datetime)` whose `now(cls)` the tests pin; the same
# double with `now(cls, tz=None)` is common in public suites, e.g. hattan/ccbot's
# tests/mock_datetime.py): production starts calling `datetime.now(tz)`, the double gains
# `tz=None` and nothing else of the tests changes. The base's test cannot call the head's
# production with its old double (TypeError), which says nothing about the property.

STAMP = {
    "stamp.py": """\
        import datetime


        def stamp(clock=datetime.datetime):
            return clock.now().strftime("%Y-%m-%d %H:%M")
        """,
    "tests/test_stamp.py": """\
        import datetime

        from stamp import stamp


        class MockDate(datetime.datetime):
            @classmethod
            def now(cls):
                return cls(2026, 1, 10, 12, 30)


        def test_stamp_is_minutes():
            assert stamp(MockDate) == "2026-01-10 12:30"


        def test_stamp_has_the_day():
            assert stamp(MockDate).startswith("2026-01-10")
        """,
}


def _stamp_repo(repo: Repo, tmp_path: Path) -> str:
    for name, text in STAMP.items():
        repo.write(name, text)
    repo.write("entropy.yaml", manifest("tests/test_stamp.py", tmp_path / "pins"))
    return repo.commit("stamps")


def test_a_test_double_resigned_for_what_production_now_passes_is_a_note(
    repo: Repo, tmp_path: Path
) -> None:
    base = _stamp_repo(repo, tmp_path)
    repo.write(
        "stamp.py", STAMP["stamp.py"].replace("clock.now()", "clock.now(datetime.timezone.utc)")
    )
    repo.write(
        "tests/test_stamp.py",
        STAMP["tests/test_stamp.py"].replace("def now(cls):", "def now(cls, tz=None):"),
    )
    repo.commit("stamp in UTC")
    verdict = gate(repo, base)
    assert kinds(verdict) == []
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]
    assert any("test double" in r and "now()" in r for r in verdict["reasons"]), verdict["reasons"]


def test_a_double_resigned_along_with_a_changed_test_still_counts(
    repo: Repo, tmp_path: Path
) -> None:
    """The trick beside it: the patch re-signs the double and rewrites the test's expected
    value to the defect's (stamp() drops the minutes). The base's test fails on the head's
    code, and not because of the double alone."""
    base = _stamp_repo(repo, tmp_path)
    repo.write(
        "stamp.py",
        STAMP["stamp.py"].replace(
            'clock.now().strftime("%Y-%m-%d %H:%M")', 'clock.now(None).strftime("%Y-%m-%d %H:00")'
        ),
    )
    test = STAMP["tests/test_stamp.py"].replace("def now(cls):", "def now(cls, tz=None):")
    repo.write(
        "tests/test_stamp.py", test.replace('== "2026-01-10 12:30"', '== "2026-01-10 12:00"')
    )
    repo.commit("stamp: whole hours")
    verdict = gate(repo, base)
    assert "test_changed_to_pass" in kinds(verdict)
    assert verdict["classification"] == "entropy_silenced"


def test_a_local_class_double_resigned_for_what_production_now_passes_is_a_note(
    repo: Repo, tmp_path: Path
) -> None:
    """The same double built inside a function, as python-schedule's `mock_datetime` builds
    its `MockDate` in `__enter__`: Python names its method `frozen.<locals>.MockDate.now()` in
    the TypeError, which the rule did not read, and the double was not looked for inside
    functions (schedule a38862005fb7 stays counted: its double's body changed too)."""
    local = (
        STAMP["tests/test_stamp.py"]
        .replace(
            """class MockDate(datetime.datetime):
            @classmethod
            def now(cls):
                return cls(2026, 1, 10, 12, 30)
""",
            """def frozen():
            class MockDate(datetime.datetime):
                @classmethod
                def now(cls):
                    return cls(2026, 1, 10, 12, 30)

            return MockDate
""",
        )
        .replace("stamp(MockDate)", "stamp(frozen())")
    )
    assert "def frozen():" in local
    assert "stamp(frozen())" in local
    for name, text in {**STAMP, "tests/test_stamp.py": local}.items():
        repo.write(name, text)
    repo.write("entropy.yaml", manifest("tests/test_stamp.py", tmp_path / "pins"))
    base = repo.commit("stamps")
    repo.write(
        "stamp.py", STAMP["stamp.py"].replace("clock.now()", "clock.now(datetime.timezone.utc)")
    )
    repo.write("tests/test_stamp.py", local.replace("def now(cls):", "def now(cls, tz=None):"))
    repo.commit("stamp in UTC")
    verdict = gate(repo, base)
    assert kinds(verdict) == []
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]
    assert any("test double" in r and "now()" in r for r in verdict["reasons"]), verdict["reasons"]


# --- class 6: a rename called through its module ---------------------------------------------
# The case issue 32 saw: `parser.parse` renamed `parser.parse_input`, the tests calling it
# through the module (python-semver's tests call its module-level API that way too,
# `semver.parse(...)`).

PARSER = {
    "dates/__init__.py": "",
    "dates/parser.py": """\
        def parse(text):
            year, month, day = (int(part) for part in text.split("-"))
            return (year, month, day)


        def parse_year(text):
            return parse(text)[0]
        """,
    "tests/test_parser.py": """\
        from dates import parser


        def test_parse():
            assert parser.parse("2026-01-10") == (2026, 1, 10)


        def test_parse_keeps_leading_zeros_out():
            assert parser.parse("2026-01-02")[2] == 2


        def test_year():
            assert parser.parse_year("1999-12-31") == 1999
        """,
}


def _renamed(repo: Repo, tmp_path: Path, constraints: str = "", body: str = "") -> str:
    for name, text in PARSER.items():
        repo.write(name, text)
    repo.write("entropy.yaml", manifest("tests/test_parser.py", tmp_path / "pins", constraints))
    base = repo.commit("a parser")
    production = PARSER["dates/parser.py"].replace("def parse(", "def parse_input(")
    production = production.replace("return parse(text)", "return parse_input(text)")
    repo.write(
        "dates/parser.py",
        production.replace("return (year, month, day)", body) if body else production,
    )
    repo.write(
        "tests/test_parser.py",
        PARSER["tests/test_parser.py"].replace("parser.parse(", "parser.parse_input("),
    )
    repo.commit("parser: parse -> parse_input")
    return base


def test_a_rename_called_through_its_module_is_measured_through_the_rename(
    repo: Repo, tmp_path: Path
) -> None:
    base = _renamed(repo, tmp_path)
    verdict = gate(repo, base)
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]
    assert (
        "strength: the base's module was measured with the patch's renames: "
        "dates.parser.parse → parse_input (dates/parser.py)"
    ) in verdict["reasons"]
    # measured through the rename, the base's module is the head's: the same mutants
    assert (
        "mutation: the patch changed no test function: both modules run the same tests and "
        "detect the same mutants"
    ) in verdict["reasons"]


def test_with_mutation_off_the_rename_merges_too(repo: Repo, tmp_path: Path) -> None:
    base = _renamed(repo, tmp_path, constraints='mutation: "off"\n')
    verdict = gate(repo, base)
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]


def test_a_rename_through_the_module_that_hides_a_defect_still_fails_the_bases_tests(
    repo: Repo, tmp_path: Path
) -> None:
    """The trick a rename used to hide: the renamed function drops the day, and the head's
    tests expect what it now returns. Measured through the rename, the base's test fails."""
    base = _renamed(repo, tmp_path, body="return (year, month, 1)")
    test = PARSER["tests/test_parser.py"].replace("parser.parse(", "parser.parse_input(")
    test = test.replace("== (2026, 1, 10)", "== (2026, 1, 1)").replace("[2] == 2", "[2] == 1")
    repo.write("tests/test_parser.py", test)
    repo.commit("tests follow")
    verdict = gate(repo, base)
    assert "test_changed_to_pass" in kinds(verdict)
    assert verdict["classification"] == "entropy_silenced"


# --- class 7: a dead import of a name the patch removed -----------------------------------------
# PyrateLimiter (c6d6419 "replace custom binary_search with stdlib bisect"): the package stops
# exporting binary_search, and tests/test_combinedlock.py drops its import, which nothing in it
# used. The base's module could not import against the head's code: strength unmeasurable,
# `invalid` on a refactor that changed no test.

LIMITER = {
    "rl/__init__.py": """\
        from .utils import search as search
        from .utils import window as window
        """,
    "rl/utils.py": """\
        def search(items, value):
            return items.index(value)


        def window(items, size):
            return items[-size:]
        """,
    "tests/test_window.py": """\
        from rl import search
        from rl import window


        def test_window():
            assert window([1, 2, 3, 4], 2) == [3, 4]


        def test_window_longer_than_items():
            assert window([1], 3) == [1]
        """,
}


def _dead_import(repo: Repo, tmp_path: Path, used: bool = False) -> str:
    for name, text in LIMITER.items():
        repo.write(name, text)
    if used:  # the base's module calls it, in a test the patch removes with it
        repo.write(
            "tests/test_window.py",
            textwrap.dedent(LIMITER["tests/test_window.py"])
            + "\n\ndef test_search():\n    assert search([5, 6], 6) == 1\n",
        )
    repo.write("entropy.yaml", manifest("tests/test_window.py", tmp_path / "pins"))
    base = repo.commit("a limiter")
    repo.write("rl/__init__.py", "from .utils import window as window\n")
    repo.write("rl/utils.py", "def window(items, size):\n    return items[-size:]\n")
    test = textwrap.dedent(LIMITER["tests/test_window.py"])
    repo.write("tests/test_window.py", test.replace("from rl import search\n", ""))
    repo.commit("drop search: bisect does it")
    return base


def test_a_dead_import_of_a_removed_name_is_measured_without_it(repo: Repo, tmp_path: Path) -> None:
    base = _dead_import(repo, tmp_path)
    verdict = gate(repo, base)
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]
    assert (
        "strength: the base's module was measured with the patch's renames: "
        "rl.search removed, an import it never uses (rl/__init__.py)"
    ) in verdict["reasons"]


def test_a_removed_name_a_removed_test_used_leaves_the_base_unmeasured(
    repo: Repo, tmp_path: Path
) -> None:
    """PyrateLimiter's other module: test_binary_search went with the function. The base's
    module uses the name, so it is not rewritten: the removed test is the finding, and the
    strength check still says it could not measure."""
    base = _dead_import(repo, tmp_path, used=True)
    verdict = gate(repo, base)
    assert verdict["classification"] != "merge_candidate"
    assert not any("never uses" in reason for reason in verdict["reasons"]), verdict["reasons"]
    assert any("cannot measure" in reason for reason in verdict["reasons"]), verdict["reasons"]


# attrs (9b98a73 "Drop Python 3.9"): `PY_3_10_PLUS = sys.version_info[:2] >= (3, 10)` leaves
# attr/_compat.py, and the conftest drops the guard that read it. The base's conftest could
# not import against the head's code: strength unmeasurable, `invalid` on the yearly drop of
# an old Python, which changes no behaviour on any Python the head supports.

COMPAT = {
    "pk/__init__.py": "",
    "pk/compat.py": """\
        import sys

        PY_3_8_PLUS = sys.version_info[:2] >= (3, 8)
        """,
    "pk/core.py": """\
        def double(x):
            return 2 * x
        """,
    "tests/conftest.py": """\
        from pk.compat import PY_3_8_PLUS

        collect_ignore = []
        if not PY_3_8_PLUS:
            collect_ignore.append("test_legacy.py")
        """,
    "tests/test_core.py": """\
        import pytest

        from pk.compat import PY_3_8_PLUS
        from pk.core import double


        def test_double():
            assert double(2) == 4


        @pytest.mark.skipif(not PY_3_8_PLUS, reason="the walrus is 3.8+")
        def test_walrus():
            assert (y := double(3)) == 6 and y > 5
        """,
}


def _drop_old_python(repo: Repo, tmp_path: Path, core: str = "") -> str:
    for name, text in COMPAT.items():
        repo.write(name, text)
    constraints = "mutation: changed\n"
    repo.write("entropy.yaml", manifest("tests/test_core.py", tmp_path / "pins", constraints))
    base = repo.commit("a package with a compat flag")
    repo.write("pk/compat.py", "import sys\n")
    repo.write("tests/conftest.py", "collect_ignore = []\n")
    test = textwrap.dedent(COMPAT["tests/test_core.py"])
    test = test.replace("from pk.compat import PY_3_8_PLUS\n", "")
    test = test.replace('@pytest.mark.skipif(not PY_3_8_PLUS, reason="the walrus is 3.8+")\n', "")
    if core:  # a defect beside the drop, the head's test rewritten to pass on it
        repo.write("pk/core.py", core)
        test = test.replace("double(2) == 4", "double(2) == 5")
    repo.write("tests/test_core.py", test)
    repo.commit("drop Python 3.7")
    return base


def test_a_removed_flag_of_the_interpreter_is_measured_as_the_base_read_it(
    repo: Repo, tmp_path: Path
) -> None:
    base = _drop_old_python(repo, tmp_path)
    verdict = gate(repo, base)
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]
    flag = "a flag of the interpreter bound to its base definition `__import__('sys')."
    (note,) = [r for r in verdict["reasons"] if "measured with the patch's renames" in r]
    assert note == (
        "strength: the base's module was measured with the patch's renames: "
        f"pk.compat.PY_3_8_PLUS removed, {flag}version_info[:2] >= (3, 8)` (pk/compat.py), "
        f"pk.compat.PY_3_8_PLUS removed, {flag}version_info[:2] >= (3, 8)` (pk/compat.py, in "
        "the base's tests/conftest.py)"
    )
    assert verdict["mutation"] is not None


def test_a_defect_beside_a_removed_flag_still_fails_the_bases_tests(
    repo: Repo, tmp_path: Path
) -> None:
    """The trick: drop a flag to make the base's side unmeasurable, and hide a defect behind
    it. The base's test side now runs on the head's code and fails there."""
    base = _drop_old_python(repo, tmp_path, core="def double(x):\n    return 2 * x + (x == 2)\n")
    verdict = gate(repo, base)
    assert verdict["classification"] == "entropy_silenced", verdict["reasons"]
    assert "test_changed_to_pass" in kinds(verdict)


@pytest.mark.parametrize("core", ["", "def double(x):\n    return 2 * x + (x == 2)\n"])
def test_a_removed_flag_is_judged_alike_on_every_path(
    repo: Repo, tmp_path: Path, core: str
) -> None:
    """The local gate, the workflow's host jobs (`run --base-ref`) and verdict job, and
    compare on the same host folders: the same verdict and the same note, honest or not."""
    base = _drop_old_python(repo, tmp_path, core=core)
    workflow = workflow_verdict(repo, tmp_path, base)
    out, runs = tmp_path / "compare.json", tmp_path / "runs"
    hosts = ("--host-a", str(runs / "a"), "--host-b", str(runs / "b"))
    repo.cli("compare", *hosts, "--base-ref", base, "--json", str(out))
    compared = json.loads(out.read_text(encoding="utf-8"))
    expected = "entropy_silenced" if core else "merge_candidate"
    seen = []
    for verdict in (gate(repo, base), workflow, compared):
        assert verdict["classification"] == expected, verdict["reasons"]
        seen.append([r for r in verdict["reasons"] if "measured with the patch's renames" in r])
    assert seen[0]
    assert seen[0] == seen[1] == seen[2]


# attrs (tests/test_make.py, `TestMakeClass::test_missing_sys_getframe`): a test deletes
# `sys._getframe` to check the library's fallback, and asserts while it is gone. The gate's
# assertion counter and its audited `os.environ` looked `sys._getframe` up at each call: the
# test failed, pytest's failure report (which reads `PY_COLORS`) crashed the session after 93
# of 280 tests, and every commit of attrs was `invalid` on that module, docs-only ones too.

GETFRAME = {
    "pkg/__init__.py": """\
        import sys


        def caller_module():
            try:
                return sys._getframe(1).f_globals.get("__name__", "__main__")
            except (AttributeError, ValueError):
                return "__main__"
        """,
    "tests/test_pkg.py": """\
        import os
        import sys

        from pkg import caller_module


        def test_caller_module():
            assert caller_module() == __name__


        def test_missing_sys_getframe(monkeypatch):
            monkeypatch.delattr(sys, "_getframe")
            assert caller_module() == "__main__"
            assert os.environ.get("ENTROPY_GATE_NO_SUCH_VARIABLE") is None


        def test_after():
            assert caller_module() == __name__
        """,
}


def test_a_test_that_deletes_sys_getframe_runs_as_under_bare_pytest(
    repo: Repo, tmp_path: Path
) -> None:
    for name, text in GETFRAME.items():
        repo.write(name, text)
    repo.write("entropy.yaml", manifest("tests/test_pkg.py", tmp_path / "pins"))
    base = repo.commit("a fallback without sys._getframe")
    repo.write("README.md", "docs\n")
    repo.commit("docs")
    verdict = gate(repo, base)
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]
    assert [(t["host_a"], t["host_b"]) for t in verdict["tests"]] == [("passed", "passed")] * 3


# --- class 8: honest edits of CI ---------------------------------------------------------------
# pyjwt (github.com/jpadilla/pyjwt, a4e1a3d "Add typing_extensions dependency for Python <
# 3.11"): the fix also edits .github/workflows/main.yml (a job testing bare installs, and an
# explicit `permissions: contents: read`). No workflow there calls entropy-gate, and the edited
# one cannot post a check run: its edit cannot change the check.

CI_WORKFLOW = """\
name: CI
on: [push, pull_request]
permissions:
  contents: read
jobs:
  tests:
    name: "Python ${{ matrix.python-version }}"
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python-version: ["3.12", "3.13"]
    steps:
      - uses: actions/checkout@v6
      - run: python -m pytest
"""
CALLER = """\
name: entropy-gate
on: pull_request
permissions: {}
jobs:
  entropy-gate:
    uses: entropy-gate/entropy-gate/.github/workflows/entropy-gate.yml@v1
    permissions: {contents: read, checks: write}
"""


def _ci_repo(repo: Repo, tmp_path: Path, *, caller: bool = False, constraints: str = "") -> str:
    for name, text in STAMP.items():
        repo.write(name, text)
    repo.write(".github/workflows/ci.yml", CI_WORKFLOW)
    if caller:
        repo.write(".github/workflows/entropy-gate.yml", CALLER)
    repo.write("entropy.yaml", manifest("tests/test_stamp.py", tmp_path / "pins", constraints))
    return repo.commit("stamps, CI")


def _edit_ci(repo: Repo, workflow: str) -> None:
    repo.write(".github/workflows/ci.yml", workflow)
    repo.write("stamp.py", STAMP["stamp.py"].replace('"%Y-%m-%d %H:%M"', "'%Y-%m-%d %H:%M'"))
    repo.commit("CI: one more Python; stamp: quotes")


def test_a_ci_edit_that_cannot_change_the_check_is_a_note(repo: Repo, tmp_path: Path) -> None:
    base = _ci_repo(repo, tmp_path, caller=True)
    _edit_ci(repo, CI_WORKFLOW.replace('"3.13"]', '"3.13", "3.14"]'))
    verdict = gate(repo, base)
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]
    assert any(
        r.startswith(
            ".github/workflows/ci.yml: workflow edit(s) that cannot change the gate's check"
        )
        for r in verdict["reasons"]
    ), verdict["reasons"]


def test_ci_edits_that_can_change_the_check_say_why(repo: Repo, tmp_path: Path) -> None:
    base = _ci_repo(repo, tmp_path, caller=True)
    spoof = (
        CI_WORKFLOW + "  entropy-gate:\n    runs-on: ubuntu-latest\n    steps: [{run: 'true'}]\n"
    )
    _edit_ci(repo, spoof.replace("permissions:\n  contents: read\n", ""))
    repo.write(".github/workflows/entropy-gate.yml", CALLER.replace("@v1", "@v2"))
    repo.commit("and the caller")
    verdict = gate(repo, base)
    assert verdict["classification"] == "pin_mutation"
    messages = {
        f["path"]: f["message"] for f in verdict["findings"] if f["kind"] == "gate_config_changed"
    }
    assert (
        "(it names entropy-gate (a call of it, or a job posting a check of its name))"
        in messages[".github/workflows/ci.yml"]
    )
    assert (
        "(at the base it calls entropy-gate: the caller decides how the gate runs)"
        in messages[".github/workflows/entropy-gate.yml"]
    )


def test_a_ci_edit_that_drops_permissions_can_post_a_check(repo: Repo, tmp_path: Path) -> None:
    base = _ci_repo(repo, tmp_path)
    _edit_ci(repo, CI_WORKFLOW.replace("permissions:\n  contents: read\n", ""))
    verdict = gate(repo, base)
    assert verdict["classification"] == "pin_mutation"
    assert "declares no `permissions:`" in verdict["findings"][0]["message"]


def test_a_ci_job_its_matrix_names_after_the_check_is_protected_on_every_path(
    repo: Repo, tmp_path: Path
) -> None:
    """No line spells entropy-gate; the job's check run is named so for one matrix value. The
    local gate, the workflow's run + verdict and compare on the same host folders agree."""
    base = _ci_repo(repo, tmp_path, caller=True)
    named = CI_WORKFLOW.replace('"3.13"]', '"3.13", "entropy"]').replace(
        '"Python ${{ matrix.python-version }}"', '"${{ matrix.python-version }}-gate"'
    )
    _edit_ci(repo, named)
    why = "(its job 'tests' can be named after the check ('${{ matrix.python-version }}-gate'))"
    workflow = workflow_verdict(repo, tmp_path, base)
    out, runs = tmp_path / "compare.json", tmp_path / "runs"
    hosts = ("--host-a", str(runs / "a"), "--host-b", str(runs / "b"))
    repo.cli("compare", *hosts, "--base-ref", base, "--json", str(out))
    compared = json.loads(out.read_text(encoding="utf-8"))
    for verdict in (gate(repo, base), workflow, compared):
        assert verdict["classification"] == "pin_mutation"
        found = [f for f in verdict["findings"] if f["kind"] == "gate_config_changed"]
        assert [(f["path"], f["line"]) for f in found] == [(".github/workflows/ci.yml", 7)]
        assert why in found[0]["message"]


def test_a_list_the_manifest_spells_out_protects_every_file_under_it(
    repo: Repo, tmp_path: Path
) -> None:
    listed = 'protected_paths: [".github/workflows/", ".github/CODEOWNERS"]\n'
    base = _ci_repo(repo, tmp_path, constraints=listed)
    _edit_ci(repo, CI_WORKFLOW.replace('"3.13"]', '"3.13", "3.14"]'))
    verdict = gate(repo, base)
    assert verdict["classification"] == "pin_mutation"
    assert [f["path"] for f in verdict["findings"] if f["kind"] == "gate_config_changed"] == [
        ".github/workflows/ci.yml"
    ]


# --- found on the precision set: a parametrize id that holds a value read at collection -------
# python-ulid (github.com/mdomke/python-ulid, tests/test_ulid.py): `@pytest.mark.parametrize(
# ..., [(ULID.from_datetime, time.time()), ...])` — the float is in the test's id, so host A's
# id and host B's (its clock years ahead) differ, and so do the head's and the base's: every
# pull request was real_defect ("1 not run that host B ran").

ULIDS = {
    "ulids.py": """\
        def from_timestamp(value):
            if not isinstance(value, (int, float)):
                raise TypeError("a number")
            return int(value * 1000)
        """,
    "tests/test_ulids.py": """\
        import time

        import pytest

        from ulids import from_timestamp


        @pytest.mark.parametrize(
            ("make", "value"), [(from_timestamp, "x"), (from_timestamp, str(time.time()))]
        )
        def test_invalid_input(make, value):
            with pytest.raises(TypeError):
                make(value)


        def test_millis():
            assert from_timestamp(1.5) == 1500
        """,
}


def test_a_case_whose_id_holds_a_live_value_pairs_by_its_place(repo: Repo, tmp_path: Path) -> None:
    for name, text in ULIDS.items():
        repo.write(name, text)
    repo.write("entropy.yaml", manifest("tests/test_ulids.py", tmp_path / "pins"))
    base = repo.commit("ulids")
    repo.write("ulids.py", ULIDS["ulids.py"].replace('"a number"', '"expected a number"'))
    repo.commit("a clearer message")
    verdict = gate(repo, base)
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]
    live = [t for t in verdict["tests"] if len(t["raw_ids"]) == 2]
    assert len(live) == 1
    assert (live[0]["host_a"], live[0]["host_b"], live[0]["base_a"]) == (
        "passed",
        "passed",
        "passed",
    )
    assert live[0]["id"].startswith("tests/test_ulids.py::test_invalid_input[from_timestamp-17")


# icalendar (github.com/collective/icalendar, 698624cacf4b "Add REQUEST-STATUS property"): four
# cases added in the middle of a parametrize list whose ids pytest numbers by place
# (`component_classes83`); the new `setting nothing` case runs no assertion by design, and was
# read as the base's case at its place, which ran 14: `assertions_skipped_at_runtime`.

INSERTED = """\
    import pytest

    CASES = [
        ({"a"}, "first", True),
        ({"b"}, "second", True),
    ]


    @pytest.mark.parametrize(("names", "label", "checked"), CASES)
    def test_labels(names, label, checked):
        if checked:
            assert label
            assert names
    """


def test_a_case_inserted_into_a_list_is_not_the_base_case_at_its_place(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write("tests/test_labels.py", INSERTED)
    repo.write("entropy.yaml", manifest("tests/test_labels.py", tmp_path / "pins"))
    base = repo.commit("labels")
    repo.write(
        "tests/test_labels.py",
        INSERTED.replace(
            '({"a"}, "first", True),', '({"a"}, "first", True),\n        ({"c"}, "unset", False),'
        ),
    )
    repo.commit("a case that checks nothing when unset, in the middle of the list")
    verdict = gate(repo, base)
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]
    assert kinds(verdict) == []
    workflow = workflow_verdict(repo, tmp_path, base)
    assert (workflow["classification"], kinds(workflow)) == ("merge_candidate", [])


def workflow_verdict(repo: Repo, tmp_path: Path, base: str) -> dict[str, Any]:
    """The workflow's path: each host job's run with its base run, then the verdict job."""
    runs = tmp_path / "runs"
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        done = repo.cli(
            "run", "--host", host, *extra, "--out", str(runs / host), "--base-ref", base
        )
        assert done.code == 0, done.err
    out = tmp_path / "workflow.json"
    hosts = ("--host-a", str(runs / "a"), "--host-b", str(runs / "b"))
    repo.cli("verdict", *hosts, "--base-ref", base, "--json", str(out))
    return json.loads(out.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


# --- class 5: the seam fix the gate itself recommends --------------------------------------
# The gate says `live_read_removed` ("inject it: a Clock, a random.Random, a parameter") to
# `def days_until(due, now=None): now = now or datetime.now(timezone.utc)`; the honest fix
# makes `now` required and the test passes the pinned instant (the case issue 32 saw,
# rebuilt as it describes it).

DUE = {
    "due.py": """\
        from datetime import datetime, timezone


        def days_until(due, now=None):
            now = now or datetime.now(timezone.utc)
            return (due - now).days
        """,
    "tests/test_due.py": """\
        import os
        from datetime import datetime, timedelta, timezone

        from due import days_until

        PINNED = datetime.fromtimestamp(int(os.environ["ENTROPY_CLOCK_UNIX"]), timezone.utc)
        DUE = PINNED + timedelta(days=400)


        def test_the_invoice_is_not_due_yet():
            assert days_until(DUE) > 0
        """,
}


def _due_repo(repo: Repo, tmp_path: Path) -> str:
    for name, text in DUE.items():
        repo.write(name, text)
    repo.write("entropy.yaml", manifest("tests/test_due.py", tmp_path / "pins"))
    return repo.commit("days until due")


def test_an_existing_parameter_made_required_is_a_seam(repo: Repo, tmp_path: Path) -> None:
    base = _due_repo(repo, tmp_path)
    production = DUE["due.py"].replace(
        "now=None):\n            now = now or datetime.now(timezone.utc)\n", "now):\n"
    )
    assert production != DUE["due.py"]
    repo.write("due.py", production)
    repo.write(
        "tests/test_due.py",
        DUE["tests/test_due.py"].replace("days_until(DUE)", "days_until(DUE, PINNED)"),
    )
    repo.commit("days_until takes now")
    verdict = gate(repo, base)
    assert "live_read_removed" not in kinds(verdict), verdict["reasons"]
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]


def test_a_live_read_replaced_behind_a_default_that_stays_is_still_found(
    repo: Repo, tmp_path: Path
) -> None:
    """The exit beside it: `now` keeps its default, its live fallback becomes a constant
    instant, and the test still calls days_until(DUE): nothing is injected."""
    base = _due_repo(repo, tmp_path)
    repo.write(
        "due.py",
        DUE["due.py"].replace(
            "now = now or datetime.now(timezone.utc)",
            "now = now or datetime(2026, 1, 10, tzinfo=timezone.utc)",
        ),
    )
    repo.commit("days_until: no clock")
    verdict = gate(repo, base)
    assert "live_read_constant" in kinds(verdict), verdict["reasons"]
    assert verdict["classification"] == "entropy_silenced"


# --- class 7: repeated tests turned into one parametrized test -------------------------------
# freezegun (github.com/spulec/freezegun, dfd5d9e "Merge pull request #542"): the base's
# test_manual_increment and test_manual_increment_seconds become one test_manual_increment
# that checks both ways of ticking; and the shape the issue saw on a unittest suite: cases
# of a TestCase's methods moved into one module-level @pytest.mark.parametrize test
# (parametrize does not work on TestCase methods, so it must leave the class).

TICKS = {
    "ticker.py": """\
        class Ticker:
            def __init__(self, start):
                self.now = start
                self.minutes = 0

            def tick(self, seconds=1):
                if seconds < 0:
                    raise ValueError("backwards")
                if seconds >= 60:
                    self.minutes += seconds // 60
                    seconds %= 60
                self.now += seconds
                return self.now
        """,
    "tests/test_ticker.py": """\
        import unittest

        from ticker import Ticker


        class TestTicker(unittest.TestCase):
            def test_one_second(self):
                self.assertEqual(Ticker(10).tick(), 11)

            def test_ten_seconds(self):
                self.assertEqual(Ticker(10).tick(10), 20)

            def test_a_minute_and_a_second(self):
                ticker = Ticker(10)
                self.assertEqual((ticker.tick(61), ticker.minutes), (11, 1))

            def test_backwards_is_refused(self):
                with self.assertRaises(ValueError):
                    Ticker(10).tick(-1)
        """,
}
MERGED = """\
    import pytest

    from ticker import Ticker


    CASES = [((), 11, 0), ((10,), 20, 0), ((61,), 11, 1)]


    @pytest.mark.parametrize(("args", "now", "minutes"), CASES)
    def test_ticks(args, now, minutes):
        ticker = Ticker(10)
        assert (ticker.tick(*args), ticker.minutes) == (now, minutes)


    def test_backwards_is_refused():
        with pytest.raises(ValueError):
            Ticker(10).tick(-1)
    """


def _ticker(repo: Repo, tmp_path: Path) -> str:
    for name, text in TICKS.items():
        repo.write(name, text)
    repo.write("entropy.yaml", manifest("tests/test_ticker.py", tmp_path / "pins"))
    return repo.commit("a ticker")


def test_tests_merged_into_one_parametrized_test_are_not_removed(
    repo: Repo, tmp_path: Path
) -> None:
    base = _ticker(repo, tmp_path)
    repo.write("tests/test_ticker.py", MERGED)
    repo.commit("tests: one parametrized test for the ticks")
    verdict = gate(repo, base)
    assert "test_removed" not in kinds(verdict), verdict["reasons"]
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]
    moved = [r for r in verdict["reasons"] if "moved or merged, not removed" in r]
    assert len(moved) == 4, verdict["reasons"]


def test_a_merge_that_drops_a_case_is_still_a_removal(repo: Repo, tmp_path: Path) -> None:
    """The trick beside it: the merged test leaves out the minute's case, and the mutants of
    the minutes' branch the base's test killed survive the head's module."""
    base = _ticker(repo, tmp_path)
    repo.write("tests/test_ticker.py", MERGED.replace(", ((61,), 11, 1)]", "]"))
    repo.commit("tests: one parametrized test")
    verdict = gate(repo, base)
    assert "test_removed" in kinds(verdict), verdict["reasons"]
    assert verdict["classification"] == "entropy_silenced"


# --- class 3: skip guards that never fire ---------------------------------------------------
# The case issue 32 saw (`try: import pytz except ImportError: self.skipTest("pytz
# unavailable")` in an honest commit, pytz installed): tests that need an optional
# dependency, which is installed, so every test runs.

ZONES = {
    "zones.py": """\
        def offset_hours(name):
            return {"UTC": 0, "CET": 1}[name]
        """,
    "tests/test_zones.py": """\
        import unittest

        from zones import offset_hours


        class TestZones(unittest.TestCase):
            def test_utc(self):
                self.assertEqual(offset_hours("UTC"), 0)
        """,
}
GUARDED = """
    def test_cet(self):
        try:
            import {module}
        except ImportError:
            self.skipTest("{module} unavailable")
        self.assertEqual(offset_hours("CET"), {module}.loads("1"))

    def test_cet_is_not_utc(self):
        try:
            import {module}
        except ImportError:
            self.skipTest("{module} unavailable")
        self.assertNotEqual(offset_hours("CET"), {module}.loads("0"))
"""


def _zones(repo: Repo, tmp_path: Path, added: str) -> dict[str, Any]:
    for name, text in ZONES.items():
        repo.write(name, text)
    repo.write("entropy.yaml", manifest("tests/test_zones.py", tmp_path / "pins"))
    base = repo.commit("zones")
    repo.write(
        "tests/test_zones.py",
        textwrap.dedent(ZONES["tests/test_zones.py"])
        + textwrap.indent(textwrap.dedent(added), "    "),
    )
    repo.commit("tests for CET")
    return gate(repo, base)


def test_an_import_guard_that_never_fired_is_a_notice(repo: Repo, tmp_path: Path) -> None:
    verdict = _zones(repo, tmp_path, GUARDED.format(module="json"))
    assert kinds(verdict) == [], verdict["reasons"]
    assert verdict["classification"] == "merge_candidate"
    quiet = [f for f in verdict["findings"] if f["kind"] == "skip_call"]
    assert [f["level"] for f in quiet] == ["warning", "warning"]
    assert all(
        "it never fired: every test it guards ran on both hosts" in f["message"] for f in quiet
    )


def test_an_import_guard_that_fires_still_silences(repo: Repo, tmp_path: Path) -> None:
    verdict = _zones(repo, tmp_path, GUARDED.format(module="not_installed_anywhere"))
    assert "skip_call" in kinds(verdict)
    assert verdict["classification"] == "entropy_silenced"


def test_a_guard_on_an_entropy_source_stays_a_finding_though_the_pins_keep_it_quiet(
    repo: Repo, tmp_path: Path
) -> None:
    """`skipTest` unless TZ is UTC: under the pins it never fires, and on a laptop in Paris
    it silences the property — the seed's `skip if TZ != UTC`."""
    added = """
        def test_cet(self):
            import os
            if os.environ.get("TZ") != "UTC":
                self.skipTest("needs UTC")
            self.assertEqual(offset_hours("CET"), 1)
    """
    verdict = _zones(repo, tmp_path, added)
    assert "skip_call" in kinds(verdict)
    assert verdict["classification"] == "entropy_silenced"


# found on the precision set: freezegun's 45d9293 adds test_time_ns_with_microseconds under
# the module's own `@pytest.mark.skipif(not HAS_TIME_NS, ...)`, HAS_TIME_NS being
# `hasattr(time, 'time_ns')`: a guard on an interpreter feature, which never fired.

FEATURE = """
    HAS_TIME_NS = hasattr(time, "time_ns")
    try:
        import json as optional_json
    except ImportError:
        optional_json = None


    @pytest.mark.skipif(not HAS_TIME_NS, reason="time.time_ns is present only on 3.7 and above")
    def test_cet_in_nanoseconds():
        assert offset_hours("CET") * 3600 * 10**9 == 3600 * 10**9


    @pytest.mark.skipif(optional_json is None or sys.version_info < (3, 8), reason="no json")
    def test_cet_from_json():
        assert offset_hours("CET") == optional_json.loads("1")
    """


def _features(repo: Repo, tmp_path: Path, marker_line: str = "") -> dict[str, Any]:
    head = "import sys\nimport time\n\nimport pytest\n\n" + textwrap.dedent(
        ZONES["tests/test_zones.py"]
    )
    for name, text in ZONES.items():
        repo.write(name, text)
    repo.write("tests/test_zones.py", head)
    repo.write("entropy.yaml", manifest("tests/test_zones.py", tmp_path / "pins"))
    base = repo.commit("zones")
    added = textwrap.dedent(FEATURE)
    if marker_line:
        added = added.replace("@pytest.mark.skipif(not HAS_TIME_NS,", marker_line + "  #", 1)
    repo.write("tests/test_zones.py", head + added)
    repo.commit("tests in nanoseconds")
    return gate(repo, base)


def test_a_feature_guard_that_never_fired_is_a_notice(repo: Repo, tmp_path: Path) -> None:
    verdict = _features(repo, tmp_path)
    assert kinds(verdict) == [], verdict["reasons"]
    assert verdict["classification"] == "merge_candidate"
    quiet = [f for f in verdict["findings"] if f["kind"] == "skip_marker"]
    assert [f["level"] for f in quiet] == ["warning", "warning"]


def test_a_skipif_on_the_environment_beside_them_still_counts(repo: Repo, tmp_path: Path) -> None:
    verdict = _features(
        repo, tmp_path, '@pytest.mark.skipif(time.tzname[0] != "UTC", reason="UTC only")'
    )
    assert kinds(verdict) == ["skip_marker"], verdict["reasons"]
    assert verdict["classification"] == "entropy_silenced"


# found on the precision set: structlog's test dependencies hold pytest-randomly, which
# shuffles every session's tests and reseeds `random` from a seed of its own — an unpinned
# order and seed on host A itself: order-dependent tests at the base failed there by chance.
# A plugin named `randomly` (here a stand-in that reverses the order, loaded as pytest-randomly
# is, by name) is blocked in every run the gate starts: the gate owns order and seeds.

RANDOMLY = {
    "randomly.py": """\
        def pytest_collection_modifyitems(items):
            items.reverse()
        """,
    "conftest.py": 'pytest_plugins = ["randomly"]\n',
    "state.py": "SEEN = []\n",
    "tests/test_order.py": """\
        import state


        def test_first_fills_the_cache():
            state.SEEN.append(1)
            assert state.SEEN


        def test_second_reads_it():
            assert state.SEEN == [1]
        """,
}


def test_a_plugin_named_randomly_does_not_reorder_host_as_tests(repo: Repo, tmp_path: Path) -> None:
    for name, text in RANDOMLY.items():
        repo.write(name, text)
    repo.write("entropy.yaml", manifest("tests/test_order.py", tmp_path / "pins"))
    base = repo.commit("an order-dependent pair, and a shuffling plugin")
    repo.write("state.py", "SEEN: list[int] = []\n")
    repo.commit("state: annotate")
    verdict = gate(repo, base, "--no-base-run")
    assert verdict["host_a"] == "pass", verdict["reasons"]
    outcomes = [(t["id"].rsplit("::", 1)[1], t["host_a"]) for t in verdict["tests"]]
    assert outcomes == [
        ("test_first_fills_the_cache", "passed"),
        ("test_second_reads_it", "passed"),
    ]


GUARDS_MODULE = """\
    import os
    import sys
    import time
    import unittest

    import pytest

    from pkg import dev

    try:
        import json as local_json
    except ImportError:
        local_json = None
    HAS_NS = hasattr(time, "time_ns")


    @pytest.mark.skipif(dev.rich is None, reason="Needs Rich.")  # structlog's
    def test_rich():
        assert dev


    @pytest.mark.skipif(not HAS_NS or sys.version_info < (3, 8), reason="old")
    def test_ns():
        assert HAS_NS


    @unittest.skipUnless(local_json, "no json")
    def test_json():
        assert local_json


    @pytest.mark.skipif(os.environ.get("CI") == "true", reason="not on CI")
    def test_env():
        assert True


    @pytest.mark.skipif(sys.platform == "win32", reason="posix")
    def test_platform():
        assert True


    @pytest.mark.skipif("dev.rich is None", reason="a string pytest evaluates")
    def test_string():
        assert True
    """


def test_which_skip_conditions_are_guards_on_a_dependency(repo: Repo, tmp_path: Path) -> None:
    from entropy_action import scan  # noqa: PLC0415
    from entropy_action.manifest import baseline  # noqa: PLC0415

    repo.write("pkg/__init__.py", "")
    repo.write("pkg/dev.py", "try:\n    import rich\nexcept ImportError:\n    rich = None\n")
    repo.write("tests/test_guards.py", "def test_none():\n    assert True\n")
    repo.write("entropy.yaml", manifest("tests/test_guards.py", tmp_path / "pins"))
    base = repo.commit("base")
    repo.write("tests/test_guards.py", GUARDS_MODULE)
    check = baseline.check(repo.path / "entropy.yaml", base, None)
    guarded = sorted(test for g in scan.scan(check).guards for test in g.tests or ("*",))
    assert guarded == ["test_json", "test_ns", "test_rich"]


# found on the precision set: toolz's 55c60e9 (for Python 3.11) turns
# `assert mk_rsample(object) == mk_rsample(object)` — a determinism check, standing at the
# base — into `mk_rsample(hash(object)) == ...`. It was a self comparison then; a value equal
# to itself is no finding now (hollow.equal_to_itself), and not counted as an assertion.

SAMPLES = """\
    import random


    def sample(seed):
        return random.Random(seed).random()


    def test_same_seed_same_sample():
        draw = lambda seed: sample(seed)  # noqa: E731
        seed = 7
        assert draw({arg}) == draw({arg})
        assert draw(1) != draw(2)
    """


def test_editing_a_self_comparison_that_stood_at_the_base_is_no_new_finding(
    repo: Repo, tmp_path: Path
) -> None:
    from entropy_action.manifest import baseline  # noqa: PLC0415

    repo.write("tests/test_samples.py", SAMPLES.format(arg="seed"))
    repo.write("entropy.yaml", manifest("tests/test_samples.py", tmp_path / "pins"))
    base = repo.commit("base")
    repo.write("tests/test_samples.py", SAMPLES.format(arg="hash(seed)"))
    check = baseline.check(repo.path / "entropy.yaml", base, None)
    assert introduced(check) == []  # random.Random(seed) stood at the base: "reseeded"
    # a second determinism check beside it is none either
    repo.write("tests/test_samples.py", SAMPLES.format(arg="hash(seed)") + ADDED)
    assert introduced(check) == []
    # one in place of a value assertion checks one fewer
    second = SAMPLES.format(arg="hash(seed)").replace(
        "assert draw(1) != draw(2)", "assert draw(seed) == draw(seed)"
    )
    repo.write("tests/test_samples.py", second)
    assert introduced(check) == ["assertions_dropped"]


def introduced(check: PinCheck) -> list[str]:
    from entropy_action import scan  # noqa: PLC0415

    return [f.kind for f in scan.scan(check).findings if f.introduced]


ADDED = """

def test_same_seed_same_samples():
    assert [sample(3) for _ in range(2)] == [sample(3) for _ in range(2)]
    seed = 3
    assert sample(seed) == sample(seed)
"""
