"""host.json `variations` (hosts/varied.py): every dimension of host B, varied or not and why,
from the plan, what pinsseen.effects found and the test process's report (untrusted data)."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from entropy_action.core import variations
from entropy_action.hosts import isolate, pinsseen, varied
from entropy_action.manifest.pinfile import PinFields

HOSTNAME = "entropy-gate-b-abc123"
STARTED = time.time()


def plan(**changes: Any) -> isolate.HostB:
    base = isolate.HostB(
        tree=Path("/scratch/tree/repo"),
        files_copied=12,
        hostname=HOSTNAME,
        namespaces=isolate.Namespaces(unshare="/usr/bin/unshare", as_root=False, reason=None),
        clock=isolate.ClockPlan(plugin_shift=isolate.SHIFT_SECONDS, method="time-machine"),
        dropped=7,
        tz="Pacific/Chatham",
        umask=0o077,
        tmpdir="/scratch/tmp",
        lang="C",
        rng_seed=isolate.UNPINNED_RNG_SEED,
        hash_seed=isolate.UNPINNED_HASH_SEED,
        test_order_seed=isolate.derived_seed("test_order", isolate.UNPINNED_RNG_SEED),
        file_order_seed=isolate.derived_seed("file_order", isolate.UNPINNED_RNG_SEED),
        cpu_count=3,
    )
    return replace(base, **changes)


def report(hostb: isolate.HostB, **changes: Any) -> dict[str, Any]:
    """What the test process reports when every variation took (the new keys of issue 22
    included, as parts A and B write them)."""
    data: dict[str, Any] = {
        "time": STARTED + isolate.SHIFT_SECONDS,
        "interfaces": ["lo"],
        "fingerprint": {"hostname": HOSTNAME},
        "rng_seed": hostb.rng_seed,
        "hash_seed": str(hostb.hash_seed),
        "test_order": {
            "seed": hostb.test_order_seed,
            "collected": ["t.py::a", "t.py::b", "t.py::c"],
            "ran": ["t.py::c", "t.py::a", "t.py::b"],
        },
        "file_order": {
            "seed": hostb.file_order_seed,
            "patched": ["os.listdir", "os.scandir"],
            "error": None,
        },
        "cpu_count": {
            "seen": hostb.cpu_count,
            "real": 2,
            "patched": ["os.cpu_count"],
            "error": None,
        },
    }
    data.update(changes)
    return data


def listed(
    hostb: isolate.HostB,
    data: dict[str, Any] | None,
    pins: PinFields | None = None,
    revert: frozenset[str] = frozenset(),
    children: tuple[dict[str, Any], ...] = (),
) -> dict[str, variations.Variation]:
    isolation, notes = pinsseen.effects(hostb, data, STARTED)
    seen = varied.Seen(hostb, data, isolation, notes, pins or PinFields(), revert, children)
    found = varied.variations_of(seen)
    assert [v.dimension for v in found] == list(variations.NAMES)
    return {v.dimension: v for v in found}


def test_every_dimension_is_listed_in_the_tables_order_and_varied_when_it_took() -> None:
    hostb = plan()
    found = listed(hostb, report(hostb))
    assert [name for name, v in found.items() if not v.varied] == ["python"]
    assert found["python"].why_not == "no other interpreter was given for host B"
    assert found["tz"].how == "TZ=Pacific/Chatham"
    assert found["hash_seed"].how == "PYTHONHASHSEED=2767 (host A: 0)"
    assert found["test_order"].how == f"tests shuffled with seed {hostb.test_order_seed} (3 tests)"
    assert found["file_order"].how == (
        f"directory listings shuffled with seed {hostb.file_order_seed} (os.listdir, os.scandir)"
    )
    assert found["cpu_count"].how == "the tests see 3 CPUs (os.cpu_count; the machine has 2)"
    assert found["clock"].how.startswith("live wall clock shifted forward 1843 days")
    assert found["network"].how == "network: a fresh network namespace, loopback only"
    assert found["umask"].how == "umask 0077"
    assert all(v.why_not is None for v in found.values() if v.varied)


def test_the_new_report_keys_absent_read_as_not_varied_not_reported() -> None:
    hostb = plan()
    data = report(hostb)
    for key in ("hash_seed", "test_order", "file_order", "cpu_count"):
        del data[key]
    found = listed(hostb, data)
    for name in ("hash_seed", "test_order", "file_order", "cpu_count"):
        assert not found[name].varied, name
        assert found[name].why_not == varied.NOT_REPORTED, name


@pytest.mark.parametrize(
    ("key", "value", "why"),
    [
        ("hash_seed", "0", "the test process started with PYTHONHASHSEED=0, not 2767"),
        ("hash_seed", 2767, varied.NOT_REPORTED),
        ("test_order", {"seed": 1, "collected": [], "ran": []}, "reported seed 1"),
        ("test_order", {"seed": None, "collected": ["x"], "ran": ["x"]}, "reported seed None"),
        ("test_order", ["not", "a", "mapping"], varied.NOT_REPORTED),
        ("file_order", {"seed": "x", "patched": []}, "reported seed 'x'"),
        ("cpu_count", {"seen": 2, "real": 2, "patched": ["os.cpu_count"]}, "reported seen 2"),
        ("cpu_count", {"seen": 3, "patched": "os.cpu_count"}, "malformed"),
    ],
)
def test_a_report_that_lies_or_is_malformed_is_not_varied(key: str, value: Any, why: str) -> None:
    hostb = plan()
    found = listed(hostb, report(hostb, **{key: value}))
    assert not found[key].varied
    assert why in (found[key].why_not or "")


def test_an_order_the_shuffle_left_alone_or_a_single_test_is_not_varied() -> None:
    hostb = plan()
    same = {"seed": hostb.test_order_seed, "collected": ["a", "b"], "ran": ["a", "b"]}
    assert listed(hostb, report(hostb, test_order=same))["test_order"].why_not == (
        "the shuffle left the 2 tests in host A's order"
    )
    one = {"seed": hostb.test_order_seed, "collected": ["a"], "ran": ["a"]}
    assert "1 test(s) ran" in str(
        listed(hostb, report(hostb, test_order=one))["test_order"].why_not
    )


def test_a_patch_error_in_the_test_process_says_why() -> None:
    hostb = plan()
    broken: dict[str, Any] = {
        "seed": hostb.file_order_seed,
        "patched": [],
        "error": "os.scandir is read-only",
    }
    found = listed(hostb, report(hostb, file_order=broken))
    assert found["file_order"].why_not == "not shuffled: os.scandir is read-only"


def test_a_manifest_switch_a_pin_and_a_revert_each_say_why_not() -> None:
    off = {"cpu_count": "the pool is sized by the runner"}
    hostb = plan(cpu_count=None, tz=None, test_order_seed=None, off=off)
    pins = PinFields(tz="UTC", hash_seed=5)
    found = listed(hostb, report(hostb), pins=pins, revert=frozenset({"test_order"}))
    assert (
        found["cpu_count"].why_not == "turned off by the manifest: the pool is sized by the runner"
    )
    assert found["tz"].why_not == "pinned: pins.tz = UTC"
    assert found["hash_seed"].why_not == "pinned: pins.hash_seed = 5"
    assert found["test_order"].why_not == varied.REVERTED


def test_no_namespaces_and_no_report_say_so_for_network_hostname_and_clock() -> None:
    spaces = isolate.Namespaces(unshare=None, as_root=False, reason="unshare is not installed")
    clock = isolate.ClockPlan(note="live clock not shifted: libfaketime is not installed")
    found = listed(plan(namespaces=spaces, clock=clock), None)
    assert "unshare is not installed" in str(found["network"].why_not)
    assert found["hostname"].why_not == "the test process reported nothing"
    assert found["clock"].why_not == "live clock not shifted: libfaketime is not installed"
    assert not any(found[name].varied for name in ("network", "hostname", "clock", "rng_seed"))


def test_children_that_the_variation_reached_are_counted() -> None:
    hostb = plan()
    children = ({"file_order": "shuffled", "cpu_count": 3}, {"file_order": "no os", "cpu_count": 2})
    found = listed(hostb, report(hostb), children=children)
    assert found["file_order"].how.endswith("; in 1 of 2 child Python processes")
    assert found["cpu_count"].how.endswith("; in 1 of 2 child Python processes")


def test_long_report_text_is_cut() -> None:
    hostb = plan()
    broken: dict[str, Any] = {"seed": hostb.file_order_seed, "patched": [], "error": "x" * 5000}
    why = listed(hostb, report(hostb, file_order=broken))["file_order"].why_not
    assert why is not None
    assert len(why) == varied.MAX_TEXT
