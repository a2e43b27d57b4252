"""`entropy-gate init MODULE MODULE...`: a manifest that lists one property per module, the
pins every module drafts alike at the top, the rest in each entry; and its errors. Real git
repositories in tmp dirs, a real audited pytest run per module through the CLI."""

from __future__ import annotations

from pathlib import Path

from entropy_action.manifest import pinfile
from tests.integration.test_init import GOLDEN, SAMPLES
from tests.support.helpers import Repo

CLOCK = "1768003200"
LIBRARY = """\
import random
import tempfile
import time
from datetime import datetime


def roll():
    return int(time.time()) > 0 and random.randint(1, 6) > 0


def hour():
    return int(time.time()) > 0 and datetime.now().hour >= 0


def scratch():
    return int(time.time()) > 0 and bool(tempfile.mkdtemp())
"""
MODULES = {
    "tests/test_a.py": "from lib import roll\n\n\ndef test_roll():\n    assert roll()\n",
    "tests/test_b.py": "from lib import hour\n\n\ndef test_hour():\n    assert hour()\n",
    "tests/test_c.py": "from lib import scratch\n\n\ndef test_scratch():\n    assert scratch()\n",
}


def _three(repo: Repo) -> None:
    repo.write("lib.py", LIBRARY)
    for path, text in MODULES.items():
        repo.write(path, text)
    repo.commit("three modules")


def test_several_modules_draft_a_list_with_the_shared_pins_at_the_top(repo: Repo) -> None:
    _three(repo)
    result = repo.cli("init", *MODULES, "--clock-unix", CLOCK)
    assert result.code == 0, result.err
    text = (repo.path / "entropy.yaml").read_text(encoding="utf-8")
    loaded = pinfile.parse_file(text.encode(), "entropy.yaml", repo.path)  # it validates
    assert loaded.many
    assert loaded.ids == ("a", "b", "c")
    assert [v.manifest.module for v in loaded.views] == list(MODULES)
    pins = {v.property_id: v.manifest.pins.model_dump(exclude_none=True) for v in loaded.views}
    assert pins == {
        "a": {"clock_unix": int(CLOCK), "rng_seed": pins["a"]["rng_seed"]},
        "b": {"clock_unix": int(CLOCK), "tz": "UTC"},
        "c": {"clock_unix": int(CLOCK), "temp_root": "/tmp/entropy-c"},
    }
    top, entries = text.split("\nproperties:\n")
    assert "pins:\n" in top
    assert top.endswith(f"\n  clock_unix: {CLOCK}")
    assert "clock_unix" not in entries  # shared: said once
    assert "    pins:\n" in entries
    assert "      tz: UTC\n" in entries
    assert "wrote entropy.yaml: 3 properties (a, b, c)\n" in result.out
    assert "  4 pin(s): clock_unix, a: rng_seed, b: tz, c: temp_root\n" in result.out


def test_module_given_twice_drafts_both_as_positionals_do(repo: Repo) -> None:
    """`--module A --module B` lists both (argparse kept only the last, silently)."""
    _three(repo)
    result = repo.cli("init", "--module", "tests/test_a.py", "--module", "tests/test_b.py")
    assert result.code == 0, result.err
    loaded = pinfile.parse_file(
        (repo.path / "entropy.yaml").read_bytes(), "entropy.yaml", repo.path
    )
    assert loaded.ids == ("a", "b")


def test_one_positional_module_drafts_exactly_what_module_drafts(repo: Repo) -> None:
    for path, text in SAMPLES["reports"].items():
        repo.write(path, text)
    repo.commit("sample")
    module = "tests/properties/test_reports.py"
    result = repo.cli("init", module, "--clock-unix", CLOCK)
    assert result.code == 0, result.err
    assert (repo.path / "entropy.yaml").read_text() == (GOLDEN / "reports.entropy.yaml").read_text()
    assert result.out == (GOLDEN / "reports.out").read_text()


def test_a_module_named_twice_is_refused_before_anything_runs(repo: Repo) -> None:
    _three(repo)
    result = repo.cli("init", "tests/test_a.py", "tests/test_b.py", "--module", "tests/test_a.py")
    assert result.code == 2
    assert result.err.splitlines()[-1] == (
        "init: tests/test_a.py is named twice; each module drafts one property"
    )
    assert "running" not in result.out
    assert not (repo.path / "entropy.yaml").exists()


def test_a_missing_module_is_refused_naming_it(repo: Repo) -> None:
    _three(repo)
    for args in (["tests/test_a.py", "tests/test_nope.py"], ["tests/test_nope.py"]):
        result = repo.cli("init", *args)
        assert result.code == 2
        assert result.err.splitlines()[-1] == (
            "tests/test_nope.py: no such file; name each property module by its path from "
            "the repository root"
        )
        assert "running" not in result.out
        assert not (repo.path / "entropy.yaml").exists()


def test_two_modules_with_one_stem_get_ids_from_their_paths(repo: Repo, tmp_path: Path) -> None:
    repo.write("lib.py", LIBRARY)
    repo.write("tests/x/test_roll.py", MODULES["tests/test_a.py"])
    repo.write("tests/y/test_roll.py", MODULES["tests/test_a.py"])
    repo.commit("one stem twice")
    result = repo.cli("init", "tests/x/test_roll.py", "tests/y/test_roll.py", "--clock-unix", "0")
    assert result.code == 0, result.err
    loaded = pinfile.parse_file((repo.path / "entropy.yaml").read_bytes(), "entropy.yaml")
    assert loaded.ids == ("tests_x_test_roll", "tests_y_test_roll")
