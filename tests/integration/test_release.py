"""The package as PyPI gets it: built once from this checkout (sdist, then the wheel from the
sdist, as `python -m build` and the release workflow do), its metadata, what each holds,
`twine check --strict`, and the upload: `twine upload` to a local package index (pypiserver on
the loopback, no fallback to PyPI) and a fresh venv that installs entropy-gate from that index
alone (`pip install --isolated --index-url`) and runs the demo. What only PyPI can show (the
trusted publisher, the PEP 740 attestations) is in docs/releasing.md."""

from __future__ import annotations

import email.parser
import email.policy
import json
import os
import shutil
import subprocess
import tarfile
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from entropy_action import __version__
from tests.conftest import FULL_PYTHON
from tests.support.e2e_kit import free_port

ROOT = Path(__file__).resolve().parents[2]
NAME = f"entropy_gate-{__version__}"
BUILT_FILES = {"PKG-INFO", "setup.cfg"}  # setuptools adds these (and the egg-info) to an sdist


@dataclass(frozen=True)
class Dist:
    folder: Path
    wheel: Path
    sdist: Path


def run(
    *args: str | Path, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env or {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    out = tmp_path_factory.mktemp("dist")
    built = run(FULL_PYTHON, "-m", "build", "--outdir", out, ROOT)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return Dist(out, out / f"{NAME}-py3-none-any.whl", out / f"{NAME}.tar.gz")


def tree_files() -> set[str]:
    """The checkout's files as git sees them: tracked, or untracked and not ignored."""
    listed = run("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    assert listed.returncode == 0, listed.stderr
    return {name for name in listed.stdout.split("\0") if name and (ROOT / name).is_file()}


def test_one_wheel_and_one_sdist_of_this_version_are_built(dist: Dist) -> None:
    assert sorted(p.name for p in dist.folder.iterdir()) == [dist.wheel.name, dist.sdist.name]


def test_the_sdist_holds_the_whole_tree_the_tests_and_the_demo_read(dist: Dist) -> None:
    with tarfile.open(dist.sdist) as sdist:
        members = {m.name.removeprefix(f"{NAME}/") for m in sdist.getmembers() if m.isfile()}
    extra = {m for m in members - tree_files() if not m.startswith("entropy_gate.egg-info/")}
    assert extra == BUILT_FILES
    assert tree_files() - members == set()


def test_the_wheel_holds_every_file_of_the_package_and_nothing_else(dist: Dist) -> None:
    with zipfile.ZipFile(dist.wheel) as wheel:
        names = set(wheel.namelist())
    package = {name for name in tree_files() if name.startswith("entropy_action/")}
    assert package - names == set()  # the demo's data, py.typed, the test-process files
    others = {name.split("/")[0] for name in names - package}
    assert others == {f"{NAME}.dist-info"}


def metadata(dist: Dist) -> email.message.Message:
    """The wheel's METADATA, read as importlib.metadata reads it (UTF-8, RFC 822 headers)."""
    with zipfile.ZipFile(dist.wheel) as wheel:
        text = wheel.read(f"{NAME}.dist-info/METADATA").decode("utf-8")
    return email.parser.Parser(policy=email.policy.compat32).parsestr(text)


def test_the_metadata_is_what_pypi_shows(dist: Dist) -> None:
    meta = metadata(dist)
    assert (meta["Name"], meta["Version"]) == ("entropy-gate", __version__)
    assert meta["License-Expression"] == "MIT"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert meta["Requires-Python"] == ">=3.10"
    classifiers = set(meta.get_all("Classifier") or [])
    versions = {f"Programming Language :: Python :: 3.{minor}" for minor in range(10, 14)}
    assert versions | {"Framework :: Pytest", "Typing :: Typed"} <= classifiers
    assert not [c for c in classifiers if c.startswith("License ::")]  # the expression says it
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert set(urls) == {"Homepage", "Documentation", "Repository", "Issues", "Changelog"}
    assert all(u.startswith("https://github.com/entropy-gate/entropy-gate") for u in urls.values())
    assert meta["Description-Content-Type"] == "text/markdown"
    assert meta.get_payload() == (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_entry_points_are_the_command_and_the_pytest_plugin(dist: Dist) -> None:
    with zipfile.ZipFile(dist.wheel) as wheel:
        text = wheel.read(f"{NAME}.dist-info/entry_points.txt").decode()
    assert text.split() == [
        "[console_scripts]",
        "entropy-gate",
        "=",
        "entropy_action.cli.main:main_entry",
        "[pytest11]",
        "entropy_gate",
        "=",
        "entropy_action.seams",
    ]


def test_twine_check_strict_passes(dist: Dist) -> None:
    checked = run(FULL_PYTHON, "-m", "twine", "check", "--strict", dist.wheel, dist.sdist)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2


def test_twine_check_strict_fails_a_description_pypi_would_not_render(
    dist: Dist, tmp_path: Path
) -> None:
    """The check can fail: the same wheel whose METADATA lost its content type is read as
    reStructuredText, which the README is not."""
    broken = tmp_path / dist.wheel.name
    with zipfile.ZipFile(dist.wheel) as source, zipfile.ZipFile(broken, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename.endswith("/METADATA"):
                data = data.replace(b"Description-Content-Type: text/markdown\n", b"")
            target.writestr(item, data)
    checked = run(FULL_PYTHON, "-m", "twine", "check", "--strict", broken)
    assert checked.returncode == 1
    assert "FAILED" in checked.stdout


# --- the upload, to a local index --------------------------------------------------------------


@dataclass(frozen=True)
class Index:
    url: str  # the upload endpoint (twine's --repository-url)
    simple: str  # the simple API (pip's --index-url)
    uploads: Path


def _wait_until_serving(url: str, server: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert server.poll() is None, "pypiserver exited before it served"
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.1)
    raise AssertionError(f"pypiserver did not answer at {url}")


@pytest.fixture(scope="module")
def index(dist: Dist, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    """pypiserver on 127.0.0.1 over an empty upload folder and a folder of the wheel's
    dependencies (downloaded for this interpreter), with no fallback to PyPI: what a fresh
    venv installs from it came from this index."""
    uploads = tmp_path_factory.mktemp("uploads")
    deps = tmp_path_factory.mktemp("deps")
    fetched = run(FULL_PYTHON, "-m", "pip", "download", "-q", "--dest", deps, dist.wheel)
    assert fetched.returncode == 0, fetched.stdout[-3000:] + fetched.stderr[-3000:]
    for own in deps.glob("entropy_gate-*"):
        own.unlink()
    port = free_port()
    args = ["-p", str(port), "-i", "127.0.0.1", "-a", ".", "-P", ".", "--disable-fallback"]
    with subprocess.Popen(
        [FULL_PYTHON, "-m", "pypiserver", "run", *args, str(uploads), str(deps)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as server:
        try:
            base = f"http://127.0.0.1:{port}"
            _wait_until_serving(f"{base}/simple/", server)
            yield Index(f"{base}/", f"{base}/simple/", uploads)
        finally:
            server.terminate()
            server.wait(timeout=30)


def upload(index: Index, *files: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "TWINE_USERNAME": "release",  # the index takes any: it authenticates nothing
        "TWINE_PASSWORD": "unused",
    }
    args = ["--repository-url", index.url, "--non-interactive", "--disable-progress-bar"]
    return run(FULL_PYTHON, "-m", "twine", "upload", *args, *files, env=env)


@pytest.fixture(scope="module")
def installed(dist: Dist, index: Index, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both files uploaded with twine, then a fresh venv that installs the pinned version
    from the index alone; the venv's folder (its own `report.json` says where each file came
    from)."""
    uploaded = upload(index, dist.wheel, dist.sdist)
    assert uploaded.returncode == 0, uploaded.stdout + uploaded.stderr
    where = tmp_path_factory.mktemp("fresh")
    made = run(FULL_PYTHON, "-m", "venv", where / "venv")
    assert made.returncode == 0, made.stderr
    pip: list[str | Path] = [where / "venv/bin/python", "-m", "pip", "install", "--isolated"]
    pip += ["--no-cache-dir", "--index-url", index.simple, "--report", where / "report.json"]
    got = run(*pip, f"entropy-gate=={__version__}", cwd=where)
    assert got.returncode == 0, got.stdout[-3000:] + got.stderr[-3000:]
    return where


def test_twine_uploads_the_wheel_and_the_sdist(installed: Path, index: Index) -> None:
    assert sorted(p.name for p in index.uploads.iterdir()) == [
        f"{NAME}-py3-none-any.whl",
        f"{NAME}.tar.gz",
    ]


def test_the_same_version_cannot_be_uploaded_twice(
    installed: Path, index: Index, dist: Dist
) -> None:
    before = (index.uploads / dist.wheel.name).read_bytes()
    again = upload(index, dist.wheel)
    assert again.returncode == 1
    assert "HTTPError: 400 Bad Request" in again.stdout  # PyPI's answer to a file it has
    assert (index.uploads / dist.wheel.name).read_bytes() == before


def test_a_fresh_venv_installs_the_wheel_from_the_index(installed: Path, index: Index) -> None:
    report = json.loads((installed / "report.json").read_text(encoding="utf-8"))
    (own,) = [i for i in report["install"] if i["metadata"]["name"] == "entropy-gate"]
    assert own["download_info"]["url"] == f"{index.url}packages/{NAME}-py3-none-any.whl"
    assert own["metadata"]["version"] == __version__
    sources = {i["download_info"]["url"].split("/packages/")[0] for i in report["install"]}
    assert sources == {index.url.removesuffix("/")}  # every dependency too: nothing from PyPI


def test_the_installed_entropy_gate_runs_the_demo_outside_the_checkout(installed: Path) -> None:
    gate = installed / "venv/bin/entropy-gate"
    version = run(gate, "--version", cwd=installed)
    assert version.stdout == f"entropy-gate {__version__}\n"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHONPATH"))}
    demo = run(gate, "demo", "--patch", "honest-fix", cwd=installed, env=env)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert demo.stdout.splitlines()[-1] == "1 of 1 rows match"


# --- scripts/check-dist.sh, which .ci/run and the release workflow run on the built files --------


def test_check_dist_refuses_a_folder_without_one_wheel_and_one_sdist(tmp_path: Path) -> None:
    (tmp_path / f"{NAME}.tar.gz").write_bytes(b"")
    checked = run("bash", ROOT / "scripts/check-dist.sh", tmp_path)
    assert checked.returncode == 2
    assert (
        checked.stderr
        == f"check-dist: {tmp_path} must hold one wheel and one sdist of entropy-gate\n"
    )


def test_check_dist_fails_a_wheel_that_lost_a_package_data_file(dist: Dist, tmp_path: Path) -> None:
    """The demo's data left out of the wheel (a package-data glob gone wrong): the wheel
    installs, `--version` answers, and the demo run from it fails, naming the file."""
    lost = "entropy_action/gate/demo_data/patches.json"
    shutil.copy(dist.sdist, tmp_path)
    with (
        zipfile.ZipFile(dist.wheel) as source,
        zipfile.ZipFile(tmp_path / dist.wheel.name, "w") as target,
    ):
        for item in source.infolist():
            if item.filename != lost:
                target.writestr(item, source.read(item))
    env = {**os.environ, "PYTHON": FULL_PYTHON, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    checked = run("bash", ROOT / "scripts/check-dist.sh", tmp_path, env=env)
    assert checked.returncode != 0
    assert (
        f"check-dist: entropy-gate {__version__} installed from {dist.wheel.name}" in checked.stdout
    )
    assert "patches.json" in checked.stderr
    assert "merge_candidate" not in checked.stdout
