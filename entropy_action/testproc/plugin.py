"""entropy-gate's pytest plugin, loaded inside the test process (hosts.testfiles.write_boot).

Standard library only, and of entropy_action only its siblings protocol.py (the names both
sides share), netblock.py (the network block), provenance.py (where the units under test
came from; registered as a plugin of its own when the config names `provenance_report`) and
datafiles.py (the data files the tests open, when it names `data_report`): the
runner copies this file (as `entropy_gate_plugin.py`) and them (as `entropy_gate_<name>.py`)
into a private directory on PYTHONPATH, so it works under any interpreter that runs pytest. It
does nothing unless the runner names a config file in the environment variable CONFIG_ENV.
Then, at import (before conftests and test modules):

- shifts the live wall clock forward with time-machine (ticking, never frozen) when asked;
- refuses non-loopback sockets in-process and reports another hostname, when the runner could
  not give the run its own network and UTS namespaces;

and once collection is done it writes what the test process saw (the pinned variables, umask,
temp dir, hash seed, locale, time zone) and what isolation took effect into a JSON report.

Seeding (`rng_seed` in the config, or `--entropy-gate-seed N` to replay a failure by hand):
before each test, `random`, numpy's legacy global RNG and `numpy.random.default_rng()` without
a seed (only when the suite imported numpy: it is never imported here) are seeded from
`test_seed(rng_seed, normalized node id)`; hypothesis runs with `rng_seed` as its seed and an
example database in a private directory, never the checkout's `.hypothesis/`. Each test's seed
goes into the JUnit report as the properties `entropy_seed` and `entropy_rng_seed`.

Assertions executed per test are counted by assertcount.py, a plugin of its own.

The channel (`channel_fd` in the config): a pipe's write end the gate passed to this process.
Marked non-inheritable at load, so the tests' children do not get it. One JSON line goes
down it at configure ("begin"), per test report as each phase finishes ("test": node id,
phase, outcome, the terminal's category), per collection report that did not pass
("collect"), and at session finish ("end", with pytest's counts). The gate assembles its own
record of the run from these as they arrive, so a report rewritten later disagrees with it.

PYTEST_DONT_REWRITE: the run imports this module before pytest could rewrite it (it has no
assert to rewrite), and pytest is told so by this marker.
"""

from __future__ import annotations

import atexit
import contextlib
import faulthandler
import hashlib
import importlib
import importlib.util
import json
import locale
import os
import platform
import random
import socket
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator
from typing import Any

if __package__:  # imported as entropy_action.testproc.plugin (the public names, the gate)
    from entropy_action.testproc import (
        datafiles,
        filetimes,
        hookinventory,
        listing,
        netblock,
        order,
        protocol,
        provenance,
    )
else:  # copied into the test process as entropy_gate_plugin (hosts.testfiles)
    import entropy_gate_datafiles as datafiles  # type: ignore[import-not-found, no-redef]
    import entropy_gate_filetimes as filetimes  # type: ignore[import-not-found, no-redef]
    import entropy_gate_hookinventory as hookinventory  # type: ignore[import-not-found, no-redef]
    import entropy_gate_listing as listing  # type: ignore[import-not-found, no-redef]
    import entropy_gate_netblock as netblock  # type: ignore[import-not-found, no-redef]
    import entropy_gate_order as order  # type: ignore[import-not-found, no-redef]
    import entropy_gate_protocol as protocol  # type: ignore[import-not-found, no-redef]
    import entropy_gate_provenance as provenance  # type: ignore[import-not-found, no-redef]

CONFIG_ENV = protocol.PLUGIN_ENV
SEED_OPTION = "--entropy-gate-seed"
HYPOTHESIS_DIR_ENV = protocol.HYPOTHESIS_DIR_ENV
SUBTESTS_PROPERTY = "entropy_subtests"  # junit.SUBTESTS
ORDER_SEED_PROPERTY = "entropy_test_order_seed"  # host B's shuffle seed, per test
URANDOM_SALT = 0x5EED_0B17  # the mutation runs' os.urandom stream is not random's own
CASE_PROPERTY = "entropy_case"  # evidence.junitcases.CASE_PROPERTY: a case by its place
MAX_CASE = 1000
ROOT_PLACEHOLDER = "<root>"  # evidence.ids.ROOT_PLACEHOLDER: ids pair across checkouts

_config: dict[str, Any] | None = None
_state: dict[str, Any] = {}
_HASH_SEED = os.environ.get(protocol.HASH_SEED_ENV)  # as the process started (hash_seed)
_written = False
_subtests: dict[str, int] = {}  # node id: reports of its subtests so far
_channel: dict[str, Any] = {}  # "fd": the channel's write end; "config": pytest's config
_crash_log: list[Any] = []  # the open file faulthandler writes a fatal signal's traceback to


def _load_config() -> dict[str, Any] | None:
    path = os.environ.pop(CONFIG_ENV, None)  # children of the tests do not inherit it
    if not path:
        return None
    with open(path, encoding="utf-8") as handle:
        loaded = json.load(handle)
    return loaded if isinstance(loaded, dict) else None


# --- the live clock -------------------------------------------------------------------------


def _import_time_machine() -> tuple[Any, bool]:
    """time_machine, imported while dateutil.parser cannot be (see NOTES: it caches the year).

    Returns the module (or None) and whether dateutil.parser had been imported already.
    """
    preimported = "dateutil.parser" in sys.modules
    if not preimported:
        sys.modules["dateutil.parser"] = None  # type: ignore[assignment]
    try:
        import time_machine  # noqa: PLC0415

        return time_machine, preimported
    except ImportError as exc:
        _state["clock_error"] = f"time_machine is not importable: {exc}"
        return None, preimported
    finally:
        if not preimported and sys.modules.get("dateutil.parser", 0) is None:
            del sys.modules["dateutil.parser"]


def _shift_clock(seconds: float) -> None:
    time_machine, preimported = _import_time_machine()
    _state["dateutil_preimported"] = preimported
    if time_machine is None:
        return
    before, ticks = time.time(), time.monotonic()
    time_machine.travel(before + seconds, tick=True).start()
    _state["clock_shift_seconds"] = time.time() - before
    _state["clock_method"] = "time-machine"
    # the shift as it took: the travel's start (~3 ms) passed after `before` was read, so the
    # clock runs `seconds` less that; file times and uuid1 must follow it to the millisecond
    took = time.time() - (before + time.monotonic() - ticks)
    try:  # the files the tests write carry the shifted time too (filetimes.py)
        _state["file_times"] = {"patched": filetimes.shift(took), "error": None}
    except Exception as exc:  # reported: the gate notes it
        _state["file_times"] = {"patched": [], "error": f"{type(exc).__name__}: {exc}"}


def _quiet_time_machine() -> None:
    """time-machine's own pytest plugin (an entry point pytest loads right after this one)
    imports dateutil.parser when dateutil is installed: the project's dateutil would then be
    imported at pytest's start-up, under the project's `filterwarnings` (dateutil 2.8 warns
    at import on Python 3.12, and `error` stops pytest before any test), only because the
    gate brought time-machine along. So time-machine is imported here with dateutil.parser
    held back, on both hosts, and parses a string destination with dateutil on first use, as
    it would have (on host B after the shift: dateutil's parser caches the year it imports
    in)."""
    if "time_machine" not in sys.modules:
        if importlib.util.find_spec("time_machine") is None:
            return
        _import_time_machine()
    time_machine = sys.modules.get("time_machine")
    if time_machine is None or getattr(time_machine, "HAVE_DATEUTIL", True):
        return
    if importlib.util.find_spec("dateutil") is None:
        return

    def parse(text: str, *args: Any, **kwargs: Any) -> Any:
        return importlib.import_module("dateutil.parser").parse(text, *args, **kwargs)

    vars(time_machine).update(parse_datetime=parse, HAVE_DATEUTIL=True)


# --- the network and the hostname, in-process ----------------------------------------------


def _refusal(host: object) -> str:
    return f"entropy-gate host B has no network: {host!r} is not loopback"


def _block_network() -> None:
    """Refuse every non-loopback host at every entry point (netblock.ENTRY_POINTS), always."""
    netblock.install(_refusal)
    _state["network_blocked_in_process"] = True


def _patch_hostname(name: str) -> None:
    socket.gethostname = lambda: name
    if hasattr(os, "uname"):
        real = os.uname()
        fields = (real.sysname, name, real.release, real.version, real.machine)
        fake = type(real)(fields)
        os.uname = lambda: fake
    _state["hostname_patched_in_process"] = True


def _watch_crashes(path: object) -> None:
    """A fatal signal's traceback (SIGSEGV, SIGFPE, SIGABRT, SIGBUS, SIGILL), every thread's,
    into the gate's crash log (hosts.crashlog reads the frame the process died in)."""
    if not isinstance(path, str):
        return
    try:
        _crash_log.append(open(path, "w", encoding="utf-8"))  # noqa: SIM115 - kept open
    except OSError:
        return
    faulthandler.enable(file=_crash_log[0], all_threads=True)
    atexit.register(_close_crash_log)


def _close_crash_log() -> None:
    """At exit, before the file would be collected: a project that shows ResourceWarning
    (`filterwarnings = error`) saw 'unclosed file …/faulthandler.log' in its pytest log."""
    faulthandler.disable()
    _crash_log[0].close()


def _wrapper(function: Any) -> Any:
    """pytest's `hookimpl(hookwrapper=True)` where pytest is there (this file imports without
    it: tests/integration/test_run_python): the code before its `yield` runs before every
    plain implementation, `tryfirst` ones included."""
    try:
        import pytest  # noqa: PLC0415
    except ImportError:
        return function
    return pytest.hookimpl(hookwrapper=True)(function)


@_wrapper
def pytest_cmdline_main(config: Any) -> Iterator[None]:
    """The tests in this process, whatever the project's addopts say to pytest-xdist (`-n
    auto`, `--tx`): in its workers the audit, provenance, the hook inventory and the test-data
    record each wrote its report over the others', this process's last and empty (diskcache's
    `-n auto`: 378 live reads recorded in one process, none with its workers), and host B's
    order held within each worker only. xdist's own `-n 0`, set before its hook turns the
    options into workers; noted in host.json (xdist_in_process)."""
    options = config.option
    if _config is not None and hasattr(options, "numprocesses"):
        if options.numprocesses or getattr(options, "tx", None):
            asked = f"-n {options.numprocesses}" if options.numprocesses else "--tx"
            _state["xdist_in_process"] = asked[:40]
        options.numprocesses = 0
    yield


def pytest_sessionstart() -> None:
    """pytest's faulthandler plugin took the handler for stderr at configure: back to the
    crash log (it restores the one it found at unconfigure)."""
    if _crash_log:
        faulthandler.enable(file=_crash_log[0], all_threads=True)


def _activate(config: dict[str, Any]) -> None:
    _watch_crashes(config.get("crash_log"))
    _open_channel(config)
    exempt = _environment_roots(config)
    if config.get("data_report"):  # datafiles.py: before any conftest or test module runs
        datafiles.configure(str(config["tree"]), exempt, str(config["data_report"]))
    for original in _originals(config):
        _copy_first(original, str(config["tree"]), exempt)
    if isinstance(config.get("rng_seed"), int):
        _private_hypothesis_dir(config.get("hypothesis_dir"))
    if config.get("block_network"):
        _block_network()
    if config.get("hostname"):
        _patch_hostname(str(config["hostname"]))
    shift = config.get("clock_shift_seconds")
    if shift:
        _shift_clock(float(shift))
    _quiet_time_machine()
    _vary_machine(config)


def _vary_machine(config: dict[str, Any]) -> None:
    """Host B's listing order and CPU count (listing.py): report.json's "file_order" and
    "cpu_count"; also what childsite applies in host B's Python children."""
    seed, count = config.get("file_order_seed"), config.get("cpu_count")
    if isinstance(seed, int) and not isinstance(seed, bool):
        listed: dict[str, Any] = {"seed": seed, "patched": [], "error": None}
        try:
            listed["patched"] = listing.shuffle_listings(seed)
        except Exception as exc:  # reported: the gate notes it
            listed["error"] = f"{type(exc).__name__}: {exc}"
        _state["file_order"] = listed
    if isinstance(count, int) and not isinstance(count, bool) and count > 0:
        try:
            _state["cpu_count"] = listing.show_cpu_count(count)
        except Exception as exc:  # reported too
            _state["cpu_count"] = {"seen": None, "real": None, "patched": [], "error": str(exc)}


# --- seeding, per test ------------------------------------------------------------------------


def test_seed(rng_seed: int, nodeid: str) -> int:
    return (rng_seed + zlib.crc32(nodeid.encode("utf-8"))) & 0xFFFFFFFF


test_seed.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


class _Seeding:
    """The run's base seed and the per-test seed in force (None: not seeding)."""

    rng_seed: int | None = None
    root: str = ""
    current: int | None = None
    drawn = 0  # default_rng() calls without a seed in the current test
    numpy_patched = False
    urandom: random.Random | None = None  # the mutation runs' os.urandom, per test
    # what pytest-randomly seeds besides `random` and numpy, where it is installed: the RNG
    # states of factory_boy, Faker and model_bakery, and its `random_seeder` entry points
    states: tuple[Any, ...] = ()
    seeders: tuple[Any, ...] = ()


def _randomly_seeding() -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The gate runs with `-p no:randomly` and seeds each test itself; where the project has
    pytest-randomly, its tests may rely on what that plugin also seeds (mimesis registers a
    `pytest_randomly.random_seeder` entry point for its global seed: without it, a test of
    reseeding fails on every host and at the base, a false `real_defect`). As pytest-randomly
    does: each library's `setstate` where it imports, each entry point loaded once."""
    if importlib.util.find_spec("pytest_randomly") is None:
        return (), ()
    states: list[Any] = []
    for module, name in (
        ("factory.random", "set_random_state"),
        ("faker.generator", "random"),
        ("model_bakery.random_gen", "baker_random"),
    ):
        with contextlib.suppress(ImportError, AttributeError):  # absent: passed over, as
            found = getattr(importlib.import_module(module), name)  # pytest-randomly does
            states.append(found if name == "set_random_state" else found.setstate)
    from importlib.metadata import entry_points  # noqa: PLC0415 (only with pytest-randomly)

    seeders = tuple(e.load() for e in entry_points(group="pytest_randomly.random_seeder"))
    return tuple(states), seeders


def _seed_urandom(seed: int) -> None:
    """In the mutation step's runs only (plugin.json `urandom_from_seed`): `os.urandom` draws
    from the test's seed, so the base's and the head's versions of a test compare on the same
    bytes (python-ulid's ids come from os.urandom: a decoding mutant was killed or not by
    chance, and read as a weakening). Host runs keep the real source."""
    if _Seeding.urandom is None:
        os.urandom = _seeded_urandom
    _Seeding.urandom = random.Random(seed ^ URANDOM_SALT)  # noqa: S311 - a measurement's bytes


def _seeded_urandom(size: int) -> bytes:
    stream = _Seeding.urandom
    assert stream is not None
    return stream.randbytes(size)


def normalized_nodeid(nodeid: str, root: str) -> str:
    """The node id with the checkout root replaced, so a copy of the tree elsewhere agrees."""
    return nodeid.replace(root, ROOT_PLACEHOLDER) if len(root) > 1 else nodeid


def _seed_id(nodeid: str) -> str:
    """The id a test's seed derives from: normalized, its module under the path named in the
    config's `seed_ids` (a mutation run holds the base's module under another name)."""
    path, sep, rest = normalized_nodeid(nodeid, _Seeding.root).partition("::")
    renamed = (_config or {}).get("seed_ids") or {}
    return str(renamed.get(path, path)) + sep + rest


def _patch_numpy(np_random: Any) -> None:
    """`default_rng()` without a seed draws from the current test's seed instead of the OS."""
    real = np_random.default_rng

    def default_rng(seed: Any = None) -> Any:
        if seed is None and _Seeding.current is not None:
            _Seeding.drawn += 1
            seed = [_Seeding.current, _Seeding.drawn]
        return real(seed)

    np_random.default_rng = default_rng
    _Seeding.numpy_patched = True


def _seed_numpy(seed: int) -> None:
    numpy = sys.modules.get("numpy")  # only a suite that imported numpy pays
    np_random = getattr(numpy, "random", None)  # numpy 2 loads numpy.random on first use
    if np_random is None:
        return
    if not _Seeding.numpy_patched:
        _patch_numpy(np_random)
    np_random.seed(seed)


def _seed_hypothesis(config: Any, rng_seed: int) -> None:
    core = sys.modules.get("hypothesis.core")
    if core is not None and getattr(config.option, "hypothesis_seed", None) is None:
        setattr(core, "global_force_seed", rng_seed)  # what --hypothesis-seed does  # noqa: B010


def _private_hypothesis_dir(path: str | None) -> None:
    """Hypothesis's storage (its example database) away from the checkout's .hypothesis/."""
    os.environ[HYPOTHESIS_DIR_ENV] = path or tempfile.mkdtemp(prefix="entropy-gate-hypothesis-")


def pytest_addoption(parser: Any) -> None:
    parser.getgroup("entropy-gate").addoption(
        SEED_OPTION,
        type=int,
        default=None,
        help="seed random, numpy and hypothesis before each test from this rng_seed, as the "
        "entropy gate does (replays a failure it reported)",
    )


# --- the channel to the gate -----------------------------------------------------------------


def _open_channel(config: dict[str, Any]) -> None:
    fd = config.get(protocol.CHANNEL_FD_FIELD)
    if not isinstance(fd, int):
        return
    try:
        os.set_inheritable(fd, False)
    except OSError:
        return
    _channel["fd"] = fd


def _send(record: dict[str, Any]) -> None:
    _send_bytes((json.dumps(record, separators=(",", ":")) + "\n").encode("utf-8", "replace"))


def _send_bytes(data: bytes) -> None:
    """Whatever the test reports held back first (_pending), then `data`: one write."""
    fd = _channel.get("fd")
    if fd is None:
        return
    if _pending:
        data = b"".join(_pending) + data
        _pending.clear()
    try:
        while data:
            data = data[os.write(fd, data) :]
    except OSError:
        _channel.pop("fd", None)  # the gate stopped listening: it will say so


_pending: list[bytes] = []  # a test's passing setup and call lines, written with its teardown's
_encode = json.encoder.encode_basestring_ascii  # json.dumps' own string escaping (C)
# while pytest's own pytest_report_teststatus implementations (the runner, skipping, the
# terminal) are the only ones, a passing report's category is known without asking them
_status_impls: dict[str, Any] = {}  # "impls": the hook's implementations last looked at
_subtest_failed: set[str] = set()  # node ids with a failed subtest report


def _category(report: Any) -> str:
    """The terminal's category for a report ("passed", "xfailed", "" for a passing setup)."""
    config: Any = _channel.get("config")
    if _plain_pass(report) and _own_status(config):
        return "passed" if report.when == "call" else ""  # what pytest's own hooks answer
    try:
        status = config.hook.pytest_report_teststatus(report=report, config=config)
        return str(status[0]) if isinstance(status, tuple) else ""
    except Exception:  # another plugin's hook: never break the run
        return "?"


def _plain_pass(report: Any) -> bool:
    """A passing report no xfail mark and no subtest touches (pytest's subtests hook turns a
    test with a failed subtest into a failure when asked for its status)."""
    if report.outcome != "passed" or hasattr(report, "wasxfail"):
        return False
    return type(report).__name__ != "SubtestReport" and report.nodeid not in _subtest_failed


def _own_status(config: Any) -> bool:
    """Whether pytest's own hooks alone answer pytest_report_teststatus (rechecked whenever
    the hook's implementations change: a plugin registered while the tests ran)."""
    try:
        impls = config.hook.pytest_report_teststatus.get_hookimpls()
    except Exception:
        return False
    if _status_impls.get("impls") != impls:
        own = all(
            str(getattr(impl.function, "__module__", "")).startswith("_pytest.") for impl in impls
        )
        _status_impls.update(impls=impls, own=own)
    return bool(_status_impls["own"])


def pytest_collectreport(report: Any) -> None:
    if report.outcome != "passed":
        cat = "error" if report.outcome == "failed" else "skipped"
        _send({"kind": "collect", "id": report.nodeid, "outcome": report.outcome, "cat": cat})


def _send_test(report: Any) -> None:
    """The report's line ({"kind": "test", "id", "when", "outcome", "cat"}, as json.dumps
    writes it). A passing setup or call waits for the test's teardown: one write per test,
    so a process killed mid-test loses at most that test's passing phases (the gate then
    reads no report anyway); anything else is written at once with what waited."""
    when, outcome = report.when, report.outcome
    line = (
        f'{{"kind":"test","id":{_encode(str(report.nodeid))},"when":{_encode(str(when))},'
        f'"outcome":{_encode(str(outcome))},"cat":{_encode(_category(report))}}}\n'
    ).encode("ascii")
    if outcome == "passed" and when in ("setup", "call"):
        _pending.append(line)
    else:
        _send_bytes(line)


def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    with contextlib.suppress(OSError):
        _write_report()
    _take_inventory(session.config, write=True)
    _write_imports()
    provenance.write()
    datafiles.write()
    counts = {"collected": getattr(session, "testscollected", None)}
    counts["failed"] = getattr(session, "testsfailed", None)
    _send({"kind": "end", "exitstatus": int(exitstatus), **counts})


def _watch_provenance(config: Any) -> None:
    """provenance.py records where the units under test came from (`provenance_report`)."""
    if _config is None or not _config.get("provenance_report") or not _config.get("tree"):
        return
    exempt = _environment_roots(_config)
    named = _config.get("modules") or [_config.get("module") or ""]
    modules = [str(module) for module in named]
    provenance.configure(str(_config["tree"]), modules, exempt, str(_config["provenance_report"]))
    config.pluginmanager.register(provenance.hooks(), "entropy-gate-provenance")


def pytest_configure(config: Any) -> None:
    _watch_provenance(config)
    if (_config or {}).get("data_report"):  # datafiles.py names the test running
        config.pluginmanager.register(datafiles.hooks(), "entropy-gate-datafiles")
    wanted = (_config or {}).get("test_order_seed"), (_config or {}).get("order")
    if _config is not None and order.configure(*wanted):
        config.pluginmanager.register(order.hooks(), "entropy-gate-order")  # order.py
    if "fd" in _channel:
        _channel["config"] = config
        _send({"kind": "begin", "pid": os.getpid(), "host": (_config or {}).get("host")})
    chosen = config.getoption(SEED_OPTION.lstrip("-").replace("-", "_"))
    if chosen is None and _config is not None:
        chosen = _config.get("rng_seed")
    _Seeding.rng_seed = _Seeding.current = None
    if not isinstance(chosen, int):
        return
    _Seeding.rng_seed = chosen & 0xFFFFFFFF
    _Seeding.root = str(config.rootpath)
    _Seeding.states, _Seeding.seeders = _randomly_seeding()
    if _config is None:  # a replay by hand; the gate's runs set the directory at import
        _private_hypothesis_dir(None)


def pytest_runtest_setup(item: Any) -> None:
    if order.seed() is not None:  # host B's shuffle (order.py); the test's own seed stays
        item.user_properties.append((ORDER_SEED_PROPERTY, order.seed()))
    case = _case_key(item)
    if case is not None:
        item.user_properties.append((CASE_PROPERTY, case))
    if _Seeding.rng_seed is None:
        return
    seed = test_seed(_Seeding.rng_seed, _seed_id(item.nodeid))
    _Seeding.current, _Seeding.drawn = seed, 0
    random.seed(seed)
    if _Seeding.states:
        state = random.getstate()
        for set_state in _Seeding.states:
            set_state(state)
    for reseed in _Seeding.seeders:
        reseed(seed)
    if (_config or {}).get("urandom_from_seed") is True:
        _seed_urandom(seed)
    _seed_numpy(seed)
    _seed_hypothesis(item.config, _Seeding.rng_seed)
    item.user_properties.append(("entropy_seed", seed))
    item.user_properties.append(("entropy_rng_seed", _Seeding.rng_seed))


def _case_key(item: Any) -> str | None:
    """A parametrized case by its place, not its id: `path::test[arg:0,other:2]` (the index of
    each argument's value in its parametrize list). An id built from a value read at
    collection (`time.time()` in the list: python-ulid's tests) differs between two runs;
    the place does not, so the hosts' reports pair on it (verdict.pairing)."""
    indices = getattr(getattr(item, "callspec", None), "indices", None)
    if not isinstance(indices, dict) or not indices:
        return None
    places = ",".join(f"{name}:{index}" for name, index in sorted(indices.items()))
    return f"{str(item.nodeid).split('[', 1)[0]}[{places}]"[:MAX_CASE]


def pytest_runtest_logreport(report: Any) -> None:
    """Count the reports of subtests (unittest's subTest, pytest's `subtests` fixture): pytest
    counts each in the JUnit suite's `tests` but writes no testcase for a passing one."""
    if type(report).__name__ == "SubtestReport":
        if _config is not None:
            _subtests[report.nodeid] = _subtests.get(report.nodeid, 0) + 1
        if report.outcome == "failed":
            _subtest_failed.add(report.nodeid)
    if "fd" in _channel:
        _send_test(report)
    if report.when == "call" and _inventory:
        _take_inventory(_inventory["config"], write=False)


def pytest_runtest_teardown(item: Any) -> None:
    """Note the test's subtest reports in its testcase (junit.SUBTESTS), for the reader's check
    of the suite's counts; the teardown report carries the properties into the report."""
    count = _subtests.pop(item.nodeid, 0)
    if count:
        item.user_properties.append((SUBTESTS_PROPERTY, count))


# --- host B imports the code under test from its own copy -----------------------------------


def _inside(path: str, root: str) -> bool:
    return bool(root) and (path == root or path.startswith(root.rstrip(os.sep) + os.sep))


class _CopyFirst:
    """A meta path finder, first in line on host B: a top-level module that another finder
    would load from the original checkout (an editable install's .pth entry or finder) is
    loaded from the same place in the copy instead."""

    def __init__(self, original: str, tree: str, exempt: list[str]) -> None:
        self.original, self.tree = os.path.realpath(original), os.path.realpath(tree)
        self.exempt = exempt  # environments inside the checkout: the copy has none of them

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if path is not None or "." in name:
            return None  # submodules follow their package's __path__, already in the copy
        spec = self._found_elsewhere(name, target)
        where = getattr(spec, "origin", None) or ""
        locations = list(getattr(spec, "submodule_search_locations", None) or [])
        place = os.path.realpath(locations[0] if locations else where) if spec else ""
        if not _inside(place, self.original) or _inside(place, self.tree):
            return None
        if any(_inside(place, root) for root in self.exempt):
            return None
        mapped = os.path.join(self.tree, os.path.relpath(os.path.dirname(place), self.original))
        import importlib.machinery  # noqa: PLC0415  # only on host B

        return importlib.machinery.PathFinder.find_spec(name, [mapped], target)

    def _found_elsewhere(self, name: str, target: Any) -> Any:
        for finder in sys.meta_path:
            if isinstance(finder, _CopyFirst) or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, None, target)
            if spec is not None:
                return spec
        return None


def _originals(config: dict[str, Any]) -> list[str]:
    """The trees whose code this run must not import: host B's original checkout, the head
    checkout of a run of the base ref's module, and the repository's other work trees (an
    editable install may point at any of them: hosts.environments.checkouts)."""
    if not config.get("tree"):
        return []
    checkouts = config.get("checkouts")
    listed = [p for p in checkouts if isinstance(p, str)] if isinstance(checkouts, list) else []
    own = [str(config["original"])] if config.get("original") else []
    return list(dict.fromkeys([*own, *listed]))


def _copy_first(original: str, tree: str, exempt: list[str]) -> None:
    sys.meta_path.insert(0, _CopyFirst(original, tree, exempt))
    _state["copy_first"] = True


def _interpreter_places() -> list[str]:
    """Where this interpreter keeps its own files and installed packages."""
    import site  # noqa: PLC0415  # only where a tree is checked
    import sysconfig  # noqa: PLC0415

    places = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    with contextlib.suppress(AttributeError):  # an old virtualenv's site module lacks them
        places += site.getsitepackages()
    with contextlib.suppress(AttributeError):
        places.append(site.getusersitepackages())
    paths = sysconfig.get_paths()
    places += [paths.get(key, "") for key in ("purelib", "platlib", "stdlib", "platstdlib")]
    return places


_roots: list[list[str]] = []  # the run's own config's environment roots, once worked out


def _environment_roots(config: dict[str, Any]) -> list[str]:
    """Folders whose files are an environment's, not code under test, even inside the
    checkout: the gate's list (`environments`: a `.venv`, what git ignores as a whole) and
    what this interpreter resolves to. A folder that holds the tree or a checkout itself (an
    interpreter under /usr with the checkout in /usr/src) exempts nothing. Worked out once
    for the run's own config (four parts of the plugin ask)."""
    if config is _config and _roots:
        return list(_roots[0])
    roots = _find_environment_roots(config)
    if config is _config:
        _roots.append(roots)
    return list(roots)


def _find_environment_roots(config: dict[str, Any]) -> list[str]:
    if not config.get("tree"):
        return []
    given = config.get("environments")
    places = _interpreter_places() + ([str(p) for p in given] if isinstance(given, list) else [])
    guarded = [os.path.realpath(str(config["tree"]))]
    guarded += [os.path.realpath(root) for root in _originals(config)]
    roots = {os.path.realpath(p) for p in places if p}
    return sorted(r for r in roots if not any(_inside(g, r) for g in guarded))


def imported_from(
    tree: str, original: str | None, *others: str, exempt: list[str] | None = None
) -> dict[str, Any]:
    """Where the project's modules were imported from: top-level name -> folder inside the
    run's tree, and the files imported from the original checkout instead (host B), or from
    `others` (the head checkout, for a run of the base ref's module), unless they lie in one
    of the `exempt` environments; "early" names their top-level modules when every one was
    imported before this plugin loaded (by pytest itself, too early for the copy-first
    finder), else it is empty."""
    tree = os.path.realpath(tree)
    elsewhere = [os.path.realpath(root) for root in (original, *others) if root]
    exempt = exempt or []
    code: dict[str, str] = {}
    outside: list[str] = []
    early: set[str] = set()  # the names of the modules imported from outside
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not isinstance(file, str) or name == "__main__":
            continue
        path = provenance.realpath(file)
        if any(_inside(path, root) for root in exempt):
            continue  # an environment's file (pytest in a .venv of the checkout)
        if _inside(path, tree):
            top = name.split(".", 1)[0]
            if top == name:
                code.setdefault(top, os.path.dirname(path))
        elif any(_inside(path, root) for root in elsewhere):
            outside.append(path)
            early.add(name)
    every_early = bool(early) and early <= _PRELOADED
    return {
        "code": dict(sorted(code.items())[:100]),
        "outside": sorted(outside)[:100],
        "early": sorted({name.split(".", 1)[0] for name in early})[:100] if every_early else [],
    }


def _write_imports() -> None:
    if _config is None or not _config.get("imports_report") or not _config.get("tree"):
        return
    exempt = _environment_roots(_config)
    seen = imported_from(str(_config["tree"]), None, *_originals(_config), exempt=exempt)
    with contextlib.suppress(OSError), open(_config["imports_report"], "w") as handle:
        json.dump(seen, handle)


# --- what the test process saw ---------------------------------------------------------------


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _lc_ctype() -> str:
    try:
        return locale.setlocale(locale.LC_CTYPE)
    except locale.Error as exc:
        return f"<unknown: {exc}>"


def _interfaces() -> list[str] | None:
    try:
        return sorted(name for _, name in socket.if_nameindex())
    except (OSError, AttributeError):
        return None


def _loopback_works() -> bool:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
            server.bind(("127.0.0.1", 0))
            server.listen(1)
            with socket.create_connection(server.getsockname(), timeout=2):
                return True
    except OSError:
        return False


def _fingerprint() -> dict[str, Any]:
    hostname = socket.gethostname()
    return {
        "python_version": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "platform": listing.platform_name(),
        "hostname": hostname,
        "hostname_sha256": hashlib.sha256(hostname.encode("utf-8", "replace")).hexdigest(),
        "uid": os.getuid() if hasattr(os, "getuid") else None,
    }


def _distributions_sha256() -> str | None:
    """sha256 of the installed distributions: the sorted names of the *.dist-info and
    *.egg-info entries (name-version) on sys.path, an input of the verdict. Listing folders
    costs about a millisecond; parsing every METADATA file would cost a hundred."""
    names: set[str] = set()
    for entry in sys.path:
        with contextlib.suppress(OSError):
            names.update(
                name.lower()
                for name in os.listdir(entry or os.curdir)
                if name.endswith((".dist-info", ".egg-info", ".egg-link"))
            )
    return hashlib.sha256("\n".join(sorted(names)).encode("utf-8", "replace")).hexdigest()


def _report(config: dict[str, Any]) -> dict[str, Any]:
    gettempdir = tempfile.gettempdir()
    return {
        "env": {name: os.environ.get(name) for name in config.get("env_names", [])},
        "umask": _umask(),
        "gettempdir": gettempdir,
        "gettempdir_real": os.path.realpath(gettempdir),
        "hash_randomization": sys.flags.hash_randomization,
        "hash_seed": _HASH_SEED,
        "tzname": list(time.tzname),
        "lc_ctype": _lc_ctype(),
        "cwd": _START_CWD,  # before any conftest could chdir
        "time": time.time(),
        "fingerprint": _fingerprint(),
        "interfaces": _interfaces(),
        "loopback_works": _loopback_works() if config.get("check_loopback") else None,
        "rng_seed": _Seeding.rng_seed,
        "distributions_sha256": _distributions_sha256(),
        "hypothesis_dir": os.environ.get(HYPOTHESIS_DIR_ENV),
        "test_order": order.report(),
        **_state,
    }


def _write_report() -> None:
    global _written  # noqa: PLW0603
    if _config is None or _written:
        return
    _written = True
    path = str(_config["report"])
    with open(path + ".part", "w", encoding="utf-8") as handle:
        json.dump(_report(_config), handle)
    os.replace(path + ".part", path)


def pytest_report_header() -> list[str]:
    if _config is None:
        return []
    lines = [f"entropy-gate: host {_config.get('host', '?')} under the pins"]
    if "clock_shift_seconds" in _state:
        days = _state["clock_shift_seconds"] / 86400
        lines.append(f"entropy-gate: live wall clock shifted forward {days:.1f} days (ticking)")
    if _state.get("network_blocked_in_process"):
        lines.append("entropy-gate: non-loopback sockets refused in-process")
    return lines


def pytest_collection_finish(session: Any) -> None:
    """Conftests and test modules are imported by now: report what they left in place."""
    _write_report()
    _take_inventory(session.config, write=True)


# --- the hook and plugin inventory (hookinventory.py) ---------------------------------------

_inventory: dict[str, Any] = {}  # "config": pytest's config, "places": hookinventory.Places


def _take_inventory(config: Any, *, write: bool) -> None:
    """Merge the plugins and hooks registered now (and pytest's internals replaced) into the
    inventory; write it to `hooks_report` when asked. Never breaks the run."""
    path = (_config or {}).get("hooks_report")
    if not path:
        return
    try:
        if not _inventory:
            tree = str(_config.get("tree") or os.getcwd()) if _config else os.getcwd()
            places = hookinventory.Places(tree, _environment_roots(_config or {}))
            _inventory.update(config=config, places=places)
        hookinventory.check_internals(_inventory["places"])
        if write or hookinventory.changed(config):
            hookinventory.snapshot(config, _inventory["places"])
        if write:
            hookinventory.write(str(path))
    except Exception as exc:  # another plugin's odd object: say so, go on
        _state["hooks_error"] = f"{type(exc).__name__}: {exc}"[:300]


_START_CWD = os.getcwd()
_PRELOADED = frozenset(sys.modules)  # imported before this plugin loaded (pytest's own imports)
_config = _load_config()
if _config is not None:
    _activate(_config)
