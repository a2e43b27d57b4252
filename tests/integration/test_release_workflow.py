"""The release workflow (.github/workflows/release.yml): its shape (what runs after what, with
which permissions) and its steps' scripts, run as written with bash in scratch repositories:
the tag check, the release notes from the CHANGELOG, and moving the major tag on a real
remote (a bare repository). GitHub's own parts (the OIDC token, PyPI's trusted publisher, the
attestation upload, `gh` talking to GitHub) cannot run here: `gh` is a stand-in that records
its arguments, and docs/releasing.md says how the rest is covered."""

from __future__ import annotations

import base64
import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from entropy_action import __version__
from tests.conftest import FULL_PYTHON
from tests.support.e2e_kit import project_copy
from tests.support.helpers import IDENTITY

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github/workflows/release.yml"
SCRIPT = ROOT / "scripts/release.py"
EXPRESSION = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")

CHANGELOG = """\
# Changelog

## Unreleased

### Added
- something for later

## 1.2.0 — 2026-12-10

### Added
- the pre-commit hook

### Fixed
- a false rejection

## 1.1.0 (2026-11-01)

- older
"""


def workflow() -> dict[str, Any]:
    loaded = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def jobs() -> dict[str, dict[str, Any]]:
    found = workflow()["jobs"]
    assert isinstance(found, dict)
    return found


def step(job: str, name: str) -> dict[str, Any]:
    (found,) = [s for s in jobs()[job]["steps"] if s.get("name", "").startswith(name)]
    assert isinstance(found, dict)
    return found


def run_step(
    job: str, name: str, cwd: Path, values: dict[str, str], path: str | None = None
) -> subprocess.CompletedProcess[str]:
    """A `run:` step as GitHub runs it (`bash -e`), its `env:` expressions filled from
    `values` (an expression the test does not know fails it)."""
    chosen = step(job, name)

    def fill(text: str) -> str:
        return EXPRESSION.sub(lambda m: values[m.group(1)], text)

    env = {k: v for k, v in os.environ.items() if not k.startswith(("GH_", "GIT_DIR"))}
    env.update({k: fill(str(v)) for k, v in chosen.get("env", {}).items()})
    env["RUNNER_TEMP"] = str(cwd.parent)
    if path is not None:
        env["PATH"] = f"{path}{os.pathsep}{env['PATH']}"
    return subprocess.run(
        ["bash", "-e", "-c", chosen["run"]],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


# --- the shape --------------------------------------------------------------------------------


def test_it_runs_on_release_tags_only() -> None:
    loaded = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert loaded[True] == {"push": {"tags": ["v[0-9]+.[0-9]+.[0-9]+"]}}  # YAML 1.1: `on` is True
    assert loaded["permissions"] == {}


def test_each_job_holds_only_the_permissions_its_steps_use() -> None:
    assert {name: job["permissions"] for name, job in jobs().items()} == {
        "build": {"contents": "read"},
        "attest": {"id-token": "write", "attestations": "write"},
        "publish": {"id-token": "write"},
        "github-release": {"contents": "write"},
        "major-tag": {"contents": "write"},
    }


def test_the_files_are_built_once_and_the_major_tag_moves_only_after_the_publish() -> None:
    found = jobs()
    assert {name: job.get("needs") for name, job in found.items()} == {
        "build": None,
        "attest": "build",
        "publish": ["build", "attest"],
        "github-release": "publish",
        "major-tag": "publish",
    }
    text = WORKFLOW.read_text(encoding="utf-8")
    assert text.count("python -m build") == 1
    uploads = [
        s for j in found.values() for s in j["steps"] if "upload-artifact" in s.get("uses", "")
    ]
    downloads = [
        s["with"]
        for j in found.values()
        for s in j["steps"]
        if "download-artifact" in s.get("uses", "")
    ]
    assert [u["with"]["name"] for u in uploads] == ["dist"]
    assert downloads == [{"name": "dist", "path": "dist/"}] * 3


def test_pypi_gets_the_files_by_trusted_publishing_with_no_secret() -> None:
    publish = jobs()["publish"]
    (action,) = [s for s in publish["steps"] if "gh-action-pypi-publish" in s.get("uses", "")]
    assert action["with"] == {"packages-dir": "dist/"}  # no user, no password: OIDC
    assert publish["environment"]["name"] == "pypi"
    assert "secrets." not in WORKFLOW.read_text(encoding="utf-8")
    attest = jobs()["attest"]["steps"][-1]
    assert attest["uses"].startswith("actions/attest-build-provenance@")
    assert attest["with"] == {"subject-path": "dist/*"}


def test_every_checkout_leaves_no_credentials_behind() -> None:
    checkouts = [
        s for j in jobs().values() for s in j["steps"] if "actions/checkout" in s.get("uses", "")
    ]
    assert len(checkouts) == 3
    assert all(s["with"] == {"persist-credentials": False} for s in checkouts)


# --- the scripts, run as the workflow runs them ------------------------------------------------


def scratch_release(tmp_path: Path, version: str = "1.2.0", readme_pin: str = "1.2.0") -> Path:
    """A checkout with the files the release steps read: the script, the version, the
    CHANGELOG and the README's install line."""
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(SCRIPT, root / "scripts/release.py")
    (root / "entropy_action").mkdir()
    (root / "entropy_action/__init__.py").write_text(f'__version__ = "{version}"\n')
    (root / "CHANGELOG.md").write_text(CHANGELOG, encoding="utf-8")
    (root / "README.md").write_text(f"python -m pip install entropy-gate=={readme_pin}\n")
    return root


def test_the_tag_check_passes_a_tag_naming_the_version_with_its_section(tmp_path: Path) -> None:
    root = scratch_release(tmp_path)
    checked = run_step("build", "the tag is", root, {"github.ref_name": "v1.2.0"})
    assert (checked.returncode, checked.stderr) == (0, "")
    assert checked.stdout == "v1.2.0: version 1.2.0, CHANGELOG section of 5 line(s)\n"


@pytest.mark.parametrize(
    ("tag", "version", "pin", "message"),
    [
        ("v1.2", "1.2.0", "1.2.0", "'v1.2' is not a release tag: vX.Y.Z (no pre-release suffix)"),
        (
            "v1.2.0rc1",
            "1.2.0",
            "1.2.0",
            "'v1.2.0rc1' is not a release tag: vX.Y.Z (no pre-release suffix)",
        ),
        (
            "v1.2.0",
            "1.3.0",
            "1.2.0",
            "v1.2.0: entropy_action/__init__.py says __version__ = '1.3.0'; "
            "tag the commit that sets it",
        ),
        (
            "v1.3.0",
            "1.3.0",
            "1.3.0",
            "CHANGELOG.md: no '## 1.3.0' section (rename '## Unreleased' to "
            "'## 1.3.0 — YYYY-MM-DD' in the release commit)",
        ),
        ("v1.2.0", "1.2.0", "1.1.0", "README.md: no 'pip install entropy-gate==1.2.0' line"),
    ],
)
def test_the_tag_check_refuses_with_one_line(
    tmp_path: Path, tag: str, version: str, pin: str, message: str
) -> None:
    root = scratch_release(tmp_path, version, pin)
    checked = run_step("build", "the tag is", root, {"github.ref_name": tag})
    assert (checked.returncode, checked.stdout) == (1, "")
    assert checked.stderr == f"release: {message}\n"


def test_an_empty_changelog_section_is_refused(tmp_path: Path) -> None:
    root = scratch_release(tmp_path)
    text = CHANGELOG.replace(
        "### Added\n- the pre-commit hook\n\n### Fixed\n- a false rejection\n", ""
    )
    (root / "CHANGELOG.md").write_text(text, encoding="utf-8")
    checked = run_step("build", "the tag is", root, {"github.ref_name": "v1.2.0"})
    assert checked.returncode == 1
    assert checked.stderr == "release: CHANGELOG.md: the '## 1.2.0' section is empty\n"


GH_STAND_IN = """\
#!/usr/bin/env bash
# GitHub's CLI is unreachable here: record the call and the notes file it was given.
printf '%s\\n' "$@" > "$STAND_IN_LOG"
while [ $# -gt 0 ]; do
  if [ "$1" = --notes-file ]; then cp "$2" "$STAND_IN_LOG.notes"; fi
  shift
done
"""


def gh_stand_in(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(GH_STAND_IN)
    (bin_dir / "gh").chmod(0o755)
    return bin_dir


def test_the_github_release_carries_the_changelog_section_and_the_built_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = scratch_release(tmp_path)
    (root / "dist").mkdir()
    for name in ("entropy_gate-1.2.0-py3-none-any.whl", "entropy_gate-1.2.0.tar.gz"):
        (root / "dist" / name).write_bytes(b"built")
    log = tmp_path / "gh.log"
    monkeypatch.setenv("STAND_IN_LOG", str(log))
    values = {"github.ref_name": "v1.2.0", "github.token": "t0ken"}
    made = run_step(
        "github-release", "create the release", root, values, str(gh_stand_in(tmp_path))
    )
    assert made.returncode == 0, made.stderr
    assert log.read_text().splitlines() == [
        "release",
        "create",
        "v1.2.0",
        "dist/entropy_gate-1.2.0-py3-none-any.whl",
        "dist/entropy_gate-1.2.0.tar.gz",
        "--verify-tag",
        "--title",
        "entropy-gate v1.2.0",
        "--notes-file",
        str(tmp_path / "notes.md"),
    ]
    assert Path(f"{log}.notes").read_text(encoding="utf-8") == (
        "### Added\n- the pre-commit hook\n\n### Fixed\n- a false rejection\n"
    )


def test_no_github_release_is_made_without_a_changelog_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = scratch_release(tmp_path)
    log = tmp_path / "gh.log"
    monkeypatch.setenv("STAND_IN_LOG", str(log))
    values = {"github.ref_name": "v1.4.0", "github.token": "t0ken"}
    made = run_step(
        "github-release", "create the release", root, values, str(gh_stand_in(tmp_path))
    )
    assert made.returncode == 1
    assert "release: CHANGELOG.md: no '## 1.4.0' section" in made.stderr
    assert not log.exists()


# --- the major tag, on a real remote ----------------------------------------------------------


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def released(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A bare `origin` with releases v1.0.0 (lightweight), v1.1.0 (annotated) and v1 at
    v1.0.0, and a checkout of it; the commit of each tag."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(origin), str(work))
    for key, value in IDENTITY.items():  # the checkout's own: a fresh machine has none
        git(work, "config", key, value)
    (work / "scripts").mkdir()
    shutil.copy(SCRIPT, work / "scripts/release.py")  # the checkout of the tag has it
    git(work, "add", "scripts/release.py")
    commits: dict[str, str] = {}
    for tag in ("v1.0.0", "v1.1.0", "v1.0.1", "v2.0.0", "v1.1.1"):
        git(work, "commit", "-q", "--allow-empty", "-m", f"release {tag}")
        commits[tag] = git(work, "rev-parse", "HEAD")
    git(work, "tag", "v1.0.0", commits["v1.0.0"])
    git(work, "tag", "-a", "-m", "1.1.0", "v1.1.0", commits["v1.1.0"])
    git(work, "tag", "v1", commits["v1.0.0"])
    git(work, "push", "-q", "origin", "HEAD:refs/heads/main", "v1.0.0", "v1.1.0", "v1")
    return origin, work, commits


def remote_tag(origin: Path, name: str) -> str:
    return git(origin, "rev-parse", f"refs/tags/{name}^{{commit}}")


def move(work: Path, tag: str, token: str = "") -> subprocess.CompletedProcess[str]:
    values = {"github.ref_name": tag, "github.token": token}
    return run_step("major-tag", "point vX", work, values)


def test_the_newest_release_of_a_major_moves_its_tag(
    released: tuple[Path, Path, dict[str, str]],
) -> None:
    origin, work, commits = released
    moved = move(work, "v1.1.0")
    assert (moved.returncode, moved.stderr) == (0, "")
    assert moved.stdout == f"v1 -> v1.1.0 ({commits['v1.1.0']})\n"
    assert remote_tag(origin, "v1") == commits["v1.1.0"]
    assert git(origin, "cat-file", "-t", "refs/tags/v1") == "commit"  # not the tag object


def test_a_fix_of_an_older_line_leaves_the_major_tag(
    released: tuple[Path, Path, dict[str, str]],
) -> None:
    origin, work, commits = released
    assert move(work, "v1.1.0").returncode == 0
    git(work, "tag", "v1.0.1", commits["v1.0.1"])
    git(work, "push", "-q", "origin", "v1.0.1")
    stayed = move(work, "v1.0.1")
    assert (stayed.returncode, stayed.stderr) == (0, "")
    assert stayed.stdout == f"v1 stays at {commits['v1.1.0']}: v1.1.0 is newer than v1.0.1\n"
    assert remote_tag(origin, "v1") == commits["v1.1.0"]


def test_a_new_major_gets_its_own_tag_and_leaves_the_old_one(
    released: tuple[Path, Path, dict[str, str]],
) -> None:
    origin, work, commits = released
    git(work, "tag", "v2.0.0", commits["v2.0.0"])
    git(work, "push", "-q", "origin", "v2.0.0")
    moved = move(work, "v2.0.0")
    assert moved.stdout == f"v2 -> v2.0.0 ({commits['v2.0.0']})\n"
    assert (remote_tag(origin, "v2"), remote_tag(origin, "v1")) == (
        commits["v2.0.0"],
        commits["v1.0.0"],
    )
    assert move(work, "v2.0.0").stdout == f"v2 already names v2.0.0 ({commits['v2.0.0']})\n"


def test_a_tag_the_remote_does_not_have_moves_nothing(
    released: tuple[Path, Path, dict[str, str]],
) -> None:
    origin, work, commits = released
    git(work, "tag", "v1.1.1", commits["v1.1.1"])  # tagged here, never pushed
    refused = move(work, "v1.1.1")
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == "release: v1.1.1: not a tag on origin; push the release tag first\n"
    assert remote_tag(origin, "v1") == commits["v1.0.0"]


def test_the_token_reaches_git_as_a_header_for_github_only_and_is_never_stored(
    released: tuple[Path, Path, dict[str, str]],
) -> None:
    origin, work, commits = released
    moved = move(work, "v1.1.0", token="t0ken-for-the-push")
    assert moved.returncode == 0, moved.stderr
    assert remote_tag(origin, "v1") == commits["v1.1.0"]  # a local remote: no header applies
    assert "t0ken" not in (work / ".git/config").read_text() + moved.stdout + moved.stderr
    env = load_release().push_env(
        {"PATH": os.environ["PATH"], "GH_TOKEN": "t0ken", "HOME": str(work)}
    )
    assert "GH_TOKEN" not in env
    header = "AUTHORIZATION: basic " + base64.b64encode(b"x-access-token:t0ken").decode()

    def urlmatch(url: str) -> str:
        got = subprocess.run(
            ["git", "config", "--get-urlmatch", "http.extraheader", url],
            cwd=work,
            env={**env, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"},
            capture_output=True,
            text=True,
            check=False,
        )
        return got.stdout.strip()

    assert urlmatch("https://github.com/entropy-gate/entropy-gate") == header
    assert urlmatch("https://example.com/entropy-gate") == ""


def load_release() -> ModuleType:
    spec = importlib.util.spec_from_file_location("release_script", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_build_step_installs_its_hashed_tools_and_builds_without_isolation(
    tmp_path: Path,
) -> None:
    """The build job's `build` step as written, on a copy of this checkout, with a fresh
    venv's `python` first on PATH (setup-python's place): every tool it installs matches a hash
    in requirements/release.txt, and setuptools from there builds the sdist and the wheel."""
    checkout = project_copy(tmp_path / "checkout")
    made = subprocess.run(
        [FULL_PYTHON, "-m", "venv", str(tmp_path / "venv")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    built = run_step("build", "build (hashed", checkout, {}, str(tmp_path / "venv/bin"))
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert sorted(p.name for p in (checkout / "dist").iterdir()) == [
        f"entropy_gate-{__version__}-py3-none-any.whl",
        f"entropy_gate-{__version__}.tar.gz",
    ]
