"""The `entropy_gate` pytest plugin (pytest11): fixtures, per-test seeding, the network lock,
inert outside the gate, the cassette. Each run is a pytest subprocess (pytester), since the
plugin patches sockets in the process it activates in."""

from __future__ import annotations

import hashlib
import json
import random
import re
import socket
import textwrap
from pathlib import Path

import pytest

from entropy_action.gate import local
from entropy_action.testproc import seams
from entropy_action.testproc.seams import test_seed
from tests.integration.test_run_host_a import make_repo

pytest_plugins = ["pytester"]

# (seed + crc32(id)) & 0xFFFFFFFF, computed once by hand: pytest-randomly's derivation
GOLDEN_SEED = 1009347308
GOLDEN_WRAPPED = 3904355906
PINS = {
    "ENTROPY_CLOCK_UNIX": "1768003200",
    "ENTROPY_RNG_SEED": "9173",
    "TZ": "UTC",
    "LANG": "C.UTF-8",
}


@pytest.fixture
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in PINS.items():
        monkeypatch.setenv(name, value)
    for name in (seams.GATE_HOST_ENV, seams.LOCK_ENV, "ENTROPY_CASSETTE"):
        monkeypatch.delenv(name, raising=False)


FIXTURES = """\
import random
from datetime import datetime, timezone, timedelta

from entropy_action.seams import Clock, PinnedClock, Pins, SystemClock


def due(clock: Clock) -> datetime:
    return clock.now() + timedelta(days=30)


def test_clock(entropy_clock):
    assert entropy_clock.now() == datetime(2026, 1, 10, tzinfo=timezone.utc)
    assert entropy_clock.now(tz=timezone(timedelta(hours=2))).hour == 2
    assert entropy_clock.timestamp() == 1768003200.0
    assert due(entropy_clock) == datetime(2026, 2, 9, tzinfo=timezone.utc)
    assert abs(SystemClock().timestamp() - SystemClock().now().timestamp()) < 60


def test_pins(entropy_pins):
    assert entropy_pins == Pins(1768003200, 9173, "UTC", "C.UTF-8", None, None, None)


def test_rng_a(entropy_rng):
    print("A", entropy_rng.random())


def test_rng_b(entropy_rng):
    print("B", entropy_rng.random())
"""


def _printed(output: list[str], tag: str) -> float:
    found = re.search(rf"\b{tag} ([0-9.]+)", "\n".join(output))
    assert found is not None, output
    return float(found.group(1))


def test_the_fixtures_give_the_pins_and_a_generator_seeded_per_test(
    pytester: pytest.Pytester, pinned: None
) -> None:
    pytester.makepyfile(test_fixtures=FIXTURES)
    result = pytester.runpytest_subprocess("-s")
    result.assert_outcomes(passed=4)
    a, b = _printed(result.outlines, "A"), _printed(result.outlines, "B")
    assert a == random.Random(test_seed(9173, "test_fixtures.py::test_rng_a")).random()
    assert b == random.Random(test_seed(9173, "test_fixtures.py::test_rng_b")).random()
    assert a != b
    again = pytester.runpytest_subprocess("-s", "-k", "rng_b")
    assert _printed(again.outlines, "B") == b  # the same test, the same sequence


def test_the_seed_is_pytest_randomlys_derivation() -> None:
    test = "tests/properties/test_invoice_total.py::test_late_fee_after_due"
    assert test_seed(9173, test) == GOLDEN_SEED
    assert test_seed(2**32 - 1, "a") == GOLDEN_WRAPPED  # stays in 32 bits
    assert test_seed(9173, test + "[1]") != test_seed(9173, test)


def test_fixtures_without_the_pins_fail_in_one_line(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in (*PINS, seams.GATE_HOST_ENV):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile("def test_clock(entropy_clock): pass\ndef test_rng(entropy_rng): pass\n")
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        [
            "*entropy_clock: clock_unix is not pinned (ENTROPY_CLOCK_UNIX is unset); run the "
            "properties under entropy-gate, which sets it from entropy.yaml",
            "*entropy_rng: rng_seed is not pinned (ENTROPY_RNG_SEED is unset)*",
        ]
    )


def _outside_address() -> str:
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 80))
        address = str(probe.getsockname()[0])
    except OSError:
        address = "127.0.0.1"
    finally:
        probe.close()
    if address.startswith("127."):
        pytest.skip("no non-loopback address here")
    return address


NETWORK = """\
import socket
import threading


def test_loopback_is_open():
    server = socket.create_server(("127.0.0.1", 0))
    threading.Thread(target=lambda: server.accept()[0].close(), daemon=True).start()
    socket.create_connection(server.getsockname(), timeout=5).close()


def test_reaches_out():
    socket.create_connection(("{address}", 9), timeout=2).close()
"""


@pytest.mark.parametrize(
    ("how", "environ"),
    [
        (["-p", "entropy_gate"], {}),
        (["-o", "entropy_gate=true"], {}),
        ([], {seams.GATE_HOST_ENV: "b", seams.LOCK_ENV: "1"}),
    ],
    ids=["-p", "ini", "host-b"],
)
def test_the_network_lock_names_the_test_and_the_host(
    pytester: pytest.Pytester,
    pinned: None,
    monkeypatch: pytest.MonkeyPatch,
    how: list[str],
    environ: dict[str, str],
) -> None:
    address = _outside_address()
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    pytester.makepyfile(test_net=NETWORK.replace("{address}", address))
    result = pytester.runpytest_subprocess(*how)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "entropy-gate: network locked during the properties (loopback only)",
            f"E * entropy-gate: no network for test_net.py::test_reaches_out: it tried to "
            f"reach '{address}' (loopback only)",
        ]
    )


@pytest.mark.parametrize("environ", [{}, {seams.GATE_HOST_ENV: "a"}], ids=["ordinary", "host-a"])
def test_the_plugin_is_inert_in_ordinary_runs_and_on_host_a(
    pytester: pytest.Pytester,
    pinned: None,
    monkeypatch: pytest.MonkeyPatch,
    environ: dict[str, str],
) -> None:
    address = _outside_address()
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    pytester.makepyfile(
        test_inert=NETWORK.replace("{address}", address)
        + textwrap.dedent(
            """
            import inspect

            def test_socket_is_untouched():
                assert inspect.isroutine(socket.socket.connect)
                assert not inspect.isfunction(socket.socket.connect)
            """
        )
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=2, failed=1)  # refused by the address, not by us
    assert "entropy-gate:" not in result.stdout.str()
    assert pytester.runpytest_subprocess("--trace-config").stdout.str().count("entropy_gate") >= 1


CASSETTE = """\
interactions:
- request:
    body: null
    headers: {}
    method: GET
    uri: http://rates.example.invalid/rate
  response:
    body: {string: '1.25'}
    headers: {}
    status: {code: 200, message: OK}
version: 1
"""
REPLAY = """\
import urllib.request


def test_rate_comes_from_the_cassette():
    with urllib.request.urlopen("http://rates.example.invalid/rate", timeout=5) as response:
        assert response.read() == b"1.25"
"""


def test_the_pinned_cassette_is_replayed_with_vcrpy(
    pytester: pytest.Pytester, pinned: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    cassette = pytester.path / "rates.yaml"
    cassette.write_text(CASSETTE)
    monkeypatch.setenv("ENTROPY_CASSETTE", str(cassette))
    pytester.makepyfile(test_replay=REPLAY)
    result = pytester.runpytest_subprocess("-p", "entropy_gate")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [f"entropy-gate: cassette {cassette} replayed with vcrpy (record mode none)"]
    )


def test_without_vcrpy_the_cassette_is_not_replayed_and_the_header_says_so(
    pytester: pytest.Pytester, pinned: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    cassette = pytester.path / "rates.yaml"
    cassette.write_text(CASSETTE)
    monkeypatch.setenv("ENTROPY_CASSETTE", str(cassette))
    hidden = pytester.mkdir("hide")
    (hidden / "vcr.py").write_text("raise ImportError('vcrpy is hidden in this test')\n")
    monkeypatch.setenv("PYTHONPATH", str(hidden))
    pytester.makepyfile(test_replay=REPLAY)
    result = pytester.runpytest_subprocess("-p", "entropy_gate")
    result.assert_outcomes(failed=1)  # the network is locked and nothing replays
    result.stdout.fnmatch_lines(
        [
            f"entropy-gate: cassette {cassette} not replayed: vcrpy is not installed "
            "(pip install 'entropy-gate[cassette]')",
            "*it tried to reach 'rates.example.invalid' (loopback only)*",
        ]
    )


# -- the cassette's hash, through the gate ------------------------------------------------------

GATED = """\
version: 1
property_id: rates
module: tests/properties/test_rates.py
pins:
  tz: UTC
  cassette: tests/rates.yaml
  cassette_sha256: {digest}
run:
  pytest_args: ["-o", "addopts=", "-p", "no:cacheprovider"]
"""
GATED_PROPERTY = """\
import os


def test_rates_cassette_is_pinned():
    assert os.path.isfile(os.environ["ENTROPY_CASSETTE"])
"""


def _cassette_gate(tmp_path: Path, stored: str | None, digest: str) -> local.GateResult:
    files = {
        "entropy.yaml": GATED.replace("{digest}", digest),
        "tests/properties/test_rates.py": GATED_PROPERTY,
    }
    if stored is not None:
        files["tests/rates.yaml"] = stored
    root = make_repo(tmp_path / "repo", files)
    return local.run_gate(
        local.GateSettings(
            manifest=root / "entropy.yaml",
            base_ref="HEAD",
            environ={"PATH": "/usr/bin:/bin"},
            out=tmp_path / "out",
            base_run=False,
        )
    )


def test_a_cassette_that_matches_its_pin_runs(tmp_path: Path) -> None:
    result = _cassette_gate(tmp_path, CASSETTE, hashlib.sha256(CASSETTE.encode()).hexdigest())
    assert result.verdict.classification == "merge_candidate", result.verdict.reasons


def test_a_changed_cassette_is_invalid_and_says_rotate_it(tmp_path: Path) -> None:
    pinned = hashlib.sha256(b"the old cassette").hexdigest()
    verdict = _cassette_gate(tmp_path, CASSETTE, pinned).verdict
    assert verdict.classification == "invalid"
    actual = hashlib.sha256(CASSETTE.encode()).hexdigest()
    assert verdict.reasons[0] == (
        f"invalid input: host A: entropy.yaml:7: cassette tests/rates.yaml has sha256 {actual}, "
        f"the pin says {pinned}: cassette changed — rotate it in a reviewed change "
        "(a new cassette_sha256)"
    )


def test_a_missing_cassette_is_invalid(tmp_path: Path) -> None:
    verdict = _cassette_gate(tmp_path, None, hashlib.sha256(b"x").hexdigest()).verdict
    assert verdict.classification == "invalid"
    assert verdict.reasons[0] == (
        "invalid input: host A: entropy.yaml:7: cassette tests/rates.yaml: cannot read: "
        "No such file or directory"
    )
    assert json.loads(verdict.model_dump_json())["merge"] is False
