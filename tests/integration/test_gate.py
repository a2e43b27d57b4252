"""`entropy-gate gate` end to end: real repos, real pytest on host A and an isolated host B."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from entropy_action.cli.main import main
from entropy_action.gate import demo
from tests.support.helpers import Repo

PATCHES = {patch.name: patch for patch in demo.patches()}
EXIT = {"merge_candidate": 0, "invalid": 2}


def _gate(repo: Repo, base: str, *extra: str) -> tuple[int, dict[str, Any], str]:
    out = repo.path.parent / "verdict.json"
    result = repo.cli("gate", "--base-ref", base, "--json", str(out), *extra)
    return result.code, json.loads(out.read_text(encoding="utf-8")), result.out


# One row per exit code and JSON shape of the command (a pass, a rejected run, a pin check).
# Every row's classification through the same pipeline is the demo's test below, and every
# row through this command is the act parity test's local side (tests/e2e): running all
# eight here a third time cost a contributor's loop 27 s and checked nothing new.
COMMAND_ROWS = ("honest-fix", "off-by-one", "reseed")


@pytest.mark.parametrize("name", COMMAND_ROWS)
def test_rows_of_the_table_through_the_gate_command(
    tmp_path: Path, repo: Repo, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    patch = PATCHES[name]
    base = demo.build_base(
        repo.path, clock_unix=int(time.time()) // 86400 * 86400, temp_root=tmp_path / "pins-tmp"
    )
    demo.apply_patch(repo.path, patch)
    for key, value in patch.environ.items():  # what the developer's shell exports
        monkeypatch.setenv(key, value)
    code, verdict, out = _gate(repo, base)
    assert verdict["classification"] == patch.expected
    assert code == EXIT.get(patch.expected, 1)
    assert verdict["merge"] is (patch.expected == "merge_candidate")
    assert out.startswith(f"entropy-gate verdict: {patch.expected} ")


def test_without_namespaces_host_b_still_differs_and_says_how(
    tmp_path: Path, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A laptop without root: no namespaces, the network blocked in-process, and a note."""
    base = demo.build_base(
        repo.path, clock_unix=int(time.time()) // 86400 * 86400, temp_root=tmp_path / "pins-tmp"
    )
    demo.apply_patch(repo.path, PATCHES["live-clock"])
    monkeypatch.setenv("ENTROPY_GATE_NO_NAMESPACES", "1")
    result = repo.cli("gate", "--base-ref", base)
    assert result.code == 1
    assert result.out.startswith("entropy-gate verdict: env_coupled ")
    assert (
        "host B: no network/UTS namespace (namespaces turned off by the caller): non-loopback "
        "sockets are refused in-process"
    ) in result.err


def test_the_demo_prints_every_row_matching(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["demo"])
    out = capsys.readouterr().out
    assert code == 0
    assert out == (
        "entropy-gate demo: the seed's invoice example, one patch per row of the table\n"
        "\n"
        "patch           expected              got\n"
        "honest-fix      merge_candidate       merge_candidate       ok\n"
        "off-by-one      real_defect           real_defect           ok\n"
        "live-clock      env_coupled           env_coupled           ok\n"
        "                ↳ invoice_lib.py:14: reads `datetime.now()` while the property pins the "
        "clock: take a Clock\n"
        "                ↳ coupled to: clock\n"
        "order-cache     env_coupled           env_coupled           ok\n"
        "                ↳ coupled to: test_order\n"
        "                ↳ order: tests/properties/test_invoice_total.py::TestCache::"
        "test_cached_total passes only after tests/properties/test_invoice_total.py::TestCache::"
        "test_fill_cache (state-setter)\n"
        "leaked-env      env_coupled_reverse   env_coupled_reverse   ok\n"
        "                ↳ invoice_lib.py:15: reads `os.environ['INVOICE_LEGACY_FEES']`, which no "
        "pin fixes: pin it (pins.env) or pass the value in\n"
        "                ↳ coupled to: env:INVOICE_LEGACY_FEES\n"
        "reseed          pin_mutation          pin_mutation          ok\n"
        "frozen-clock    entropy_silenced      entropy_silenced      ok\n"
        "skip-defect     masked_defect         masked_defect         ok\n"
        "tautology       entropy_silenced      entropy_silenced      ok\n"
        "copied-unit     entropy_silenced      entropy_silenced      ok\n"
        "                ↳ tests/properties/test_invoice_total.py:9: import invoice_lib leads to "
        "tests/properties/invoice_lib.py at the head, to the production module invoice_lib.py "
        "at the base — a module in the tests area shadows it (pytest puts the test's folder "
        "first on sys.path), so the property checks the copy\n"
        "hook-swallow    entropy_silenced      entropy_silenced      ok\n"
        "                ↳ invoice_lib.py:14: reads `datetime.now()` while the property pins the "
        "clock: take a Clock\n"
        "                ↳ tests/conftest.py:7: hook pytest_runtest_call (as pytest_steady_call) "
        "in tests/conftest.py can run a test's body differently or swallow its failure\n"
        "pin-read        entropy_silenced      entropy_silenced      ok\n"
        "                ↳ invoice_lib.py:14: production code reads `ENTROPY_CLOCK_UNIX`, the "
        "gate's own pin: under the gate it sees the pin, anywhere else its fallback runs, so "
        "the property tests the gate's value, not what production does (take a Clock or a "
        "parameter; the properties pass the pinned one)\n"
        "support-file    entropy_silenced      entropy_silenced      ok\n"
        "                ↳ tests/properties/test_invoice_total.py:32: property "
        "test_no_late_fee_before_due fails with the base's test side on the head's code (assert "
        "130713 == 130213) and passes with the head's (the patch changed "
        "tests/support/invoices.py): the patch made it pass by changing what the test reads, "
        "not the code — a property that really was wrong is changed in a reviewed change of "
        "its own, like a cassette rotation, not in the patch that needs it green\n"
        "detects-pytest  entropy_silenced      entropy_silenced      ok\n"
        "                ↳ invoice_lib.py:13: production code asks whether `pytest` is in "
        "`sys.modules`: it can tell a test run from production, so under pytest it may take a "
        "path production never runs and the property tests that path, not the code (remove "
        "the branch; pass in what must differ)\n"
        "14 of 14 rows match\n"
    )


def test_an_unknown_demo_patch_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--patch", "nope"]) == 2
    assert capsys.readouterr().err.endswith(
        "demo: no patch named 'nope' (one of: honest-fix, off-by-one, live-clock, order-cache, "
        "leaked-env, "
        "reseed, frozen-clock, skip-defect, tautology, copied-unit, hook-swallow, pin-read, "
        "support-file, detects-pytest)\n"
    )


# -- the runtime rule: what no static rule foresaw --------------------------------------------

MANIFEST = """\
version: 1
property_id: totals
module: tests/properties/test_totals.py
pins:
  rng_seed: 7
  tz: UTC
  temp_root: {temp_root}
"""

PROPERTIES = """\
import os
import random


def test_sum_is_order_free():
    rng = random.Random(int(os.environ["ENTROPY_RNG_SEED"]))
    values = [rng.randint(1, 99) for _ in range(10)]
    assert sum(values) == sum(reversed(values))


def test_max_is_an_element():
    rng = random.Random(int(os.environ["ENTROPY_RNG_SEED"]))
    values = [rng.randint(1, 99) for _ in range(10)]
    assert max(values) in values
"""


@pytest.fixture
def totals_repo(repo: Repo, tmp_path: Path) -> tuple[Repo, str]:
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("tests/properties/test_totals.py", PROPERTIES)
    return repo, repo.commit("base")


def _findings(verdict: dict[str, Any], kind: str) -> list[tuple[str, int, bool]]:
    return [
        (f["path"], f["line"], f["introduced"]) for f in verdict["findings"] if f["kind"] == kind
    ]


def test_a_conftest_hook_that_deselects_a_property_is_caught(totals_repo: tuple[Repo, str]) -> None:
    repo, base = totals_repo
    repo.write(
        "tests/properties/conftest.py",
        """\
        def pytest_collection_modifyitems(config, items):
            dropped = [item for item in items if item.name == "test_max_is_an_element"]
            items[:] = [item for item in items if item not in dropped]
            config.hook.pytest_deselected(items=dropped)
        """,
    )
    code, verdict, _ = _gate(repo, base)
    assert (code, verdict["classification"]) == (1, "entropy_silenced")
    assert _findings(verdict, "collection_tampering") == [("tests/properties/conftest.py", 1, True)]
    assert _findings(verdict, "not_executed") == [("tests/properties/test_totals.py", 11, True)]
    assert [t["id"] for t in verdict["tests"]] == [
        "tests/properties/test_totals.py::test_sum_is_order_free"
    ]


def test_a_skip_hidden_from_the_static_scan_is_caught_at_run_time(
    totals_repo: tuple[Repo, str],
) -> None:
    repo, base = totals_repo
    repo.write(
        "tests/properties/test_totals.py",
        PROPERTIES.replace(
            "    assert max(values) in values\n",
            "    getattr(__import__('pytest'), 'sk' + 'ip')('stable')\n"
            "    assert max(values) in values\n",
        ),
    )
    code, verdict, _ = _gate(repo, base)
    assert (code, verdict["classification"]) == (1, "entropy_silenced")
    assert _findings(verdict, "not_executed") == [("tests/properties/test_totals.py", 11, True)]
    assert [f["kind"] for f in verdict["findings"]] == ["not_executed"]


def test_an_honest_patch_to_the_properties_is_a_merge_candidate(
    totals_repo: tuple[Repo, str],
) -> None:
    repo, base = totals_repo
    repo.write(
        "tests/properties/test_totals.py",
        PROPERTIES
        + (
            "\n\ndef test_min_is_an_element():\n"
            "    rng = random.Random(int(os.environ['ENTROPY_RNG_SEED']))\n"
            "    values = [rng.randint(1, 99) for _ in range(10)]\n"
            "    assert min(values) in values\n"
        ),
    )
    code, verdict, _ = _gate(repo, base)
    assert (code, verdict["classification"], verdict["findings"]) == (0, "merge_candidate", [])
    assert len(verdict["tests"]) == 3


def test_an_unreadable_manifest_at_the_head_is_invalid_and_lists_why(
    totals_repo: tuple[Repo, str],
) -> None:
    repo, base = totals_repo
    repo.write("entropy.yaml", "version: 1\npins: [\n")
    code, verdict, out = _gate(repo, base)
    assert (code, verdict["classification"]) == (2, "invalid")
    assert verdict["pins_intact"] is False
    assert (
        "entropy.yaml:3: cannot be read at the head, so no host can run under it: invalid YAML"
        in out
    )


def test_without_a_base_run_skips_are_attributed_statically(
    totals_repo: tuple[Repo, str],
) -> None:
    repo, base = totals_repo
    repo.write(
        "tests/properties/test_totals.py",
        PROPERTIES.replace(
            "def test_max_is_an_element",
            "import pytest\n\n\n@pytest.mark.skip\ndef test_max_is_an_element",
        ),
    )
    code, verdict, _ = _gate(repo, base, "--no-base-run")
    assert (code, verdict["classification"]) == (1, "entropy_silenced")
    assert {f["kind"] for f in verdict["findings"]} == {"skip_marker", "not_executed"}


def test_bytecode_beside_the_demo_data_never_reaches_a_demo_commit(
    tmp_path: Path, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run beside the package's data (an import, a pytest run in it) leaves `__pycache__/`
    there; committed into the demo's base, the next gate run's mutation pass deleted it and the
    verdict was `invalid` for a tree that differed only in bytecode (CI, stop 42)."""
    data = tmp_path / "data"
    shutil.copytree(demo.DATA, data)
    for folder in (data / "base", data / "base/tests/properties", data / "patches/honest-fix"):
        (folder / "__pycache__").mkdir(exist_ok=True)
        (folder / "__pycache__" / "invoice_lib.cpython-311.pyc").write_bytes(b"\x00stale")
    (data / "base/.pytest_cache").mkdir()
    (data / "base/.pytest_cache/README.md").write_text("cache\n", encoding="utf-8")
    monkeypatch.setattr(demo, "DATA", data)
    demo.build_base(repo.path, clock_unix=86_400, temp_root=tmp_path / "pins-tmp")
    demo.apply_patch(repo.path, PATCHES["honest-fix"])
    committed = repo.git("ls-tree", "-r", "--name-only", "HEAD").splitlines()
    assert committed == sorted(
        ["README.md", "entropy.yaml", "invoice_lib.py", "tests/properties/test_invoice_total.py",
         "tests/support/invoices.py"]
    )  # fmt: skip
