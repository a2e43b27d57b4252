"""The tiers stay honest: every test file lives in a tier's folder, and the unit tier's guard
fails a test that starts a process (even one whose code swallows the error)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

TESTS = Path(__file__).parent.parent
TIERS = {"unit", "integration", "e2e", "hostile", "compat"}
GUARD = Path(__file__).with_name("conftest.py")


def test_every_test_file_lives_in_a_tier_folder() -> None:
    files = sorted(p.relative_to(TESTS) for p in TESTS.rglob("test_*.py"))
    outside = [p for p in files if p.parts[0] not in TIERS]
    assert files
    assert outside == []


def test_every_tier_folder_and_support_is_a_package() -> None:
    for folder in [*TIERS, "support"]:
        assert (TESTS / folder / "__init__.py").is_file(), folder


def test_the_tiers_markers_are_given_by_folder(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("integration") is None
    assert request.node.get_closest_marker("e2e") is None
    assert request.node.get_closest_marker("hostile") is None
    assert request.node.get_closest_marker("compat") is None


def test_the_unit_guard_fails_every_way_of_starting_a_process(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(GUARD.read_text(encoding="utf-8"))
    pytester.makepyfile(
        test_spawn="""
import os
import subprocess

import pytest


@pytest.fixture(scope="module")
def built():
    subprocess.run(["git", "--version"], check=True)


def test_pure():
    assert sorted([3, 1, 2]) == [1, 2, 3]


def test_run():
    subprocess.run(["true"], check=True)


def test_swallowed():
    try:
        subprocess.check_output(["true"])
    except Exception:
        pass


def test_system():
    os.system("true")


def test_module_fixture(built):
    pass
"""
    )
    result = pytester.runpytest_inprocess("-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=3, errors=1)
    shown = result.stdout.str()
    for expected in (  # the setup error, then the failures, each naming what it started
        "ProcessInUnitTier: subprocess.Popen(['git', '--version']): the unit tier starts no",
        "test_swallowed started a process: subprocess.Popen(['true']); the unit tier starts no",
        "ProcessInUnitTier: os.system('true'): the unit tier starts no process; move this test",
    ):
        assert expected in shown, shown
