"""constraints.host_b_off: the manifest's explicit switch for a variation the suite cannot run
under, its pin check (turning one off is a weakened constraint), its groups, and the judge's
check of host B's variation set (verdict.variation_check)."""

from __future__ import annotations

import hashlib
import json
import textwrap

import pytest

from entropy_action.core import variations
from entropy_action.core.variations import Variation
from entropy_action.manifest import groups, pindiff, pinfile, safe_yaml
from entropy_action.verdict import variation_check

ONE = textwrap.dedent(
    """\
    version: 1
    property_id: p
    module: tests/test_p.py
    pins:
      tz: UTC
    constraints:
      mutation: "off"
    {off}
    """
)
LIST = textwrap.dedent(
    """\
    version: 1
    pins:
      tz: UTC
    constraints:
      host_b_off:
        test_order: "the fixtures share one database"
    properties:
      - property_id: a
        module: tests/test_a.py
        host_b_off:
          cpu_count: "the pool is sized by the runner"
      - property_id: b
        module: tests/test_b.py
      - property_id: c
        module: tests/test_c.py
        host_b_off:
          test_order: "c's own reason"
    """
)


def off_text(**reasons: str) -> str:
    return "  host_b_off:\n" + "".join(f'    {k}: "{v}"\n' for k, v in reasons.items())


def loaded(**reasons: str) -> pinfile.LoadedManifest:
    text = ONE.format(off=off_text(**reasons) if reasons else "")
    return pinfile.parse(text.encode(), "entropy.yaml")


def problems(text: str) -> list[str]:
    with pytest.raises(safe_yaml.LocatedError) as caught:
        pinfile.parse_file(text.encode(), "entropy.yaml")
    return caught.value.message.splitlines()


def test_the_switch_is_read_with_its_reasons() -> None:
    manifest = loaded(test_order="shared db", cpu_count="pool").manifest
    assert manifest.constraints.host_b_off == {"test_order": "shared db", "cpu_count": "pool"}
    assert loaded().manifest.constraints.host_b_off == {}


@pytest.mark.parametrize(
    ("key", "reason", "line"),
    [
        ("tz", "x", "entropy.yaml:9: constraints.host_b_off.tz: 'tz' cannot be turned off; pin it "
         "instead: pins.tz (host B then uses host A's value)"),
        ("hash_seed", "x", "entropy.yaml:9: constraints.host_b_off.hash_seed: 'hash_seed' cannot "
         "be turned off; pin it instead: pins.hash_seed (host B then uses host A's value)"),
        ("network", "x", "entropy.yaml:9: constraints.host_b_off.network: 'network' is no "
         "dimension host B may leave out; one of: test_order, file_order, cpu_count"),
        ("test_order", " ", "entropy.yaml:9: constraints.host_b_off.test_order: give the reason "
         "the suite cannot run under it (a non-empty string)"),
        ("cpu_count", "y" * 501, "entropy.yaml:9: constraints.host_b_off.cpu_count: the reason "
         "is 501 characters; at most 500"),
    ],
)  # fmt: skip
def test_a_bad_switch_is_one_line_naming_its_line_and_field(
    key: str, reason: str, line: str
) -> None:
    assert problems(ONE.format(off=off_text(**{key: reason}))) == [line]


def test_a_reason_must_be_a_string() -> None:
    text = ONE.format(off="  host_b_off:\n    test_order: 3\n")
    assert problems(text) == [
        "entropy.yaml:9: constraints.host_b_off.test_order: Input should be a valid string "
        "(quote it: YAML read 3 as int)"
    ]


def test_a_property_switch_is_laid_over_the_shared_one() -> None:
    views = {view.property_id: view for view in pinfile.parse_file(LIST.encode(), "x").views}
    assert views["a"].manifest.constraints.host_b_off == {
        "test_order": "the fixtures share one database",
        "cpu_count": "the pool is sized by the runner",
    }
    assert views["b"].manifest.constraints.host_b_off == {
        "test_order": "the fixtures share one database"
    }
    assert views["c"].manifest.constraints.host_b_off == {"test_order": "c's own reason"}
    assert views["a"].line_of("constraints", "host_b_off", "cpu_count") == 11
    assert views["b"].line_of("constraints", "host_b_off", "test_order") == 6


def test_a_bad_property_switch_names_the_property() -> None:
    text = LIST.replace("cpu_count:", "umask:")
    assert problems(text) == [
        "entropy.yaml:11: property 'a': properties[0].host_b_off.umask: 'umask' cannot be "
        "turned off; pin it instead: pins.umask (host B then uses host A's value)"
    ]


def test_properties_whose_switches_differ_do_not_share_a_session() -> None:
    views = pinfile.parse_file(LIST.encode(), "x").views
    assert [group.ids for group in groups.groups(views)] == [("a",), ("b",), ("c",)]
    same = LIST.replace('cpu_count: "the pool is sized by the runner"', 'test_order: "x"')
    same = same.replace("c's own reason", "x")
    assert [g.ids for g in groups.groups(pinfile.parse_file(same.encode(), "x").views)] == [
        ("a", "c"),
        ("b",),
    ]


def test_without_a_switch_the_session_key_is_what_it_was() -> None:
    manifest = loaded().manifest
    shared = {
        "pins": manifest.pins.model_dump(mode="json", exclude_none=True),
        "run": manifest.run.model_dump(mode="json"),
    }
    old = hashlib.sha256(json.dumps(shared, sort_keys=True).encode()).hexdigest()
    assert groups.session_key(loaded()) == old
    assert groups.session_key(loaded(cpu_count="x")) != old


def changes(base: pinfile.LoadedManifest, head: pinfile.LoadedManifest) -> list[pindiff.PinChange]:
    return pindiff.diff(base, head, "entropy.yaml", "main:entropy.yaml").changes


def test_turning_a_variation_off_at_the_head_is_a_weakened_constraint() -> None:
    found = changes(loaded(), loaded(test_order="shared db"))
    assert [(c.kind, c.key, c.line, c.rejects) for c in found] == [
        ("weakened", "constraints.host_b_off.test_order", 9, True)
    ]
    assert found[0].message == (
        'constraint weakened: host B no longer varies test_order (host_b_off: "shared db")'
    )


def test_turning_one_back_on_tightens_and_a_new_reason_is_no_change() -> None:
    found = changes(loaded(test_order="a", cpu_count="b"), loaded(cpu_count="other words"))
    assert [(c.kind, c.key, c.rejects) for c in found] == [
        ("added", "constraints.host_b_off.test_order", False)
    ]
    assert found[0].message == (
        "constraint tightened: host B varies test_order again (removed from host_b_off)"
    )
    assert changes(loaded(file_order="a"), loaded(file_order="b")) == []


def full(**changed: Variation) -> list[Variation]:
    return [
        changed.get(name, Variation(dimension=name, varied=True, how="varied"))
        for name in variations.NAMES
    ]


def test_a_full_variation_set_is_trusted() -> None:
    assert variation_check.problems(full(), {}, current=True) == []


def test_a_shrunk_set_unknown_or_repeated_names_are_refused() -> None:
    shrunk = [v for v in full() if v.dimension not in ("cpu_count", "clock")]
    assert variation_check.problems(shrunk, {}, current=True) == [
        "host B: host.json lists no variation for clock, cpu_count: every dimension of host B "
        "must be listed, varied or not (a variation set that silently shrinks is refused)"
    ]
    extra = [*full(), Variation(dimension="aslr", varied=True, how="x"), full()[0]]
    assert variation_check.problems(extra, {}, current=True) == [
        "host B: host.json lists unknown or repeated variations: 'aslr', 'clock'"
    ]


def test_a_switch_the_head_does_not_set_is_refused_and_one_it_sets_is_held() -> None:
    off = Variation(
        dimension="test_order", varied=False, how="collection order",
        why_not=variations.OFF_PREFIX + "shared db",
    )  # fmt: skip
    listed = full(test_order=off)
    assert variation_check.problems(listed, {}, current=True) == [
        "host B: host.json says the manifest turned off test_order, the head manifest does not "
        "(constraints.host_b_off): host B did not vary what it had to"
    ]
    assert variation_check.problems(listed, {"test_order": "shared db"}, current=True) == []
    assert variation_check.held(listed) == [off]


def test_a_report_of_an_older_gate_is_judged_as_before() -> None:
    assert variation_check.problems([], {}, current=False) == []
