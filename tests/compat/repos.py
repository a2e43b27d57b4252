"""The compatibility tier's scratch repositories: a small shop library whose property modules
(tests/compat/modules.py) use each plugin and clock library as its authors mean it.

SUITE holds one property per plugin in one manifest (each judged on its own, one pytest
session per host), XDIST_COV the plugins that change how the whole session runs, from
`addopts`. The SILENCED ones hold a property that fails at the base and the head an agent
would write: the failing test silenced with that library.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tests.compat.modules import (
    ANYIO,
    ASYNCIO,
    FREEZE,
    HYPOTHESIS,
    MOCK,
    PARALLEL,
    RANDOMLY,
    RERUN,
    ROOT_UNITTEST,
    SNAPSHOT,
    TIMEOUT,
    TRAVEL,
)

PINS = "pins: {clock_unix: 1768003200, rng_seed: 9173, tz: UTC}\n"
CLOCK = '''\
"""The shop's clock reads: code under test that reads the live clock."""

import datetime
import time


def stamp():
    return time.time()


def now():
    return datetime.datetime.now(datetime.timezone.utc)
'''
CART = '''\
"""A cart: totals, and a checkout that mails its receipt."""

from shop import mail


def total(prices):
    return sum(prices)


def checkout(prices):
    amount = total(prices)
    mail.send(f"receipt: {amount}")
    return amount


def receipt(prices):
    return {"lines": list(prices), "total": total(prices)}


async def fetch(price):
    import asyncio

    await asyncio.sleep(0)
    return price * 2
'''
MAIL = """\
def send(text):
    raise RuntimeError("the tests may not send mail")
"""
PRICING = '''\
"""Prices, with their examples as doctests (the property module runs them)."""


def discount(price, percent):
    """The price less `percent` per cent, rounded down.

    >>> discount(200, 10)
    180
    >>> discount(99, 0)
    99
    """
    return price - price * percent // 100
'''
PYPROJECT = """\
[project]
name = "shop"
version = "1.0"

[tool.pytest.ini_options]
pythonpath = ["."]
timeout = 60
asyncio_default_fixture_loop_scope = "function"
{addopts}"""
SUITE_MANIFEST = f"""\
version: 1
{PINS}properties:
  - {{property_id: time_machine, module: tests/test_travel.py}}
  - {{property_id: freezegun, module: tests/test_freeze.py}}
  - {{property_id: asyncio, module: tests/test_asyncio.py}}
  - {{property_id: anyio, module: tests/test_anyio.py}}
  - {{property_id: hypothesis, module: tests/test_hypothesis.py}}
  - {{property_id: mock, module: tests/test_mock.py}}
  - {{property_id: randomly, module: tests/test_randomly.py}}
  - {{property_id: timeout, module: tests/test_timeout.py}}
  - {{property_id: rerunfailures, module: tests/test_rerun.py}}
  - {{property_id: unittest, module: test_root_unittest.py}}
  - {{property_id: doctest, module: shop/pricing.py, run: {{pytest_args: ["--doctest-modules"]}}}}
  - {{property_id: syrupy, module: tests/test_snapshot.py}}
"""
SHOP = {
    "shop/__init__.py": "",
    "shop/clock.py": CLOCK,
    "shop/cart.py": CART,
    "shop/mail.py": MAIL,
    "shop/pricing.py": PRICING,
}


def _single(module: str) -> str:
    return f"version: 1\nproperty_id: p\nmodule: {module}\n{PINS}"


@dataclass(frozen=True)
class Case:
    """One repository, the head patch made on it, and the verdict each property must get."""

    name: str
    files: dict[str, str]
    head: dict[str, str]  # files the head writes (a README line: a docs-only patch)
    expected: dict[str, str]  # property id (or "" for a one-property manifest) -> verdict
    findings: tuple[tuple[str, str, int], ...] = ()  # (kind, path, line) the rejection names
    snapshots: bool = False  # run syrupy's --snapshot-update before the base commit
    measured: bool = False  # the strength step ran: both modules kill the same mutants


DOCS = {"README.md": "# shop\n\nOne more line of docs.\n"}
SUITE = Case(
    "suite",
    {
        **SHOP,
        "README.md": "# shop\n",
        "pyproject.toml": PYPROJECT.format(addopts=""),
        "entropy.yaml": SUITE_MANIFEST,
        "tests/__init__.py": "",
        "tests/test_travel.py": TRAVEL,
        "tests/test_freeze.py": FREEZE,
        "tests/test_asyncio.py": ASYNCIO,
        "tests/test_anyio.py": ANYIO,
        "tests/test_hypothesis.py": HYPOTHESIS,
        "tests/test_mock.py": MOCK,
        "tests/test_randomly.py": RANDOMLY,
        "tests/test_timeout.py": TIMEOUT,
        "tests/test_rerun.py": RERUN,
        "test_root_unittest.py": ROOT_UNITTEST,
        "tests/test_snapshot.py": SNAPSHOT,
    },
    DOCS,
    dict.fromkeys(re.findall(r"property_id: (\w+)", SUITE_MANIFEST), "merge_candidate"),
    snapshots=True,
)
# many do); no README.md: the docs-only step appends to the README.rst it finds.
XDIST_COV = Case(
    "xdist-cov",
    {
        **SHOP,
        "README.rst": "shop\n====\n",
        "pyproject.toml": PYPROJECT.format(
            addopts='addopts = "-n 2 --cov=shop --cov-report=term-missing"\n'
        ),
        "entropy.yaml": _single("tests/test_parallel.py"),
        "tests/test_parallel.py": PARALLEL,
    },
    {"README.rst": "shop\n====\n\nOne more line of docs.\n"},
    {"": "merge_candidate"},
)
TOKENS = '''\
"""Sign-in tokens: valid for 30 days after they are issued (by the live clock)."""

import datetime


def valid(issued, days=30):
    return datetime.datetime.now(datetime.timezone.utc) < issued + datetime.timedelta(days=days)
'''
TOKEN_TEST = """\
import datetime

{imports}from shop import tokens

ISSUED = datetime.datetime(2026, 1, 10, tzinfo=datetime.timezone.utc)


{decorator}def test_a_fresh_token_is_valid():
    assert tokens.valid(ISSUED)
"""
TRAVEL_HEAD = TOKEN_TEST.format(
    imports="import time_machine\n\n",
    decorator="@time_machine.travel(ISSUED + datetime.timedelta(days=5))\n",
)
FREEZE_HEAD = TOKEN_TEST.format(
    imports="from freezegun import freeze_time\n\n", decorator='@freeze_time("2026-01-15")\n'
)
FLAKY_BASE = """\
import pytest

from shop import cart


def test_upload(tmp_path_factory):
    tried = tmp_path_factory.getbasetemp() / "tried-once"
    first = not tried.exists()
    tried.touch()
    assert not first, "the first attempt fails"
    assert cart.total([1]) == 1
"""
SILENCED_MANIFEST = f"""\
version: 1
{PINS}constraints: {{mutation: 'off'}}
properties:
  - {{property_id: time_machine, module: tests/test_travel_tokens.py}}
  - {{property_id: freezegun, module: tests/test_freeze_tokens.py}}
  - {{property_id: rerunfailures, module: tests/test_upload.py}}
"""
# Each property fails at the base (a token past its 30 days by the live clock; an upload that
# fails its first attempt); the head silences each with its library instead of fixing it.
SILENCED = Case(
    "silenced",
    {
        **SHOP,
        "shop/tokens.py": TOKENS,
        "README.md": "# shop\n",
        "pyproject.toml": PYPROJECT.format(addopts=""),
        "entropy.yaml": SILENCED_MANIFEST,
        "tests/test_travel_tokens.py": TOKEN_TEST.format(imports="", decorator=""),
        "tests/test_freeze_tokens.py": TOKEN_TEST.format(imports="", decorator=""),
        "tests/test_upload.py": FLAKY_BASE,
    },
    {
        "tests/test_travel_tokens.py": TRAVEL_HEAD,
        "tests/test_freeze_tokens.py": FREEZE_HEAD,
        "tests/test_upload.py": FLAKY_BASE.replace(
            "def test_upload", "@pytest.mark.flaky(reruns=2)\ndef test_upload"
        ),
    },
    dict.fromkeys(("time_machine", "freezegun", "rerunfailures"), "entropy_silenced"),
    (
        ("entropy_patched", "tests/test_travel_tokens.py", 10),
        ("entropy_patched", "tests/test_freeze_tokens.py", 10),
        ("skip_marker", "tests/test_upload.py", 6),
    ),
)
ROOM = """\
def has_room(used, limit):
    return used < limit
"""
ROOM_TEST = """\
from shop.room import has_room


def test_full():
    assert has_room(0, 1) is True
    assert has_room(1, 1) is False


def test_other():
    assert 1 + 1 == 2
"""
# pytest-retry from the project's configuration (PyrateLimiter's): the first failing attempt
# of each test is a report of outcome "rerun". The head touches has_room and adds a test, so
# the strength step mutates has_room: each module kills `<` made `<=` on every attempt.
RETRY = Case(
    "retry",
    {
        "shop/__init__.py": "",
        "shop/room.py": ROOM,
        "README.md": "# shop\n",
        "pyproject.toml": PYPROJECT.format(addopts="retries = 2\nretry_delay = 0\n"),
        "entropy.yaml": _single("tests/test_room.py"),
        "tests/__init__.py": "",
        "tests/test_room.py": ROOM_TEST,
    },
    {
        "shop/room.py": ROOM.replace("):\n", '):\n    """Whether one more fits."""\n', 1),
        "tests/test_room.py": ROOM_TEST + "\n\ndef test_room_left():\n    assert has_room(5, 10)\n",
    },
    {"": "merge_candidate"},
    measured=True,
)
CASES = (SUITE, XDIST_COV, SILENCED, RETRY)
