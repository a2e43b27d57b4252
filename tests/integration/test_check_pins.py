"""check-pins: the base ref's manifest against the patch's, on real git repositories."""

from __future__ import annotations

import pytest

from entropy_action.cli.main import main
from entropy_action.manifest import baseline
from tests.support.helpers import SEED_MANIFEST, Repo

SEED = SEED_MANIFEST.read_text(encoding="utf-8")
SHA = "9c1f0a2b7d4e88a1c3b6d0e5f7a9b2c4d6e8f0a1b3c5d7e9f1a3b5c7d9e0f2"
ENV_SEED = SEED.replace(
    f"  cassette_sha256: {SHA}\n",
    f"  cassette_sha256: {SHA}\n  env:\n    API_URL: http://127.0.0.1:9\n",
)


def _patch(repo: Repo, old: str, new: str, *, base: str | None = None) -> str:
    """Commit `base` (default: the seed) and a head commit that replaces `old` by `new`."""
    text = base or SEED
    assert old in text
    repo.write("entropy.yaml", text)
    base_sha = repo.commit("base")
    repo.write("entropy.yaml", text.replace(old, new, 1))
    repo.commit("head")
    return base_sha


def _check(repo: Repo, base_sha: str) -> tuple[int, str]:
    result = repo.cli("check-pins", "--base-ref", base_sha)
    return result.code, result.out


# (id, base text or None for the seed, old, new, the exact report)
MUTATIONS = [
    (
        "tz-invalid",
        None,
        "tz: UTC",
        "tz: Nowhere",
        [
            "entropy.yaml:8: pins.tz: unknown time zone 'Nowhere' (use an IANA name such as UTC) "
            "(the patch broke the pin file)"
        ],
    ),
    (
        "reseeded",
        None,
        "rng_seed: 9173",
        "rng_seed: 42",
        ["entropy.yaml:7: pin rng_seed changed: 9173 → 42"],
    ),
    (
        "cassette-deleted",
        None,
        f"  cassette_sha256: {SHA}\n",
        "",
        [f'entropy.yaml:5: pin cassette_sha256 removed (was "{SHA}" at line 12 of the baseline)'],
    ),
    (
        "tz-changed",
        None,
        "tz: UTC",
        "tz: Europe/Berlin",
        ['entropy.yaml:8: pin tz changed: "UTC" → "Europe/Berlin"'],
    ),
    (
        "env-value-changed",
        ENV_SEED,
        "API_URL: http://127.0.0.1:9",
        "API_URL: https://prod",
        ['entropy.yaml:14: pin env.API_URL changed: "http://127.0.0.1:9" → "https://prod"'],
    ),
    (
        "env-key-renamed",
        ENV_SEED,
        "API_URL:",
        "API_URI:",
        [
            'entropy.yaml:13: pin env.API_URL removed (was "http://127.0.0.1:9" at line 14 of the '
            "baseline)",
            'entropy.yaml:14: pin env.API_URI added: "http://127.0.0.1:9"',
        ],
    ),
    (
        "marker-dropped",
        None,
        '"network", "flaky", ',
        '"network", ',
        ["entropy.yaml:14: constraint weakened: 'flaky' removed from forbid_skip_markers"],
    ),
    (
        "markers-emptied",
        None,
        '["network", "flaky", "skipif_tz"]',
        "[]",
        [
            "entropy.yaml:14: constraint weakened: 'network' removed from forbid_skip_markers",
            "entropy.yaml:14: constraint weakened: 'flaky' removed from forbid_skip_markers",
            "entropy.yaml:14: constraint weakened: 'skipif_tz' removed from forbid_skip_markers",
        ],
    ),
    (
        "protected-narrowed",
        SEED + '  protected_paths: [".github/workflows/", "CODEOWNERS"]\n',
        '[".github/workflows/", "CODEOWNERS"]',
        '[".github/workflows/"]',
        ["entropy.yaml:17: constraint weakened: 'CODEOWNERS' removed from protected_paths"],
    ),
    (
        "protected-defaults-emptied",
        None,
        "  require_host_b: true\n",
        "  require_host_b: true\n  protected_paths: []\n",
        [
            f"entropy.yaml:17: constraint weakened: {entry!r} removed from protected_paths"
            for entry in (
                ".github/workflows/",
                ".github/CODEOWNERS",
                "CODEOWNERS",
                "docs/CODEOWNERS",
            )
        ],
    ),
    (
        "dropped-pins-allowed",
        None,
        "forbid_dropped_pins: true",
        "forbid_dropped_pins: false",
        ["entropy.yaml:15: constraint weakened: forbid_dropped_pins turned from true to false"],
    ),
    (
        "host-b-not-required",
        None,
        "require_host_b: true",
        "require_host_b: false",
        ["entropy.yaml:16: constraint weakened: require_host_b turned from true to false"],
    ),
    (
        "constraints-deleted",
        SEED + "  strict_baseline: true\n",
        "  strict_baseline: true\n",
        "",
        ["entropy.yaml:13: constraint weakened: strict_baseline turned from true to false"],
    ),
    (
        "module-swapped",
        None,
        "test_invoice_total.py",
        "test_other.py",
        [
            'entropy.yaml:4: module changed: "tests/properties/test_invoice_total.py" → '
            '"tests/properties/test_other.py" (the gate would judge another property)'
        ],
    ),
    (
        "property-id-changed",
        None,
        "property_id: invoice_total_idempotent",
        "property_id: other",
        [
            'entropy.yaml:3: property_id changed: "invoice_total_idempotent" → "other" (the gate '
            "would judge another property)"
        ],
    ),
    (
        "pin-key-renamed",
        None,
        "rng_seed: 9173",
        "rng_sed: 9173",
        [
            "entropy.yaml:7: unknown key 'pins.rng_sed' (did you mean 'rng_seed'?) "
            "(the patch broke the pin file)",
            "entropy.yaml:5: pin rng_seed removed (was 9173 at line 7 of the baseline)",
        ],
    ),
    (
        "duplicate-key-overrides",
        None,
        "  tz: UTC\n",
        "  tz: UTC\n  rng_seed: 42\n",
        [
            "entropy.yaml:9: duplicate key 'pins.rng_seed' overrides line 7: 9173 → 42 (YAML keeps "
            "the last one) (the patch broke the pin file)",
            "entropy.yaml:9: pin rng_seed changed: 9173 → 42",
        ],
    ),
    (
        "run-args-changed",
        SEED + 'run:\n  pytest_args: ["-o", "addopts="]\n',
        '["-o", "addopts="]',
        '["-o", "addopts=", "-p", "no:cov"]',
        [
            'entropy.yaml:18: run.pytest_args changed: ["-o", "addopts="] → '
            '["-o", "addopts=", "-p", "no:cov"]'
        ],
    ),
    (
        "manifest-unreadable",
        None,
        "pins:\n",
        "pins: [\n",
        [
            "entropy.yaml:7: invalid YAML: expected ',' or ']', but got ':'"
            " (the patch broke the pin file)"
        ],
    ),
]


@pytest.mark.parametrize(
    ("base", "old", "new", "report"), [m[1:] for m in MUTATIONS], ids=[m[0] for m in MUTATIONS]
)
def test_a_pin_mutation_exits_1_listing_each_change(
    repo: Repo, base: str | None, old: str, new: str, report: list[str]
) -> None:
    repo.write("tests/properties/test_invoice_total.py", "def test_a():\n    assert 1\n")
    repo.write("tests/properties/test_other.py", "def test_b():\n    assert 1\n")
    base_sha = _patch(repo, old, new, base=base)
    code, out = _check(repo, base_sha)
    assert code == 1
    count = sum(" added: " not in line for line in report)
    assert out.splitlines() == [
        *report,
        f"pin mutation: {count} change(s) against {base_sha}:entropy.yaml reject the patch",
    ]


def test_an_added_pin_is_allowed_and_listed(seed_repo: Repo) -> None:
    base = seed_repo.git("rev-parse", "HEAD")
    seed_repo.write("entropy.yaml", ENV_SEED)
    result = seed_repo.cli("check-pins", "--base-ref", base)
    assert result.code == 0
    assert result.out == (
        'entropy.yaml:14: pin env.API_URL added: "http://127.0.0.1:9"\n'
        f"pins intact against {base}:entropy.yaml (1 added)\n"
    )


def test_a_tightened_constraint_is_allowed(seed_repo: Repo) -> None:
    seed_repo.write("entropy.yaml", SEED.replace('"skipif_tz"]', '"skipif_tz", "slow"]'))
    result = seed_repo.cli("check-pins", "--base-ref", "main")
    assert result.code == 0
    assert result.out == (
        "entropy.yaml:14: constraint tightened: 'slow' added to forbid_skip_markers\n"
        "pins intact against main:entropy.yaml (1 added)\n"
    )


def test_a_widened_protected_set_is_a_tightening(seed_repo: Repo) -> None:
    widened = '  protected_paths: [".github/workflows/", ".github/CODEOWNERS", "CODEOWNERS", '
    seed_repo.write("entropy.yaml", SEED + widened + '"docs/CODEOWNERS", "conftest.py"]\n')
    result = seed_repo.cli("check-pins", "--base-ref", "main")
    assert result.code == 0
    assert result.out == (
        "entropy.yaml:17: constraint tightened: 'conftest.py' added to protected_paths\n"
        "pins intact against main:entropy.yaml (1 added)\n"
    )


def test_the_work_tree_is_compared_not_only_commits(seed_repo: Repo) -> None:
    seed_repo.write("entropy.yaml", SEED.replace("rng_seed: 9173", "rng_seed: 1"))
    result = seed_repo.cli("check-pins", "--base-ref", "main")
    assert result.code == 1
    assert "entropy.yaml:7: pin rng_seed changed: 9173 → 1\n" in result.out


def test_unchanged_pins_exit_0(seed_repo: Repo) -> None:
    result = seed_repo.cli("check-pins", "--base-ref", "main")
    assert (result.code, result.out) == (0, "pins intact against main:entropy.yaml\n")


def test_a_baseline_file_in_the_patch_changes_nothing(seed_repo: Repo) -> None:
    """An agent that adds entropy.baseline.yaml with its own pins does not move the baseline."""
    reseeded = SEED.replace("rng_seed: 9173", "rng_seed: 42")
    seed_repo.write("entropy.yaml", reseeded)
    seed_repo.write("entropy.baseline.yaml", reseeded)
    seed_repo.commit("agent: rotate the seed and its baseline")
    result = seed_repo.cli("check-pins", "--base-ref", "HEAD~1")
    assert result.code == 1
    assert result.out == (
        "entropy.yaml:7: pin rng_seed changed: 9173 → 42\n"
        "pin mutation: 1 change(s) against HEAD~1:entropy.yaml reject the patch\n"
    )
    assert result.err == (
        "entropy.baseline.yaml: ignored; the baseline is read from the base ref, never from the "
        "patch's tree\n"
        "entropy.yaml:12: warning: pins.cassette_sha256 has 62 hex digits, a sha256 has 64; it "
        "is kept as an opaque pin and can match no cassette\n"
    )


def test_no_manifest_at_the_base_means_the_gate_is_being_introduced(repo: Repo) -> None:
    repo.write("README.md", "hello\n")
    base = repo.commit("before the gate")
    repo.write("entropy.yaml", SEED)
    repo.write("tests/properties/test_invoice_total.py", "def test_a():\n    assert 1\n")
    result = repo.cli("check-pins", "--base-ref", base)
    assert result.code == 0
    assert result.out == (
        f"no baseline manifest at {base}:entropy.yaml: nothing to compare (gate introduced)\n"
    )
    assert result.err.startswith(
        f"{base}:entropy.yaml: no manifest at the base ref; the gate is being introduced"
    )


def test_an_unknown_ref_names_the_shallow_clone_fix(seed_repo: Repo) -> None:
    result = seed_repo.cli("check-pins", "--base-ref", "origin/main")
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        "--base-ref 'origin/main': no such commit in this clone; in a shallow clone fetch the "
        "base first (actions/checkout: fetch-depth: 0, or git fetch origin BRANCH)\n"
    )


def test_a_ref_that_looks_like_an_option_is_refused(seed_repo: Repo) -> None:
    result = seed_repo.cli("check-pins", "--base-ref=--output=/tmp/x")
    assert (result.code, result.err) == (2, "--base-ref '--output=/tmp/x': not a git ref\n")


def test_an_invalid_base_manifest_is_named_with_its_ref(repo: Repo) -> None:
    repo.write("tests/properties/test_invoice_total.py", "def test_a():\n    assert 1\n")
    repo.write("entropy.yaml", SEED.replace("tz: UTC", "tz: Nowhere"))
    repo.commit("broken base")
    repo.write("entropy.yaml", SEED)
    result = repo.cli("check-pins", "--base-ref", "main")
    assert result.code == 2
    assert result.err == (
        "main:entropy.yaml:8: pins.tz: unknown time zone 'Nowhere' (use an IANA name such as UTC)\n"
    )


def test_a_baseline_file_works_without_git(tmp_path, capsys, monkeypatch) -> None:
    (tmp_path / "tests/properties").mkdir(parents=True)
    (tmp_path / "tests/properties/test_invoice_total.py").write_text("def test_a(): pass\n")
    (tmp_path / "entropy.yaml").write_text(SEED.replace("tz: UTC", "tz: Asia/Tokyo"))
    (tmp_path / "old.yaml").write_text(SEED)
    monkeypatch.chdir(tmp_path)
    code = main(["check-pins", "--baseline", "old.yaml"])
    out = capsys.readouterr().out
    assert code == 1
    assert out == (
        'entropy.yaml:8: pin tz changed: "UTC" → "Asia/Tokyo"\n'
        "pin mutation: 1 change(s) against old.yaml reject the patch\n"
    )


def test_base_ref_and_baseline_are_exclusive(seed_repo: Repo) -> None:
    result = seed_repo.cli("check-pins", "--base-ref", "main", "--baseline", "x.yaml")
    assert result.code == 2
    assert "not allowed with argument" in result.err


def test_dropped_pins_are_allowed_when_the_base_allows_them(repo: Repo) -> None:
    repo.write("tests/properties/test_invoice_total.py", "def test_a():\n    assert 1\n")
    base = _patch(
        repo,
        f"  cassette_sha256: {SHA}\n",
        "",
        base=SEED.replace("forbid_dropped_pins: true", "forbid_dropped_pins: false"),
    )
    code, out = _check(repo, base)
    assert code == 0
    assert out == (
        f'entropy.yaml:5: pin cassette_sha256 removed (was "{SHA}" at line 12 of the baseline) '
        "(allowed: forbid_dropped_pins is false at the base)\n"
        f"pins intact against {base}:entropy.yaml (1 added)\n"
    )


def test_the_diff_is_a_typed_value(seed_repo: Repo) -> None:
    seed_repo.write("entropy.yaml", SEED.replace("rng_seed: 9173", "rng_seed: 1"))
    check = baseline.check(seed_repo.path / "entropy.yaml", "main", None)
    assert check.diff.intact is False
    assert check.diff.summary() == {
        "missing": [],
        "changed": ["pins.rng_seed"],
        "added": [],
        "weakened": [],
        "invalid": [],
    }
    change = check.diff.changes[0]
    assert (change.old, change.new, change.line, change.rejects) == (9173, 1, 7, True)
