"""Seams for users: a Clock port for production code, and the `entropy_gate` pytest plugin.

Registered through the `pytest11` entry point as `entropy_gate`. Standard library only. In a
user's ordinary test runs it only offers its fixtures; it becomes active under the gate (the
runner sets GATE_HOST_ENV) or when asked (`-p entropy_gate`, or `entropy_gate = true` in the
pytest ini). Active, it:

- refuses sockets to anything but loopback during the tests, in one line naming the test and
  the host it tried (under the gate on host B only, on top of its network namespace: host A is
  the laptop and keeps its network);
- replays the pinned cassette (ENTROPY_CASSETTE) with vcrpy in record mode `none` around each
  test, when vcrpy is installed (`pip install 'entropy-gate[cassette]'`), and says so when not.

Fixtures: `entropy_pins` (the pins as the test process sees them), `entropy_clock` (a Clock at
the pinned instant) and `entropy_rng` (a random.Random seeded per test from the pinned seed and
the test id, as pytest-randomly derives it). Module name and option names differ from the gate's
own `entropy_gate_plugin`, so both load side by side.
"""

from __future__ import annotations

import importlib
import os
import random
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from typing import Any, Protocol

import pytest

from entropy_action.testproc import netblock, protocol  # seams is never copied: users install it

GATE_HOST_ENV = protocol.GATE_HOST_ENV  # set by the runner: "a" or "b"
LOCK_ENV = protocol.LOCK_ENV  # set by the runner to "1" on host B unless its network is kept
PLUGIN_NAME = "entropy_gate"


class Clock(Protocol):
    """The port production code takes instead of calling datetime.now() itself."""

    def now(self, tz: tzinfo | None = timezone.utc) -> datetime: ...

    def timestamp(self) -> float: ...


class SystemClock:
    """The live clock, for production."""

    def now(self, tz: tzinfo | None = timezone.utc) -> datetime:
        return datetime.now(tz)

    def timestamp(self) -> float:
        return time.time()


@dataclass(frozen=True)
class PinnedClock:
    """A clock standing at one instant: the pinned one, in the properties."""

    unix: int

    def now(self, tz: tzinfo | None = timezone.utc) -> datetime:
        return datetime.fromtimestamp(self.unix, tz)

    def timestamp(self) -> float:
        return float(self.unix)


@dataclass(frozen=True)
class Pins:
    """The pins the test process sees (from the variables the gate sets); None: unpinned."""

    clock_unix: int | None
    rng_seed: int | None
    tz: str | None
    lang: str | None
    temp_root: str | None
    cassette: str | None
    cassette_sha256: str | None

    @classmethod
    def from_environ(cls, environ: Any = None) -> Pins:
        env = os.environ if environ is None else environ
        return cls(
            clock_unix=_integer(env.get(protocol.CLOCK_UNIX_ENV)),
            rng_seed=_integer(env.get(protocol.RNG_SEED_ENV)),
            tz=env.get("TZ"),
            lang=env.get("LANG"),
            temp_root=env.get(protocol.TEMP_ENV[0]) if env.get(GATE_HOST_ENV) else None,
            cassette=env.get(protocol.CASSETTE_ENV),
            cassette_sha256=env.get(protocol.CASSETTE_SHA256_ENV),
        )


def _integer(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def test_seed(rng_seed: int, nodeid: str) -> int:
    """The seed of one test: pytest-randomly's derivation (plugin.test_seed, the same formula)."""
    return (rng_seed + zlib.crc32(nodeid.encode("utf-8"))) & 0xFFFFFFFF


test_seed.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


# --- fixtures --------------------------------------------------------------------------------


@pytest.fixture
def entropy_pins() -> Pins:
    return Pins.from_environ()


@pytest.fixture
def entropy_clock(entropy_pins: Pins) -> PinnedClock:
    if entropy_pins.clock_unix is None:
        pytest.fail(
            "entropy_clock: clock_unix is not pinned (ENTROPY_CLOCK_UNIX is unset); run the "
            "properties under entropy-gate, which sets it from entropy.yaml",
            pytrace=False,
        )
    return PinnedClock(entropy_pins.clock_unix)


@pytest.fixture
def entropy_rng(entropy_pins: Pins, request: pytest.FixtureRequest) -> random.Random:
    if entropy_pins.rng_seed is None:
        pytest.fail(
            "entropy_rng: rng_seed is not pinned (ENTROPY_RNG_SEED is unset); run the "
            "properties under entropy-gate, which sets it from entropy.yaml",
            pytrace=False,
        )
    return random.Random(_seed_of(request.node, entropy_pins.rng_seed))  # noqa: S311


def _seed_of(item: pytest.Item, rng_seed: int) -> int:
    """The seed the gate's plugin gave this test, when it runs (the same derivation, from the
    id the test has on the hosts: a mutation run holds the base's module under another
    name); else test_seed from the pinned seed."""
    recorded = dict(item.user_properties).get("entropy_seed")
    return recorded if isinstance(recorded, int) else test_seed(rng_seed, item.nodeid)


# --- activation ------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "entropy_gate",
        type="bool",
        default=False,
        help="entropy-gate: lock the network and replay the pinned cassette in every run",
    )


@dataclass
class _State:
    test: str | None = None
    lock: bool = False
    cassette: str | None = None
    vcr: Any = None
    header: tuple[str, ...] = ()


_state = _State()


def _asked(config: pytest.Config) -> bool:
    plugins = config.getoption("plugins", default=None) or []
    return PLUGIN_NAME in plugins or bool(config.getini("entropy_gate"))


def pytest_configure(config: pytest.Config) -> None:
    host = os.environ.get(GATE_HOST_ENV)
    asked = _asked(config)
    if host is None and not asked:
        return  # an ordinary run: fixtures only
    _state.lock = asked or os.environ.get(LOCK_ENV) == "1"
    if _state.lock:
        _lock_network()
    _state.cassette = os.environ.get(protocol.CASSETTE_ENV)
    if _state.cassette:
        _state.vcr, why = _import_vcr() if _is_vcr_cassette(_state.cassette) else (None, _OTHER)
        _state.header = (f"entropy-gate: cassette {_state.cassette} {why}",)


_OTHER = "is not a vcrpy cassette (no `interactions`): the properties read it themselves"


def _is_vcr_cassette(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return b"interactions" in handle.read(1 << 20)
    except OSError:
        return False


def _import_vcr() -> tuple[Any, str]:
    try:
        return importlib.import_module("vcr"), "replayed with vcrpy (record mode none)"
    except ImportError:
        return None, ("not replayed: vcrpy is not installed (pip install 'entropy-gate[cassette]')")


def pytest_report_header() -> list[str]:
    lines = list(_state.header)
    if _state.lock:
        lines.append("entropy-gate: network locked during the properties (loopback only)")
    return lines


def pytest_runtest_logstart(nodeid: str) -> None:
    _state.test = nodeid


def pytest_runtest_logfinish() -> None:
    _state.test = None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call() -> Iterator[None]:
    if _state.vcr is None or _state.cassette is None:
        yield
        return
    serializer = "json" if _state.cassette.endswith(".json") else "yaml"
    with _state.vcr.use_cassette(_state.cassette, record_mode="none", serializer=serializer):
        yield


# --- the network lock ------------------------------------------------------------------------


def refusal(test: str | None, host: object) -> str:
    who = test or "a test"
    return f"entropy-gate: no network for {who}: it tried to reach {host!r} (loopback only)"


def _lock_network() -> None:
    """Refuse every non-loopback host at every entry point (netblock.ENTRY_POINTS) while a
    test runs, naming it; the attempt still reaches the audit hook."""

    def refused(host: object) -> str | None:
        return None if _state.test is None else refusal(_state.test, host)

    netblock.install(refused, audit=True)
