"""Fairness to real repositories: judge the patch, not the repository's history.

A real-shaped repository carries, at its base, what real suites carry: platform skips, an
xfail, a conftest hook that reorders tests, parametrize ids holding the checkout's absolute
path, a server on 127.0.0.1, timed waits, and addopts that only work with plugins the gate
does not load. An honest docs-only patch must come out a merge candidate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from entropy_action.verdict.remediation import NEXT_STEP
from tests.support.helpers import Repo

PYPROJECT = """\
[tool.pytest.ini_options]
addopts = "--cov=mylib --cov-fail-under=99 --junitxml=reports/own.xml"
markers = ["slow: takes a while"]
"""

CONFTEST = """\
def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: "slow" in item.keywords)
"""

LIBRARY = """\
def greet(name):
    return f"Hello, {name}!"
"""

PROPERTIES = """\
import http.server
import queue
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from mylib import greet

DATA = Path(__file__).parent / "data"


@pytest.mark.skipif(sys.platform != "win32", reason="windows only")
def test_windows_drive_letters():
    assert greet("C:") == "Hello, C:!"


@pytest.mark.xfail(reason="greetings are not title-cased yet", strict=False)
def test_title_case():
    assert greet("ada") == "Hello, Ada!"


@pytest.mark.parametrize("folder", [DATA, DATA / "nested"], ids=str)
def test_folders_are_absolute(folder):
    assert folder.is_absolute()


def test_greeting_over_loopback_http():
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = greet(self.path.strip("/")).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/bob"
        with urllib.request.urlopen(url, timeout=5) as response:
            assert response.read() == b"Hello, bob!"
    finally:
        server.shutdown()
        server.server_close()


def test_timed_waits_keep_working():
    started = time.monotonic()
    time.sleep(0.05)
    assert threading.Event().wait(0.05) is False
    with pytest.raises(queue.Empty):
        queue.Queue().get(timeout=0.05)
    assert 0.1 <= time.monotonic() - started < 5


@pytest.mark.slow
def test_greet():
    assert greet("a") == "Hello, a!"
"""

MANIFEST = """\
version: 1
property_id: greetings
module: tests/test_greetings.py
pins:
  rng_seed: 11
  tz: UTC
  lang: C.UTF-8
  temp_root: {temp_root}
run:
  pytest_args: ["-o", "addopts="]
"""


@pytest.fixture
def real_shaped(repo: Repo, tmp_path: Path) -> tuple[Repo, str]:
    repo.write("pyproject.toml", PYPROJECT)
    repo.write("conftest.py", CONFTEST)
    repo.write("mylib/__init__.py", LIBRARY)
    repo.write("tests/test_greetings.py", PROPERTIES)
    repo.write("README.md", "# mylib\n")
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    return repo, repo.commit("base")


def _gate(repo: Repo, base: str) -> tuple[int, dict[str, Any], str]:
    out = repo.path.parent / "verdict.json"
    result = repo.cli("gate", "--base-ref", base, "--json", str(out))
    return result.code, json.loads(out.read_text(encoding="utf-8")), result.out


def _kinds(verdict: dict[str, Any], introduced: bool) -> list[tuple[str, int, str | None]]:
    return sorted(
        (f["kind"], f["line"], f.get("test"))
        for f in verdict["findings"]
        if f["introduced"] is introduced
    )


def test_an_honest_docs_only_patch_is_a_merge_candidate(real_shaped: tuple[Repo, str]) -> None:
    repo, base = real_shaped
    repo.write("README.md", "# mylib\n\nGreets people.\n")
    code, verdict, out = _gate(repo, base)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), out
    assert _kinds(verdict, introduced=True) == []
    pre_existing = _kinds(verdict, introduced=False)
    assert ("collection_tampering", 1, None) in pre_existing
    lines = PROPERTIES.splitlines()
    windows = lines.index("def test_windows_drive_letters():") + 1
    title = lines.index("def test_title_case():") + 1
    assert ("skip_marker", windows - 1, "test_windows_drive_letters") in pre_existing
    assert ("skip_marker", title - 1, "test_title_case") in pre_existing
    assert ("not_executed", windows, "test_windows_drive_letters") in pre_existing
    # Every pre-existing finding is shown as a notice in the summary, none as a rejection.
    assert "notice: pre-existing" in out
    ids = {t["id"]: (t["host_a"], t["host_b"]) for t in verdict["tests"]}
    # The checkout's absolute path is normalized out, so host B's copy pairs with host A.
    assert ids["tests/test_greetings.py::test_folders_are_absolute[<root>/tests/data]"] == (
        "passed",
        "passed",
    )
    assert ids["tests/test_greetings.py::test_greeting_over_loopback_http"] == ("passed", "passed")
    assert ids["tests/test_greetings.py::test_timed_waits_keep_working"] == ("passed", "passed")
    assert not (repo.path / "reports" / "own.xml").exists()


def test_path_bearing_parametrize_ids_pair_across_hosts(real_shaped: tuple[Repo, str]) -> None:
    repo, base = real_shaped
    repo.write("README.md", "# mylib\n\nmore docs\n")
    code, verdict, _ = _gate(repo, base)
    paired = [t for t in verdict["tests"] if "test_folders_are_absolute" in t["id"]]
    assert [t["id"] for t in paired] == [
        "tests/test_greetings.py::test_folders_are_absolute[<root>/tests/data]",
        "tests/test_greetings.py::test_folders_are_absolute[<root>/tests/data/nested]",
    ]
    assert all((t["host_a"], t["host_b"]) == ("passed", "passed") for t in paired)
    assert all(len(t["raw_ids"]) == 2 for t in paired)  # each host ran from its own directory
    assert all(str(repo.path) in t["raw_ids"][0] for t in paired)
    assert (code, verdict["classification"]) == (0, "merge_candidate")


def test_a_patch_that_adds_one_skip_is_named_alone(real_shaped: tuple[Repo, str]) -> None:
    repo, base = real_shaped
    repo.write(
        "tests/test_greetings.py",
        PROPERTIES.replace(
            "def test_greeting_over_loopback_http():",
            '@pytest.mark.skip(reason="flaky on CI")\ndef test_greeting_over_loopback_http():',
        ),
    )
    code, verdict, out = _gate(repo, base)
    lines = (repo.path / "tests/test_greetings.py").read_text().splitlines()
    marker = lines.index('@pytest.mark.skip(reason="flaky on CI")') + 1
    assert (code, verdict["classification"]) == (1, "entropy_silenced")
    assert _kinds(verdict, introduced=True) == [
        ("not_executed", marker + 1, "test_greeting_over_loopback_http"),
        ("skip_marker", marker, "test_greeting_over_loopback_http"),
    ]
    step = f"tests/test_greetings.py:{marker}: {NEXT_STEP['skip_marker']}\n     skip marker 'skip'"
    assert step in out  # the marker's line leads what to do, with the finding's message


def test_changing_the_run_options_is_a_pin_mutation(real_shaped: tuple[Repo, str]) -> None:
    repo, base = real_shaped
    manifest = (repo.path / "entropy.yaml").read_text(encoding="utf-8")
    repo.write("entropy.yaml", manifest.replace('["-o", "addopts="]', '["-o", "addopts=", "-q"]'))
    code, verdict, _ = _gate(repo, base)
    assert (code, verdict["classification"]) == (1, "pin_mutation")
    assert verdict["pin_changes"]["changed"] == ["run.pytest_args"]


def test_a_selecting_run_option_at_the_head_is_refused(real_shaped: tuple[Repo, str]) -> None:
    repo, base = real_shaped
    manifest = (repo.path / "entropy.yaml").read_text(encoding="utf-8")
    repo.write("entropy.yaml", manifest.replace('["-o", "addopts="]', '["-k", "greet"]'))
    code, verdict, out = _gate(repo, base)
    assert (code, verdict["classification"]) == (1, "pin_mutation")
    assert (
        "entropy.yaml:10: run.pytest_args: '-k' selects, stops or reroutes tests; the gate runs "
        "the whole module (the patch broke the pin file)"
    ) in out


def test_without_run_options_addopts_for_absent_plugins_fail_both_hosts(
    real_shaped: tuple[Repo, str], tmp_path: Path
) -> None:
    """Why `run.pytest_args` exists: addopts naming pytest-cov break a bare run everywhere."""
    repo, _ = real_shaped
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "t2").split("run:")[0])
    base = repo.commit("a manifest without run options")
    repo.write("README.md", "# mylib\n\ndocs\n")
    code, verdict, _ = _gate(repo, base)
    assert (code, verdict["classification"]) == (2, "invalid")
    assert verdict["reasons"][0] == (
        "invalid input: host A: pytest usage error (see pytest.log); an option in addopts may "
        'need a plugin this interpreter lacks: set run.pytest_args, e.g. ["-o", "addopts="] — '
        "python -m pytest: error: unrecognized arguments: --cov=mylib --cov-fail-under=99"
    )


def test_a_module_that_fails_at_import_is_a_failed_host_with_the_error(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("mylib/__init__.py", LIBRARY)
    repo.write(
        "tests/test_greetings.py", "from mylib import greet\n\ndef test_a():\n    assert greet\n"
    )
    base = repo.commit("base")
    repo.write("mylib/__init__.py", "raise RuntimeError('config file missing')\n")
    code, verdict, out = _gate(repo, base)
    assert (code, verdict["classification"]) == (1, "real_defect")
    assert (verdict["host_a"], verdict["host_b"]) == ("fail", "fail")
    assert any("RuntimeError: config file missing" in error for error in verdict["errors"])
    assert "RuntimeError: config file missing" in out
