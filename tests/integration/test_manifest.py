"""entropy.yaml: the seed's manifest validates; every rule has a negative case with its line."""

from __future__ import annotations

import json

import pytest

from entropy_action.cli.commands.schema import manifest_schema
from entropy_action.manifest import pinfile, run_options
from tests.support.helpers import SEED_MANIFEST, Repo

SEED = SEED_MANIFEST.read_text(encoding="utf-8")
SCHEMA_FILE = SEED_MANIFEST.parents[2] / "schema" / "entropy.schema.json"


def test_the_seed_manifest_validates_byte_for_byte(seed_repo: Repo) -> None:
    assert (seed_repo.path / "entropy.yaml").read_bytes() == SEED_MANIFEST.read_bytes()
    result = seed_repo.cli("validate")
    assert result.code == 0
    assert result.out == (
        "entropy.yaml: valid (7 pins: clock_unix, rng_seed, tz, lang, umask, temp_root, "
        "cassette_sha256)\n"
    )
    # The seed's example digest has 62 hex digits; it stays an opaque pin, with a warning.
    assert result.err == (
        "entropy.yaml:12: warning: pins.cassette_sha256 has 62 hex digits, a sha256 has 64; "
        "it is kept as an opaque pin and can match no cassette\n"
    )


def test_the_seed_manifest_parses_to_the_seed_values() -> None:
    loaded = pinfile.parse(SEED_MANIFEST.read_bytes(), "entropy.yaml")
    m = loaded.manifest
    assert m.pins.flat() == {
        "clock_unix": 1768003200,
        "rng_seed": 9173,
        "tz": "UTC",
        "lang": "C.UTF-8",
        "umask": "0022",
        "temp_root": "/tmp/entropy-invoice",
        "cassette_sha256": "9c1f0a2b7d4e88a1c3b6d0e5f7a9b2c4d6e8f0a1b3c5d7e9f1a3b5c7d9e0f2",
    }
    assert m.constraints.forbid_skip_markers == ["network", "flaky", "skipif_tz"]
    assert m.constraints.forbid_dropped_pins is True
    assert m.constraints.require_host_b is True
    assert m.constraints.strict_baseline is False
    assert m.run.pytest_args == []
    assert loaded.line_of("pins", "rng_seed") == 7


def test_constraints_default_to_the_seeds_values() -> None:
    text = "version: 1\nproperty_id: p\nmodule: t.py\npins:\n  rng_seed: 1\n"
    constraints = pinfile.parse(text.encode(), "entropy.yaml").manifest.constraints
    assert constraints.forbid_skip_markers == ["network", "flaky", "skipif_tz"]
    assert (constraints.forbid_dropped_pins, constraints.require_host_b) == (True, True)


def _replace(old: str, new: str) -> str:
    assert old in SEED, old
    return SEED.replace(old, new, 1)


SHA = "9c1f0a2b7d4e88a1c3b6d0e5f7a9b2c4d6e8f0a1b3c5d7e9f1a3b5c7d9e0f2"

# (id, manifest text, the exact one-line error)
NEGATIVE = [
    (
        "version-2",
        _replace("version: 1", "version: 2"),
        "entropy.yaml:2: version: unsupported manifest version 2; this gate reads 1",
    ),
    (
        "version-missing",
        _replace("version: 1\n", ""),
        "entropy.yaml:1: missing required key 'version'",
    ),
    (
        "property-id-missing",
        _replace("property_id: invoice_total_idempotent\n", ""),
        "entropy.yaml:1: missing required key 'property_id'",
    ),
    (
        "property-id-bad",
        _replace("invoice_total_idempotent", "'two words'"),
        "entropy.yaml:3: property_id: 'two words' is not an identifier (letters, digits, _ . -)",
    ),
    (
        "module-missing-file",
        _replace("test_invoice_total.py", "test_gone.py"),
        "entropy.yaml:4: module 'tests/properties/test_gone.py' does not exist in the repository",
    ),
    (
        "module-absolute",
        _replace("module: tests/properties/test_invoice_total.py", "module: /etc/test_x.py"),
        "entropy.yaml:4: module: module must be a path relative to the repository root, "
        "got '/etc/test_x.py'",
    ),
    (
        "module-escapes",
        _replace("module: tests/", "module: ../"),
        "entropy.yaml:4: module: module must stay inside the repository, "
        "got '../properties/test_invoice_total.py'",
    ),
    (
        "module-not-python",
        _replace("test_invoice_total.py", "test_invoice_total.txt"),
        "entropy.yaml:4: module: module must be a Python test file (.py), "
        "got 'tests/properties/test_invoice_total.txt'",
    ),
    (
        "clock-negative",
        _replace("clock_unix: 1768003200", "clock_unix: -1"),
        "entropy.yaml:6: pins.clock_unix: Input should be greater than or equal to 0",
    ),
    (
        "clock-string",
        _replace("clock_unix: 1768003200", 'clock_unix: "1768003200"'),
        "entropy.yaml:6: pins.clock_unix: Input should be a valid integer",
    ),
    (
        "clock-date",
        _replace("clock_unix: 1768003200", "clock_unix: 2026-01-10"),
        "entropy.yaml:6: pins.clock_unix: Input should be a valid integer",
    ),
    (
        "clock-empty",
        _replace("clock_unix: 1768003200", "clock_unix:"),
        "entropy.yaml:5: pins: pin 'clock_unix' has no value; remove the key to leave it unpinned",
    ),
    (
        "seed-float",
        _replace("rng_seed: 9173", "rng_seed: 91.73"),
        "entropy.yaml:7: pins.rng_seed: Input should be a valid integer",
    ),
    (
        "seed-bool",
        _replace("rng_seed: 9173", "rng_seed: true"),
        "entropy.yaml:7: pins.rng_seed: Input should be a valid integer",
    ),
    (
        "tz-unknown",
        _replace("tz: UTC", "tz: Mars/Olympus_Mons"),
        "entropy.yaml:8: pins.tz: unknown time zone 'Mars/Olympus_Mons' "
        "(use an IANA name such as UTC)",
    ),
    (
        "tz-path",
        _replace("tz: UTC", "tz: ../../etc/passwd"),
        "entropy.yaml:8: pins.tz: unknown time zone '../../etc/passwd' "
        "(use an IANA name such as UTC)",
    ),
    (
        "lang-bad",
        _replace("lang: C.UTF-8", "lang: english please"),
        "entropy.yaml:9: pins.lang: 'english please' is not a locale name such as C.UTF-8 "
        "or en_US.UTF-8",
    ),
    (
        "umask-unquoted",
        _replace('umask: "0022"', "umask: 0022"),
        'entropy.yaml:10: pins.umask must be a quoted string such as "0022": YAML reads an '
        "unquoted 0022 as the integer 18 (here it read 18)",
    ),
    (
        "umask-not-octal",
        _replace('umask: "0022"', 'umask: "0098"'),
        "entropy.yaml:10: pins.umask: String should match pattern '^[0-7]{3,4}$'",
    ),
    (
        "temp-root-relative",
        _replace("temp_root: /tmp/entropy-invoice", "temp_root: tmp/x"),
        "entropy.yaml:11: pins.temp_root: temp_root must be an absolute path, got 'tmp/x'",
    ),
    (
        "temp-root-slash",
        _replace("temp_root: /tmp/entropy-invoice", "temp_root: /"),
        "entropy.yaml:11: pins.temp_root: temp_root must be a dedicated directory, got '/'",
    ),
    (
        "sha-not-hex",
        _replace(SHA, "not-a-digest"),
        "entropy.yaml:12: pins.cassette_sha256: String should match pattern '^[0-9a-fA-F]+$'",
    ),
    (
        "cassette-short-digest",
        _replace("  cassette_sha256:", "  cassette: c.json\n  cassette_sha256:"),
        "entropy.yaml:5: pins: cassette is named, so cassette_sha256 must be its sha256 "
        "(64 hex digits)",
    ),
    (
        "cassette-escapes",
        _replace("  cassette_sha256:", "  cassette: ../c.json\n  cassette_sha256:"),
        "entropy.yaml:12: pins.cassette: cassette must stay inside the repository, got '../c.json'",
    ),
    (
        "env-reserved",
        _replace("  cassette_sha256:", "  env:\n    TZ: UTC\n  cassette_sha256:"),
        "entropy.yaml:12: pins.env: 'TZ' is set by the gate from the named pins; "
        "it cannot be an env pin",
    ),
    (
        "env-bad-name",
        _replace("  cassette_sha256:", "  env:\n    1BAD: x\n  cassette_sha256:"),
        "entropy.yaml:12: pins.env: '1BAD' is not a valid environment variable name",
    ),
    (
        "env-unquoted-number",
        _replace("  cassette_sha256:", "  env:\n    DEBUG: 1\n  cassette_sha256:"),
        "entropy.yaml:13: pins.env.DEBUG: Input should be a valid string (quote it: YAML read 1 "
        "as int)",
    ),
    (
        "no-pins",
        "version: 1\nproperty_id: p\nmodule: tests/properties/test_invoice_total.py\npins: {}\n",
        "entropy.yaml:4: pins: no pins: pin at least one entropy source "
        "(see entropy-gate's docs/manifest.md)",
    ),
    (
        "pins-not-mapping",
        "version: 1\nproperty_id: p\nmodule: tests/properties/test_invoice_total.py\n"
        "pins: [1, 2]\n",
        "entropy.yaml:4: pins: must be a mapping, got list",
    ),
    ("unknown-top-key", SEED + "owner: me\n", "entropy.yaml:17: unknown key 'owner'"),
    (
        "typo-in-pin",
        _replace("rng_seed: 9173", "rng_sed: 9173"),
        "entropy.yaml:7: unknown key 'pins.rng_sed' (did you mean 'rng_seed'?)",
    ),
    (
        "typo-in-constraint",
        _replace("require_host_b", "require_hostb"),
        "entropy.yaml:16: unknown key 'constraints.require_hostb' (did you mean 'require_host_b'?)",
    ),
    (
        "markers-not-list",
        _replace('["network", "flaky", "skipif_tz"]', "flaky"),
        "entropy.yaml:14: constraints.forbid_skip_markers: Input should be a valid list",
    ),
    (
        "marker-bad-name",
        _replace('"skipif_tz"', '"skip if tz"'),
        "entropy.yaml:14: constraints.forbid_skip_markers: 'skip if tz' is not a marker name",
    ),
    (
        "protected-absolute",
        _replace(
            "require_host_b: true", 'require_host_b: true\n  protected_paths: ["/etc/passwd"]'
        ),
        "entropy.yaml:17: constraints.protected_paths: protected_paths entry "
        + repr("/etc/passwd")
        + " must be relative to the repository root (no leading '/')",
    ),
    (
        "protected-escapes",
        _replace(
            "require_host_b: true", 'require_host_b: true\n  protected_paths: ["tests/../../x"]'
        ),
        "entropy.yaml:17: constraints.protected_paths: protected_paths entry "
        + repr("tests/../../x")
        + " must stay inside the repository (no '..')",
    ),
    (
        "protected-backslash",
        _replace(
            "require_host_b: true",
            'require_host_b: true\n  protected_paths: [".github\\\\workflows\\\\"]',
        ),
        "entropy.yaml:17: constraints.protected_paths: protected_paths entry "
        + repr(".github\\workflows\\")
        + " must use '/' as the separator, not a backslash",
    ),
    (
        "protected-empty",
        _replace("require_host_b: true", 'require_host_b: true\n  protected_paths: [""]'),
        "entropy.yaml:17: constraints.protected_paths: protected_paths entry "
        + repr("")
        + " must not be empty",
    ),
    (
        "protected-double-slash",
        _replace(
            "require_host_b: true",
            'require_host_b: true\n  protected_paths: [".github//CODEOWNERS"]',
        ),
        "entropy.yaml:17: constraints.protected_paths: protected_paths entry "
        + repr(".github//CODEOWNERS")
        + " must be a plain path (no empty or '.' components)",
    ),
    (
        "constraint-not-bool",
        _replace("forbid_dropped_pins: true", 'forbid_dropped_pins: "yes"'),
        "entropy.yaml:15: constraints.forbid_dropped_pins: Input should be a valid boolean",
    ),
    (
        "run-selects",
        SEED + 'run:\n  pytest_args: ["-k", "fast"]\n',
        "entropy.yaml:18: run.pytest_args: '-k' selects, stops or reroutes tests; "
        "the gate runs the whole module",
    ),
    (
        "run-disables-plugin",
        SEED + 'run:\n  pytest_args: ["-p", "no:randomly"]\n',
        "entropy.yaml:18: run.pytest_args: '-p no:randomly' disables a plugin that can change "
        "which tests run",
    ),
    (
        "run-test-id",
        SEED + 'run:\n  pytest_args: ["tests/x.py::test_a"]\n',
        "entropy.yaml:18: run.pytest_args: 'tests/x.py::test_a' is a test path or id; the gate "
        "runs the manifest's module only",
    ),
    (
        "duplicate-key",
        SEED.replace("  tz: UTC\n", "  tz: UTC\n  rng_seed: 42\n"),
        "entropy.yaml:9: duplicate key 'pins.rng_seed' overrides line 7: 9173 → 42 "
        "(YAML keeps the last one)",
    ),
    (
        "anchor",
        _replace("rng_seed: 9173", "rng_seed: &seed 9173"),
        "entropy.yaml:7: anchors (&seed) are not allowed; write the value out",
    ),
    (
        "alias",
        _replace("rng_seed: 9173", "rng_seed: *seed"),
        "entropy.yaml:7: aliases (*seed) are not allowed; write the value out",
    ),
    (
        "merge-key",
        _replace("  clock_unix: 1768003200", "  <<: {clock_unix: 1}"),
        "entropy.yaml:6: merge keys (<<) are not allowed",
    ),
    (
        "python-tag",
        _replace("rng_seed: 9173", "rng_seed: !!python/object:os.system 1"),
        "entropy.yaml:7: the tag 'tag:yaml.org,2002:python/object:os.system' is not allowed",
    ),
    (
        "non-string-key",
        _replace("rng_seed: 9173", "7: 9173"),
        "entropy.yaml:7: keys must be plain strings, got '7'",
    ),
    (
        "two-documents",
        SEED + "---\nversion: 1\n",
        "entropy.yaml:1: the file holds 2 documents; expected one",
    ),
    ("empty-file", "", "entropy.yaml:1: the file is empty"),
    (
        "not-a-mapping",
        "- version: 1\n",
        "entropy.yaml:1: the manifest must be a mapping of keys (version, pins, ...)",
    ),
    (
        "bad-yaml",
        _replace("tz: UTC", "tz: [UTC"),
        "entropy.yaml:9: invalid YAML: expected ',' or ']', but got ':'",
    ),
]


@pytest.mark.parametrize(
    ("text", "message"), [c[1:] for c in NEGATIVE], ids=[c[0] for c in NEGATIVE]
)
def test_invalid_manifest_gives_one_line_and_exit_2(
    seed_repo: Repo, text: str, message: str
) -> None:
    seed_repo.write("entropy.yaml", text)
    result = seed_repo.cli("validate")
    assert (result.code, result.out) == (2, "")
    assert result.err == message + "\n"


def test_several_problems_are_reported_one_line_each(seed_repo: Repo) -> None:
    text = _replace("rng_seed: 9173", "rng_sed: 9173").replace("tz: UTC", "tz: Nowhere")
    seed_repo.write("entropy.yaml", text)
    result = seed_repo.cli("validate")
    assert result.code == 2
    assert result.err.splitlines() == [
        "entropy.yaml:7: unknown key 'pins.rng_sed' (did you mean 'rng_seed'?)",
        "entropy.yaml:8: pins.tz: unknown time zone 'Nowhere' (use an IANA name such as UTC)",
    ]


def test_a_file_over_one_mebibyte_is_refused(seed_repo: Repo) -> None:
    seed_repo.write("entropy.yaml", SEED + "#" * (1024 * 1024) + "\n")
    result = seed_repo.cli("validate")
    assert result.code == 2
    size = len(SEED.encode()) + 1024 * 1024 + 1
    assert result.err == f"entropy.yaml:1: file is {size} bytes; the limit is 1048576 (1 MiB)\n"


def test_bytes_that_are_not_utf8_are_refused(seed_repo: Repo) -> None:
    (seed_repo.path / "entropy.yaml").write_bytes(SEED.encode() + b"\xff\n")
    result = seed_repo.cli("validate")
    offset = len(SEED.encode())
    assert (result.code, result.err) == (2, f"entropy.yaml:1: not valid UTF-8 (byte {offset})\n")


def test_an_alias_bomb_is_refused_before_expansion(seed_repo: Repo) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(20)
    )
    seed_repo.write("entropy.yaml", bomb)
    result = seed_repo.cli("validate")
    assert (result.code, result.err) == (
        2,
        "entropy.yaml:1: anchors (&a) are not allowed; write the value out\n",
    )


def test_a_missing_manifest_is_named(repo: Repo) -> None:
    result = repo.cli("validate", "--manifest", "nope.yaml")
    assert (result.code, result.err) == (
        2,
        "nope.yaml: no such file (write an entropy.yaml: entropy-gate init drafts one)\n",
    )


def test_a_cassette_with_its_digest_validates(seed_repo: Repo) -> None:
    seed_repo.write("tests/cassettes/rates.json", "{}\n")
    text = _replace(
        f"  cassette_sha256: {SHA}",
        "  cassette: tests/cassettes/rates.json\n  cassette_sha256: " + "ab" * 32,
    )
    seed_repo.write("entropy.yaml", text)
    result = seed_repo.cli("validate")
    assert (result.code, result.err) == (0, "")


def test_run_options_that_only_report_are_allowed() -> None:
    args = ["-o", "addopts=", "-p", "no:cov", "-pno:cacheprovider", "-ra", "--tb=short", "-q"]
    assert run_options.refused_pytest_arg(args) is None
    # short flags clustered, and a cluster ending in an option that takes the next argument
    assert run_options.refused_pytest_arg(["-vv", "-sq", "-rfE", "-vW", "error"]) is None


@pytest.mark.parametrize(
    "args",
    [
        ["-kfast"],
        ["--deselect=t.py::a"],
        ["-m", "not slow"],
        ["--ignore", "x"],
        ["-x"],
        ["-vx"],  # a stop hidden in a cluster of flags
        ["-qvkfast"],
        ["-vvm", "slow"],
        ["--lf"],
        ["-p", "no:warnings"],
        ["--junitxml=other.xml"],
        ["tests/other.py"],
    ],
)
def test_run_options_that_select_or_stop_tests_are_refused(args: list[str]) -> None:
    assert run_options.refused_pytest_arg(args) is not None


def test_the_committed_schema_is_the_models() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == manifest_schema()


def test_the_schema_command_prints_it(repo: Repo) -> None:
    result = repo.cli("schema")
    assert result.code == 0
    schema = json.loads(result.out)
    assert schema["title"] == "entropy.yaml"
    assert schema["$defs"]["Manifest"]["required"] == ["version", "property_id", "module", "pins"]
    assert schema["$defs"]["ManifestList"]["required"] == ["version", "properties"]
    assert len(schema["oneOf"]) == 2
    assert schema["$defs"]["Pins"]["properties"]["umask"]["type"] == "string"
