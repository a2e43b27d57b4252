"""The compatibility tier's property modules: each plugin and clock library used as its
authors mean it (the examples of its own documentation), on the shop library of
tests/compat/repos.py.
"""

TRAVEL = """\
import datetime
import time

import time_machine

from shop import clock

UTC = datetime.timezone.utc


def test_four_lines():
    with time_machine.travel(200, tick=False):
        assert time.time() == 200


@time_machine.travel(datetime.datetime(2030, 1, 1, tzinfo=UTC), tick=False)
def test_decorator():
    assert clock.now().year == 2030


def test_shift_and_move_to():
    with time_machine.travel(1000, tick=False) as traveller:
        traveller.shift(60)
        assert clock.stamp() == 1060
        traveller.move_to(datetime.datetime(2031, 6, 1, tzinfo=UTC))
        assert datetime.date.today() == datetime.date(2031, 6, 1)


def test_ticking():
    with time_machine.travel(datetime.datetime(2001, 1, 1, tzinfo=UTC)):
        assert clock.now().year == 2001


def test_fixture(time_machine):
    time_machine.move_to(datetime.datetime(2032, 2, 2, tzinfo=UTC), tick=False)
    assert clock.now() == datetime.datetime(2032, 2, 2, tzinfo=UTC)
    time_machine.shift(datetime.timedelta(days=1))
    assert clock.now().day == 3
"""
FREEZE = """\
import datetime

from freezegun import freeze_time

from shop import clock


@freeze_time("2030-01-01")
def test_decorator():
    assert clock.now().year == 2030


def test_context_manager():
    with freeze_time("2012-01-14 12:00:01") as frozen:
        assert clock.stamp() == datetime.datetime(2012, 1, 14, 12, 0, 1).timestamp()
        frozen.tick(datetime.timedelta(seconds=9))
        assert datetime.datetime.now().second == 10
"""
ASYNCIO = """\
import pytest
import pytest_asyncio

from shop import cart


@pytest_asyncio.fixture
async def price():
    return await cart.fetch(21)


@pytest.mark.asyncio
async def test_fetch():
    assert await cart.fetch(2) == 4


@pytest.mark.asyncio
async def test_fixture(price):
    assert price == 42
"""
ANYIO = """\
import anyio
import pytest

from shop import cart


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_fetch_in_a_task_group():
    results = []

    async def one(price):
        results.append(await cart.fetch(price))

    async with anyio.create_task_group() as group:
        for price in (1, 2, 3):
            group.start_soon(one, price)
    assert sorted(results) == [2, 4, 6]
"""
HYPOTHESIS = """\
from hypothesis import given, settings
from hypothesis import strategies as st

from shop import cart


@settings(max_examples=50)
@given(st.lists(st.integers(min_value=0, max_value=10_000)))
def test_total_is_the_sum(prices):
    assert cart.total(prices) == sum(prices)


@given(st.lists(st.integers()), st.integers())
def test_total_adds_up(prices, extra):
    assert cart.total([*prices, extra]) == cart.total(prices) + extra
"""
MOCK = """\
from shop import cart


def test_checkout_mails_the_receipt(mocker):
    send = mocker.patch("shop.mail.send")
    assert cart.checkout([3, 4]) == 7
    send.assert_called_once_with("receipt: 7")


def test_checkout_totals_once(mocker):
    mocker.patch("shop.mail.send")
    spy = mocker.spy(cart, "total")
    cart.checkout([1, 2])
    spy.assert_called_once_with([1, 2])
    assert spy.spy_return == 3
"""
RANDOMLY = """\
import random

from shop import cart


def test_a_sample_totals_its_members():
    picked = random.sample(range(100), 5)
    assert cart.total(picked) == sum(picked)


def test_a_shuffle_keeps_the_total():
    prices = list(range(20))
    random.shuffle(prices)
    assert cart.total(prices) == 190


def test_order_does_not_matter():
    assert cart.total([random.randint(0, 9)]) < 10
"""
TIMEOUT = """\
import time

import pytest

from shop import cart


@pytest.mark.timeout(30)
def test_quick():
    time.sleep(0.01)
    assert cart.total([1]) == 1


def test_under_the_ini_timeout():
    assert cart.total([]) == 0
"""
RERUN = """\
from shop import cart


def test_total():
    assert cart.total([2, 2]) == 4
"""
ROOT_UNITTEST = """\
import unittest

from shop import cart


class TestCart(unittest.TestCase):
    def setUp(self):
        self.prices = [5, 6]

    def test_total(self):
        self.assertEqual(cart.total(self.prices), 11)

    def test_each_price(self):
        for price in self.prices:
            with self.subTest(price=price):
                self.assertEqual(cart.total([price]), price)


if __name__ == "__main__":
    unittest.main()
"""
SNAPSHOT = """\
from shop import cart


def test_receipt(snapshot):
    assert cart.receipt([3, 4]) == snapshot
"""


PARALLEL = """\
from shop import cart


def test_one():
    assert cart.total([1]) == 1


def test_two():
    assert cart.total([1, 1]) == 2


def test_three():
    assert cart.total([1, 1, 1]) == 3


def test_four():
    assert cart.total([2, 2]) == 4
"""
# pytest-xdist and pytest-cov from addopts, as a project runs every session (together, as
