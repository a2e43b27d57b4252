"""The audit's catalog of targets, asked about every callable a 3.12+ CALL event reports."""

from __future__ import annotations

import datetime
import random
import time
from unittest import mock

from entropy_action.testproc.audit import Catalog


def test_the_targets_are_known_bound_or_not():
    catalog = Catalog()
    assert catalog.api_of(time.time) == "time.time()"
    assert catalog.api_of(datetime.datetime.now) == "datetime.now()"  # a new bound method
    assert catalog.api_of(random.choice) == "random.choice()"  # a Python method of _inst
    assert catalog.api_of(len) is None


def test_an_object_that_answers_every_attribute_is_not_asked():
    # mock.call makes a _Call of any attribute, `__self__` and `__name__` too: asked for them,
    # the catalog raised TypeError (unhashable) inside the test's own `call(...)` (3.12+), and
    # pytest-mock's assert_called_once_with failed on equal calls.
    catalog = Catalog()
    assert catalog.api_of(mock.call) is None
    assert catalog.api_of(mock.MagicMock()) is None
    assert catalog.api_of(mock.call([1, 2])) is None
