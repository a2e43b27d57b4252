"""Every supported Python, with the plugins real suites use: real `entropy-gate gate` runs.

For each Python of ci.yml's matrix this machine has (tests/support/compat.py), a venv with the
gate and requirements/compat.lock; in it, each repository of tests/compat/repos.py is built
(a fresh machine's git: no global identity, an empty HOME), its head patch applied as the
README's docs-only step applies one (in the work tree), and `entropy-gate gate --base-ref
HEAD` run as a user runs it. A docs-only patch must be a merge candidate for every property;
a head that silences a failing test with a clock library or with reruns must be rejected with
the finding that names it. All runs start at once, as many at a time as there are cores,
before the first test reads its result.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.compat.repos import CASES, Case
from tests.support import compat

FOUND = compat.interpreters()
VERSIONS = [i.version for i in FOUND.have]
GATE_TIMEOUT = 600


@dataclass(frozen=True)
class Ran:
    code: int
    verdict: dict[str, Any] | None
    output: str
    seconds: float


def _env(home: Path, venv: Path) -> dict[str, str]:
    """A fresh machine's: no git identity, an empty HOME, the venv's bin/ first."""
    return {
        "PATH": f"{venv.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "LANG": "C.UTF-8",
        **({"PYENV_ROOT": os.environ["PYENV_ROOT"]} if "PYENV_ROOT" in os.environ else {}),
    }


def _git(repo: Path, env: dict[str, str], *args: str) -> None:
    identity = ["-c", "user.name=Compat", "-c", "user.email=compat@example.invalid"]
    subprocess.run(["git", *identity, *args], cwd=repo, env=env, check=True, capture_output=True)


def _build(case: Case, repo: Path, python: Path, env: dict[str, str]) -> None:
    for relative, text in case.files.items():
        target = repo / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text), encoding="utf-8")
    _git(repo, env, "init", "-q", "-b", "main")
    if case.snapshots:  # syrupy's own step: the snapshots are written once and committed
        subprocess.run(
            [str(python), "-m", "pytest", "-q", "-p", "no:randomly", "--snapshot-update",
             "tests/test_snapshot.py"],
            cwd=repo, env=env, check=True, capture_output=True,
        )  # fmt: skip
        shutil.rmtree(repo / ".pytest_cache", ignore_errors=True)
    _git(repo, env, "add", "-A")
    _git(repo, env, "commit", "-qm", "base")
    for relative, text in case.head.items():
        (repo / relative).write_text(textwrap.dedent(text), encoding="utf-8")


def _gate(case: Case, version: str, python: Path, work: Path) -> Ran:
    home, repo = work / "home", work / "repo"
    home.mkdir(parents=True)
    env = _env(home, python)
    started = time.monotonic()
    try:
        _build(case, repo, python, env)
    except subprocess.CalledProcessError as exc:
        shown = (exc.stderr or b"").decode("utf-8", "replace")
        return Ran(-1, None, f"building {case.name} failed: {shown}", 0.0)
    verdict = work / "verdict.json"
    done = subprocess.run(
        [str(python.parent / "entropy-gate"), "gate", "--base-ref", "HEAD", "--json",
         str(verdict), "--out", str(work / "reports")],
        cwd=repo, env=env, capture_output=True, text=True, timeout=GATE_TIMEOUT, check=False,
    )  # fmt: skip
    loaded = json.loads(verdict.read_text()) if verdict.is_file() else None
    output = f"Python {version}, {case.name}: exit {done.returncode}\n{done.stdout}{done.stderr}"
    return Ran(done.returncode, loaded, output, time.monotonic() - started)


@pytest.fixture(scope="module")
def venvs() -> dict[str, Path | str]:
    started = time.monotonic()
    built = compat.ensure_all(FOUND.have)
    print(f"compat: the venvs of Python {', '.join(built)}: {time.monotonic() - started:.1f} s")
    return built


@pytest.fixture(scope="module")
def runs(
    venvs: dict[str, Path | str], tmp_path_factory: pytest.TempPathFactory
) -> dict[tuple[str, str], Ran | str]:
    """Every case on every Python, as many at once as there are cores."""
    root = tmp_path_factory.mktemp("compat")
    jobs: dict[tuple[str, str], Any] = {}
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for version, python in venvs.items():
            for case in CASES:
                if isinstance(python, str):
                    jobs[(version, case.name)] = python  # the venv could not be built
                else:
                    work = root / f"py{version}" / case.name
                    jobs[(version, case.name)] = pool.submit(_gate, case, version, python, work)
    done = {key: job if isinstance(job, str) else job.result() for key, job in jobs.items()}
    for (version, name), ran in sorted(done.items()):  # what each run cost (pytest -s shows it)
        if isinstance(ran, Ran):
            print(f"compat: Python {version} {name}: {ran.seconds:.1f} s")
    return done


def _ran(runs: dict[tuple[str, str], Ran | str], version: str, case: Case) -> Ran:
    found = runs[(version, case.name)]
    if isinstance(found, str):
        if compat.required():
            pytest.fail(found)
        pytest.skip(found)
    return found


def _verdicts(ran: Ran) -> dict[str, str]:
    """Each property's classification ("" for a one-property manifest's)."""
    assert ran.verdict is not None, ran.output
    each = ran.verdict.get("properties")
    if not each:
        return {"": ran.verdict["classification"]}
    return {p["property_id"]: p["verdict"]["classification"] for p in each}


def _findings(verdict: dict[str, Any]) -> list[dict[str, Any]]:
    """The verdict's findings, each property's in a manifest that lists them."""
    each = verdict.get("properties") or []
    return [*verdict["findings"], *(f for p in each for f in p["verdict"]["findings"])]


def test_every_supported_python_is_here_or_named() -> None:
    """The tier runs on what it found; a supported version the machine lacks is named (by
    `python -m tests.support.compat`, which .ci/run calls first), a named path refused."""
    assert compat.supported() == ["3.10", "3.11", "3.12", "3.13"]  # ci.yml's matrix
    assert not FOUND.refused, FOUND.refused
    assert VERSIONS, f"no supported Python found (missing: {', '.join(FOUND.missing)})"
    if not os.environ.get(compat.PYTHONS_ENV):  # each supported version: found or named
        assert sorted([*VERSIONS, *FOUND.missing]) == compat.supported(), FOUND
        own = f"{sys.version_info[0]}.{sys.version_info[1]}"  # the suite's own Python
        assert own in VERSIONS, FOUND


def test_a_named_interpreter_that_is_no_supported_python_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = tmp_path / "python3.9"
    old.write_text("#!/bin/sh\necho 3.9 3.9.18\n", encoding="utf-8")
    old.chmod(0o755)
    broken = tmp_path / "not-python"
    broken.write_text("#!/bin/sh\nexit 3\n", encoding="utf-8")
    broken.chmod(0o755)
    named = f"{sys.executable} {old} {broken} {tmp_path / 'absent'}"
    monkeypatch.setenv(compat.PYTHONS_ENV, named)
    found = compat.interpreters()
    assert [i.path for i in found.have] == [Path(sys.executable)]
    assert found.missing == []
    env = compat.PYTHONS_ENV
    assert found.refused == [
        f"{env}: {old} is Python 3.9.18, not one ci.yml lists",
        f"{env}: {broken} does not run as a Python",
        f"{env}: {tmp_path / 'absent'} does not run as a Python",
    ]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.parametrize("version", VERSIONS)
def test_the_gate_judges_the_plugins_suite_as_it_should(
    runs: dict[tuple[str, str], Ran | str], version: str, case: Case
) -> None:
    ran = _ran(runs, version, case)
    assert _verdicts(ran) == case.expected, ran.output
    expected_code = 0 if set(case.expected.values()) == {"merge_candidate"} else 1
    assert ran.code == expected_code, ran.output
    assert ran.verdict is not None
    assert "Traceback" not in ran.output
    found = [(f["kind"], f["path"], f["line"]) for f in _findings(ran.verdict)]
    for finding in case.findings:
        assert finding in found, ran.output
    # no production read was removed: a frozen clock's reads are unseen, not gone
    assert not [f for f in found if f[0] == "live_read_removed"], ran.output
    if case.measured:
        score = ran.verdict["mutation"]
        assert score is not None, ran.output
        assert score["base_killed"] == score["head_killed"] >= 1, score
        assert (score["weakened"], score["strengthened"]) == ([], []), score
