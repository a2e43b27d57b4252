"""The mutation step on a real tree: forked mutants of decorated functions, methods and nested
functions, a mutant that never ends, and the same results run after run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from entropy_action.manifest import pinfile
from entropy_action.strength.mutation import harness, measure, operators
from tests.support.helpers import Repo

PROD = """\
import functools


def deco(f):
    @functools.wraps(f)
    def wrapper(*args):
        return f(*args)

    return wrapper


@deco
def double(x):
    return x * 2


class Box:
    def size(self):
        return 3


def countdown(n):
    while n > 0:
        n -= 1
    return n


def make():
    def inner(x):
        return x + 2

    return inner
"""

PROPERTY = """\
from prod import Box, countdown, double, make


def test_double():
    assert double(2) == 4


def test_box():
    assert Box().size() == 3


def test_countdown():
    assert countdown(3) == 0


def test_inner():
    assert make()(1) == 3
"""

MANIFEST = """\
version: 1
property_id: prod
module: tests/test_prod.py
pins:
  rng_seed: 5
  tz: UTC
"""


@pytest.fixture
def tree(repo: Repo) -> tuple[Repo, pinfile.LoadedManifest]:
    repo.write("entropy.yaml", MANIFEST)
    repo.write("prod.py", PROD)
    repo.write("tests/test_prod.py", PROPERTY)
    repo.commit("base")
    loaded = pinfile.parse(MANIFEST.encode(), "entropy.yaml", repo.path)
    return repo, loaded


def run(repo: Repo, loaded: pinfile.LoadedManifest, tmp: Path, **budget: int) -> measure.Measured:
    module = PROPERTY.encode()
    inputs = measure.Inputs(
        root=repo.path,
        base_module=module,
        head_module=module,
        touched=frozenset(),
        seed=5,
        budget=measure.Budget("all", budget.get("max_mutants", 40), budget.get("seconds", 120)),
    )
    tmp.mkdir()

    def workspace(index: Path) -> harness.Workspace:
        return harness.workspace(repo.path, loaded, module, dict(os.environ), tmp / index)

    return measure.measure(inputs, workspace)


def test_every_kind_of_function_is_mutated_in_place_and_a_hanging_mutant_is_left_out(
    tree: tuple[Repo, pinfile.LoadedManifest], tmp_path: Path
) -> None:
    repo, loaded = tree
    measured = run(repo, loaded, tmp_path / "one")
    by = {r.mutant.describe(): r for r in measured.results}
    assert by["prod.py:14: x * 2 → x / 2"].head_killers == ("test_double",)
    assert by["prod.py:19: 3 → 4"].base_killers == ("test_box",)
    # a nested function: swapped in its outer function and in the wrapper made at import
    assert by["prod.py:30: x + 2 → x - 2"].head_killers == ("test_inner",)
    assert by["prod.py:7: f(*args) → None"].head_killers == ("test_double",)
    # `n -= 1` turned into `n += 1` or deleted never ends: stopped, not counted
    hanging = {d for d, r in by.items() if r.timed_out}
    assert hanging == {"prod.py:24: n -= 1 → n += 1", "prod.py:24: n -= 1 → pass"}
    assert "mutation: 2 mutant(s) stopped at their time budget, not counted" in measured.notes
    assert measure.killed_counts(measured.results)[0] == len(measured.results) - 2
    # the same code, modules and seed: the same mutants and the same kills
    again = run(repo, loaded, tmp_path / "two")
    assert [(r.mutant.describe(), r.base_killers, r.head_killers) for r in again.results] == [
        (r.mutant.describe(), r.base_killers, r.head_killers) for r in measured.results
    ]


def test_the_budget_limits_the_mutants(
    tree: tuple[Repo, pinfile.LoadedManifest], tmp_path: Path
) -> None:
    repo, loaded = tree
    measured = run(repo, loaded, tmp_path / "few", max_mutants=3)
    assert len(measured.results) == 3


def test_a_test_that_calls_too_often_stops_being_traced_and_may_reach_anything(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write("entropy.yaml", MANIFEST)
    repo.write("prod.py", PROD + "\n\ndef naturals(n):\n    yield from range(n)\n")
    busy = "from prod import double, naturals\n\n\ndef test_busy():\n"
    busy += "    assert sum(double(x) for x in naturals(30_000)) > 0\n\n\n"
    busy += "def test_quiet():\n    assert double(1) == 2\n"
    repo.write("tests/test_prod.py", busy)
    repo.commit("base")
    loaded = pinfile.parse(MANIFEST.encode(), "entropy.yaml", repo.path)
    space = harness.workspace(repo.path, loaded, busy.encode(), dict(os.environ), tmp_path / "w")
    outcome = space.run([space.head_module], 120, ["prod.py"])
    reached = outcome.reached
    assert measure.SATURATED in reached["tests/test_prod.py::test_busy"]
    # the decorator's wrapper (line 5) and double (first line 12, its decorator)
    assert reached["tests/test_prod.py::test_quiet"] == [("prod.py", 5), ("prod.py", 12)]


SEEDED = """\
import random
import zlib


def test_seeded():
    seed = (5 + zlib.crc32(b"tests/test_prod.py::test_seeded")) & 0xFFFFFFFF
    assert random.random() == random.Random(seed).random()


def test_fixture(entropy_rng):
    seed = (5 + zlib.crc32(b"tests/test_prod.py::test_fixture")) & 0xFFFFFFFF
    assert entropy_rng.random() == random.Random(seed).random()
"""


def test_both_modules_run_under_the_per_test_seeds_of_the_host_runs(
    repo: Repo, tmp_path: Path
) -> None:
    """The base's module sits under another name in the workspace; its tests still draw the
    seed of the id they have in the base run, as the head's draw host A's."""
    repo.write("entropy.yaml", MANIFEST)
    repo.write("prod.py", PROD)
    repo.write("tests/test_prod.py", SEEDED)
    repo.commit("base")
    loaded = pinfile.parse(MANIFEST.encode(), "entropy.yaml", repo.path)
    space = harness.workspace(repo.path, loaded, SEEDED.encode(), dict(os.environ), tmp_path / "w")
    assert space.base_module == "tests/test_prod_entropy_base.py"
    outcome = space.run([space.head_module, space.base_module], 120)
    assert outcome.outcomes == {
        "tests/test_prod.py::test_seeded": "passed",
        "tests/test_prod.py::test_fixture": "passed",
        "tests/test_prod_entropy_base.py::test_seeded": "passed",
        "tests/test_prod_entropy_base.py::test_fixture": "passed",
    }
    assert outcome.outside is None


OVERLOADED = """\
import typing


class Base:
    def size(self, n):
        return n


class Box(Base):
    @typing.overload
    def size(self, n: int) -> int: ...

    @typing.overload
    def size(self, n: str) -> str: ...

    def size(self, n):
        return super().size(n) * 2
"""


def test_an_overloaded_method_that_calls_super_is_swapped_in_the_fork(
    repo: Repo, tmp_path: Path
) -> None:
    """The stubs come first under the same name and have no `__class__` cell: the mutated
    implementation is the definition that starts on the mutant's first line."""
    prop = "from prod import Box\n\n\ndef test_size():\n    assert Box().size(2) == 4\n"
    repo.write("entropy.yaml", MANIFEST)
    repo.write("prod.py", OVERLOADED)
    repo.write("tests/test_prod.py", prop)
    repo.commit("base")
    loaded = pinfile.parse(MANIFEST.encode(), "entropy.yaml", repo.path)
    assert operators.functions(OVERLOADED)[-1] == (16, 16, 17, "Box.size")
    found = operators.mutants(
        {"prod.py": OVERLOADED}, [operators.Target("prod.py", 16, "Box.size")], 5, 40
    )
    swap = next(
        m for m in found if m.describe() == "prod.py:17: super().size(n) * 2 → super().size(n) / 2"
    )
    space = harness.workspace(repo.path, loaded, prop.encode(), dict(os.environ), tmp_path / "w")
    node = "tests/test_prod.py::test_size"
    spec = harness.Spec("0", "prod.py", "Box.size", swap.span[0], swap.source, [node], 30.0)
    assert space.run_mutants([spec], 60) == {"0": harness.Outcome({node: "failed"}, {})}
