"""A pytest plugin for bench_layers.py: times each hook implementation of the gate's plugins
and of pytest's JUnit writer inside a real host run, and writes the totals as JSON to
$BENCH_HOOKTIMES when the process exits.

Loaded with `-p layers_hooktimes` from the manifest's pytest_args (the bench puts this
folder on PYTHONPATH). Its pytest_configure runs last, after the gate's plugin registered
the hooks it adds there (provenance, test data, order), and wraps each plain implementation
(not the wrappers: their time is the others') in a timer; a timer adds ~0.2 µs a call.
"""

from __future__ import annotations

import atexit
import inspect
import json
import os
import time
from collections.abc import Callable
from typing import Any

import pytest

TIMED = ("entropy_gate", "_pytest.junitxml")
_totals: dict[tuple[str, str], list[float]] = {}  # (plugin module, hook) -> [seconds, calls]


def _timed(function: Callable[..., Any], key: tuple[str, str]) -> Callable[..., Any]:
    total = _totals.setdefault(key, [0.0, 0])

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            total[0] += time.perf_counter() - started
            total[1] += 1

    timed.__signature__ = inspect.signature(function)  # type: ignore[attr-defined]
    return timed


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    hook = config.pluginmanager.hook
    for name in (n for n in dir(hook) if n.startswith("pytest_")):
        for impl in getattr(hook, name).get_hookimpls():
            module = str(getattr(impl.function, "__module__", ""))
            if not module.startswith(TIMED) or impl.hookwrapper or impl.wrapper:
                continue
            impl.function = _timed(impl.function, (module, name))


def _write() -> None:
    path = os.environ.get("BENCH_HOOKTIMES")
    if path:
        rows = [
            {"plugin": plugin, "hook": hook, "seconds": seconds, "calls": calls}
            for (plugin, hook), (seconds, calls) in _totals.items()
        ]
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(rows, handle)


atexit.register(_write)
