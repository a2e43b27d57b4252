"""Counting the assertions each test executed, inside the test process.

Loaded as `entropy_gate_assertcount` (hosts.testfiles.write_boot) next to `-o
enable_assertion_pass_hook=true`: the runner copies this file beside the plugin, so it
imports the standard library only and, of entropy_action, its siblings vocabulary.py and
protocol.py (copied with it). Each test's count goes into
the JUnit report as the properties `entropy_assertions` (how many passed) and
`entropy_assertion_sites` (at how many distinct statements: a loop over ten items is ten
assertions at one site). Setup, call and teardown all count; a failing assertion does not.

What counts:

- the `assert` statements pytest rewrote (test modules, conftests, modules registered for
  rewriting). With the ini option on, each rewritten `assert` that passed asks
  `_pytest.assertion.rewrite._check_if_assertion_pass_impl()` whether any plugin implements
  `pytest_assertion_pass`, and only if one does builds the explanation (a saferepr of every
  intermediate value, `pytest_assertrepr_compare` for every comparison) and calls the hook.
  That explanation was the whole cost of counting through the hook (about 35 µs a passing
  assert; CPU x1.5 on a 1,000-test module with 4 asserts a test). So this module implements
  no hook: it replaces that function, which the rewritten code looks up on its module at
  every call, with one that counts its caller's line and returns the original's answer (a
  project's own `pytest_assertion_pass` still runs). The name is pytest's, not public API:
  under a pytest without it, in the shape known here, the public hook counts instead
  (slower, the same counts). `--assert=plain` rewrites nothing: every such count is 0.
- unittest's `self.assert*` methods (a `unittest.TestCase` run by pytest, or any call in a
  test), the ones vocabulary.py names COUNTED: `TestCase`'s methods are wrapped once the
  test modules are imported, and a call counts when it returns and was made from outside
  unittest (`assertEqual` calling `assertListEqual` is one assertion). The wrappers' frames
  are hidden from tracebacks (`__unittest` for unittest's and pytest's unittest filter,
  `__tracebackhide__` for pytest's).

`pytest.raises` and mocks' `assert_called_*` are not counted (vocabulary.py), nor an
`assertRaises` of a broad exception (`Exception`, `BaseException`): any defect that raises
satisfies it, so it is no precise assertion (the scan's broad.py says the same).

PYTEST_DONT_REWRITE: the run imports this module before pytest could rewrite it (it has no
assert to rewrite), and pytest is told so by this marker.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from sys import _getframe  # bound once: a test may delete sys._getframe
from types import FrameType
from typing import Any

if __package__:  # imported as entropy_action.testproc.assertcount (the gate, the tests)
    from entropy_action.testproc import protocol, vocabulary
else:  # copied into the test process as entropy_gate_assertcount (hosts.testfiles)
    import entropy_gate_protocol as protocol  # type: ignore[import-not-found, no-redef]
    import entropy_gate_vocabulary as vocabulary  # type: ignore[import-not-found, no-redef]

ASSERTIONS_PROPERTY = "entropy_assertions"
SITES_PROPERTY = "entropy_assertion_sites"
ASSERTION_HOOK_INI = protocol.ASSERTION_HOOK_INI
CHECK_NAME = "_check_if_assertion_pass_impl"  # in _pytest.assertion.rewrite
HOOK_PLUGIN = "entropy-gate-assertion-hook"

__unittest = True  # unittest's marker: frames of this module are not the test's


class _Counts:
    """What the current test executed so far, and what was replaced to count it."""

    counting = False
    executed = 0
    sites: set[tuple[str, int, int]] = set()  # noqa: RUF012  # see _site
    restore: list[tuple[Any, str, Any]] = []  # noqa: RUF012  # (owner, name, original)


def _site(frame: FrameType) -> tuple[str, int, int]:
    """Where an assertion ran: its file, its function's first line and the offset of the call
    in the function's bytecode (one call per statement). Not `f_lineno`: decoding the line
    table made counting three times dearer (+0.2 s CPU for 53,000 asserts)."""
    code = frame.f_code
    return code.co_filename, code.co_firstlineno, frame.f_lasti


def _counted_check(real: Callable[[], bool]) -> Callable[[], bool]:
    """The replacement of pytest's check: called once per passing rewritten assert."""
    add = _Counts.sites.add  # the set is cleared per test, never replaced

    def check() -> bool:
        frame = _getframe(1)
        _Counts.executed += 1
        add(_site(frame))
        return real()

    check.__name__ = check.__qualname__ = CHECK_NAME
    return check


class _HookCounter:
    """The public way, for a pytest whose pass check is not the function known here."""

    def pytest_assertion_pass(self, item: Any, lineno: int, orig: str, expl: str) -> None:
        _Counts.executed += 1
        _Counts.sites.add((orig, 0, lineno))  # the statement's text and line


def _known_check(rewrite: Any) -> Callable[[], bool] | None:
    """pytest's pass check, when it is a plain function of no arguments (pytest 5.0 to 9)."""
    real = getattr(rewrite, CHECK_NAME, None)
    if not inspect.isfunction(real):
        return None
    try:
        parameters = inspect.signature(real).parameters
    except (TypeError, ValueError):
        return None
    return real if not parameters else None


def _replace(owner: Any, name: str, value: Any) -> None:
    _Counts.restore.append((owner, name, owner.__dict__[name]))
    setattr(owner, name, value)


def _count_rewritten(config: Any) -> None:
    rewrite = sys.modules.get("_pytest.assertion.rewrite")  # imported by pytest itself
    real = _known_check(rewrite)
    if real is None:
        config.pluginmanager.register(_HookCounter(), HOOK_PLUGIN)
    else:
        _replace(rewrite, CHECK_NAME, _counted_check(real))


def _broad(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether an assertRaises call expects a broad exception (vocabulary.BROAD_EXCEPTIONS,
    alone or in a tuple): any defect that raises satisfies it, so it is not counted."""
    expected = args[1] if len(args) > 1 else kwargs.get("expected_exception")
    options = expected if isinstance(expected, tuple) else (expected,)
    return any(
        isinstance(e, type)
        and e.__module__ == "builtins"
        and e.__name__ in vocabulary.BROAD_EXCEPTIONS
        for e in options
    )


def _counted_method(real: Callable[..., Any], raises: bool = False) -> Callable[..., Any]:
    @functools.wraps(real)
    def method(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        result = real(*args, **kwargs)
        caller = _getframe(1)
        if raises and _broad(args, kwargs):
            return result
        if "__unittest" not in caller.f_globals:  # not unittest calling itself
            _Counts.executed += 1
            _Counts.sites.add(_site(caller))
        return result

    return method


def _count_unittest() -> None:
    """Wrap TestCase's assert methods, if the tests imported unittest."""
    unittest = sys.modules.get("unittest")
    case = getattr(unittest, "TestCase", None)
    if case is None or any(owner is case for owner, _, _ in _Counts.restore):
        return
    for name, value in list(vars(case).items()):
        if name in vocabulary.COUNTED and inspect.isfunction(value):
            _replace(case, name, _counted_method(value, name in vocabulary.UNITTEST_RAISES))


def pytest_configure(config: Any) -> None:
    try:
        _Counts.counting = bool(config.getini(ASSERTION_HOOK_INI))
    except ValueError:  # a pytest without the hook
        _Counts.counting = False
    if _Counts.counting:
        _count_rewritten(config)


def pytest_collection_finish() -> None:
    """The test modules are imported: a suite of TestCases has imported unittest by now."""
    if _Counts.counting:
        _count_unittest()


def pytest_runtest_logstart() -> None:
    _Counts.executed = 0
    _Counts.sites.clear()


def pytest_runtest_makereport(item: Any, call: Any) -> None:
    """Before the teardown report is made from the item: its properties are copied then.

    Registered after pytest's own plugins, this runs before the default implementation
    (pluggy calls the latest first) and returns None, so that implementation still runs."""
    if call.when == "teardown" and _Counts.counting:
        item.user_properties.append((ASSERTIONS_PROPERTY, _Counts.executed))
        item.user_properties.append((SITES_PROPERTY, len(_Counts.sites)))


def pytest_unconfigure() -> None:
    """Put back what was replaced (an in-process pytest run leaves its caller as it was)."""
    while _Counts.restore:
        owner, name, original = _Counts.restore.pop()
        setattr(owner, name, original)
