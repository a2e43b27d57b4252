"""Inside the test process of a mutation run: each test's outcome, and (when asked) which
functions of the watched production files each test called; or, given mutants, each mutant
run in a forked child of the collected session. Standard library (and pytest) only.

Loaded with `-p entropy_gate_probe` from a private directory; configured by the JSON file
named in protocol.PROBE_ENV: {"report": PATH, "root": DIR, "watch": [FILE, ...], "only":
[ID, ...], "whole": [MODULE, ...], "whole_max": N}. An empty `watch` records outcomes only;
`only` keeps those tests, and every test of the `whole` modules when they hold at most N
collected tests together (the report says so: "whole"), and deselects the rest. Function
calls are seen through `sys.monitoring` (PY_START, Python >= 3.12, other code disabled after
its first event) or, before 3.12, a `sys.settrace` function set only while a test runs,
that answers call events and never traces lines. On
attrs' test_validators.py (Python 3.11) the probe costs 1.02x bare pytest and coverage.py's
line coverage of the same files 1.65x (bench/bench_probe.py, medians of 5). The report is
data for the gate, which reads it with limits.

With `mutants` ([{id, path, function, source, select, timeout, until_killed, confirm, sides,
confirm_timeout}], and `budget` seconds), the
session's run loop is replaced: for each mutant a forked child swaps the mutated function's
code into the live function object (`__code__`, so every module that imported it sees it),
runs the selected tests with pytest's own protocol and writes `results_dir/ID.json`; the
parent kills a child that outlives its `timeout`, and stops at the `budget` (counted from
pytest's configure, collection included): a mutant the budget cut short has no result.
Where the selected tests' two `sides` (the base's and the head's versions of the changed
tests) disagree, the child goes on with the `confirm` tests until one kills the mutant, and
its parent gives it `confirm_timeout` more seconds (`"confirmed": true` in its result).
One start-up of Python and pytest serves every mutant, and no mutant's side effects reach
the next. A nested function is swapped in its outer function (for closures made from now
on) and in every live function made from it already (a decorator's wrapper made at import).
Without `os.fork`, or when a function cannot be swapped (a property), the child says so and
the gate runs that mutant in a process of its own.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import sys
import threading
import time
import types
import warnings
from typing import Any

from _pytest.runner import runtestprotocol

if __package__:  # imported as entropy_action.testproc.X (the public names, the gate)
    from entropy_action.testproc import protocol
else:  # copied into the test process as entropy_gate_X (hosts.testfiles)
    import entropy_gate_protocol as protocol  # type: ignore[import-not-found, no-redef]

CONFIG_ENV = protocol.PROBE_ENV
RANK = {"passed": 0, "skipped": 1, "error": 2, "failed": 3}
TOOL_ID = 4  # sys.monitoring's tool ids 0-5; 4 is unassigned by the standard library
# Call events traced per test before the tracer steps aside; the test then counts as reaching
# every function (it runs against every mutant), so nothing it might kill is missed.
MAX_EVENTS = 20_000
SATURATED = ("*", 0)
_events = [0]

_config: dict[str, Any] = {}
_watch: dict[str, str] = {}  # absolute file -> repository-relative path
_current = [""]  # the running test's node id ("" while collecting)
_reached: dict[str, set[tuple[str, int]]] = {}
_outcomes: dict[str, str] = {}
_messages: dict[str, str] = {}  # node id -> the first line of its failure (unmutated run)
MAX_MESSAGE = 300
_durations: dict[str, float] = {}  # seconds per test: setup, call and teardown
_stop = [float("inf")]  # time.monotonic() at which the time budget runs out
_kept_whole = [False]  # the `whole` modules were small enough to run whole


def _seen(filename: str, line: int) -> None:
    relative = _watch.get(filename)
    if relative is not None:
        _reached.setdefault(_current[0], set()).add((relative, line))


def _tracer(frame: Any, event: str, arg: Any) -> None:
    if event == "call":
        code = frame.f_code
        _seen(code.co_filename, code.co_firstlineno)
        _events[0] += 1
        if _events[0] > MAX_EVENTS:  # iteration-heavy code: stop paying for every resume
            _reached.setdefault(_current[0], set()).add(SATURATED)
            sys.settrace(None)
            threading.settrace(None)


def _start_tracing() -> None:
    """sys.monitoring for the whole run (3.12+: cheap, other code is disabled after its
    first event); else nothing here — settrace runs only around each test (`_trace`)."""
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:
        try:
            monitoring.use_tool_id(TOOL_ID, "entropy-gate-probe")
        except ValueError:
            monitoring = None
    if monitoring is not None:
        disable = monitoring.DISABLE

        def started(code: Any, offset: int) -> Any:
            if code.co_filename not in _watch:
                return disable
            _seen(code.co_filename, code.co_firstlineno)
            return None

        monitoring.register_callback(TOOL_ID, monitoring.events.PY_START, started)
        monitoring.set_events(TOOL_ID, monitoring.events.PY_START)
        return
    _settrace[0] = True


_settrace = [False]  # trace each test with sys.settrace (no sys.monitoring)


def _trace(on: bool) -> None:
    _events[0] = 0
    if _settrace[0]:
        sys.settrace(_tracer if on else None)
        threading.settrace(_tracer if on else None)


def pytest_configure(config: Any) -> None:
    path = os.environ.get(CONFIG_ENV)
    if not path:
        return
    with open(path, encoding="utf-8") as handle:
        _config.update(json.load(handle))
    if "budget" in _config:  # counted from here: collecting is part of the budget
        _stop[0] = time.monotonic() + float(_config["budget"])
    root = _config.get("root", "")
    for relative in _config.get("watch", []):
        _watch[os.path.realpath(os.path.join(root, relative))] = relative
        _watch[os.path.join(root, relative)] = relative
    if _watch:
        _start_tracing()


def pytest_collection_modifyitems(session: Any, config: Any, items: list[Any]) -> None:
    """With `only` (bare ids, `path::Class::name`), every other test is deselected: a
    name that is not collected selects nothing instead of failing the run."""
    only = _config.get("only")
    if only is None:
        return
    wanted = set(only)
    whole = set(_config.get("whole", []))  # modules kept whole, if they are small
    count = sum(item.nodeid.split("::", 1)[0] in whole for item in items)
    if count > int(_config.get("whole_max", 0)):
        whole = set()
    _kept_whole[0] = bool(whole)

    def kept(item: Any) -> bool:
        bare = item.nodeid.split("[", 1)[0]
        return bare in wanted or bare.split("::", 1)[0] in whole

    keep = [item for item in items if kept(item)]
    dropped = [item for item in items if not kept(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    _current[0] = nodeid
    _trace(True)


def pytest_runtest_logreport(report: Any) -> None:
    _durations[report.nodeid] = _durations.get(report.nodeid, 0.0) + float(report.duration)
    outcome = _outcome(report)
    if outcome is None:
        return
    known = _outcomes.get(report.nodeid)
    if known is None or RANK[outcome] > RANK[known]:
        _outcomes[report.nodeid] = outcome
    if outcome in ("failed", "error") and report.nodeid not in _messages:
        _messages[report.nodeid] = _message(report)


def _outcome(report: Any) -> str | None:
    """The outcome a report gives its test: a failing setup or teardown is an error; None for
    a passing one, and for an attempt a rerun plugin repeats (pytest-rerunfailures' and
    pytest-retry's outcome "rerun": the test's last attempt decides, as in their reports)."""
    outcome = str(report.outcome)
    if report.when != "call" and outcome == "failed":
        return "error"
    if (report.when != "call" and outcome == "passed") or outcome not in RANK:
        return None
    return outcome


def _message(report: Any) -> str:
    """The first line of a failure, as JUnit's message has it (`TypeError: f() takes …`)."""
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    text = getattr(crash, "message", None)
    if not isinstance(text, str):
        text = str(getattr(report, "longrepr", "") or "")
    lines = text.strip().splitlines()
    return lines[0][:MAX_MESSAGE] if lines else ""


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    _trace(False)
    _current[0] = ""


def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    report = _config.get("report")
    if not report:
        return
    reached = {test: sorted(found) for test, found in _reached.items()}
    with open(report, "w", encoding="utf-8") as handle:
        json.dump(
            {
                "outcomes": _outcomes,
                "messages": _messages,
                "reached": reached,
                "durations": _durations,
                "whole": _kept_whole[0],
            },
            handle,
        )


# --- mutants in forked children -------------------------------------------------------------


def pytest_runtestloop(session: Any) -> Any:
    mutants = _config.get("mutants")
    if not mutants or not hasattr(os, "fork"):
        return None
    items = {item.nodeid: item for item in session.items}
    folder = _config["results_dir"]
    for mutant in mutants:
        left = _stop[0] - time.monotonic()
        if left <= 0:
            break  # the rest were left out by the time budget: no result file
        limit = float(mutant.get("timeout", 30))
        more = float(mutant.get("confirm_timeout", 0)) if mutant.get("confirm") else 0.0
        result = _forked(mutant, items, min(limit, left), min(more, max(0.0, left - limit)))
        if result.get("timed_out") and left < limit + more:
            break  # stopped by the time budget, not by its own: not run
        with open(os.path.join(folder, f"{mutant['id']}.json"), "w", encoding="utf-8") as out:
            json.dump(result, out)
    return True


def _forked(
    mutant: dict[str, Any], items: dict[str, Any], timeout: float, more: float = 0.0
) -> dict[str, Any]:
    """The child's result; it may run `more` seconds past `timeout` once it says (a byte on
    its second pipe) that it runs the confirming tests. The result is read while the child
    runs: one larger than the pipe holds (64 KiB: ~1,000 tests' outcomes) left the child
    blocked in its write until the timeout killed it, and a large module's mutants were all
    "stopped at their time budget" (mimesis's 1,861-test `tests/test_schema.py`)."""
    read, write = os.pipe()
    said, say = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multi-threaded, fork() may deadlock" (3.12)
        pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read)
        os.close(said)
        try:
            data = json.dumps(_run_mutant(mutant, items, say)).encode()
        except BaseException as exc:  # the child reports, whatever happened
            data = json.dumps({"applied": False, "why": repr(exc)[:200]}).encode()
        with os.fdopen(write, "wb") as pipe:
            pipe.write(data)
        os._exit(0)
    os.close(write)
    os.close(say)
    os.set_blocking(said, False)
    os.set_blocking(read, False)
    raw: list[bytes] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        _drain(read, raw)
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if more and _said(said):
            deadline, more = deadline + more, 0.0
        time.sleep(0.005)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(read)
        os.close(said)
        return {"applied": True, "timed_out": True, "outcomes": {}}
    os.close(said)
    _drain(read, raw)  # the child has exited: the rest is in the pipe
    os.close(read)
    try:
        return dict(json.loads(b"".join(raw)))
    except ValueError:
        return {"applied": False, "why": "no result from the child"}


def _drain(fd: int, into: list[bytes]) -> None:
    """What the pipe holds now, without waiting (`fd` is non-blocking)."""
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        if not chunk:
            return
        into.append(chunk)


def _said(fd: int) -> bool:
    try:
        return bool(os.read(fd, 1))
    except BlockingIOError:
        return False


def _run_mutant(mutant: dict[str, Any], items: dict[str, Any], say: int = -1) -> dict[str, Any]:
    why = _swap(mutant)
    if why:
        return {"applied": False, "why": why}
    outcomes = _run_items(mutant["select"], items, bool(mutant.get("until_killed")))
    confirm = mutant.get("confirm") or []
    sides = mutant.get("sides") or [[], []]
    killed = [any(outcomes.get(n, "failed") != "passed" for n in side) for side in sides]
    if not confirm or len(set(killed)) < 2:
        return {"applied": True, "timed_out": False, "outcomes": outcomes}
    # the two versions of the changed tests disagree: the unchanged tests that reach the
    # mutant run too, until the first kills it (one that kills it kills it in both modules)
    if say >= 0:
        os.write(say, b"+")
    outcomes.update(_run_items(confirm, items, until_killed=True))
    return {"applied": True, "timed_out": False, "outcomes": outcomes, "confirmed": True}


def _run_items(select: list[str], items: dict[str, Any], until_killed: bool) -> dict[str, str]:
    outcomes: dict[str, str] = {}
    selected = [items[n] for n in select if n in items]
    for index, item in enumerate(selected):
        following = selected[index + 1] if index + 1 < len(selected) else None
        # fixtures the next test shares (module, class) stay up between them, as in a run
        for report in runtestprotocol(item, nextitem=following, log=False):
            outcome = _outcome(report)
            if outcome is None:
                continue
            known = outcomes.get(item.nodeid)
            if known is None or RANK[outcome] > RANK[known]:
                outcomes[item.nodeid] = outcome
        if until_killed and outcomes.get(item.nodeid, "passed") != "passed":
            break  # one kill is all that was asked: the rest have no outcome
    return outcomes


def _swap(mutant: dict[str, Any]) -> str:
    """Put the mutated code into the live function; an empty string, or why not."""
    filename = os.path.realpath(os.path.join(_config.get("root", ""), mutant["path"]))
    module = next(
        (
            m
            for m in list(sys.modules.values())
            if os.path.realpath(str(getattr(m, "__file__", "") or "")) == filename
        ),
        None,
    )
    if module is None:
        return "the module is not imported"
    parts = mutant["function"].split(".")
    owner: Any = module
    path = [parts[0]]
    if len(parts) > 1 and isinstance(getattr(module, parts[0], None), type):
        owner, path = getattr(module, parts[0]), parts[:2]
    live = vars(owner).get(path[-1])
    live = getattr(live, "__func__", live)  # staticmethod, classmethod
    for _ in range(10):  # through functools.wraps decorators to the function itself
        if isinstance(live, types.FunctionType) and live.__code__.co_name == path[-1]:
            break
        live = getattr(live, "__wrapped__", None)
    if not isinstance(live, types.FunctionType) or live.__code__.co_name != path[-1]:
        return "not a plain function"
    nested = parts[len(path) :]
    first = int(mutant.get("first", 0))
    # the definition that starts at `first` (of several with one name: typing overloads)
    code = _code_at(compile(mutant["source"], filename, "exec"), path, 0 if nested else first)
    if code is None or code.co_freevars != live.__code__.co_freevars:
        return "the mutated code has no such function, or other free variables"
    old_inner = _code_at(live.__code__, nested, first) if nested else None
    new_inner = _code_at(code, nested, first) if nested else None
    if nested and (old_inner is None or new_inner is None):
        return "the nested function is not found"
    live.__code__ = code  # closures made from now on are mutated ...
    if old_inner is not None and new_inner is not None:
        for obj in gc.get_objects():  # ... and those made already (decorators at import)
            if isinstance(obj, types.FunctionType) and obj.__code__ is old_inner:
                if obj.__code__.co_freevars != new_inner.co_freevars:
                    return "a closure with other free variables"
                obj.__code__ = new_inner
    return ""


def _code_at(code: Any, names: list[str], first: int = 0) -> Any:
    """The code object nested in `code` along `names` (co_consts), the last one starting at
    line `first` when given (two branches of an `if` may define the same name), or None."""
    for index, name in enumerate(names):
        last = index == len(names) - 1
        code = next(
            (
                c
                for c in code.co_consts
                if isinstance(c, types.CodeType)
                and c.co_name == name
                and not (last and first and c.co_firstlineno != first)
            ),
            None,
        )
        if code is None:
            return None
    return code
