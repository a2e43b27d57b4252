"""compare with the base ref's runs from elsewhere (two CI runners, say): --base-host-a/-b."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from entropy_action.evidence import hostreport
from tests.support.helpers import Repo

MANIFEST = """\
version: 1
property_id: squares
module: tests/test_sq.py
pins:
  tz: UTC
  temp_root: {temp_root}
"""

BASE = """\
import time

import pytest


def test_clock_is_this_decade():
    assert time.localtime().tm_year < 2030


@pytest.mark.parametrize("n", [1, 2, 3])
def test_square(n):
    assert n * n >= n
"""


def _runs(repo: Repo, label: str, base: str | None = None) -> None:
    """Both hosts as the workflow's host jobs run them (host A with --base-ref also leaves
    its strength step's report)."""
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        more = ("--base-ref", base) if base and host == "a" else ()
        result = repo.cli("run", "--host", host, "--out", f"../{label}-{host}", *extra, *more)
        assert result.code in (0, 1), result.err


def _compare(repo: Repo, base: str, head: str, *, with_base: bool) -> tuple[int, dict[str, Any]]:
    out = repo.path.parent / "verdict.json"
    extra = ["--base-host-a", "../base-a", "--base-host-b", "../base-b"] if with_base else []
    result = repo.cli(
        "compare", "--host-a", f"../{head}-a", "--host-b", f"../{head}-b",
        "--base-ref", base, "--json", str(out), *extra,
    )  # fmt: skip
    return result.code, json.loads(out.read_text(encoding="utf-8"))


def test_compare_judges_against_the_base_runs_it_is_given(repo: Repo, tmp_path: Path) -> None:
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("tests/test_sq.py", BASE)
    base = repo.commit("base")
    _runs(repo, "base")
    skip_two = "    if n == 2:\n        pytest.skip('slow')\n    assert n * n"
    repo.write("tests/test_sq.py", BASE.replace("    assert n * n", skip_two))
    _runs(repo, "head", base)
    code, verdict = _compare(repo, base, "head", with_base=True)
    assert (code, verdict["classification"]) == (1, "entropy_silenced")
    kinds = sorted((f["kind"], f["introduced"]) for f in verdict["findings"])
    assert kinds == [("not_executed", True), ("skip_call", True)]
    # The live-clock test failed on host B at the base as well: explained, still counted.
    assert (
        "host B: fail (1 failed; 1 failed at the base ref too: the patch did not cause it, "
        "and it does not fix it)"
    ) in verdict["reasons"]

    repo.write("tests/test_sq.py", BASE)  # the honest head: only the old coupling remains
    _runs(repo, "honest")
    for with_base in (True, False):  # the base runs explain; they never change the verdict
        code, verdict = _compare(repo, base, "honest", with_base=with_base)
        assert (code, verdict["classification"]) == (1, "env_coupled")
        (coupled,) = [t for t in verdict["tests"] if t["host_b"] == "failed"]
        assert coupled["failed_at_base"] is with_base


# --- the base run beside the head's, in the host jobs ----------------------------------------

SIDE = """\
import time
from pathlib import Path

MARKS = Path({marks!r})
ME = {me!r}


def test_side_by_side():
    (MARKS / ME).write_text("started")
    if ME == "head":  # waits for the base's run to start: at most a minute
        deadline = time.monotonic() + 60
        while not (MARKS / "base").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (MARKS / "base").exists(), "the base's run did not start while the head's ran"
"""


def _side(repo: Repo, tmp_path: Path) -> tuple[str, Path]:
    marks = tmp_path / "marks"
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("tests/test_sq.py", SIDE.format(marks=str(marks), me="base"))
    base = repo.commit("base")
    repo.write("tests/test_sq.py", SIDE.format(marks=str(marks), me="head"))
    return base, marks


def test_the_host_jobs_run_the_base_beside_the_head_not_after_it(
    repo: Repo, tmp_path: Path
) -> None:
    """The head's test passes only if the base's run starts while it runs: after it (the
    old order) it waits a minute and fails."""
    base, marks = _side(repo, tmp_path)
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        marks.mkdir()
        out = tmp_path / f"side-{host}"
        done = repo.cli("run", "--host", host, "--out", str(out), "--base-ref", base, *extra)
        assert done.code == 0, done.err
        assert sorted(p.name for p in marks.iterdir()) == ["base", "head"]
        assert hostreport.read_host(out / "base").outcome == "pass"
        assert f"base run ({base}) on host {host.upper()}: {out / 'base'}" in done.err
        for mark in marks.iterdir():
            mark.unlink()
        marks.rmdir()


def test_a_base_run_beside_a_head_that_is_unusable_is_removed(repo: Repo, tmp_path: Path) -> None:
    """The head's pytest.ini asks for an option no plugin has (a usage error: invalid), so
    the base run started beside it is waited for and removed, as the base run after it was
    never made: the verdict reads no base beside a head it cannot use."""
    base, marks = _side(repo, tmp_path)
    for host, extra in (("a", ()), ("b", ("--isolate",))):  # DIR holds a base run already
        marks.mkdir()
        out = tmp_path / f"unusable-{host}"
        done = repo.cli("run", "--host", host, "--out", str(out), "--base-ref", base, *extra)
        assert done.code == 0, done.err
        assert (out / "base" / "host.json").is_file()
        again = repo.cli("run", "--host", host, "--out", str(out), "--base-ref", base, *extra)
        assert again.code == 0, again.err  # the earlier base replaced, not nested in it
        assert "not kept" not in again.err
        assert sorted(p.name for p in (out / "base").iterdir() if p.is_dir()) == []
        plain = repo.cli("run", "--host", host, "--out", str(out), *extra)  # no --base-ref
        assert plain.code == 0, plain.err
        assert not (out / "base").exists()  # the earlier base is not left beside this head
        shutil.rmtree(marks)
    repo.write("pytest.ini", "[pytest]\naddopts = --no-such-option\n")
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        marks.mkdir()
        out = tmp_path / f"unusable-{host}"
        done = repo.cli("run", "--host", host, "--out", str(out), "--base-ref", base, *extra)
        assert done.code == 2, done.err
        assert "pytest usage error" in done.err
        assert (marks / "base").exists()  # the base ran beside it …
        assert not (marks / "head").exists()
        assert sorted(p.name for p in out.iterdir() if p.name.startswith("base")) == []  # … gone
        assert "base run (" not in done.err
        assert done.err.splitlines()[-1] == (  # its progress was shown: said not kept
            "base run not kept: its head's run is unusable, and no verdict reads a base beside one"
        )
        for mark in marks.iterdir():
            mark.unlink()
        marks.rmdir()


MANY = """\
version: 1
properties:
  - property_id: side
    module: tests/test_sq.py
    pins:
      tz: UTC
      temp_root: {temp_root}
  - property_id: other
    module: tests/test_other.py
    pins:
      tz: UTC
      temp_root: {temp_root}
"""


def test_many_properties_run_their_bases_beside_their_sessions(repo: Repo, tmp_path: Path) -> None:
    _, marks = _side(repo, tmp_path)
    repo.write("entropy.yaml", MANY.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("tests/test_sq.py", SIDE.format(marks=str(marks), me="base"))
    repo.write("tests/test_other.py", "def test_other():\n    assert True\n")
    base = repo.commit("two properties")
    repo.write("tests/test_sq.py", SIDE.format(marks=str(marks), me="head"))
    marks.mkdir()
    out = tmp_path / "many-a"
    done = repo.cli("run", "--host", "a", "--out", str(out), "--base-ref", base)
    assert done.code == 0, done.err
    assert sorted(p.name for p in marks.iterdir()) == ["base", "head"]
    for pid in ("side", "other"):
        assert hostreport.read_host(out / "properties" / pid / "base").outcome == "pass"
    assert sorted(p.name for p in out.iterdir()) == ["properties"]


def test_compare_reads_the_base_runs_beside_the_hosts_as_verdict_does(
    repo: Repo, tmp_path: Path
) -> None:
    """Folders that `run --base-ref` wrote hold base/; `compare` given only --host-a/-b takes
    them, so the same folders give the same verdict through `compare` and `verdict` (a case
    dropped from a parametrization is seen only against the base's run)."""
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    steady = "import pytest\n\n\n" + BASE.rsplit("\n\n\n", maxsplit=1)[-1]  # test_square
    repo.write("tests/test_sq.py", steady)
    base = repo.commit("base")
    repo.write("tests/test_sq.py", steady.replace("[1, 2, 3]", "[1, 3]"))
    repo.commit("two cases are enough")
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        done = repo.cli("run", "--host", host, "--out", f"../h-{host}", "--base-ref", base, *extra)
        assert done.code == 0, done.err
    judged = {
        command: (
            code,
            v["classification"],
            [(f["kind"], f["line"], f["introduced"]) for f in v["findings"]],
        )
        for command, (code, v) in repo.verdict_and_compare("../h-a", "../h-b", base).items()
    }
    assert judged["compare"] == judged["verdict"]
    assert judged["compare"] == (1, "entropy_silenced", [("not_executed", 5, True)])
