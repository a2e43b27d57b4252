"""The Action's path to the evidence cache: `cache-key` names the entry that `run --base-ref
--cache-dir` files and looks for, so actions/cache restores and saves exactly that folder.

A restored folder is data like a local one: a damaged or mismatched entry is ignored with a
note, the base runs again, and the verdict is the one an uncached run reaches. Real git, real
host runs (`run` as the workflow's host jobs call it), the real `verdict` command.
"""

from __future__ import annotations

import json
import re
import venv as venvlib
from pathlib import Path
from typing import Any

import pytest

from entropy_action.cli.commands.cache_key import PREFIX
from entropy_action.core.layout import JUNIT_XML
from entropy_action.evidence import basecache
from entropy_action.evidence.basecache import KEY_JSON
from tests.integration.test_verdict_command import BASE, MANIFEST, SKIP_TWO, host_jobs, squares_repo
from tests.support.helpers import Repo, copy_world, run_cli


@pytest.fixture
def pr(repo: Repo, tmp_path: Path) -> tuple[Repo, str]:
    """A PR whose head skips a case that ran at the base (the base run tells it apart)."""
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("tests/test_sq.py", BASE)
    base = repo.commit("base")
    repo.write("tests/test_sq.py", SKIP_TWO)
    repo.commit("head")
    return repo, base


def _key(repo: Repo, base: str, host: str = "a", *extra: str) -> str:
    result = repo.cli("cache-key", "--base-ref", base, "--host", host, *extra)
    assert result.code == 0, result.err
    return result.out.strip()


def _run_a(repo: Repo, base: str, out: Path, cache: Path) -> str:
    result = repo.cli(
        "run", "--host", "a", "--out", str(out), "--base-ref", base, "--cache-dir", str(cache)
    )
    assert result.code == 0, result.err
    return result.err


def _entry(cache: Path, key: str) -> Path:
    return cache / basecache.ENTRIES / key.removeprefix(PREFIX)


def _verdict(repo: Repo, base: str, host_a: Path, host_b: Path, job: str) -> dict[str, Any]:
    out = repo.path.parent / f"{job}.json"
    result = repo.cli(
        "verdict", "--host-a", str(host_a), "--host-b", str(host_b),
        "--base-ref", base, "--json", str(out),
    )  # fmt: skip
    assert result.code == 1, result.err
    verdict: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return verdict


def _judged(verdict: dict[str, Any]) -> tuple[Any, ...]:
    """What the verdict decided (host B's live clock in messages aside)."""
    findings = sorted((f["kind"], f.get("test")) for f in verdict["findings"])
    outcomes = sorted((t["id"], t["host_a"], t["host_b"]) for t in verdict["tests"])
    return verdict["classification"], findings, outcomes


def test_cache_key_names_the_entry_the_run_files_and_the_next_run_reuses(
    pr: tuple[Repo, str], tmp_path: Path
) -> None:
    repo, base = pr
    key = _key(repo, base)
    assert re.fullmatch(rf"{PREFIX}[0-9a-f]{{64}}", key)
    assert _key(repo, base) == key, "the same inputs give the same key"
    assert _key(repo, base, "b") != key, "host B's run is another entry"
    cache = tmp_path / "restored"
    first = _run_a(repo, base, tmp_path / "first", cache)
    assert "reused from the cache" not in first
    assert sorted(p.name for p in (cache / basecache.ENTRIES).iterdir()) == [
        key.removeprefix(PREFIX)
    ]
    second = _run_a(repo, base, tmp_path / "second", cache)
    assert f"base run on host A: reused from the cache ({key.removeprefix(PREFIX)[:12]})" in second
    assert "base run on host A: running pytest" not in second
    assert "base run on host A: running pytest" in first


def test_cache_key_follows_the_interpreter_that_runs_the_host(
    pr: tuple[Repo, str], tmp_path: Path
) -> None:
    repo, base = pr
    venv = tmp_path / "venv"
    venvlib.create(venv, with_pip=False)
    other = _key(repo, base, "a", "--python", str(venv / "bin" / "python"))
    assert other != _key(repo, base, "a"), "another interpreter's distributions, another key"


def test_cache_key_of_a_base_without_a_manifest_is_empty_with_a_note(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write("README.md", "before the gate\n")
    base = repo.commit("base")
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("tests/test_sq.py", BASE)
    repo.commit("adopt the gate")
    output = tmp_path / "output"
    repo.monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    result = repo.cli("cache-key", "--base-ref", base, "--host", "a", "--github-output")
    assert (result.code, result.out) == (0, "")
    assert result.err.endswith(f"note: no cache key: {base} has no readable manifest\n")
    assert re.fullmatch(r"key<<(\S+)\n\n\1\n", output.read_text(encoding="utf-8"))


def test_cache_key_sets_the_step_output(pr: tuple[Repo, str], tmp_path: Path) -> None:
    repo, base = pr
    output = tmp_path / "output"
    repo.monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    result = repo.cli("cache-key", "--base-ref", base, "--host", "a", "--github-output")
    assert result.code == 0, result.err
    written = re.fullmatch(r"key<<(\S+)\n(\S+)\n\1\n", output.read_text(encoding="utf-8"))
    assert written is not None
    assert written[2] == result.out.strip()


def test_cache_key_of_an_unknown_base_ref_is_a_usage_error(pr: tuple[Repo, str]) -> None:
    repo, _ = pr
    result = repo.cli("cache-key", "--base-ref", "no-such-ref", "--host", "a")
    assert result.code == 2
    assert result.out == ""
    assert "no-such-ref" in result.err


DAMAGES = {
    "dtd in junit.xml": lambda entry: (entry / JUNIT_XML).write_bytes(
        b'<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><testsuites/>'
    ),
    "truncated junit.xml": lambda entry: (entry / JUNIT_XML).write_bytes(b"<testsuites><test"),
    "key of another base": lambda entry: (entry / KEY_JSON).write_text(
        json.dumps({**json.loads((entry / KEY_JSON).read_text()), "base_commit": "0" * 40})
    ),
}


@pytest.fixture(scope="module")
def reference_world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The PR, host A's run filing a sound entry in `restored`, host B's run, and the verdict
    an undamaged cache gives (`reference.json`): built once, each damage gets a copy."""
    root = tmp_path_factory.mktemp("reference")
    repo = root / "repo"
    base = squares_repo(root, SKIP_TWO)
    host_jobs(repo, base, "clean", "--cache-dir", "../restored")
    judged = run_cli(
        repo, "verdict", "--host-a", "../clean-a", "--host-b", "../clean-b",
        "--base-ref", base, "--json", "../reference.json",
    )  # fmt: skip
    assert judged.returncode == 1, judged.stderr
    return root


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_restored_entry_is_ignored_with_a_note_and_the_verdict_is_unchanged(
    reference_world: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    damage: str,
) -> None:
    repo = copy_world(reference_world, tmp_path, capsys, monkeypatch)
    root = repo.path.parent
    base = repo.git("rev-list", "--max-parents=0", "HEAD")
    key = _key(repo, base)
    cache = root / "restored"
    reference = json.loads((root / "reference.json").read_text(encoding="utf-8"))
    DAMAGES[damage](_entry(cache, key))
    err = _run_a(repo, base, root / "damaged-a", cache)
    digest = key.removeprefix(PREFIX)
    assert f"base run on host A: cache entry {digest[:12]} ignored and removed: " in err
    assert "base run on host A: running pytest" in err, "the base ran again"
    assert "reused from the cache" not in err
    judged = _verdict(repo, base, root / "damaged-a", root / "clean-b", "damaged")
    assert _judged(judged) == _judged(reference)
    assert any(f["kind"] == "not_executed" for f in judged["findings"]), "base evidence used"
    # the run filed a sound entry again, which the next push reuses
    again = _run_a(repo, base, root / "again-a", cache)
    assert "reused from the cache" in again
