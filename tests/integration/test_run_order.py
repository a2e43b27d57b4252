"""Host B runs the property module's tests in another order (testproc.order), through real
host runs: seeded, repeatable, written to host.json and the JUnit properties, with each
test's own seed unchanged; host A keeps collection order; an exact order replays."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

from entropy_action.core.layout import JUNIT_XML
from entropy_action.hosts import isolate, launch
from entropy_action.testproc import order, plugin
from tests.integration.test_run_host_a import MODULE, make_repo, manifest_yaml, settings

NAMES = ["test_a", "test_b", "test_c", "test_d", "test_e"]
PROPERTY = (
    "import random\n\n\n"
    + "".join(
        f"def {name}(record_property):\n    record_property('value', repr(random.random()))\n\n\n"
        for name in NAMES
    )
    + (
        "class TestPair:\n    def test_x(self):\n        pass\n\n    def test_y(self):\n"
        "        pass\n"
    )
)
IDS = [f"{MODULE}::{name}" for name in NAMES] + [f"{MODULE}::TestPair::test_{n}" for n in "xy"]


def cases(junit: Path) -> list[tuple[str, dict[str, str]]]:
    """(test id, its properties) in the order the JUnit report lists them: the run order."""
    found = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        props = {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
        name = case.get("name", "")
        classname = case.get("classname", "")
        found.append(
            (
                f"{MODULE}::TestPair::{name}" if "TestPair" in classname else f"{MODULE}::{name}",
                props,
            )
        )
    return found


def _repo(tmp: Path) -> Path:
    return make_repo(tmp / "repo", {"entropy.yaml": manifest_yaml(tmp / "t"), MODULE: PROPERTY})


def test_host_b_shuffles_by_its_seed_and_each_test_keeps_its_own_seed(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    info_a = launch.run_host(settings(root, tmp_path / "a", dict(os.environ)))
    info_b = launch.run_host(settings(root, tmp_path / "b", dict(os.environ), isolate=True))
    a, b = cases(tmp_path / "a" / JUNIT_XML), cases(tmp_path / "b" / JUNIT_XML)
    assert [i for i, _ in a] == IDS  # host A: collection order
    seed = isolate.derived_seed("test_order", 9173)
    assert info_a.test_order_seed is None
    assert info_b.test_order_seed == seed
    assert [i for i, _ in b] == order.shuffled(IDS, seed) != IDS
    assert all("entropy_test_order_seed" not in props for _, props in a)
    assert {props["entropy_test_order_seed"] for _, props in b} == {str(seed)}
    # a test's randomness does not move with its position
    assert {i: p["value"] for i, p in a if "value" in p} == {
        i: p["value"] for i, p in b if "value" in p
    }
    for nodeid, props in b:
        assert props["entropy_seed"] == str(plugin.test_seed(9173, nodeid))


def test_reverting_test_order_runs_host_a_order(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    out = tmp_path / "b"
    options = {"isolate": True, "revert": frozenset({"test_order"})}
    info = launch.run_host(settings(root, out, dict(os.environ), **options))
    assert info.test_order_seed is None
    assert [i for i, _ in cases(out / JUNIT_XML)] == IDS


def test_an_exact_order_runs_those_tests_in_it_and_no_others(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    out = tmp_path / "b"
    wanted = (IDS[3], IDS[0], f"{MODULE}::test_absent")
    info = launch.run_host(settings(root, out, dict(os.environ), isolate=True, order=wanted))
    assert [i for i, _ in cases(out / JUNIT_XML)] == [IDS[3], IDS[0]]
    assert info.test_order_seed is None  # nothing was shuffled
    assert info.returncode == 0
