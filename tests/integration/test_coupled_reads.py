"""The read behind a host-B failure, named (#36): on a repository shaped like the TOTP
library's cases — a new test whose expected value hard-codes this year while the test itself
calls `date.today()`, and an account name built from `os.environ["HOME"]` — the env_coupled
page names the test's own lines, what each saw on each host, and a step that does not pin
what is pinned; the old production read of the clock (it stood at the base, and the failing
test runs it too) is not the explanation."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import Repo

pytestmark = pytest.mark.integration

MANIFEST = """\
version: 1
property_id: otp
module: tests/test_otp.py
pins:
  clock_unix: 1768003200
  tz: UTC
  temp_root: {temp_root}
"""
OTP = """\
import datetime


def now():
    return datetime.datetime.now()


def provisioning_uri(account):
    return f"otpauth://totp/{account}"


def expiry_year(issued):
    return issued.year
"""
BASE = """\
import datetime
import os

import otp


def test_now_is_a_datetime():
    assert isinstance(otp.now(), datetime.datetime)


def test_uri():
    assert otp.provisioning_uri("bob") == "otpauth://totp/bob"
"""
CLOCK_TEST = """

def test_expiry_year():
    assert otp.now()
    assert otp.expiry_year(datetime.date.today()) == {year}
"""
HOME_TEST = """

def test_account_name():
    account = os.path.basename(os.environ["HOME"])
    assert otp.provisioning_uri(account) == "otpauth://totp/alice"
"""
TESTS = "tests/test_otp.py"


def _line(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def _gate(repo: Repo, tmp_path: Path, added: str) -> tuple[dict[str, Any], str, str]:
    """The verdict JSON, the page and the head's test module of a patch adding `added`."""
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("otp.py", OTP)
    repo.write(TESTS, BASE)
    base = repo.commit("base")
    head = BASE + added
    repo.write(TESTS, head)
    page = tmp_path / "page.md"
    gated = repo.cli("gate", "--base-ref", base, "--summary", str(page), "--format", "json")
    assert gated.code == 1, gated.err
    verdict: dict[str, Any] = json.loads(gated.out)
    assert verdict["classification"] == "env_coupled"
    return verdict, page.read_text(encoding="utf-8"), head


def _what_to_do(page: str) -> str:
    return page[page.index("### What to do") : page.index("| host A |")]


def test_a_new_test_reading_the_clock_itself_is_named_not_the_old_production_read(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    year = datetime.date.today().year
    verdict, page, head = _gate(repo, tmp_path, CLOCK_TEST.format(year=year))
    assert verdict["coupled_to"] == ["clock"], verdict["reasons"]
    today = _line(head, "date.today()")
    [step] = verdict["next_steps"]
    assert step["where"] == f"{TESTS}:{today}"
    assert step["what"].startswith("fix the test's own read: take the time from the pinned clock")
    assert "pin it" not in step["what"]
    assert "clock_unix is pinned already" in step["what"]
    assert f"`{TESTS}:{today}` reads `date.today()` (the test's own read)" in step["evidence"]
    assert f": {year}-" in step["evidence"], "host A's value"
    assert f"{year + 5}-" in step["evidence"] or f"{year + 6}-" in step["evidence"], "host B's"
    # the old production read (otp.py:5: at the base, and the failing test runs it too)
    # ranks after the test's own, and is not the explanation
    [read] = verdict["coupled_reads"]
    assert (read["path"], read["line"], read["test_code"], read["at_base"]) == (
        TESTS,
        today,
        True,
        False,
    )
    what_to_do = _what_to_do(page)
    assert f"`{TESTS}:{today}`" in what_to_do
    assert "`date.today()`" in what_to_do
    production = what_to_do.replace("test_otp", "").replace("test\\_otp", "")
    assert "otp" not in production, "the production module's read is named"
    assert any(f"`{TESTS}:{today}` reads `date.today()`" in r for r in verdict["reasons"])


def test_an_account_name_built_from_home_names_home_and_the_line(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "alice"  # host A is the laptop: its HOME is alice's
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    verdict, page, head = _gate(repo, tmp_path, HOME_TEST)
    assert verdict["coupled_to"] == ["env:HOME"], verdict["reasons"]
    read_at = _line(head, 'os.environ["HOME"]')
    [step] = verdict["next_steps"]
    assert step["where"] == f"{TESTS}:{read_at}"
    assert step["what"] == (
        "fix the test's own read of HOME: set it in the test (monkeypatch.setenv) or pin it "
        "(pins.env.HOME)"
    )
    assert (
        f"`{TESTS}:{read_at}` reads `os.environ['HOME']` (the test's own read)"
        in (step["evidence"])
    )
    assert f"{str(home)!r} on host A" in step["evidence"]
    what_to_do = _what_to_do(page)
    assert f"`{TESTS}:{read_at}`" in what_to_do
    assert "HOME" in what_to_do
