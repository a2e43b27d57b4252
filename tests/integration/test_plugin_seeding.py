"""Seeding inside the test process: random, numpy and hypothesis, per test, from rng_seed."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path
from typing import Any

import pytest

from entropy_action.testproc import plugin

pytest_plugins = ["pytester"]

TWO_RANDOM_TESTS = """
import random


def test_one(record_property):
    record_property("value", repr(random.random()))


def test_two(record_property):
    record_property("value", repr(random.random()))
"""


def properties(junit: Path) -> dict[str, dict[str, str]]:
    """testcase name -> its JUnit properties."""
    found = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        props = {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
        found[case.get("name", "")] = props
    return found


def run_seeded(pytester: pytest.Pytester, seed: int | None, *extra: str) -> dict[str, Any]:
    junit = pytester.path / "junit.xml"
    args = ["-p", "entropy_action.plugin", f"--junitxml={junit}", "-p", "no:cacheprovider"]
    args += ["-o", "junit_family=xunit1"]
    if seed is not None:
        args.append(f"--entropy-gate-seed={seed}")
    result = pytester.runpytest_subprocess(*args, *extra)
    return {"result": result, "props": properties(junit)}


def test_the_seed_is_pytest_randomlys_derivation() -> None:
    assert plugin.test_seed(0, "") == 0
    nodeid = "tests/t.py::test_a[<root>/x]"
    assert plugin.test_seed(9173, nodeid) == (9173 + zlib.crc32(nodeid.encode())) & 0xFFFFFFFF
    assert plugin.test_seed(0xFFFFFFFF, "x") == (zlib.crc32(b"x") - 1) & 0xFFFFFFFF


def test_random_differs_per_test_and_repeats_across_runs(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_rand=TWO_RANDOM_TESTS)
    first = run_seeded(pytester, 9173)
    first["result"].assert_outcomes(passed=2)
    second = run_seeded(pytester, 9173)["props"]
    props = first["props"]
    assert props == second
    assert props["test_one"]["value"] != props["test_two"]["value"]
    for name in ("test_one", "test_two"):
        expected = plugin.test_seed(9173, f"test_rand.py::{name}")
        assert props[name]["entropy_seed"] == str(expected)
        assert props[name]["entropy_rng_seed"] == "9173"
    other = run_seeded(pytester, 9174)["props"]
    assert other["test_one"]["value"] != props["test_one"]["value"]


def test_without_a_seed_nothing_is_seeded_or_recorded(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_rand=TWO_RANDOM_TESTS)
    runs = [run_seeded(pytester, None)["props"] for _ in range(2)]
    assert "entropy_seed" not in runs[0]["test_one"]
    assert runs[0]["test_one"]["value"] != runs[1]["test_one"]["value"]


def test_the_checkout_root_is_normalized_out_of_the_seeded_id(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_paths="""
        import os, random, pytest

        @pytest.mark.parametrize("where", [os.path.dirname(os.path.abspath(__file__))])
        def test_path(where, record_property):
            record_property("value", repr(random.random()))
        """
    )
    props = run_seeded(pytester, 5)["props"]
    (case,) = props.values()
    assert case["entropy_seed"] == str(plugin.test_seed(5, "test_paths.py::test_path[<root>]"))


def test_numpy_is_seeded_only_when_the_suite_imports_it(pytester: pytest.Pytester) -> None:
    pytest.importorskip("numpy")  # the test extra installs it; CI never skips this
    pytester.makepyfile(
        test_np="""
        import numpy as np

        def test_a(record_property):
            record_property("legacy", repr(np.random.random()))
            record_property("rng", repr(np.random.default_rng().random()))
            record_property("rng2", repr(np.random.default_rng().random()))

        def test_b(record_property):
            record_property("legacy", repr(np.random.random()))
            record_property("rng", repr(np.random.default_rng().random()))
        """
    )
    first, second = (run_seeded(pytester, 11)["props"] for _ in range(2))
    assert first == second
    assert first["test_a"]["legacy"] != first["test_b"]["legacy"]
    assert first["test_a"]["rng"] != first["test_b"]["rng"]
    assert first["test_a"]["rng"] != first["test_a"]["rng2"]


def test_a_suite_without_numpy_never_imports_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_light="""
        import sys

        def test_numpy_stays_out():
            assert "numpy" not in sys.modules
        """
    )
    run_seeded(pytester, 3)["result"].assert_outcomes(passed=1)


HYPOTHESIS_PROPERTY = """
import json
from hypothesis import given, strategies as st

@given(st.integers())
def test_small(x):
    with open("seen.jsonl", "a") as out:
        out.write(json.dumps(x) + "\\n")
    assert x < 1000
"""


def test_hypothesis_is_seeded_and_never_touches_the_checkouts_database(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("hypothesis")
    for name in ("CI", "GITHUB_ACTIONS"):  # hypothesis's "ci" profile keeps no database
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_hyp=HYPOTHESIS_PROPERTY)
    # Without the gate, hypothesis finds x >= 1000 and keeps it in .hypothesis/ in the checkout.
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(failed=1)
    database = pytester.path / ".hypothesis"
    before = sorted(str(p.relative_to(database)) for p in database.rglob("*"))
    assert any("examples" in name for name in before)
    seen = []
    for _ in range(2):
        (pytester.path / "seen.jsonl").unlink()
        run_seeded(pytester, 9173)["result"].assert_outcomes(failed=1)
        lines = (pytester.path / "seen.jsonl").read_text().splitlines()
        seen.append([json.loads(line) for line in lines])
    assert seen[0] == seen[1]  # the same examples in the same order: seeded
    assert seen[0][0] < 1000  # the saved failing example was not replayed first
    after = sorted(str(p.relative_to(database)) for p in database.rglob("*"))
    assert after == before


URANDOM_TEST = """
import os


def test_draw(record_property):
    record_property("bytes", os.urandom(8).hex())


def test_other(record_property):
    record_property("bytes", os.urandom(8).hex())
"""


def _urandom_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, flag: bool
) -> dict[str, dict[str, str]]:
    """A mutation run's shape: the base's module beside the head's under another name, its
    seeds taken from the head's ids (plugin.json `seed_ids`)."""
    pytester.makepyfile(test_head=URANDOM_TEST, test_head_entropy_base=URANDOM_TEST)
    config: dict[str, object] = {
        "host": "a",
        "rng_seed": 9173,
        "report": str(pytester.path / "r.json"),
    }
    config["seed_ids"] = {"test_head_entropy_base.py": "test_head.py"}
    if flag:
        config["urandom_from_seed"] = True
    path = pytester.path / "plugin.json"
    path.write_text(json.dumps(config))
    monkeypatch.setenv(plugin.CONFIG_ENV, str(path))
    junit = pytester.path / "junit.xml"
    args = ["-p", "entropy_action.plugin", f"--junitxml={junit}", "-p", "no:cacheprovider"]
    result = pytester.runpytest_subprocess(*args, "-o", "junit_family=xunit1")
    result.assert_outcomes(passed=4)
    found: dict[str, dict[str, str]] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        props = {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
        found[f"{case.get('classname')}.{case.get('name')}"] = props
    return found


def test_the_mutation_runs_draw_os_urandom_from_the_tests_seed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found on python-ulid: its ids come from os.urandom, so the base's and the head's
    versions of a test decoded other bytes and a mutant of the decoder was killed by one and
    not the other by chance — a false weakened_property."""
    seeded = _urandom_run(pytester, monkeypatch, flag=True)
    assert (
        seeded["test_head.test_draw"]["bytes"]
        == seeded["test_head_entropy_base.test_draw"]["bytes"]
    )
    assert seeded["test_head.test_draw"]["bytes"] != seeded["test_head.test_other"]["bytes"]
    again = _urandom_run(pytester, monkeypatch, flag=True)
    assert again == seeded


def test_host_runs_keep_the_real_os_urandom(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = _urandom_run(pytester, monkeypatch, flag=False)
    assert real["test_head.test_draw"]["bytes"] != real["test_head_entropy_base.test_draw"]["bytes"]


SEEDER = """
SEEDS = []


def reseed(seed):
    SEEDS.append(seed)
"""
SEEDED_TEST = """
import seedpkg


def test_reseeded(record_property):
    record_property("seeds", repr(seedpkg.SEEDS))
"""


@pytest.mark.parametrize("randomly", [True, False], ids=["with-pytest-randomly", "without"])
def test_pytest_randomlys_seeders_run_per_test_where_it_is_installed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, randomly: bool
) -> None:
    """mimesis registers a `pytest_randomly.random_seeder` entry point for its global seed; the
    gate runs with `-p no:randomly`, so its own per-test seeding calls each such seeder (with
    the test's seed) where pytest-randomly is installed, as pytest-randomly would — and none
    where it is not (the project's own runs call none). A dist-info on the path registers the
    entry point; a `pytest_randomly` package there stands for the installed plugin."""
    site = pytester.mkdir("site")
    (site / "seedpkg.py").write_text(SEEDER, encoding="utf-8")
    info = site / "seedpkg-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: seedpkg\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[pytest_randomly.random_seeder]\nseedpkg = seedpkg:reseed\n"
    )
    if randomly:
        (site / "pytest_randomly").mkdir()
        (site / "pytest_randomly" / "__init__.py").write_text("")
    monkeypatch.setenv("PYTHONPATH", str(site))
    pytester.makepyfile(test_seeded=SEEDED_TEST)
    ran = run_seeded(pytester, 9173)
    ran["result"].assert_outcomes(passed=1)
    seed = plugin.test_seed(9173, "test_seeded.py::test_reseeded")
    assert ran["props"]["test_reseeded"]["seeds"] == (repr([seed]) if randomly else "[]")
