"""The live-entropy audit: which line of the code under test reads the clock, the global RNG,
the network, a temp dir or an unpinned environment variable while a property runs.

Loaded inside the test process as `entropy_gate_audit` (hosts.testfiles.write_boot): the
runner copies this file beside the plugin (it may import nothing from entropy_action but
protocol.py and wrappers.py, copied with it). It does nothing
unless the runner names a config file in AUDIT_ENV. A read is recorded when the first frame
that is not the standard library or site-packages lies in the repository: in code under test
(`records`), or in test code (the property module, conftest.py, test_*.py, tests/:
`test_records`, kept apart, since a test's own read is no missing seam of the code but may be
what a host-B failure follows: verdict.coupled). A test's read counts only when nothing but the
standard library stands between it and the source (pytest's monkeypatch reads a variable it is
about to set: not the test's read). Each record is the API, the caller's repo-relative path and
line, the test, a count, and what the first read saw (`seen`: the clock's time in UTC; a
variable's value only for the few that hold no secret, SEEN_VALUES, else whether it was set).
An environment variable is otherwise recorded by its name, never its value; a pinned one only
when it is one of the gate's own (ENTROPY_*).

The cheapest mechanism per version; reads count only while a test's setup, call or teardown runs:
- Python 3.12+: sys.monitoring CALL events; a call site whose callable is not a target returns
  DISABLE and never reports again; os.environ reads by a PY_START event local to its code;
- Python 3.10-3.11: each target wrapped (wrappers.py, copied beside it; it also hands
  time-machine's C extension the builtins it patches);
- everywhere: sys.addaudithook for what CPython announces (sockets, tempfile.mkstemp/mkdtemp,
  and a look at the stack: sys._getframe, which inspect.stack/currentframe and traceback's
  stack walks call, sys._current_frames, 3.12+'s sys._getframemodulename).

A look at the stack is recorded only as test detection (verdict.detection), never as a live
read: when the code under test that looked (past inspect's and traceback's own frames), or a
caller of it in the code under test a few frames up, names a test in its code (a string
constant or a module-level string it reads: "test_", "pytest", "_pytest", "conftest"...).
logging's findCaller, a library's own sys._getframe(1) and a helper that takes its caller's
name name no test, so they are never recorded (warnings.warn's stacklevel is C: no event).

A marker the test side set on `sys` (`sys._called_from_test = True` in a conftest's
pytest_configure, pytest's own recipe): an attribute read announces nothing, so before the
first test the audit moves each attribute added to `sys` since it loaded whose name says
test out of sys's dict, behind a class of `sys` (a ModuleType subclass, as PEP 549's recipe)
whose `__getattr__` answers with the same value and records a read from code under test
(api "sys", the attribute's name) and whose `__delattr__` lets a teardown delete it; the
session's end puts sys's class and the markers back before any pytest_unconfigure deletes
them. What reads sys's dict itself (`vars(sys)`, C code's PySys_GetObject) no longer finds a
moved marker: the scan reads those shapes. Not `builtins`: a bare name reads its dict
directly, so a moved builtin would be a NameError, not a recorded read.

PYTEST_DONT_REWRITE: the run imports this module before pytest could rewrite it (it has no
assert to rewrite), and pytest is told so by this marker.
"""

from __future__ import annotations

import datetime
import json
import os
import random
import secrets
import sys
import time
import uuid
from sys import _getframe  # bound once: a test may delete sys._getframe
from types import BuiltinMethodType, CodeType, FrameType, MethodType, ModuleType
from typing import Any

if __package__:  # imported as entropy_action.testproc.X (the public names, the gate)
    from entropy_action.testproc import protocol, wrappers
else:  # copied into the test process as entropy_gate_X (hosts.testfiles)
    import entropy_gate_protocol as protocol  # type: ignore[import-not-found, no-redef]
    import entropy_gate_wrappers as wrappers  # type: ignore[import-not-found, no-redef]

AUDIT_ENV = protocol.AUDIT_ENV
MAX_RECORDS = 1000  # distinct records kept (of each kind); the rest are counted as dropped
MAX_NAME = 200
MAX_SEEN = 200
# Variables whose value a record may carry (`seen`): where a test is and who runs it, never a
# credential. Any other variable is recorded as set or unset.
SEEN_VALUES = frozenset(
    {"HOME", "USER", "LOGNAME", "USERNAME", "USERPROFILE", "LANG", "LANGUAGE", "LC_ALL",
     "LC_CTYPE", "LC_TIME", "LC_NUMERIC", "LC_MESSAGES", "TZ", "TMPDIR", "TEMP", "TMP",
     "SHELL", "TERM", "PWD", "HOSTNAME", "CI"}
)  # fmt: skip
_CLOCK_APIS = ("time.", "datetime.", "date.")
_now = time.time  # the builtin: under host B's time-machine it reports the shifted clock
# Library frames between a read and the code under test that asked for it: os.getenv and
# Mapping.get; a client library's stack down to the socket. Deeper, the read is the library's.
ENV_DEPTH = 3
EVENT_DEPTH = 25
_LIB, _TEST, _TARGET, _SITE = 0, 1, 2, 3  # _SITE: a library's (site-packages), else as _LIB
_METHODS = (BuiltinMethodType, MethodType)  # bound: datetime.now, random.choice
# pytest's own variables (PYTEST_CURRENT_TEST, read back by pytest after every phase of every
# test; PYTEST_VERSION): no live input, yet code under test that reads them can tell a test
# run from production. Recorded by name from code under test only (verdict.detection:
# test_detection); a test asking which test it is, or pytest itself, is not recorded.
PYTEST_PREFIX = "PYTEST_"
# The gate's own variables (its pins, ENTROPY_CLOCK_UNIX...): pinned, yet recorded by name when
# code under test reads them (verdict.removed: gate_pin_read).
GATE_PREFIX = protocol.GATE_PREFIX
_LIB_DIRS = frozenset({"site-packages", "dist-packages", ".venv", "venv", ".tox", ".nox"})
_SITE_DIRS = frozenset({"site-packages", "dist-packages"})
_TEST_DIRS = frozenset({"tests", "test"})
_LOOPBACK = ("127.", "::1", "localhost", "0.0.0.0")  # noqa: S104 - a name, not a bind
# CPython's audit events, with the API they stand for and whether an argument names the target.
_EVENTS = {
    "socket.getaddrinfo": "socket.getaddrinfo()",
    "socket.gethostbyname": "socket.gethostbyname()",
    "socket.gethostbyaddr": "socket.gethostbyaddr()",
    "socket.gethostname": "socket.gethostname()",
    "socket.connect": "socket.connect()",
    "tempfile.mkstemp": "tempfile.mkstemp()",
    "tempfile.mkdtemp": "tempfile.mkdtemp()",
}
# A look at the stack: the event, the API recorded (verdict.detection: test_detection).
_STACK_EVENTS = {
    "sys._getframe": "sys._getframe()",
    "sys._current_frames": "sys._current_frames()",
    "sys._getframemodulename": "sys._getframemodulename()",
}
_STDLIB = os.path.dirname(os.path.realpath(os.__file__))
# the standard library's stack helpers: the code that called them is the one that looked
_STACK_HELPERS = frozenset(os.path.join(_STDLIB, name) for name in ("inspect.py", "traceback.py"))
STACK_DEPTH = 4  # frames of the code under test, from the one that looked, read for a test name
_TEST_NAMES = frozenset({"test", "tests", "conftest", "unittest", "nose", "nose2"})
_TEST_PREFIXES = ("test_", "pytest", "_pytest", "tests/", "tests.", "conftest.")


def names_a_test(value: object) -> bool:
    """A string the code under test compares a frame with when it looks for a test."""
    if not isinstance(value, str) or len(value) > MAX_NAME:
        return False
    text = value.strip()
    return text in _TEST_NAMES or text.startswith(_TEST_PREFIXES) or text.endswith("_test")


def held_test_name(code: CodeType, scope: dict[str, Any], depth: int = 3) -> str | None:
    """The first test name a code object holds as a constant (its nested code too: a
    generator expression, a lambda) or reads as a module-level string; None if none."""
    for const in code.co_consts:
        if names_a_test(const):
            return str(const)
        if isinstance(const, CodeType) and depth > 0:
            found = held_test_name(const, scope, depth - 1)
            if found is not None:
                return found
    for name in code.co_names:
        value = scope.get(name)
        if names_a_test(value):
            return str(value)
    return None


class Catalog:
    """The targets: module attributes, and callables by identity or by (owner, name)."""

    def __init__(self) -> None:
        self.attrs: list[tuple[Any, str, str]] = []  # (module, attribute, API)
        self.objects: dict[int, str] = {}
        self.bound: dict[tuple[int, str], str] = {}
        self.keep: list[object] = []  # ids stay valid while the objects live
        for name in ("time", "time_ns", "localtime"):
            self._add(time, name, f"time.{name}()")
        for name in ("now", "utcnow", "today"):
            self.bound[(id(datetime.datetime), name)] = f"datetime.{name}()"
        self.bound[(id(datetime.date), "today")] = "date.today()"
        self._add(os, "urandom", "os.urandom()")
        for module in (random, secrets, uuid):
            for name in _public(module):
                self._add(module, name, f"{module.__name__}.{name}()")
        self.keep += [datetime.datetime, datetime.date]

    def _add(self, module: Any, attribute: str, api: str) -> None:
        obj = getattr(module, attribute)
        self.attrs.append((module, attribute, api))
        self.keep.append(obj)
        self.objects[id(obj)] = api
        owner, name = getattr(obj, "__self__", None), getattr(obj, "__name__", None)
        if owner is not None and isinstance(name, str):
            self.bound[(id(owner), name)] = api

    def api_of(self, target: object) -> str | None:
        """The API a callable stands for (3.12+ CALL events). Only a method is asked for its
        `__self__` and name: any other object may answer anything (mock's `call` makes a new
        `_Call` of every attribute), and an error here would be raised in the test's code."""
        api = self.objects.get(id(target))
        if api is None and isinstance(target, _METHODS):
            api = self.bound.get((id(target.__self__), target.__name__))
        return api


def _public(module: Any) -> list[str]:
    """The module's read functions (random.seed and friends write, they do not read)."""
    names = getattr(module, "__all__", None) or dir(module)
    skip = {"seed", "setstate", "getstate", "compare_digest"}
    out = []
    for name in names:
        obj = getattr(module, name, None)
        if name.startswith("_") or name in skip or isinstance(obj, type) or not callable(obj):
            continue
        if module is uuid and name not in ("uuid1", "uuid4"):
            continue
        out.append(name)
    return out


class Auditor:
    """Records live reads made from code under test while `test` is set."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.root = os.path.realpath(str(config.get("root") or os.getcwd()))
        # the property modules of the session (one per property it runs; "module": an older
        # config naming one)
        named = config.get("modules") or [config.get("module") or ""]
        self.modules = frozenset(os.path.normpath(str(module)) for module in named)
        pinned = frozenset(str(name) for name in config.get("pinned_env", []))
        self.pinned = pinned
        temp_root = config.get("temp_root")
        self.temp_root = os.path.realpath(str(temp_root)) if temp_root else None
        self.out = str(config["out"])
        self.catalog = Catalog()
        self.records: dict[tuple[str, str | None, str, int, str], int] = {}
        self.test_records: dict[tuple[str, str | None, str, int, str], int] = {}
        self.seen: dict[tuple[str, str | None, str, int, str], str | None] = {}
        self.dropped = 0
        self.test: str | None = None
        self.mechanism = ""
        self.unseen: list[str] = []
        self._kinds: dict[str, tuple[int, str]] = {}
        self._named: dict[int, tuple[CodeType, str | None]] = {}  # id(code) -> its test name
        self._sys_names = frozenset(vars(sys))  # sys's attributes before any conftest ran
        self.markers: dict[str, object] | None = None  # None: not yet moved (the first test)
        self._watched: type[ModuleType] | None = None  # sys's class while markers are moved
        self._busy = False
        self._listing: tuple[FrameType | None, list[str], int] | None = None  # a copy's

    # --- where a frame's code lives ----------------------------------------------------------

    def kind(self, filename: str) -> tuple[int, str]:
        known = self._kinds.get(filename)
        if known is None:
            known = self._kinds[filename] = self._classify(filename)
        return known

    def _classify(self, filename: str) -> tuple[int, str]:
        if filename.startswith("<"):
            return _LIB, ""
        path = os.path.realpath(filename)
        if not path.startswith(self.root + os.sep):
            return (_SITE if _SITE_DIRS.intersection(path.split(os.sep)) else _LIB), ""
        relative = os.path.relpath(path, self.root)
        parts = relative.split(os.sep)
        posix = "/".join(parts)
        if _LIB_DIRS.intersection(parts):
            return _SITE, posix
        base = parts[-1]
        test_file = base == "conftest.py" or base.startswith("test_") or base.endswith("_test.py")
        if test_file or relative in self.modules or _TEST_DIRS.intersection(parts[:-1]):
            return _TEST, posix
        return _TARGET, posix

    def caller(self, frame: FrameType | None, depth: int) -> tuple[str, int, bool] | None:
        """The first frame in the repository past at most `depth` frames of the standard
        library and site-packages (0: the immediate caller only): its path, line, and whether
        it is test code. Test code counts only when no site-packages frame came first."""
        library = False
        while frame is not None and depth >= 0:
            kind, relative = self.kind(frame.f_code.co_filename)
            if kind == _TARGET:
                return relative, frame.f_lineno, False
            if kind == _TEST:
                return None if library else (relative, frame.f_lineno, True)
            library = library or kind == _SITE
            frame, depth = frame.f_back, depth - 1
        return None

    # --- recording ---------------------------------------------------------------------------

    def record(
        self, api: str, name: str | None, frame: FrameType | None, depth: int, tests: bool = True
    ) -> None:
        """Count the read; one from test code only with `tests`."""
        if self.test is None or self._busy:
            return
        self._busy = True
        try:
            where = self.caller(frame, depth)
            if where is not None and (tests or not where[2]):
                key = (api, name, where[0], where[1], self.test)
                records = self.test_records if where[2] else self.records
                if key in records or len(records) < MAX_RECORDS:
                    records[key] = records.get(key, 0) + 1
                    if key not in self.seen:
                        self.seen[key] = _seen(api, name)
                else:
                    self.dropped += 1
        finally:
            self._busy = False

    def environ_listed(self, caller: FrameType | None) -> None:
        """os.environ listed from `caller` (`dict(os.environ)`, `.copy()`, `.items()`, `{**…}`,
        `d.update(os.environ)`). A copy then reads every variable in the listing's order; the
        pytest variables read so are a copy of the whole environment (python-dotenv's
        interpolation), not a look at whether a test runs (`test_detection`). A read out of
        that order ends the copy."""
        environ: Any = os.environ
        names = [environ.decodekey(raw) for raw in list(environ._data)]
        self._listing = (_outside_mapping(caller), names, 0)

    def environ_read(self, key: object, caller: FrameType | None) -> None:
        """os.environ[key] read from `caller`: record an unpinned variable's name."""
        if not isinstance(key, str):
            return
        listing, copied = self._listing, False
        if listing is not None:
            lister, names, at = listing
            copied = at < len(names) and names[at] == key and _outside_mapping(caller) is lister
            self._listing = (lister, names, at + 1) if copied else None
        if key.startswith(PYTEST_PREFIX):
            if not copied:
                self.record("os.environ", key[:MAX_NAME], caller, ENV_DEPTH, tests=False)
        elif key not in self.pinned or key.startswith(GATE_PREFIX):
            self.record("os.environ", key[:MAX_NAME], caller, ENV_DEPTH)

    def audit_event(self, event: str, args: tuple[Any, ...]) -> None:
        api = _EVENTS.get(event)
        if api is None or self.test is None:
            if self.test is not None and event in _STACK_EVENTS and not self._busy:
                self._busy = True  # sys._getframe here announces itself: not recorded
                try:
                    caller = _getframe(1)
                finally:
                    self._busy = False
                self.stack_read(_STACK_EVENTS[event], caller)
            return
        name = _event_target(event, args)
        if name is _SKIP:
            return
        if event.startswith("tempfile.") and self._inside_temp_root(args):
            return
        self.record(api, name, _getframe(1), EVENT_DEPTH)

    def stack_read(self, api: str, frame: FrameType | None) -> None:
        """A look at the stack from `frame` (the caller of the C function): recorded at the
        first frame of the code under test, among the STACK_DEPTH from the one that looked,
        whose code names a test; nothing when the one that looked is not code under test."""
        while frame is not None and frame.f_code.co_filename in _STACK_HELPERS:
            frame = frame.f_back
        for _ in range(STACK_DEPTH):
            if frame is None or self.kind(frame.f_code.co_filename)[0] != _TARGET:
                return
            named = self._test_name(frame)
            if named is not None:
                self.record(api, named, frame, 0, tests=False)
                return
            frame = frame.f_back

    def move_markers(self) -> None:
        """The attributes the test side added to `sys` whose name says test, behind a class
        of `sys` that records who reads them (once, before the first test)."""
        if self.markers is not None:
            return
        names = vars(sys)
        added = [n for n in names if n not in self._sys_names and "test" in n.lower()]
        self.markers = {}
        if not added or type(sys) is not ModuleType:
            return  # nothing marked, or another tool already changed sys's class
        markers, auditor = {name: names[name] for name in added}, self

        class WatchedSys(ModuleType):
            """sys while the audit watches the markers: a moved one answers its value and a
            read from code under test is recorded; deleting it (a fixture's teardown, a
            pytest_unconfigure) deletes it."""

            def __getattr__(self, name: str) -> object:
                if name in markers:
                    auditor.record("sys", name[:MAX_NAME], _getframe(1), 0, tests=False)
                    return markers[name]
                raise AttributeError(f"module 'sys' has no attribute {name!r}")

            def __delattr__(self, name: str) -> None:
                if name in markers and name not in vars(self):
                    del markers[name]
                else:
                    super().__delattr__(name)

        for name in added:
            delattr(sys, name)
        self.markers, self._watched = markers, WatchedSys
        sys.__class__ = WatchedSys

    def restore_markers(self) -> None:
        """`sys` as the test side left it: its class, and each moved attribute it kept (one it
        set again meanwhile keeps that value)."""
        if self._watched is not None and type(sys) is self._watched:
            sys.__class__ = ModuleType
        self._watched = None
        for name, value in (self.markers or {}).items():
            if name not in vars(sys):
                setattr(sys, name, value)
        self.markers = {}

    def _test_name(self, frame: FrameType) -> str | None:
        code = frame.f_code
        known = self._named.get(id(code))
        if known is None:
            try:
                found = held_test_name(code, frame.f_globals)
            except Exception:  # a module's globals never break the test that reads them
                found = None
            printable = (
                None if found is None else "".join(c if c.isprintable() else "?" for c in found)
            )
            known = self._named[id(code)] = (code, printable)
        return known[1]

    def _inside_temp_root(self, args: tuple[Any, ...]) -> bool:
        if self.temp_root is None or not args:
            return False
        path = os.path.realpath(str(args[0]))
        return path == self.temp_root or path.startswith(self.temp_root + os.sep)

    def report(self) -> dict[str, Any]:
        return {
            "mechanism": self.mechanism,
            "unseen": self.unseen,
            "records": self._listed(self.records),
            "test_records": self._listed(self.test_records),
            "dropped": self.dropped,
        }

    def _listed(self, records: dict[tuple[str, str | None, str, int, str], int]) -> list[Any]:
        return [
            {"api": key[0], "name": key[1], "path": key[2], "line": key[3], "test": key[4],
             "count": n, "seen": self.seen.get(key)}
            for key, n in records.items()
        ]  # fmt: skip


def _seen(api: str, name: str | None) -> str | None:
    """What a read saw, for the page (SEEN_VALUES): the clock's time, a harmless variable's
    value, or whether another variable was set. None for the other sources."""
    try:
        if api.startswith(_CLOCK_APIS):
            stamp = datetime.datetime.fromtimestamp(_now(), datetime.timezone.utc)
            return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")
        if api != "os.environ" or name is None:
            return None
        environ: Any = os.environ
        raw = environ._data.get(environ.encodekey(name))
        if raw is None:
            return "unset"
        if name not in SEEN_VALUES:
            return "set (value not recorded)"
        value = environ.decodevalue(raw)
        text = "".join(c if c.isprintable() else "?" for c in str(value))
        return repr(text[:MAX_SEEN])[:MAX_SEEN]
    except Exception:  # what a read saw never breaks the test it audits
        return None


_SKIP = "\0skip"
# A listing's and a copy's frames (_collections_abc names itself collections.abc).
_MAPPING_MODULES = frozenset({"os", "_collections_abc", "collections.abc"})


def _outside_mapping(frame: FrameType | None) -> FrameType | None:
    """The first frame outside os and the Mapping mixins (frozen modules on 3.11+: by their
    name, not their file): who listed or copied."""
    while frame is not None and frame.f_globals.get("__name__") in _MAPPING_MODULES:
        frame = frame.f_back
    return frame


def _event_target(event: str, args: tuple[Any, ...]) -> str | None:
    """The host a network event names (_SKIP for loopback), None for events without one."""
    if event == "socket.connect":
        address = args[1] if len(args) > 1 else None
        if not isinstance(address, tuple) or not address:
            return _SKIP  # AF_UNIX and friends: not the network
        host = address[0]
    elif event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr"):
        host = args[0] if args else None
    else:
        return None
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    text = "" if host is None else str(host).lower()
    if not text or text.startswith(_LOOPBACK) or text.endswith(".localhost"):
        return _SKIP
    return text[:MAX_NAME]


# --- mechanisms ------------------------------------------------------------------------------


class Monitoring:
    """sys.monitoring (3.12+): call sites that are not targets are disabled after one event."""

    name = "sys.monitoring"
    unseen = (
        "a call made from C code (a callable passed to map() or sorted(key=), a C extension's "
        "callback)",
        "a call at a site whose first call was to something else (a callable held in a variable)",
        wrappers.FROZEN,
    )

    def __init__(self, auditor: Auditor, tool: int) -> None:
        monitoring: Any = getattr(sys, "monitoring")  # noqa: B009 - absent before 3.12
        self.monitoring, self.tool, self.auditor = monitoring, tool, auditor
        catalog, disable = auditor.catalog, monitoring.DISABLE
        environ_code = type(os.environ).__getitem__.__code__
        listing_code = type(os.environ).__iter__.__code__

        def on_call(code: CodeType, offset: int, target: object, arg0: object) -> Any:
            api = catalog.api_of(target)
            if api is None or auditor.kind(code.co_filename)[0] in (_LIB, _SITE):
                return disable
            auditor.record(api, None, _getframe(1), 0)
            return None

        def on_start(code: CodeType, offset: int) -> Any:
            frame = _getframe(1)
            if code is environ_code and frame.f_locals.get("self") is os.environ:
                auditor.environ_read(frame.f_locals.get("key"), frame.f_back)
            elif code is listing_code and frame.f_locals.get("self") is os.environ:
                auditor.environ_listed(frame.f_back)
            return None

        monitoring.use_tool_id(tool, "entropy-gate audit")
        monitoring.register_callback(tool, monitoring.events.CALL, on_call)
        monitoring.register_callback(tool, monitoring.events.PY_START, on_start)
        monitoring.set_local_events(tool, environ_code, monitoring.events.PY_START)
        monitoring.set_local_events(tool, listing_code, monitoring.events.PY_START)
        monitoring.set_events(tool, monitoring.events.CALL)


def _mechanism(auditor: Auditor) -> wrappers.Wrappers | Monitoring:
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:
        for tool in (4, 3, monitoring.PROFILER_ID):
            if monitoring.get_tool(tool) is None:
                return Monitoring(auditor, tool)
    return wrappers.Wrappers(auditor)


# --- the pytest side -------------------------------------------------------------------------

_auditor: Auditor | None = None


def _load() -> None:
    global _auditor  # noqa: PLW0603
    path = os.environ.pop(AUDIT_ENV, None)  # children of the tests do not inherit it
    if not path:
        return
    with open(path, encoding="utf-8") as handle:
        config = json.load(handle)
    auditor = Auditor(config)
    mechanism = _mechanism(auditor)
    auditor.mechanism = f"{mechanism.name} + sys.addaudithook"
    auditor.unseen = list(mechanism.unseen)
    sys.addaudithook(auditor.audit_event)
    _auditor = auditor


def pytest_runtest_logstart(nodeid: str) -> None:
    """A test's setup, call and teardown (its fixtures too) run between logstart and logfinish:
    two plain hooks per test are cheaper than wrapping each phase."""
    if _auditor is not None:
        if _auditor.markers is None:
            _auditor.move_markers()
        _auditor.test = nodeid


def pytest_runtest_logfinish() -> None:
    if _auditor is not None:
        _auditor.test = None


def pytest_sessionfinish() -> None:
    if _auditor is None:
        return
    _auditor.restore_markers()
    part = _auditor.out + ".part"
    with open(part, "w", encoding="utf-8") as handle:
        json.dump(_auditor.report(), handle)
    os.replace(part, _auditor.out)


_load()
