"""One in-process network block (testproc/netblock.py) for the gate's plugin (host B) and the
user's seams (`entropy_gate`, during each test): every entry point it wraps is refused by both,
loopback still works. Each run is a pytest subprocess (pytester): the block patches sockets
in the process it activates in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from entropy_action.hosts import testfiles
from entropy_action.testproc import netblock, protocol, seams

pytest_plugins = ["pytester"]

OUTSIDE = "192.0.2.1"  # TEST-NET-1: never routed
NAME = "example.com"

# One call of each entry point towards a host that is not loopback (a table test: an entry
# point added to netblock.ENTRY_POINTS without a call here fails in both runs).
CALLS = """\
import socket


def udp():
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(2)
    return sock


CALLS = {
    "socket.getaddrinfo": lambda: socket.getaddrinfo("example.com", 80),
    "socket.gethostbyname": lambda: socket.gethostbyname("example.com"),
    "socket.gethostbyname_ex": lambda: socket.gethostbyname_ex("example.com"),
    "socket.gethostbyaddr": lambda: socket.gethostbyaddr("192.0.2.1"),
    "socket.socket.connect": lambda: udp().connect(("192.0.2.1", 9)),
    "socket.socket.connect_ex": lambda: udp().connect_ex(("192.0.2.1", 9)),
    "socket.socket.sendto": lambda: udp().sendto(b"x", ("192.0.2.1", 9)),
    "socket.socket.sendmsg": lambda: udp().sendmsg([b"x"], [], 0, ("192.0.2.1", 9)),
}
"""

REFUSED = """\
import pytest

from calls import CALLS


def test_refused():
    with pytest.raises(OSError) as refused:
        CALLS["{entry}"]()
    print("REFUSED:", refused.value)
"""

LOOPBACK = """\
import socket
import threading


def test_loopback_is_open():
    server = socket.create_server(("127.0.0.1", 0))
    threading.Thread(target=lambda: server.accept()[0].close(), daemon=True).start()
    with socket.create_connection(server.getsockname(), timeout=5):
        pass
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as receiver:
        receiver.bind(("127.0.0.1", 0))
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
            sender.sendto(b"ping", receiver.getsockname())
            sender.sendmsg([b"pong"], [], 0, receiver.getsockname())
            sender.connect(receiver.getsockname())
            sender.sendmsg([b"pung"], ())  # no address: the connected peer
        receiver.settimeout(5)
        assert [receiver.recv(4) for _ in range(3)] == [b"ping", b"pong", b"pung"]
    assert socket.gethostbyaddr("127.0.0.1")[2] == ["127.0.0.1"]
    assert socket.gethostbyname("localhost").startswith("127.")
    assert socket.getaddrinfo("127.0.0.1", 80)
"""

# At collection, outside any test: the seams do not refuse (the plugin does, on host B).
AT_COLLECTION = """\
import socket

try:
    socket.gethostbyname("example.com")
    SEEN = ""
except OSError as exc:
    SEEN = str(exc)


def test_outside_a_test():
    print("AT COLLECTION:", SEEN)
"""


def _seams_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.RunResult:
    for name in (seams.GATE_HOST_ENV, seams.LOCK_ENV, "ENTROPY_CASSETTE"):
        monkeypatch.delenv(name, raising=False)
    return pytester.runpytest_subprocess("-p", "entropy_gate", "-s", "-p", "no:cacheprovider")


def _plugin_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> pytest.RunResult:
    """The gate's plugin as host B loads it: copied with its siblings, the network blocked."""
    for name in (seams.GATE_HOST_ENV, seams.LOCK_ENV):
        monkeypatch.delenv(name, raising=False)
    folder = testfiles.install_plugin(tmp_path)
    config = tmp_path / "plugin.json"
    report = tmp_path / "report.json"
    config.write_text(json.dumps({"host": "b", "report": str(report), "block_network": True}))
    monkeypatch.setenv("PYTHONPATH", str(folder))
    monkeypatch.setenv(protocol.PLUGIN_ENV, str(config))
    result = pytester.runpytest_subprocess(
        "-p", protocol.PLUGIN_MODULE, "-s", "-p", "no:cacheprovider"
    )
    assert json.loads(report.read_text())["network_blocked_in_process"] is True
    return result


def _refusal(entry: str, plugin: bool) -> str:
    host = NAME if entry.startswith("socket.gethostbyname") or "getaddrinfo" in entry else OUTSIDE
    if plugin:
        return f"entropy-gate host B has no network: '{host}' is not loopback"
    return (
        f"entropy-gate: no network for test_refused.py::test_refused: it tried to reach "
        f"'{host}' (loopback only)"
    )


def test_the_entry_points_are_one_list() -> None:
    assert netblock.ENTRY_POINTS == (
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "socket.gethostbyname_ex",
        "socket.gethostbyaddr",
        "socket.socket.connect",
        "socket.socket.connect_ex",
        "socket.socket.sendto",
        "socket.socket.sendmsg",
    )
    assert set(netblock.AUDIT_EVENTS) == {e.rpartition(".")[2] for e in netblock.ENTRY_POINTS}


@pytest.mark.parametrize("entry", netblock.ENTRY_POINTS)
@pytest.mark.parametrize("plugin", [False, True], ids=["seams", "plugin"])
def test_both_blocks_refuse_every_entry_point(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    entry: str,
    plugin: bool,
) -> None:
    pytester.makepyfile(calls=CALLS, test_refused=REFUSED.replace("{entry}", entry))
    if plugin:
        result = _plugin_run(pytester, monkeypatch, tmp_path)
    else:
        result = _seams_run(pytester, monkeypatch)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"*REFUSED: *{_refusal(entry, plugin)}"])


@pytest.mark.parametrize("plugin", [False, True], ids=["seams", "plugin"])
def test_loopback_still_works_under_both_blocks(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, plugin: bool
) -> None:
    pytester.makepyfile(test_loopback=LOOPBACK)
    if plugin:
        result = _plugin_run(pytester, monkeypatch, tmp_path)
    else:
        result = _seams_run(pytester, monkeypatch)
    result.assert_outcomes(passed=1)


def test_the_seams_refuse_only_while_a_test_runs_the_plugin_always(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytester.makepyfile(test_collection=AT_COLLECTION)
    result = _seams_run(pytester, monkeypatch)
    result.assert_outcomes(passed=1)
    line = next(li for li in result.outlines if "AT COLLECTION:" in li)
    assert "entropy-gate" not in line  # nothing, or this machine's own resolver's error
    result = _plugin_run(pytester, monkeypatch, tmp_path)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*AT COLLECTION: *entropy-gate host B has no network*"])


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        (None, True),
        ("", True),
        ("localhost", True),
        ("LOCALHOST.", True),
        ("app.localhost", True),
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("::1%lo", True),
        ("0.0.0.0", True),
        (b"127.0.0.1", True),
        ("example.com", False),
        ("192.0.2.1", False),
        ("10.0.0.1", False),
        ("::ffff:192.0.2.1", False),
        ("localhost.example.com", False),
        (b"\xff", False),
    ],
)
def test_what_is_loopback(host: object, loopback: bool) -> None:
    assert netblock.is_loopback(host) is loopback
