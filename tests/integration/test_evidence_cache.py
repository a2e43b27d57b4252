"""The base evidence cache: a hit is read back like any report; anything else is a miss.

Real report folders, a real cache directory, the real interpreter described by a
subprocess, and the gate run twice on one base.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from entropy_action.core.layout import HOST_JSON, JUNIT_XML
from entropy_action.evidence import basecache, hostreport
from entropy_action.evidence.basecache import KEY_JSON, CacheKey, EvidenceCache
from tests.integration.test_gate_baseline import COUPLED_AT_BASE, MANIFEST
from tests.support.helpers import Repo
from tests.unit.test_reports import PASSING, SHA, host_info, write_host


def key(commit: str = "c0ffee", host: str = "a", **more: str) -> CacheKey:
    return CacheKey({"base_commit": commit, "manifest_sha256": SHA, "host": host, **more})


@pytest.fixture
def report(tmp_path: Path) -> Path:
    return write_host(tmp_path / "run", host_info("a", tmp_path / "checkout"), PASSING)


def entry(cache: Path, k: CacheKey) -> Path:
    return cache / basecache.ENTRIES / k.digest


def test_a_stored_run_comes_back_as_the_same_report(tmp_path, report):
    cache = EvidenceCache(tmp_path / "cache")
    assert cache.store(key(), report) == []
    assert cache.restore(key(), tmp_path / "back") == (True, [])
    back = hostreport.read_host(tmp_path / "back")
    assert back.tests == hostreport.read_host(report).tests
    assert back.info == hostreport.read_host(report).info


def test_another_key_is_a_miss_without_a_note(tmp_path, report):
    cache = EvidenceCache(tmp_path / "cache")
    cache.store(key(), report)
    assert cache.restore(key(commit="another"), tmp_path / "back") == (False, [])
    assert cache.restore(key(host="b"), tmp_path / "back") == (False, [])
    assert not (tmp_path / "back").exists()


def test_an_empty_cache_is_a_miss(tmp_path):
    assert EvidenceCache(tmp_path / "nothing").restore(key(), tmp_path / "back") == (False, [])


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (lambda e: (e / JUNIT_XML).write_bytes(b"<testsuites><testsuite>"), "not well-formed XML"),
        (lambda e: (e / HOST_JSON).write_text("{", encoding="utf-8"), "not valid JSON"),
        (lambda e: (e / JUNIT_XML).unlink(), "no such file"),
        (lambda e: (e / KEY_JSON).write_text("[", encoding="utf-8"), "not a JSON key"),
        (
            lambda e: (e / JUNIT_XML).write_bytes(
                b'<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><testsuites/>'
            ),
            "refused: it declares a document type",
        ),
    ],
    ids=["truncated junit", "broken host.json", "missing junit", "broken key", "dtd"],
)
def test_a_corrupt_entry_is_ignored_with_a_note_and_removed(tmp_path, report, damage, problem):
    cache = EvidenceCache(tmp_path / "cache")
    cache.store(key(), report)
    damage(entry(tmp_path / "cache", key()))
    hit, notes = cache.restore(key(), tmp_path / "back")
    assert hit is False
    (note,) = notes
    assert note.startswith(f"cache entry {key().digest[:12]} ignored and removed: ")
    assert problem in note
    assert not entry(tmp_path / "cache", key()).exists()
    assert not (tmp_path / "back").exists()  # nothing half-copied is left to be read


def test_a_symlink_in_an_entry_is_not_followed(tmp_path, report):
    cache = EvidenceCache(tmp_path / "cache")
    cache.store(key(), report)
    secret = tmp_path / "secret.xml"
    secret.write_bytes(PASSING)
    (entry(tmp_path / "cache", key()) / JUNIT_XML).unlink()
    (entry(tmp_path / "cache", key()) / JUNIT_XML).symlink_to(secret)
    hit, (note,) = cache.restore(key(), tmp_path / "back")
    assert hit is False
    assert "is a symbolic link" in note


def test_a_symlinked_entry_is_not_followed_and_what_it_points_at_survives(tmp_path, report):
    elsewhere = EvidenceCache(tmp_path / "elsewhere")
    elsewhere.store(key(), report)
    target = entry(tmp_path / "elsewhere", key())
    link = entry(tmp_path / "cache", key())
    link.parent.mkdir(parents=True)
    link.symlink_to(target, target_is_directory=True)
    hit, (note,) = EvidenceCache(tmp_path / "cache").restore(key(), tmp_path / "back")
    assert hit is False
    assert note.endswith(": it is a symbolic link")
    assert not link.is_symlink()
    assert (target / JUNIT_XML).exists()


def test_an_entry_whose_stored_key_differs_is_never_trusted(tmp_path, report):
    cache = EvidenceCache(tmp_path / "cache")
    cache.store(key(), report)
    forged = {**key().fields, "base_commit": "forged"}
    (entry(tmp_path / "cache", key()) / KEY_JSON).write_text(json.dumps(forged))
    hit, (note,) = cache.restore(key(), tmp_path / "back")
    assert hit is False
    assert "its key does not match the one asked for" in note


def test_an_entry_of_another_host_or_manifest_is_never_trusted(tmp_path, report):
    cache = EvidenceCache(tmp_path / "cache")
    assert cache.store(key(host="b"), report) == [
        "the base run was not cached: it names another host"
    ]
    other_manifest = CacheKey({**key().fields, "manifest_sha256": "0" * 64})
    assert cache.store(other_manifest, report) == []  # stored under a key it does not fit
    hit, (note,) = cache.restore(other_manifest, tmp_path / "back")
    assert (hit, note.endswith(": it ran another manifest")) == (False, True)


def test_an_unreadable_run_is_not_stored(tmp_path):
    broken = write_host(tmp_path / "run", host_info("a", tmp_path), b"<testsuites>")
    cache = EvidenceCache(tmp_path / "cache")
    (note,) = cache.store(key(), broken)
    assert note.startswith("the base run was not cached: ")
    assert not (tmp_path / "cache" / basecache.ENTRIES / key().digest).exists()


def test_the_least_recently_used_entries_go_when_the_cache_is_over_its_cap(tmp_path, report):
    size = sum(f.stat().st_size for f in report.iterdir()) + 200  # one entry and its key
    cache = EvidenceCache(tmp_path / "cache", cap=2 * size)
    keys = [key(commit=f"commit-{i}") for i in range(3)]
    for age, k in enumerate(keys[:2]):
        assert cache.store(k, report) == []
        os.utime(entry(tmp_path / "cache", k), (1000 + age, 1000 + age))
    cache.restore(keys[0], tmp_path / "used")  # the older one was used recently
    (note,) = cache.store(keys[2], report)
    assert note.startswith(f"cache entry {keys[1].digest[:12]} evicted")
    left = {p.name for p in (tmp_path / "cache" / basecache.ENTRIES).iterdir()}
    assert left == {keys[0].digest, keys[2].digest}


def test_the_key_names_the_commit_manifest_host_interpreter_and_distributions():
    first = basecache.base_run_key(base_commit="abc", manifest_sha256=SHA, host="a")
    again = basecache.base_run_key(base_commit="abc", manifest_sha256=SHA, host="a")
    assert first == again
    assert first.fields["executable"] == sys.executable
    assert len(first.fields["distributions_sha256"]) == 64
    assert set(first.fields) >= {"base_commit", "manifest_sha256", "host", "python", "platform"}
    other_commit = basecache.base_run_key(base_commit="abd", manifest_sha256=SHA, host="a")
    other_host = basecache.base_run_key(base_commit="abc", manifest_sha256=SHA, host="b")
    assert len({first.digest, other_commit.digest, other_host.digest}) == 3


def _plugin_at(folder: Path) -> Path:
    """A pytest plugin distribution (an entry point in `pytest11`) whose code sits in
    `folder`, as an editable install of it leaves it."""
    folder.mkdir(parents=True)
    (folder / "gateplug.py").write_text("def pytest_configure(config):\n    pass\n")
    info = folder / "gateplug-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: gateplug\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pytest11]\ngateplug = gateplug\n")
    return folder


def test_a_base_run_made_with_a_plugin_found_elsewhere_is_not_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook inventory names a plugin outside site-packages by its path: a base run made
    while the same distribution's code sat at another path (an editable install moved, a
    second worktree) would list it at that path, and the head's run would read as adding a
    plugin (python-ulid's replay through a moved editable gate: collection_tampering at the
    gate's own seams.py)."""

    def key(folder: Path) -> CacheKey:
        monkeypatch.setenv("PYTHONPATH", str(folder))
        return basecache.base_run_key(base_commit="abc", manifest_sha256=SHA, host="a")

    here = key(_plugin_at(tmp_path / "one"))
    assert here == key(tmp_path / "one")
    moved = key(_plugin_at(tmp_path / "two"))
    assert moved.fields["distributions_sha256"] == here.fields["distributions_sha256"]
    assert moved.digest != here.digest


def test_a_second_gate_on_the_same_base_reuses_the_base_run(repo: Repo, tmp_path: Path):
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("tests/test_years.py", COUPLED_AT_BASE)
    repo.write("README.md", "years\n")
    base = repo.commit("base")
    repo.write("README.md", "years, documented\n")
    verdicts, errs = [], []
    for run in ("first", "second"):
        out = tmp_path / f"{run}.json"
        result = repo.cli(
            "gate", "--base-ref", base, "--json", str(out), "--out", str(tmp_path / run)
        )
        assert result.code == 1, result.out + result.err  # head outcomes decide (#9)
        verdicts.append(json.loads(out.read_text(encoding="utf-8")))
        errs.append(result.err)
    assert "reused from the cache" not in errs[0]
    # host B fails the live-clock test (as at the base), so both base runs were needed
    assert "base run on host A: reused from the cache" in errs[1]
    assert "base run on host B: reused from the cache" in errs[1]
    for verdict in verdicts:  # host B's live clock shows in its failure message: not compared
        for test in verdict["tests"]:
            test.pop("message_b")
        for label in ("a", "b"):  # the reports' own bytes (timings) differ run to run
            assert verdict["inputs"].pop(f"reports_{label}") != "missing"
        verdict.pop("inputs_sha256")
    # what the live clock read (coupled_reads' seen values, quoted by What to do) is the time
    # of each run, to the second: compared with the instant masked, everything else whole
    masked = [
        re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<instant>", json.dumps(v)) for v in verdicts
    ]
    assert "<instant>" in masked[0]
    assert masked[0] == masked[1]
    assert verdicts[1]["classification"] == "env_coupled"
    (coupled,) = [t for t in verdicts[1]["tests"] if t["host_b"] == "failed"]
    assert coupled["failed_at_base"] is True  # the base runs explain; they never approve
    no_cache = repo.cli("gate", "--base-ref", base, "--no-cache", "--out", str(tmp_path / "3"))
    assert "reused from the cache" not in no_cache.err


def test_an_entry_gone_between_the_listing_and_its_size_is_passed_over(tmp_path, report):
    """Two gates share a cache (a hook and a manual run; CI's two test workers): one may
    replace or evict an entry while the other's eviction sizes it. A dangling link stands in
    for such an entry (`stat` finds nothing): storing still works and says nothing of it."""
    cache = EvidenceCache(tmp_path / "cache")
    assert cache.store(key("first"), report) == []
    (tmp_path / "cache" / basecache.ENTRIES / "gone").symlink_to(tmp_path / "nowhere")
    assert cache.store(key("second"), report) == []
    assert cache.restore(key("second"), tmp_path / "back") == (True, [])
