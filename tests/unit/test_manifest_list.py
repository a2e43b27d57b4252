"""entropy.yaml with `properties:`: each entry read as a one-property view of the file, every
error at the line of the entry it is in and naming it."""

from __future__ import annotations

import textwrap

import pytest

from entropy_action.core.errors import GateError
from entropy_action.manifest import groups, pinfile, safe_yaml

LIST = textwrap.dedent(
    """\
    version: 1
    pins:
      clock_unix: 1700000000
      tz: UTC
      env:
        SHARED: "1"
    constraints:
      mutation: "off"
    run:
      timeout_seconds: 120
    properties:
      - property_id: alpha
        module: tests/test_a.py
      - property_id: beta
        module: tests/test_b.py
      - property_id: gamma
        module: tests/test_c.py
        pins:
          tz: Europe/Paris
          rng_seed: 7
          env:
            OWN: "2"
        run:
          pytest_args: ["-q"]
    """
)


def _parse(text: str) -> pinfile.LoadedFile:
    return pinfile.parse_file(text.encode(), "entropy.yaml")


def _problems(text: str) -> list[str]:
    with pytest.raises(safe_yaml.LocatedError) as caught:
        _parse(text)
    return caught.value.message.splitlines()


def test_each_entry_is_a_view_with_the_shared_pins_under_its_own() -> None:
    loaded = _parse(LIST)
    assert loaded.many
    assert loaded.ids == ("alpha", "beta", "gamma")
    alpha, _, gamma = loaded.views
    assert alpha.manifest.module == "tests/test_a.py"
    assert alpha.manifest.pins.flat() == {
        "clock_unix": 1700000000,
        "tz": "UTC",
        "env.SHARED": "1",
    }
    assert gamma.manifest.pins.flat() == {
        "clock_unix": 1700000000,
        "rng_seed": 7,
        "tz": "Europe/Paris",
        "env.SHARED": "1",
        "env.OWN": "2",
    }
    # run options: the entry's keys over the shared ones; constraints are the file's
    assert gamma.manifest.run.pytest_args == ["-q"]
    assert gamma.manifest.run.timeout_seconds == 120
    assert alpha.manifest.run.pytest_args == []
    assert gamma.manifest.constraints.mutation == "off"
    assert (alpha.entry, gamma.entry) == (0, 2)


def test_a_views_lines_are_the_files_own_or_its_entrys() -> None:
    alpha, _, gamma = _parse(LIST).views
    assert alpha.line_of("pins", "tz") == 4  # the shared pin
    assert gamma.line_of("pins", "tz") == 19  # the entry's own
    assert gamma.line_of("module") == 17
    assert alpha.line_of("constraints", "mutation") == 8
    # a key neither sets: the entry's nearest ancestor, the shared `pins:` here
    assert alpha.line_of("pins", "umask") == 2
    assert gamma.line_of("run", "pytest_args") == 24


def test_each_property_has_its_own_sha256_and_the_seeds_form_keeps_the_files() -> None:
    loaded = _parse(LIST)
    digests = {view.sha256 for view in loaded.views}
    assert len(digests) == 3
    assert loaded.sha256 not in digests
    one = pinfile.parse_file(
        b"version: 1\nproperty_id: p\nmodule: t.py\npins: {rng_seed: 1}\n", "m"
    )
    assert not one.many
    assert one.views[0].sha256 == one.sha256
    assert one.views[0].entry is None


def test_select_names_the_properties_there_are() -> None:
    loaded = _parse(LIST)
    assert loaded.select("beta").manifest.module == "tests/test_b.py"
    with pytest.raises(GateError, match=r"lists 3 properties \(alpha, beta, gamma\); name one"):
        loaded.select(None)
    with pytest.raises(GateError, match=r"no property 'delta' \(it lists: alpha, beta, gamma\)"):
        loaded.select("delta")


def test_properties_sharing_pins_and_run_options_share_a_group() -> None:
    found = groups.groups(_parse(LIST).views)
    assert [(g.name, g.ids) for g in found] == [("alpha", ("alpha", "beta")), ("gamma", ("gamma",))]
    assert found[0].modules == ("tests/test_a.py", "tests/test_b.py")


def test_an_error_inside_an_entry_names_it_at_its_line() -> None:
    text = LIST.replace("      tz: Europe/Paris\n", "      tz: Mars/Olympus\n")
    assert _problems(text) == [
        "entropy.yaml:19: property 'gamma': properties[2].pins.tz: unknown time zone "
        "'Mars/Olympus' (use an IANA name such as UTC)"
    ]


def test_an_unknown_key_in_an_entry_is_suggested_against_the_entrys_model() -> None:
    text = LIST.replace("    module: tests/test_b.py\n", "    modul: tests/test_b.py\n")
    assert _problems(text) == [
        "entropy.yaml:14: property 'beta': missing required key 'properties[1].module'",
        "entropy.yaml:15: property 'beta': unknown key 'properties[1].modul' (did you mean "
        "'module'?)",
    ]


def test_an_unquoted_umask_in_an_entry_is_refused_at_its_line() -> None:
    text = LIST.replace("      rng_seed: 7\n", "      rng_seed: 7\n      umask: 0022\n")
    assert _problems(text) == [
        "entropy.yaml:21: property 'gamma': properties[2].pins.umask must be a quoted string "
        'such as "0022": '
        "YAML reads an unquoted 0022 as the integer 18 (here it read 18)"
    ]


def test_a_repeated_id_or_module_is_refused() -> None:
    text = LIST.replace("property_id: beta", "property_id: alpha")
    assert _problems(text) == [
        "entropy.yaml:11: properties: properties[1] repeats the property_id 'alpha' of "
        "properties[0]; each property has its own"
    ]
    text = LIST.replace("module: tests/test_b.py", "module: tests/test_a.py")
    assert _problems(text)[0].endswith(
        "repeats the module 'tests/test_a.py' of properties[0]; each property has its own"
    )


def test_an_entry_with_no_pins_at_all_is_refused() -> None:
    text = "version: 1\nproperties:\n  - property_id: a\n    module: t.py\n"
    assert _problems(text) == [
        "entropy.yaml:3: property 'a': properties[0].pins: no pins: pin at least one entropy "
        "source (see entropy-gate's docs/manifest.md)"
    ]


def test_a_named_cassette_needs_its_digest_in_the_effective_pins() -> None:
    text = (
        "version: 1\npins:\n  cassette: c.json\nproperties:\n"
        "  - property_id: a\n    module: t.py\n"
        "  - property_id: b\n    module: u.py\n    pins:\n"
        f"      cassette_sha256: {'a' * 64}\n"
    )
    assert _problems(text) == [
        # the shared pins name the cassette; the entry that adds no digest is refused there
        "entropy.yaml:2: property 'a': properties[0].pins: cassette is named, so "
        "cassette_sha256 must be its sha256 (64 hex digits)"
    ]


def test_the_two_forms_do_not_mix_and_an_empty_list_is_refused() -> None:
    mixed = LIST.replace("version: 1\n", "version: 1\nproperty_id: x\nmodule: t.py\n")
    assert _problems(mixed) == [
        "entropy.yaml:2: unknown key 'property_id' (a manifest that lists properties names "
        "each one's under properties:)",
        "entropy.yaml:3: unknown key 'module' (a manifest that lists properties names each "
        "one's under properties:)",
    ]
    empty = "version: 1\npins: {tz: UTC}\nproperties: []\n"
    assert _problems(empty) == [
        "entropy.yaml:3: properties: List should have at least 1 item after validation, not 0"
    ]


def test_the_one_property_reader_points_at_parse_file() -> None:
    with pytest.raises(GateError, match="lists its properties"):
        pinfile.parse(LIST.encode(), "entropy.yaml")


def test_lists_properties_reads_what_it_can() -> None:
    assert pinfile.lists_properties(LIST.encode())
    assert not pinfile.lists_properties(b"version: 1\nproperty_id: p\n")
    assert not pinfile.lists_properties(b"{ not yaml")
