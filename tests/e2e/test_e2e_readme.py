"""The README's workflow lines, verbatim, under act on a typical library: its pyproject.toml
declares pytest only in a `test` extra, the runner's Python has no pytest, and nothing sets
the `install` input. A docs-only PR must reach `merge_candidate` and post a green check run
named `entropy-gate`, with entropy-gate's own venv built once per runner image (the check job
packs it; host A and the verdict job unpack it, sha256-checked; host B, on another image,
builds its own), as on GitHub's runners (no machine-wide venv cache). The repository holds
the files a PR can plant to run its code in a job that only reads it (tests/support/planted.py,
the exploit `venv.py` of issue 34 included) at its root and in tests/: none runs in the check
or the verdict job, nor in the gate's own interpreter."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from entropy_action import __version__
from tests.support import e2e_kit, planted

pytestmark = pytest.mark.e2e
README = Path(__file__).parent.parent.parent / "README.md"

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
    "greeter.py": '''\
"""A tiny library under test."""


def greeting(name: str) -> str:
    return f"hello, {name.strip() or 'stranger'}"
''',
    "tests/test_greeting.py": """\
from greeter import greeting


def test_names_are_greeted():
    assert greeting("ada") == "hello, ada"


def test_blank_names_are_strangers():
    assert greeting("  ") == "hello, stranger"
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
}


def readme_workflow() -> str:
    """The YAML block that follows the README's "lines in .github/workflows/entropy-gate.yml"."""
    text = README.read_text(encoding="utf-8")
    found = re.search(
        r"lines in `\.github/workflows/entropy-gate\.yml`.*?```yaml\n(.*?)```", text, re.S
    )
    assert found, "the README no longer shows the workflow lines"
    return found.group(1)


def readme_pins() -> tuple[str, str, str]:
    """(the version the README's install pins, the tag its git fallback names, the tag its
    workflow lines call)."""
    text = README.read_text(encoding="utf-8")
    pinned = re.search(r"pip install entropy-gate==(\d+\.\d+\.\d+)\n", text)
    fallback = re.search(r"git\+https://github\.com/entropy-gate/entropy-gate@(v\d+)'", text)
    called = re.search(r"\.github/workflows/entropy-gate\.yml@(v\d+)\n", readme_workflow())
    assert pinned, "the README no longer pins `pip install entropy-gate==X.Y.Z`"
    assert fallback, "the README no longer gives the git form of the tag"
    assert called, "the README's workflow lines no longer call a major tag"
    return pinned.group(1), fallback.group(1), called.group(1)


def test_the_readme_installs_the_release_its_workflow_lines_call() -> None:
    """`pip install entropy-gate==X.Y.Z` first, the git form of the tag as the fallback, and
    the workflow at `@vX`: one release (the act run below shows `@v1`'s action installing X.Y.Z)."""
    pinned, fallback, called = readme_pins()
    assert pinned == __version__
    assert fallback == called == f"v{pinned.split('.')[0]}"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid",
         *args],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip


def test_the_readme_workflow_as_written_passes_a_docs_patch(tmp_path: Path) -> None:
    e2e_kit.require_prerequisites()
    kit = e2e_kit.kit_dir()
    wheels = e2e_kit.wheelhouse(tmp_path / "wheelhouse")
    toolcache = tmp_path / "toolcache"
    e2e_kit.tool_cache(toolcache, wheels, with_pytest=False)
    project = e2e_kit.project_copy(tmp_path / "entropy-gate")
    repo = tmp_path / "greeter"
    for name, text in LIBRARY.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    markers = tmp_path / "markers"
    planted.plant(repo, markers, exploit=True)
    planted.plant(repo / "tests", markers)
    workflow = readme_workflow()
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "entropy-gate.yml").write_text(workflow, encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", f"https://github.com/{e2e_kit.OWNER_REPO}.git")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "greeter under the gate")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "fix")
    (repo / "README.md").write_text("# greeter\n\nSays hello.\n", encoding="utf-8")
    git(repo, "commit", "-qam", "docs: say what it does")
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "update-ref", "refs/remotes/origin/main", base)
    git(repo, "update-ref", "refs/remotes/origin/fix", head)
    event = tmp_path / "event.json"
    event.write_text(json.dumps(e2e_kit._event(base, head)), encoding="utf-8")
    sample = e2e_kit.Sample(repo, base, head, event, {})
    folder = tmp_path / "run"
    folder.mkdir()
    api = e2e_kit.ApiServer.start(folder, world=e2e_kit.pulls_of(base, head))
    try:
        run = e2e_kit.run_act(
            sample, "entropy-gate.yml", folder, kit=kit, project=project, api=api,
            toolcache=toolcache, wheels=wheels, cache_server=tmp_path / "cache-server",
            venv_cache=False,
        )  # fmt: skip
        requests = api.requests()
    finally:
        api.stop()
    (folder / "act.log").write_text(run.log, encoding="utf-8")
    print(f"act: exit {run.code} in {run.seconds:.1f} s (log: {folder / 'act.log'})")
    assert run.code == 0, run.log[-8000:]
    assert [r for r in requests if r["violations"]] == []
    posted = {r["body"]["name"]: r["body"] for r in requests if r["method"] == "POST"}
    assert set(posted) == {"entropy-gate"}
    assert posted["entropy-gate"]["conclusion"] == "success"
    assert posted["entropy-gate"]["head_sha"] == head
    assert re.search(r"entropy-gate verdict: merge_candidate", run.log)
    # `@v1`'s action installed the release the README's pip line pins, on every job.
    versions = set(re.findall(r"\]\s+\| entropy-gate (\d+\.\d+\.\d+)$", run.log, re.M))
    assert versions == {readme_pins()[0]}, versions
    # The default install: the test extra, on both hosts.
    host = r"^\[entropy-gate/entropy-gate/host ([ab]) leg \d+-\d+\s*\]\s+\| "
    installs = re.findall(
        host + r"entropy-gate: installing the project under test: pip install -e '\.\[test\]'",
        run.log,
        re.M,
    )
    assert sorted(installs) == ["a", "b"], run.log[-8000:]
    # The check packs its build for the verdict, which unpacks it; the leg-1 host jobs start
    # beside the check and build their own from the lock.
    job = r"^\[entropy-gate/entropy-gate/(\w[\w ]*?)(?:-\d+)?\s*\]\s+\| entropy-gate: venv "
    packed = re.findall(job + "packed", run.log, re.M)
    unpacked = re.findall(job + "unpacked", run.log, re.M)
    assert packed == ["pins and silencing scan"], packed
    assert sorted(unpacked) == ["verdict"], unpacked
    ran = planted.records(markers)
    assert [r for r in ran if r["job"] in ("check", "verdict")] == [], ran
    assert [r for r in ran if "entropy-gate-venv" in r["prefix"] + r["executable"]] == [], ran
    shutil.rmtree(tmp_path / "cache-server", ignore_errors=True)
