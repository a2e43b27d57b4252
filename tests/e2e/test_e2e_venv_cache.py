"""End to end under act: the host jobs' cache of entropy-gate's own venv (issue 38 part 1).

Two act runs of the reusable workflow on one pull request (the README's library, host B on
Python 3.11 so the two hosts' venvs have keys of their own), sharing act's cache server as a
PR's two pushes share GitHub's cache. The first run builds the venv in each host job and
saves it under its key before the project's install. Between the runs the entries are
poisoned in the cache server, as a PR's run could plant them (a host job runs the PR's code,
which can reach the cache service): host A's venv gets a changed `entropy_action/__main__.py`,
host B's a `.pth` that records every start of that venv's interpreter. The second run must
rebuild host A's (saying why in one line), may run host B's in host B's job (the PR's code
runs there anyway), and never runs either in the check or the verdict job, which never
restore the cache: the verdict unpacks the check job's venv, checked by its sha256.
The caller opts in to `project-installer: uv` (issue 38 part 1): the host jobs install the
project with the uv entropy-gate's venv is built with, from the action's hashed lock.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import e2e_kit
from tests.support.e2e_kit import ActRun

pytestmark = pytest.mark.e2e
ENTRY = ".entropy-gate-cached-venv/venv"  # where the action restores and saves the venv
LIBRARY = {
    "pyproject.toml": """\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "greeter"
version = "1.0"
requires-python = ">=3.10"

[project.optional-dependencies]
test = ["pytest"]

[tool.setuptools]
py-modules = ["greeter"]
""",
    "greeter.py": "def greeting(name):\n    return f\"hello, {name.strip() or 'stranger'}\"\n",
    "tests/test_greeting.py": """\
from greeter import greeting


def test_names_are_greeted():
    assert greeting("ada") == "hello, ada"
""",
    "entropy.yaml": """\
version: 1
property_id: greeting
module: tests/test_greeting.py
pins:
  clock_unix: 1768003200
  rng_seed: 7
  tz: UTC
  lang: C.UTF-8
""",
    "README.md": "# greeter\n",
    ".github/workflows/entropy-gate.yml": """\
name: entropy-gate
on: pull_request
permissions: {}
jobs:
  entropy-gate:
    uses: entropy-gate/entropy-gate/.github/workflows/entropy-gate.yml@v1
    permissions: {contents: read, checks: write, pull-requests: read}
    with:
      host-b-python-version: "3.11"
      project-installer: uv
""",
}
JOB = r"^\[entropy-gate/entropy-gate/(\w[\w ]*?)(?:-\d+)?\s*\]\s+\| "
STEP = r"^\[entropy-gate/entropy-gate/(\w[\w ]*?)(?:-\d+)?\s*\]\s+\S+ Run Main "
WARNING = r"^\[entropy-gate/entropy-gate/(\w[\w ]*?)(?:-\d+)?\s*\]\s+\S+\s+::warning title=[\w-]+::"
SITE = ENTRY + r"/lib/python3\.1\d/site-packages"


@dataclass(frozen=True)
class Runs:
    first: ActRun
    second: ActRun
    markers: Path
    planted: dict[str, Path]  # python3.12 / python3.11 -> the cache blob rewritten


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid",
         *args],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip


def _sample(repo: Path, event: Path) -> e2e_kit.Sample:
    for name, text in LIBRARY.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "remote", "add", "origin", f"https://github.com/{e2e_kit.OWNER_REPO}.git")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "greeter under the gate")
    base = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", "-b", "fix")
    (repo / "README.md").write_text("# greeter\n\nSays hello.\n", encoding="utf-8")
    _git(repo, "commit", "-qam", "docs: say what it does")
    head = _git(repo, "rev-parse", "HEAD")
    _git(repo, "update-ref", "refs/remotes/origin/main", base)
    _git(repo, "update-ref", "refs/remotes/origin/fix", head)
    event.write_text(json.dumps(e2e_kit._event(base, head)), encoding="utf-8")
    return e2e_kit.Sample(repo, base, head, event, {})


def _record(markers: Path, what: str) -> bytes:
    """A line of Python that files what ran (GITHUB_JOB, the interpreter) in `markers`."""
    entry = f"{{'what': {what!r}, 'job': os.environ.get('GITHUB_JOB', ''), 'exe': sys.executable}}"
    where = f"os.path.join({str(markers)!r}, uuid.uuid4().hex + '.json')"
    return (
        f"import json, os, sys, uuid; os.makedirs({str(markers)!r}, exist_ok=True); "
        f"open({where}, 'w').write(json.dumps({entry}))\n"
    ).encode()


def _poison(cache_server: Path, markers: Path) -> dict[str, Path]:
    """Host A's venv entry (python3.12) with a changed __main__.py, host B's (python3.11)
    with a .pth: both record where they ran. The blobs rewritten, by Python version."""
    planted: dict[str, Path] = {}
    for blob in sorted((cache_server / "cache").glob("*/*")):
        packed = blob.read_bytes()
        zstd = packed.startswith(b"\x28\xb5\x2f\xfd")
        archive = e2e_kit._unzstd(packed) if zstd else gzip.decompress(packed)
        with tarfile.open(fileobj=io.BytesIO(archive)) as source:
            sites = [n for n in source.getnames() if re.fullmatch(SITE, n)]
            main = f"{sites[0]}/entropy_action/__main__.py" if sites else ""
            handle = source.extractfile(main) if sites else None
            code = handle.read() if handle else b""
        if not sites:
            continue  # the base evidence's entries
        version = sites[0].split("/")[-2]
        edits = (
            {main: _record(markers, "tampered __main__") + code}  # host A: the gate's code
            if version == "python3.12"
            else {f"{sites[0]}/zz-planted.pth": _record(markers, "pth")}  # host B: beside it
        )
        rewritten = _rewritten(archive, edits)
        blob.write_bytes(e2e_kit._zstd(rewritten) if zstd else gzip.compress(rewritten))
        planted[version] = blob
    return planted


def _rewritten(archive: bytes, files: dict[str, bytes]) -> bytes:
    """The tar `archive` with each member of `files` holding its content (added if missing)."""
    out, left = io.BytesIO(), dict(files)
    with (
        tarfile.open(fileobj=io.BytesIO(archive)) as source,
        tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as target,
    ):
        for member in source.getmembers():
            data = source.extractfile(member) if member.isfile() else None
            if member.name in left:
                content = left.pop(member.name)
                member.size, data = len(content), io.BytesIO(content)
            target.addfile(member, data)
        for name, content in left.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(content), 0o644
            target.addfile(info, io.BytesIO(content))
    return out.getvalue()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    e2e_kit.require_prerequisites()
    root = tmp_path_factory.mktemp("e2e-venv-cache")
    wheels = e2e_kit.wheelhouse(root / "wheelhouse")
    toolcache = root / "toolcache"
    e2e_kit.tool_cache(toolcache, wheels, with_pytest=False)
    project = e2e_kit.project_copy(root / "entropy-gate")
    sample = _sample(root / "greeter", root / "event.json")
    cache_server, markers = root / "cache-server", root / "markers"

    def act(name: str) -> ActRun:
        folder = root / name
        folder.mkdir()
        api = e2e_kit.ApiServer.start(folder, world=e2e_kit.pulls_of(sample.base, sample.head))
        try:
            run = e2e_kit.run_act(
                sample, "entropy-gate.yml", folder, kit=e2e_kit.kit_dir(), project=project,
                api=api, toolcache=toolcache, wheels=wheels, cache_server=cache_server,
                venv_cache=False,
            )  # fmt: skip
        finally:
            api.stop()
        (folder / "act.log").write_text(run.log, encoding="utf-8")
        print(f"act {name}: exit {run.code} in {run.seconds:.1f} s (log: {folder / 'act.log'})")
        return run

    first = act("first")
    planted = _poison(cache_server, markers) if first.code == 0 else {}
    second = act("second")
    yield Runs(first, second, markers, planted)
    if not os.environ.get("ENTROPY_GATE_E2E_KEEP"):
        shutil.rmtree(root, ignore_errors=True)


def _lines(run: ActRun, pattern: str) -> list[str]:
    """The jobs (display names) whose log has a line matching `pattern`, one per line."""
    return sorted(re.findall(JOB + pattern, run.log, re.M))


def _job(run: ActRun, job: str, pattern: str) -> str:
    """The lines of `job` matching `pattern`: what a failed assertion about it shows."""
    prefix = f"[entropy-gate/entropy-gate/{job}"
    return "\n".join(
        line
        for line in run.log.splitlines()
        if line.startswith(prefix) and re.search(pattern, line)
    )


def _records(markers: Path) -> list[dict[str, str]]:
    return [json.loads(p.read_text("utf-8")) for p in sorted(markers.glob("*.json"))]


def test_the_host_jobs_build_and_save_the_venv_before_the_prs_code(runs: Runs) -> None:
    assert runs.first.code == 0, runs.first.log[-8000:]
    assert "entropy-gate verdict: merge_candidate" in runs.first.log
    built = _lines(runs.first, r"entropy-gate: venv built with")
    assert built == ["host a leg 1", "host b leg 1", "pins and silencing scan"], built
    saved = _lines(runs.first, r"Cache saved with key: entropy-gate-venv-")
    assert saved == ["host a leg 1", "host b leg 1"], saved
    assert set(runs.planted) == {"python3.12", "python3.11"}, runs.planted


def test_a_planted_venv_entry_never_reaches_the_verdict(runs: Runs) -> None:
    second = runs.second
    assert second.code == 0, second.log[-8000:]
    assert "entropy-gate verdict: merge_candidate" in second.log
    # Host A's entry, with a changed module of the gate: refused in one line, built again.
    refused = re.findall(
        WARNING + r"the cached venv \(entropy-gate-venv-\S+\) has "
        r"lib/python3\.12/site-packages/entropy_action/__main__\.py, not the action's own "
        r"file: not used, building it here",
        second.log,
        re.M,
    )
    assert refused == ["host a leg 1"], _job(second, "host a leg 1", r"venv|[Cc]ache")
    assert _lines(second, r"entropy-gate: venv built with") == [
        "host a leg 1",
        "pins and silencing scan",
    ]
    # Host B's entry passes the checks (a .pth is no file of the gate's package): it runs in
    # host B's job, where the PR's code runs anyway, and nowhere else.
    restored = _lines(second, r"entropy-gate: venv restored from the cache")
    assert restored == ["host b leg 1"], restored
    # The jobs that judge never restore: the check builds, the verdict unpacks the check's.
    assert _lines(second, r"entropy-gate: venv unpacked from the check job") == ["verdict"]
    looked_up = re.findall(STEP + r"restore entropy-gate's venv", second.log, re.M)
    assert sorted(looked_up) == ["host a leg 1", "host b leg 1"], looked_up
    hits = _lines(second, r"Cache restored from key: entropy-gate-venv-")
    assert hits == ["host a leg 1", "host b leg 1"], hits
    ran = _records(runs.markers)
    assert [r for r in ran if r["what"] == "tampered __main__"] == [], ran
    assert ran, "the planted .pth never ran: the entry was not restored"
    assert {r["job"] for r in ran} == {"hosts"}, ran


def test_the_caller_s_project_installer_installs_the_project_with_uv(runs: Runs) -> None:
    for run in (runs.first, runs.second):
        installed = _lines(
            run,
            r"entropy-gate: installing the project under test: uv pip install -e '\.\[test\]' "
            r"\(the test extra of pyproject\.toml; install input empty\)$",
        )
        assert installed == ["host a leg 1", "host b leg 1"], _job(run, "host", "install")
