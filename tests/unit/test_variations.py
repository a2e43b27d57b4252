"""core.variations is the one table of host B's dimensions: every side names only its names."""

from __future__ import annotations

from entropy_action.core import variations
from entropy_action.hosts import isolate
from entropy_action.manifest.pinfile import PinFields


def test_names_are_unique_and_every_pin_is_a_pin() -> None:
    assert len(variations.NAMES) == len(set(variations.NAMES))
    pins = set(PinFields.model_fields)
    for dimension in variations.DIMENSIONS:
        assert dimension.pin is None or dimension.pin in pins, dimension.name
        assert dimension.what, dimension.name
        assert dimension.advice, dimension.name


def test_a_pinned_dimension_is_not_switched_off_by_the_manifest() -> None:
    for dimension in variations.DIMENSIONS:
        assert not (dimension.pin and dimension.switchable), dimension.name


def test_what_host_b_reverts_is_in_the_table() -> None:
    assert set(isolate.REVERTIBLE) <= set(variations.REVERTIBLE)


def test_derived_seeds_differ_per_dimension_and_follow_rng_seed() -> None:
    order, files = (isolate.derived_seed(d, 7) for d in ("test_order", "file_order"))
    assert order != files
    assert isolate.derived_seed("test_order", 7) == order
    assert isolate.derived_seed("test_order", 8) != order


def test_host_b_cpu_count_is_never_the_machines() -> None:
    for real in (None, 1, 2, 3, 4, 5, 64):
        assert isolate.unpinned_cpu_count(real) != real
