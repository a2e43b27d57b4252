"""`entropy-gate init` drafts what the gate can use: no pin of a variable the tests set
themselves at import (said, with file:line), never an empty environment value, and the draft
passes a docs-only `gate` run on the repository it was drafted for.

Real scratch libraries in tmp dirs, real pytest runs through the CLI; no network.
"""

from __future__ import annotations

import textwrap

import pytest

from entropy_action.manifest import pinfile, selfset
from tests.integration.test_run_host_a import mo_catalog
from tests.support.helpers import Repo

LIBRARY = """\
import os
from datetime import datetime


def stamp():
    zone = os.environ.get("CLOCKLIB_ZONE_DIR")
    return (zone, datetime.now().hour)
"""

SETS_TZ = """\
import os
import time

import clocklib

ZONE = "CET-1CEST,M3.5.0,M10.5.0/3"
os.environ["TZ"] = ZONE
time.tzset()


def test_stamp_has_an_hour():
    assert 0 <= clocklib.stamp()[1] < 24
"""

TZ_NOTE = (
    "  tz: not pinned: tests/properties/test_clock.py:7 sets TZ at import "
    "(`os.environ['TZ'] = …`, then `time.tzset()` at line 8); a pin would not take"
)
ENV_NOTE = (
    "  env.CLOCKLIB_ZONE_DIR: not pinned: init knows no value for it and never drafts an "
    "empty one; pin the value it needs"
)


def library(repo: Repo, module: str = SETS_TZ) -> None:
    repo.write("clocklib.py", LIBRARY)
    repo.write("tests/properties/test_clock.py", module)
    repo.commit("library")


def drafted(repo: Repo) -> pinfile.LoadedManifest:
    return pinfile.load(repo.path / "entropy.yaml", repo_root=repo.path)


def test_a_module_that_sets_tz_at_import_gets_no_tz_pin_and_a_note_naming_the_line(repo):
    library(repo)
    result = repo.cli("init", "--clock-unix", "1768003200")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[1] == "wrote entropy.yaml: 1 pin(s) (clock_unix)"
    assert TZ_NOTE in lines
    pins = drafted(repo).manifest.pins
    assert pins.tz is None
    assert pins.clock_unix == 1768003200
    text = (repo.path / "entropy.yaml").read_text()
    assert "  # tz: not pinned: tests/properties/test_clock.py:7 sets TZ at import" in text
    assert "note:" not in result.out  # the provisional TZ the module overrode is no failure


def test_a_conftest_that_sets_tz_at_import_is_named(repo):
    conftest = "import os\n\nos.environ.setdefault('TZ', 'Asia/Tokyo')\n"
    plain = SETS_TZ.replace('os.environ["TZ"] = ZONE\ntime.tzset()\n', "")
    library(repo, plain)
    repo.write("tests/conftest.py", conftest)
    repo.commit("conftest")
    result = repo.cli("init", "--clock-unix", "0")
    assert result.code == 0, result.err
    assert (
        "  tz: not pinned: tests/conftest.py:3 sets TZ at import "
        "(`os.environ.setdefault('TZ', …)`); a pin would not take"
    ) in result.out.splitlines()
    assert drafted(repo).manifest.pins.tz is None


def test_tz_set_by_a_module_the_tests_import_is_seen_in_the_audited_run(repo):
    """Not in the module or a conftest: the static reading misses it, the run does not."""
    plain = SETS_TZ.replace('os.environ["TZ"] = ZONE\ntime.tzset()\n', "import zonehelper\n")
    library(repo, plain)
    repo.write("tests/properties/zonehelper.py", "import os\nos.environ['TZ'] = 'EST5EDT'\n")
    repo.commit("helper")
    result = repo.cli("init", "--clock-unix", "0")
    assert result.code == 0, result.err
    assert (
        "  tz: not pinned: the test process saw TZ='EST5EDT', not the UTC init set: something "
        "the tests import sets it; a pin would not take"
    ) in result.out.splitlines()
    assert drafted(repo).manifest.pins.tz is None


def test_a_module_that_sets_tz_only_inside_a_test_keeps_the_pin(repo):
    """A test that sets TZ for itself runs after the pin was checked: the pin still holds
    for the rest, so it is drafted."""
    inside = SETS_TZ.replace(
        'os.environ["TZ"] = ZONE\ntime.tzset()\n',
        "\n\ndef test_in_berlin(monkeypatch):\n    monkeypatch.setenv('TZ', ZONE)\n",
    )
    library(repo, inside)
    result = repo.cli("init", "--clock-unix", "0")
    assert result.code == 0, result.err
    assert drafted(repo).manifest.pins.tz == "UTC"
    assert "tz: not pinned" not in result.out


def test_an_environment_variable_read_is_never_pinned_empty(repo):
    library(repo)
    result = repo.cli("init", "--clock-unix", "0")
    assert result.code == 0, result.err
    assert ENV_NOTE in result.out.splitlines()
    assert drafted(repo).manifest.pins.env is None
    text = (repo.path / "entropy.yaml").read_text()
    assert '""' not in text
    assert "  #   CLOCKLIB_ZONE_DIR: <the value the property needs>\n" in text


def test_the_draft_passes_a_docs_only_gate_run(repo):
    library(repo)
    assert repo.cli("init", "--clock-unix", "1768003200").code == 0
    repo.commit("the drafted manifest")
    repo.write("README.md", "# clocklib\n\nDocs only.\n")
    repo.commit("docs")
    result = repo.cli("gate", "--base-ref", "HEAD~1")
    assert result.code == 0, result.out + result.err
    assert "entropy-gate verdict: merge_candidate (merge candidate)" in result.out


def test_the_tz_pin_init_no_longer_drafts_makes_that_gate_run_invalid(repo):
    """The bad path the rule exists for: the same library with `tz: UTC` pinned."""
    library(repo)
    assert repo.cli("init", "--clock-unix", "1768003200").code == 0
    text = (repo.path / "entropy.yaml").read_text()
    repo.write("entropy.yaml", text.replace("pins:\n", "pins:\n  tz: UTC\n", 1))
    repo.commit("tz pinned by hand")
    repo.write("README.md", "# clocklib\n")
    repo.commit("docs")
    result = repo.cli("gate", "--base-ref", "HEAD~1")
    assert result.code == 2
    said = "did not see these pins as pinned: tz: TZ pinned 'UTC', the test process saw 'CET-1CEST"
    assert said in result.out, result.out
    assert "invalid (invalid input; nothing was judged)" in result.out


GREETINGS = """\
import gettext
from pathlib import Path


def greeting():
    return gettext.translation("app", Path(__file__).parent / "locale", fallback=True).gettext("Hi")
"""
GREETING_TEST = """\
from greetings import greeting


def test_the_greeting_is_the_source_text():
    assert greeting() == "Hi"
"""


def test_a_locale_read_drafts_the_lang_pin_and_the_draft_passes_a_gate(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """gettext reads LANGUAGE, LC_ALL, LC_MESSAGES and LANG: one `lang` pin covers them all
    (C.UTF-8, a CI runner's locale), where before init listed four variables to pin by hand.
    From a shell with `LANGUAGE=de`, as on a German desktop, init's run (the caller's locale,
    so that every variable read shows) fails, and says so; the gate, under the pin, passes."""
    repo.write("greetings.py", GREETINGS)
    repo.write("tests/properties/test_greetings.py", GREETING_TEST)
    catalog = repo.path / "locale/de/LC_MESSAGES/app.mo"
    catalog.parent.mkdir(parents=True)
    catalog.write_bytes(mo_catalog({"Hi": "Hallo"}))
    repo.commit("library")
    monkeypatch.setenv("LANGUAGE", "de")
    result = repo.cli("init", "--clock-unix", "1768003200")
    assert result.code == 0, result.err
    assert result.out.splitlines()[1:3] == [
        "note: host a: a property failed; the draft lists what the tests read all the same",
        "wrote entropy.yaml: 1 pin(s) (lang)",
    ]
    assert "not pinned" not in result.out
    assert drafted(repo).manifest.pins.lang == "C.UTF-8"
    repo.commit("the drafted manifest")
    repo.write("README.md", "# greetings\n")
    repo.commit("docs")
    gated = repo.cli("gate", "--base-ref", "HEAD~1")
    assert gated.code == 0, gated.out + gated.err
    assert "entropy-gate verdict: merge_candidate (merge candidate)" in gated.out


def test_tests_that_set_the_locale_at_import_get_no_lang_pin_and_a_note(repo: Repo) -> None:
    repo.write("greetings.py", GREETINGS)
    setting = "import os\n\nos.environ['LC_ALL'] = 'C'\n\n" + GREETING_TEST
    repo.write("tests/properties/test_greetings.py", setting)
    repo.commit("library")
    result = repo.cli("init", "--clock-unix", "1768003200")
    assert result.code == 0, result.err
    note = (
        "  lang: not pinned: tests/properties/test_greetings.py:3 sets LC_ALL at import "
        "(`os.environ['LC_ALL'] = …`); a pin would not take"
    )
    assert note in result.out.splitlines(), result.out
    assert drafted(repo).manifest.pins.lang is None


# --- the static reading, form by form -------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "code"),
    [
        ("os.environ['TZ'] = 'UTC'", "os.environ['TZ'] = …"),
        ("os.environ['TZ'] += ''", "os.environ['TZ'] += …"),
        ("del os.environ['TZ']", "del os.environ['TZ']"),
        ("os.environ.setdefault('TZ', 'UTC')", "os.environ.setdefault('TZ', …)"),
        ("os.environ.pop('TZ', None)", "os.environ.pop('TZ', …)"),
        ("os.environ.update({'TZ': 'UTC'})", "os.environ.update(TZ=…)"),
        ("os.environ.update(TZ='UTC')", "os.environ.update(TZ=…)"),
        ("os.putenv('TZ', 'UTC')", "os.putenv('TZ', …)"),
        ("os.unsetenv('TZ')", "os.unsetenv('TZ')"),
        ("mp = pytest.MonkeyPatch()\nmp.setenv('TZ', 'UTC')", "mp.setenv('TZ', …)"),
        ("from os import environ\nenviron['TZ'] = 'UTC'", "os.environ['TZ'] = …"),
        ("KEY = 'TZ'\nos.environ[KEY] = 'UTC'", "os.environ['TZ'] = …"),
        ("if True:\n    with open(__file__):\n        os.environ['TZ'] = 'UTC'", None),
        ("class T:\n    os.environ['TZ'] = 'UTC'", None),
    ],
)
def test_each_write_at_import_is_found(source, code):
    found = selfset.import_writes("import os\nimport pytest\n" + source + "\n", "t.py")
    assert [w.name for w in found.writes] == ["TZ"]
    if code is not None:
        assert found.writes[0].code == code


@pytest.mark.parametrize(
    "source",
    [
        "def helper():\n    os.environ['TZ'] = 'UTC'",
        "async def helper():\n    os.environ['TZ'] = 'UTC'",
        "set_it = lambda: os.environ.setdefault('TZ', 'UTC')",
        "os.environ[compute()] = 'UTC'",  # not a literal: the audited run is the backstop
        "value = os.environ['TZ']",  # a read
        "this is not python",
    ],
)
def test_what_does_not_run_at_import_or_is_no_write_is_not_found(source):
    assert selfset.import_writes(textwrap.dedent(source), "t.py").writes == []


def test_tzset_lines_are_remembered():
    found = selfset.import_writes("import os, time\nos.environ['TZ'] = 'X'\ntime.tzset()\n", "t")
    assert found.tzset_lines == [3]
    assert found.writes[0].where() == "t:2"


# A stand-in for pytest-cov's threshold (pytest-cov is not among the test dependencies): a
# conftest plugin with its `--no-cov` option and its failure line, exiting 1 on a green run.
COVERAGE_CONFTEST = """\
import pytest


def pytest_addoption(parser):
    parser.addoption("--no-cov", action="store_true")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    if not session.config.getoption("--no-cov") and exitstatus == 0:
        print("FAIL Required test coverage of 99% not reached. Total coverage: 40.00%")
        session.exitstatus = 1
"""


def test_a_coverage_threshold_the_module_alone_misses_is_turned_off_in_the_draft(repo):
    library(repo)
    repo.write("tests/conftest.py", COVERAGE_CONFTEST)
    repo.commit("a coverage threshold")
    result = repo.cli("init", "--clock-unix", "0")
    assert result.code == 0, result.err
    assert (
        '  run.pytest_args: ["--no-cov"]: the module alone fails the coverage threshold in '
        "addopts (pytest-cov's --cov-fail-under), and a run that exits 1 is no pass"
    ) in result.out.splitlines()
    assert "note:" not in result.out
    assert drafted(repo).manifest.run.pytest_args == ["--no-cov"]
    repo.commit("the drafted manifest")
    repo.write("README.md", "# clocklib\n")
    repo.commit("docs")
    gate = repo.cli("gate", "--base-ref", "HEAD~1")
    assert "entropy-gate verdict: merge_candidate (merge candidate)" in gate.out, gate.out


def test_a_run_that_fails_for_another_reason_keeps_its_note_and_no_run_section(repo):
    library(repo, SETS_TZ + "\n\ndef test_fails():\n    assert False\n")
    result = repo.cli("init", "--clock-unix", "0")
    assert result.code == 0, result.err
    assert "note: host a: a property failed; the draft lists what the tests read all the same" in (
        result.out.splitlines()
    )
    assert "run:" not in (repo.path / "entropy.yaml").read_text()
