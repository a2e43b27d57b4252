"""Host B's clock shift and network block for the Python processes the tests start.

Standard library only, and no import from the rest of entropy_action but protocol.py: the
runner copies this file as `sitecustomize.py` (and protocol.py as `entropy_gate_protocol.py`)
into a private directory on host B's PYTHONPATH, so every
Python child of the test process runs it at start-up. In the test process itself it does
nothing (the plugin's config variable is still set there; the plugin removes it, so children
never see it). In a child it reads CHILD_ENV (JSON: the plugin's directory, the clock shift,
whether to refuse the network and which hostname to report), applies them with the plugin's
own functions, appends one line saying what took effect to the `children` file, and then runs
the `sitecustomize` it shadows, if any.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from typing import Any

if __package__:  # imported as entropy_action.testproc.X (the public names, the gate)
    from entropy_action.testproc import protocol
else:  # copied into the test process as entropy_gate_X (hosts.testfiles)
    import entropy_gate_protocol as protocol  # type: ignore[import-not-found, no-redef]

CHILD_ENV = protocol.CHILD_ENV
PLUGIN_ENV = protocol.PLUGIN_ENV  # set only in the test process itself
PLUGIN_MODULE = protocol.PLUGIN_MODULE
MAX_CHILD_LINES = 1000  # lines a run's children may add to the children file


def _config() -> dict[str, Any] | None:
    if os.environ.get(PLUGIN_ENV):
        return None  # the test process: the plugin does the work there
    try:
        loaded = json.loads(os.environ.get(CHILD_ENV) or "null")
    except ValueError:
        return None
    return loaded if isinstance(loaded, dict) else None


def _pytest_child() -> bool:
    """A nested pytest: time-machine imported here would make it warn (NOTES.md)."""
    argv = [str(arg) for arg in getattr(sys, "orig_argv", sys.argv)]
    return any(
        a == "pytest" or a.endswith(("/pytest", "/py.test")) or (a == "-m" and b == "pytest")
        for a, b in zip(argv, [*argv[1:], ""], strict=True)
    )


def _plugin(folder: str) -> Any:
    sys.path.insert(0, folder)
    try:
        import entropy_gate_plugin  # type: ignore[import-not-found]  # noqa: PLC0415

        return entropy_gate_plugin
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(folder)


def _record(config: dict[str, Any], seen: dict[str, Any]) -> None:
    path = config.get("children")
    if not isinstance(path, str):
        return
    with contextlib.suppress(OSError), open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(seen) + "\n")


def _apply(config: dict[str, Any]) -> None:
    gate = _plugin(str(config.get("plugin_dir", "")))
    seen: dict[str, Any] = {"pid": os.getpid(), "argv0": os.path.basename(sys.argv[0] or "")}
    if config.get("block_network"):
        gate._block_network()
        seen["network_blocked"] = True
    if config.get("hostname"):
        gate._patch_hostname(str(config["hostname"]))
    shift = config.get("clock_shift_seconds")
    if shift and _pytest_child():
        seen["clock"] = "not shifted: a nested pytest (time-machine would warn there)"
    elif shift:
        gate._shift_clock(float(shift))
        state = gate._state
        seen["clock_shift_seconds"] = state.get("clock_shift_seconds")
        seen["clock"] = state.get("clock_error") or "shifted"
    _vary_machine(gate, config, seen)
    _record(config, seen)


def _vary_machine(gate: Any, config: dict[str, Any], seen: dict[str, Any]) -> None:
    """Host B's listing order and CPU count, with the plugin's own functions (listing.py)."""
    gate._vary_machine(config)
    order, cpus = gate._state.get("file_order"), gate._state.get("cpu_count")
    if isinstance(order, dict):
        seen["file_order"] = order.get("error") or "shuffled"
    if isinstance(cpus, dict):
        seen["cpu_count"] = cpus.get("seen")


def _chain() -> None:
    """Run the sitecustomize this one shadows (a distribution's or the venv's), if any."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec(protocol.CHILDSITE_MODULE, path)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


def _main() -> None:
    config = _config()
    if config is not None:
        try:
            _apply(config)
        except Exception as exc:  # never break a child of the tests
            _record(config, {"pid": os.getpid(), "error": f"{type(exc).__name__}: {exc}"})
    _chain()


_main()
