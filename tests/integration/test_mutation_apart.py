"""The mutation step where the base's and the head's modules disturb each other in one session.

Found on circuitbreaker (1287500d6658, an honest edit of its tests): the library keeps every
breaker in a registry keyed by name, and both modules define the same breakers at import, so
in the session that holds both the registry held the base's, every head test that asked it
failed, and each mutant only the base's copy of such a test killed read as a weaker property
(`entropy_silenced`, 21 `weakened_property`). The step now notices the head's tests failing
beside the base's module, runs the unmutated tests again with each module in a session of its
own (paired.py's two copies), and where that fails fewer, measures apart. Real repositories,
real gates, on the local gate's path and the workflow's (each host's job with the base ref,
then `verdict` and `compare`).
"""

from __future__ import annotations

import pytest

from tests.support.helpers import Repo

MANIFEST = """\
version: 1
property_id: breakers
module: tests/test_breakers.py
pins:
  tz: UTC
"""
REGISTRY = """\
BREAKERS = {}


class Breaker:
    def __init__(self, name):
        self.name = name
        self.open = False
        self.calls = 0
        BREAKERS[name] = self

    def call(self):
        self.calls += 1

    def fail(self):
        self.open = True


def all_closed():
    return not any(breaker.open for breaker in BREAKERS.values())
"""
PROPERTY = """\
from registry import Breaker, all_closed

FAILING = Breaker("failing")


def test_a_failure_opens_the_breaker():
    assert all_closed()
    FAILING.fail()
    assert not all_closed()


def test_a_breaker_counts_its_calls():
    counter = Breaker("counter")
    counter.call()
    counter.call()
    assert counter.calls == 2
"""
# the honest edit: a message on the assertion (circuitbreaker's was assert_called_once_with())
EDITED = PROPERTY.replace("assert not all_closed()", 'assert not all_closed(), "still closed"')
# the trick, measured apart too: the count is no longer checked
WEAKENED = EDITED.replace("assert counter.calls == 2", 'assert counter.name == "counter"')
APART = "fail(s) beside the base's module in one session and pass with each module in a session"


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (EDITED, ("merge_candidate", [])),
        (WEAKENED, ("entropy_silenced", ["weakened_property"])),
    ],
    ids=["honest", "weakened"],
)
def test_modules_that_share_a_registry_are_measured_apart_on_every_path(
    repo: Repo, head: str, expected: tuple[str, list[str]]
) -> None:
    repo.write("entropy.yaml", MANIFEST)
    repo.write("registry.py", REGISTRY)
    repo.write("tests/test_breakers.py", PROPERTY)
    repo.commit("base")
    repo.git("checkout", "-qb", "patch")
    repo.write("tests/test_breakers.py", head)
    repo.commit("the patch")
    judged = repo.every_path("main")
    for command, verdict in judged.items():
        kinds = sorted({f["kind"] for f in verdict["findings"] if f["introduced"]})
        assert (verdict["classification"], kinds) == expected, (command, verdict["reasons"])
        assert any(APART in reason for reason in verdict["reasons"]), verdict["reasons"]
        mutation = verdict["mutation"]
        assert mutation["base_killed"] > 0
        assert mutation["not_counted"] == 0
