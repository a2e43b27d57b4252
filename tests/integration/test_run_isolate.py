"""The isolated host B: what differs from host A, what keeps working, and the degraded path.

One property module, run once on host A and once on host B (module-scoped), then one test
per property outcome. Each coupled property passes on A and fails on B; each fairness property
(loopback servers, timed waits) passes on both.
"""

from __future__ import annotations

import datetime
import hashlib
import importlib.util
import json
import os
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from entropy_action.core.errors import GateError
from entropy_action.core.layout import HOST_JSON, JUNIT_XML
from entropy_action.hosts import isolate, launch
from tests.integration.test_run_host_a import MODULE, make_repo, manifest_yaml, outcomes, settings
from tests.support.helpers import Repo

REAL_YEAR = datetime.date.today().year
TWO_DIGIT = (REAL_YEAR + 50) % 100  # dateutil maps it to REAL_YEAR + 50 only years ahead

ISOLATION_PROPERTY = f"""\
import datetime
import http.server
import os
import queue
import socket
import tempfile
import threading
import time
import urllib.request

import pytest
from dateutil import parser


def test_clock_reads_this_year():
    assert datetime.date.today().year == {REAL_YEAR}


def test_clock_is_years_ahead():
    assert datetime.datetime.now().year >= {REAL_YEAR + 4}
    assert time.gmtime().tm_year >= {REAL_YEAR + 4}


def test_pinned_clock_stays_the_pin():
    assert os.environ["ENTROPY_CLOCK_UNIX"] == "1768003200"


def test_reads_a_variable_from_the_callers_shell():
    assert os.environ.get("CALLER_ONLY") == "laptop"


def test_reads_the_hostname():
    assert socket.gethostname() == {socket.gethostname()!r}


def test_home_is_the_callers():
    assert os.environ["HOME"] == os.environ["LAPTOP_HOME"]


def test_runs_from_the_checkout():
    assert os.getcwd() == os.environ["CHECKOUT"]


def test_dateutil_two_digit_year_follows_the_live_clock():
    assert parser.parse("01/02/{TWO_DIGIT:02d}").year == {REAL_YEAR + 50}


def test_no_route_off_the_machine():
    with pytest.raises(OSError):
        socket.create_connection(("192.0.2.1", 80), timeout=2)


def test_http_server_on_loopback():
    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"hello")

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({{}}))
        with opener.open(f"http://127.0.0.1:{{server.server_port}}/", timeout=5) as reply:
            assert reply.read() == b"hello"
    finally:
        server.shutdown()
        server.server_close()


def test_sleep_event_and_queue_timeouts_work():
    start = time.monotonic()
    time.sleep(0.05)
    assert threading.Event().wait(0.05) is False
    with pytest.raises(queue.Empty):
        queue.Queue().get(timeout=0.05)
    assert 0.14 <= time.monotonic() - start < 5


def test_tmpdir_is_private_and_empty():
    assert os.listdir(tempfile.gettempdir()) == []
"""

COUPLED = {
    "test_clock_reads_this_year",
    "test_reads_a_variable_from_the_callers_shell",
    "test_reads_the_hostname",
    "test_home_is_the_callers",
    "test_runs_from_the_checkout",
}
AHEAD = {"test_clock_is_years_ahead", "test_dateutil_two_digit_year_follows_the_live_clock"}
FAIR = {
    "test_pinned_clock_stays_the_pin",
    "test_http_server_on_loopback",
    "test_sleep_event_and_queue_timeouts_work",
    "test_tmpdir_is_private_and_empty",
}


def _run(tmp: Path, *, isolated: bool, namespaces: bool = True) -> tuple[dict[str, str], Any]:
    temp_root, home, checkout = tmp / "entropy-tmp", tmp / "laptop-home", tmp / "repo"
    home.mkdir()
    pins = {"CHECKOUT": str(checkout), "LAPTOP_HOME": str(home)}
    root = make_repo(
        checkout,
        {
            "entropy.yaml": manifest_yaml(temp_root, env=pins),
            "pytest.ini": "[pytest]\nfilterwarnings = error\n",  # time-machine must not warn
            MODULE: ISOLATION_PROPERTY,
        },
    )
    caller = {**os.environ, "CALLER_ONLY": "laptop", "HOME": str(home)}
    out = tmp / "out"
    options: dict[str, Any] = {"isolate": isolated, "namespaces": namespaces}
    info = launch.run_host(settings(root, out, caller, **options))
    return outcomes(out / JUNIT_XML), info


@pytest.fixture(scope="module")
def host_a(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], Any]:
    return _run(tmp_path_factory.mktemp("host-a"), isolated=False)


@pytest.fixture(scope="module")
def host_b(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], Any]:
    return _run(tmp_path_factory.mktemp("host-b"), isolated=True)


def test_on_host_a_coupled_and_fair_properties_pass(host_a: tuple[dict[str, str], Any]) -> None:
    results, info = host_a
    expected = dict.fromkeys(COUPLED | FAIR, "passed")
    expected.update(dict.fromkeys(AHEAD, "failed"))
    expected["test_no_route_off_the_machine"] = results["test_no_route_off_the_machine"]
    assert results == expected
    assert info.isolation == []


@pytest.mark.parametrize("name", sorted(COUPLED))
def test_a_property_coupled_to_the_laptop_fails_on_host_b(
    host_b: tuple[dict[str, str], Any], name: str
) -> None:
    assert host_b[0][name] == "failed"


@pytest.mark.parametrize("name", sorted(FAIR | AHEAD | {"test_no_route_off_the_machine"}))
def test_host_b_keeps_loopback_timed_waits_and_the_pins(
    host_b: tuple[dict[str, str], Any], name: str
) -> None:
    assert host_b[0][name] == "passed"


def test_host_b_reports_what_differed(host_b: tuple[dict[str, str], Any]) -> None:
    info = host_b[1]
    assert info.pins_mismatch == []
    assert info.isolated is True
    assert info.fingerprint.isolated is True
    if not isolate.namespaces().usable:  # a GitHub runner, a laptop without root
        assert "network: non-loopback sockets refused in-process" in info.isolation
        assert len(info.notes) == 1
        assert info.notes[0].startswith("no network/UTS namespace (")
        return
    assert info.notes == []
    tree = Path(info.root)
    assert tree.name == "repo"
    deadline = time.monotonic() + 30  # the copy is removed after the run, in the background
    while tree.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not tree.exists()
    assert [line.split(" ")[0] for line in info.isolation] == [
        "environment",
        "tree",
        "hash_seed",
        "live",
        "file_order:",
        "cpu_count:",
        "network:",
        "hostname",
        "child",
    ]
    assert info.isolation[8] == (
        "child Python processes: the clock shift through sitecustomize (none started)"
    )
    assert info.isolation[2] == (
        "hash_seed unpinned: PYTHONHASHSEED=2767 (host A: 0), so sets and dicts of strings "
        "iterate in another order"
    )
    libuuid = importlib.util.find_spec("_uuid") is not None  # filetimes._shift_uuid1
    also = "file timestamps and uuid1 too" if libuuid else "file timestamps too"
    assert info.isolation[3] == (
        "live wall clock shifted forward 1843 days 7 h 13 min by time-machine "
        f"(ticking, {also}; monotonic clocks untouched)"
    )
    assert info.isolation[6] == "network: a fresh network namespace, loopback only"
    assert info.isolation[7].startswith(f"hostname {isolate.HOSTNAME_PREFIX}")
    assert info.isolation[7].endswith("(UTS namespace)")
    own = socket.gethostname().encode()
    assert info.fingerprint.hostname_sha256 != hashlib.sha256(own).hexdigest()


DEGRADED_PROPERTY = """\
import socket

import pytest


def test_non_loopback_connections_are_refused_in_process():
    with pytest.raises(OSError, match="no network"):
        socket.create_connection(("192.0.2.1", 80), timeout=2)
    with pytest.raises(OSError, match="no network"):
        socket.getaddrinfo("example.com", 443)


def test_loopback_still_works():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), timeout=2):
            pass
    assert socket.getaddrinfo("localhost", 80)


def test_the_hostname_is_another():
    assert socket.gethostname().startswith("entropy-gate-b-")
"""


def test_without_namespaces_host_b_degrades_with_a_note(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write("entropy.yaml", manifest_yaml(None))
    repo.write(MODULE, DEGRADED_PROPERTY)
    repo.commit()
    monkeypatch.setenv("ENTROPY_GATE_NO_NAMESPACES", "1")
    result = repo.cli("run", "--host", "b", "--isolate", "--out", "out")
    assert result.code == 0, result.out
    note = (
        "no network/UTS namespace (namespaces turned off by the caller): non-loopback sockets "
        "are refused in-process and the hostname is replaced in-process only (child processes "
        "still see the network and the real hostname)"
    )
    assert f"note: {note}" in result.err.splitlines()
    data = json.loads((repo.path / "out" / HOST_JSON).read_text())
    assert data["notes"] == [launch.MARKER_ONLY, note]
    assert f"note: {launch.MARKER_ONLY}" in result.err.splitlines()
    assert "network: non-loopback sockets refused in-process" in data["isolation"]
    assert any(
        line.endswith("(in-process: socket.gethostname, os.uname)") for line in data["isolation"]
    )
    assert "TZ unpinned" not in " ".join(data["isolation"])


def test_unpinned_sources_get_host_b_values(tmp_path: Path) -> None:
    lines = ["version: 1", "property_id: prop", f"module: {MODULE}", "pins:", "  rng_seed: 1"]
    text = "\n".join([*lines, "  env:", f"    CALLER_HOME: {os.environ['HOME']}", ""])
    prop = """\
    import os
    import tempfile
    import time


    def test_unpinned_values():
        assert os.environ["TZ"] == "Pacific/Chatham"
        assert time.tzname[0] in ("+1245", "CHAST")
        mask = os.umask(0)
        os.umask(mask)
        assert mask == 0o077
        assert os.environ["HOME"] != os.environ["CALLER_HOME"]
        assert os.listdir(os.environ["HOME"]) == []
        assert os.listdir(tempfile.gettempdir()) == []
    """
    root = make_repo(tmp_path / "repo", {"entropy.yaml": text, MODULE: prop})
    caller = {**os.environ, "TZ": "UTC", "CALLER_HOME": os.environ["HOME"]}
    info = launch.run_host(settings(root, tmp_path / "out", caller, isolate=True))
    assert outcomes(tmp_path / "out" / JUNIT_XML) == {"test_unpinned_values": "passed"}
    assert "TZ unpinned: Pacific/Chatham" in info.isolation
    assert "umask unpinned: 0077" in info.isolation
    assert any(
        line.startswith("temp_root unpinned: TMPDIR is a fresh private") for line in info.isolation
    )


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if not p.is_dir())


def test_the_tree_copy_holds_what_git_would_track(tmp_path: Path) -> None:
    root = make_repo(
        tmp_path / "repo",
        {".gitignore": "*.log\n", "pkg/mod.py": "X = 1\n", "README": "hi\n"},
    )
    (root / "untracked.py").write_text("Y = 2\n")
    (root / "debug.log").write_text("ignored\n")
    (root / "link.py").symlink_to("pkg/mod.py")
    make_repo(root / "nested-worktree", {"inner.py": "Z = 3\n"})
    (root / "out").mkdir()
    (root / "out" / "junit.xml").write_text("<x/>")
    (root / "README").unlink()  # tracked, deleted in the work tree
    dest = tmp_path / "copy"
    count = isolate.copy_tree(root, dest, exclude=(root / "out",))
    assert _files(dest) == [".gitignore", "link.py", "pkg/mod.py", "untracked.py"]
    assert count == 4
    assert (dest / "link.py").is_symlink()


def test_the_tree_copy_skips_a_folder_by_name_not_by_its_names_prefix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The skip compares names' text: `out` must not take `outline.py` or `out2/` with it,
    a nested folder is skipped whole, and a relative root means the same tree."""
    root = make_repo(
        tmp_path / "repo",
        {"outline.py": "", "out2/a.py": "", "build/out/b.py": "", "build/c.py": "", "d.py": ""},
    )
    for name in ("out/junit.xml", "build/out/report.xml"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("<x/>")
    monkeypatch.chdir(tmp_path)
    dest = tmp_path / "copy"
    relative = Path("repo")
    count = isolate.copy_tree(relative, dest, exclude=(relative / "out", root / "build" / "out"))
    assert _files(dest) == ["build/c.py", "d.py", "out2/a.py", "outline.py"]
    assert count == 4
    assert isolate.copy_tree(root, tmp_path / "none", exclude=(root,)) == 0


def test_caches_git_does_not_ignore_are_neither_copied_nor_digested(tmp_path: Path) -> None:
    """A run that writes bytecode into the checkout (pytest's rewrite of a test module, a
    reverted-path attribution re-run) changes neither host B's copy nor the verdict's
    head_tree: two gates on one tree digest it the same (found as a flaky test_evidence_cache
    when no .gitignore hid __pycache__)."""
    from entropy_action.evidence import inputs  # noqa: PLC0415

    root = make_repo(tmp_path / "repo", {"tests/test_a.py": "def test_a():\n    pass\n"})
    before = inputs.tree_digest(root)
    for name in ("tests/__pycache__/test_a.cpython-311-pytest-9.2.0.pyc", ".pytest_cache/v",
                 ".mypy_cache/x.json", "pkg/__pycache__/m.pyc"):  # fmt: skip
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(b"derived")
    assert inputs.tree_digest(root) == before
    assert isolate.copy_tree(root, tmp_path / "copy") == 1
    assert _files(tmp_path / "copy") == ["tests/test_a.py"]
    (root / "tests" / "helper.py").write_text("X = 1\n")  # a real file still counts
    assert inputs.tree_digest(root) != before


def test_outside_git_the_tree_copy_leaves_caches_out(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    for name in ("a.py", "sub/b.py", ".venv/bin/python", "sub/__pycache__/b.pyc", ".git/HEAD"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x")
    dest = tmp_path / "copy"
    assert isolate.copy_tree(root, dest) == 2
    assert _files(dest) == ["a.py", "sub/b.py"]


def test_a_property_module_git_ignores_cannot_run_on_host_b(tmp_path: Path) -> None:
    root = make_repo(
        tmp_path / "repo",
        {"entropy.yaml": manifest_yaml(None), ".gitignore": "tests/\n"},
    )
    (root / MODULE).parent.mkdir(parents=True)
    (root / MODULE).write_text("def test_ok():\n    pass\n")
    with pytest.raises(GateError) as caught:
        launch.run_host(settings(root, tmp_path / "out", isolate=True))
    assert str(caught.value) == (
        f"{MODULE}: git ignores it, so host B's copy of the tree lacks it; commit it or stop "
        "ignoring it"
    )


def test_host_b_keeps_whether_this_is_ci_and_nothing_else_of_the_callers_shell(
    tmp_path: Path,
) -> None:
    """Test tools switch on CI (hypothesis's "ci" profile): both hosts must run them alike."""
    caller = {"PATH": "/usr/bin", "CI": "true", "BILLING_REGION": "eu", "GITHUB_TOKEN": "t0k"}
    kept = isolate.scrubbed_environ(caller, tmp_path / "home", "/usr/bin/python3")
    assert kept == {"PATH": "/usr/bin", "CI": "true", "HOME": str(tmp_path / "home")}
