"""The hash seed as a pin (pinsseen), the listing shuffle's guarantees, the plan's CPU count."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from entropy_action.hosts import isolate, pinsseen
from entropy_action.manifest.pinfile import Pins
from entropy_action.testproc import listing


def _pins(**fields: Any) -> Pins:
    return Pins.model_validate({"tz": "UTC", **fields})


def _hash_row(expected: list[tuple[str, str, str]]) -> tuple[str, str, str]:
    (row,) = [row for row in expected if row[0] == "hash_seed"]
    return row


def test_pythonhashseed_is_the_pin_else_the_hosts_own() -> None:
    assert _hash_row(pinsseen.pinned_environ(_pins(), None, None)) == (
        "hash_seed",
        "PYTHONHASHSEED",
        str(isolate.HOST_A_HASH_SEED),
    )
    assert _hash_row(pinsseen.pinned_environ(_pins(), None, None, 2767))[2] == "2767"
    assert _hash_row(pinsseen.pinned_environ(_pins(hash_seed=41), None, None, 2767))[2] == "41"


def _report(hash_seed: object, env_seed: str = "0") -> dict[str, Any]:
    return {"env": {"TZ": "UTC", "PYTHONHASHSEED": env_seed}, "hash_seed": hash_seed}


def test_an_unpinned_hash_seed_is_checked_but_not_listed_as_applied() -> None:
    pins = _pins()
    expected = pinsseen.pinned_environ(pins, None, None)
    applied, mismatch = pinsseen.verify_pins(pins, expected, _report("0"), None)
    assert applied == {"tz": "UTC"}
    assert mismatch == []


def test_a_pinned_hash_seed_is_listed_as_an_integer() -> None:
    pins = _pins(hash_seed=0)
    expected = pinsseen.pinned_environ(pins, None, None, 2767)
    applied, mismatch = pinsseen.verify_pins(pins, expected, _report("0"), None)
    assert applied == {"tz": "UTC", "hash_seed": 0}
    assert mismatch == []


def test_the_seed_the_process_started_with_counts_not_the_variable_later() -> None:
    pins = _pins(hash_seed=7)
    expected = pinsseen.pinned_environ(pins, None, None)
    _, mismatch = pinsseen.verify_pins(pins, expected, _report("0", env_seed="7"), None)
    assert mismatch == ["hash_seed: PYTHONHASHSEED pinned '7', the test process saw '0'"]


def test_a_report_without_the_hash_seed_fails_closed() -> None:
    for seen in (None, 0, ["0"]):  # absent, or not the string the plugin writes
        pins = _pins()
        expected = pinsseen.pinned_environ(pins, None, None, 2767)
        _, mismatch = pinsseen.verify_pins(pins, expected, _report(seen), None)
        assert mismatch == [
            "hash_seed: PYTHONHASHSEED set to '2767', the test process saw it unset"
        ]


def test_host_b_plans_another_hash_seed_unless_pinned_or_reverted() -> None:
    assert isolate.UNPINNED_HASH_SEED != isolate.HOST_A_HASH_SEED
    assert {"hash_seed", "file_order", "cpu_count"} <= set(isolate.REVERTIBLE)


def test_a_shuffled_listing_never_keeps_the_os_order() -> None:
    changed = 0
    for size in range(2, 40):
        for seed in range(25):
            items = [f"f{i}" for i in range(size)]
            out = listing.shuffled(items, seed, f"/d/{size}")
            assert sorted(out) == sorted(items)
            assert out != items
            changed += 1
    assert changed == 38 * 25
    assert listing.shuffled([], 1, "/d") == []
    assert listing.shuffled(["only"], 1, "/d") == ["only"]


def test_a_listing_depends_on_its_seed_and_path_only() -> None:
    items = [f"f{i}" for i in range(12)]
    first = listing.shuffled(items, 5, "/a")
    listing.shuffled(items, 5, "/b")  # another listing between changes nothing
    assert listing.shuffled(items, 5, "/a") == first
    assert listing.shuffled(items, 6, "/a") != first
    assert listing.shuffled(items, 5, "/c") != first


def test_two_identical_objects_still_count_as_moved() -> None:
    """DirEntry has no __eq__: the guarantee compares by identity."""
    items = [object(), object()]
    out = listing.shuffled(items, 3, "/x")
    assert out[0] is items[1]
    assert out[1] is items[0]


def test_the_cpu_count_host_b_shows_is_never_the_machines() -> None:
    for real in (None, 1, 2, 3, 4, 5, 64):
        shown = isolate.unpinned_cpu_count(real)
        assert shown != real
        assert shown in isolate.UNPINNED_CPU_COUNT


def _plan() -> isolate.HostB:
    spaces = isolate.Namespaces(unshare=None, as_root=False, reason="off")
    return isolate.HostB(
        tree=Path("/t"),
        files_copied=0,
        hostname="h",
        namespaces=spaces,
        clock=isolate.ClockPlan(),
        dropped=0,
        file_order_seed=11,
        cpu_count=3,
    )


def _machine(report: dict[str, Any]) -> tuple[list[str], list[str]]:
    isolation: list[str] = []
    notes: list[str] = []
    pinsseen._machine_effect(_plan(), report, isolation, notes)
    return isolation, notes


def test_what_the_plugin_reports_of_listings_and_cpus_becomes_isolation_lines() -> None:
    good = {
        "file_order": {"seed": 11, "patched": ["os.listdir", "os.scandir"], "error": None},
        "cpu_count": {"seen": 3, "real": 2, "patched": ["os.cpu_count"], "affinity_padded": 1},
    }
    isolation, notes = _machine(good)
    assert notes == []
    assert isolation[0].startswith("file_order: os.listdir, os.scandir list in an order")
    assert isolation[1].startswith(
        "cpu_count: Python sees 3 CPUs (os.sched_getaffinity lists 3, 1 of them past"
    )


def test_a_malformed_or_missing_report_section_is_a_note_never_a_crash() -> None:
    for report in (
        {},
        {"file_order": "shuffled", "cpu_count": 3},
        {"file_order": {"patched": "os.listdir"}, "cpu_count": {"seen": "3"}},
        {"file_order": {"patched": [1, None]}, "cpu_count": {"seen": 2, "error": "boom"}},
    ):
        isolation, notes = _machine(report)
        assert isolation == []
        assert [note.split(" ")[0] for note in notes][:2] == ["file_order", "cpu_count"]
