"""Seeds through real host runs: the same per test on both hosts and across runs when
rng_seed is pinned, and a different base seed on host B when it is not."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from entropy_action.core.hostinfo import HostInfo
from entropy_action.core.layout import JUNIT_XML
from entropy_action.evidence import hostreport
from entropy_action.hosts import isolate, launch
from entropy_action.render.summary import REPLAY
from entropy_action.testproc import plugin
from tests.integration.test_run_host_a import MODULE, make_repo, manifest_yaml, settings

RANDOM_PROPERTY = """\
import random


def test_one(record_property):
    record_property("value", repr(random.random()))


def test_two(record_property):
    record_property("value", repr(random.random()))
"""


def values(junit: Path) -> dict[str, dict[str, str]]:
    found = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        props = {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
        found[case.get("name", "")] = props
    return found


def _repo(tmp: Path, manifest: str) -> Path:
    return make_repo(tmp / "repo", {"entropy.yaml": manifest, MODULE: RANDOM_PROPERTY})


def _host(root: Path, out: Path, *, isolated: bool) -> tuple[dict[str, dict[str, str]], HostInfo]:
    info = launch.run_host(settings(root, out, dict(os.environ), isolate=isolated))
    return values(out / JUNIT_XML), info


def test_random_is_the_same_per_test_on_both_hosts_and_across_runs(tmp_path: Path) -> None:
    root = _repo(tmp_path, manifest_yaml(tmp_path / "entropy-tmp"))
    a1, info_a = _host(root, tmp_path / "a1", isolated=False)
    a2, _ = _host(root, tmp_path / "a2", isolated=False)
    b, info_b = _host(root, tmp_path / "b", isolated=True)
    shuffled = {props.pop(plugin.ORDER_SEED_PROPERTY) for props in b.values()}  # host B's order
    assert shuffled == {str(info_b.test_order_seed)}
    assert a1 == a2 == b
    assert a1["test_one"]["value"] != a1["test_two"]["value"]
    for name in ("test_one", "test_two"):
        seed = plugin.test_seed(9173, f"{MODULE}::{name}")
        assert (a1[name]["entropy_seed"], a1[name]["entropy_rng_seed"]) == (str(seed), "9173")
    assert info_a.rng_seed == info_b.rng_seed == 9173
    report = hostreport.read_host(tmp_path / "b")
    assert {(t.seed, t.rng_seed) for t in report.tests} == {
        (plugin.test_seed(9173, f"{MODULE}::{n}"), 9173) for n in ("test_one", "test_two")
    }


def test_without_rng_seed_host_b_seeds_from_another_value_and_says_so(tmp_path: Path) -> None:
    manifest = manifest_yaml(tmp_path / "entropy-tmp").replace("  rng_seed: 9173\n", "")
    root = _repo(tmp_path, manifest)
    a, info_a = _host(root, tmp_path / "a", isolated=False)
    b, info_b = _host(root, tmp_path / "b", isolated=True)
    assert info_a.rng_seed == isolate.HOST_A_RNG_SEED
    assert info_b.rng_seed == isolate.UNPINNED_RNG_SEED
    assert isolate.HOST_A_RNG_SEED != isolate.UNPINNED_RNG_SEED
    assert {v["entropy_rng_seed"] for v in a.values()} == {str(isolate.HOST_A_RNG_SEED)}
    assert {v["entropy_rng_seed"] for v in b.values()} == {str(isolate.UNPINNED_RNG_SEED)}
    assert a["test_one"]["value"] != b["test_one"]["value"]
    assert (
        f"rng_seed unpinned: random, numpy and hypothesis seeded from {isolate.UNPINNED_RNG_SEED} "
        f"(host A: {isolate.HOST_A_RNG_SEED})"
    ) in info_b.isolation


def test_an_unpinned_lang_differs_on_host_b(tmp_path: Path) -> None:
    assert isolate.unpinned_lang({"LANG": "C.UTF-8"}) == "C"
    assert isolate.unpinned_lang({}) == "C.UTF-8"  # unset: host A runs in C
    assert isolate.unpinned_lang({"LANG": "de_DE.UTF-8", "LC_ALL": "C.utf8"}) == "C"
    assert isolate.unpinned_lang({"LANG": "C"}) == "C.UTF-8"
    assert isolate.unpinned_lang({"LANG": "de_DE.UTF-8"}) == "C.UTF-8"


def test_the_summarys_replay_command_reproduces_a_host_runs_values(tmp_path: Path) -> None:
    root = _repo(tmp_path, manifest_yaml(tmp_path / "entropy-tmp"))
    seen, _ = _host(root, tmp_path / "a", isolated=False)
    junit = tmp_path / "replay.xml"
    command = [*shlex.split(REPLAY + "9173"), f"{MODULE}::test_two"]
    subprocess.run(
        [sys.executable, *command[1:], f"--junitxml={junit}", "-o", "junit_family=xunit1"],
        cwd=root, check=True, capture_output=True,
    )  # fmt: skip
    counts = {"entropy_assertions", "entropy_assertion_sites"}  # the gate's runs count too
    expected = {name: value for name, value in seen["test_two"].items() if name not in counts}
    assert values(junit)["test_two"] == expected
    assert counts <= set(seen["test_two"])


def test_a_run_counts_assertions_unless_told_not_to(tmp_path: Path) -> None:
    """The hosts' runs count; the strength check's and attribution's re-runs do not."""
    root = _repo(tmp_path, manifest_yaml(tmp_path / "entropy-tmp"))
    counted, _ = _host(root, tmp_path / "a", isolated=False)
    assert {props["entropy_assertions"] for props in counted.values()} != set()
    launch.run_host(settings(root, tmp_path / "quiet", dict(os.environ), count_assertions=False))
    quiet = values(tmp_path / "quiet" / JUNIT_XML)
    assert set(quiet) == set(counted)
    assert all("entropy_assertions" not in props for props in quiet.values())
    assert all("entropy_seed" in props for props in quiet.values())
