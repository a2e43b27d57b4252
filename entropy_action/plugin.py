"""entropy-gate's pytest plugin, loaded inside the test process with `-p`.

Standard library only, and no import from the rest of entropy_action: the runner copies this
file alone (as `entropy_gate_plugin.py`) into a private directory on PYTHONPATH, so it works
under any interpreter that runs pytest. It does nothing unless the runner names a config file
in the environment variable CONFIG_ENV. Then, at import (before conftests and test modules):

- shifts the live wall clock forward with time-machine (ticking, never frozen) when asked;
- refuses non-loopback sockets in-process and reports another hostname, when the runner could
  not give the run its own network and UTS namespaces;

and once collection is done it writes what the test process saw (the pinned variables, umask,
temp dir, hash seed, locale, time zone) and what isolation took effect into a JSON report.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import ipaddress
import json
import locale
import os
import platform
import socket
import sys
import tempfile
import time
from typing import Any

CONFIG_ENV = "ENTROPY_GATE_PLUGIN"
_LOOPBACK_NAMES = frozenset({"", "localhost", "localhost.localdomain", "ip6-localhost"})
_INET = (socket.AF_INET, socket.AF_INET6)

_config: dict[str, Any] | None = None
_state: dict[str, Any] = {}
_written = False


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
    before = time.time()
    time_machine.travel(before + seconds, tick=True).start()
    _state["clock_shift_seconds"] = time.time() - before
    _state["clock_method"] = "time-machine"


# --- the network and the hostname, in-process ----------------------------------------------


def _is_loopback(host: object) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    name = str(host).split("%", 1)[0].strip().lower().rstrip(".")
    if name in _LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def _refuse(what: object) -> OSError:
    return OSError(
        errno.ENETUNREACH, f"entropy-gate host B has no network: {what!r} is not loopback"
    )


def _check_address(family: int, address: object) -> None:
    if family in _INET and isinstance(address, tuple) and not _is_loopback(address[0]):
        raise _refuse(address[0])


def _block_network() -> None:
    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _is_loopback(host):
            raise socket.gaierror(
                socket.EAI_NONAME, f"entropy-gate host B has no network: cannot resolve {host!r}"
            )
        return real_getaddrinfo(host, *args, **kwargs)

    def by_name(real: Any) -> Any:
        def lookup(host: Any, *args: Any) -> Any:
            if not _is_loopback(host):
                raise _refuse(host)
            return real(host, *args)

        return lookup

    def guarded(real: Any) -> Any:
        def method(self: socket.socket, *args: Any) -> Any:
            if args:
                _check_address(self.family, args[-1])
            return real(self, *args)

        return method

    socket.getaddrinfo = getaddrinfo
    socket.gethostbyname = by_name(socket.gethostbyname)
    socket.gethostbyname_ex = by_name(socket.gethostbyname_ex)
    for name in ("connect", "connect_ex", "sendto"):
        setattr(socket.socket, name, guarded(getattr(socket.socket, name)))
    _state["network_blocked_in_process"] = True


def _patch_hostname(name: str) -> None:
    socket.gethostname = lambda: name
    if hasattr(os, "uname"):
        real = os.uname()
        fields = (real.sysname, name, real.release, real.version, real.machine)
        fake = type(real)(fields)
        os.uname = lambda: fake
    _state["hostname_patched_in_process"] = True


def _activate(config: dict[str, Any]) -> None:
    if config.get("block_network"):
        _block_network()
    if config.get("hostname"):
        _patch_hostname(str(config["hostname"]))
    shift = config.get("clock_shift_seconds")
    if shift:
        _shift_clock(float(shift))


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
        "platform": platform.platform(),
        "hostname": hostname,
        "hostname_sha256": hashlib.sha256(hostname.encode("utf-8", "replace")).hexdigest(),
        "uid": os.getuid() if hasattr(os, "getuid") else None,
    }


def _report(config: dict[str, Any]) -> dict[str, Any]:
    gettempdir = tempfile.gettempdir()
    return {
        "env": {name: os.environ.get(name) for name in config.get("env_names", [])},
        "umask": _umask(),
        "gettempdir": gettempdir,
        "gettempdir_real": os.path.realpath(gettempdir),
        "hash_randomization": sys.flags.hash_randomization,
        "tzname": list(time.tzname),
        "lc_ctype": _lc_ctype(),
        "cwd": _START_CWD,  # before any conftest could chdir
        "time": time.time(),
        "fingerprint": _fingerprint(),
        "interfaces": _interfaces(),
        "loopback_works": _loopback_works() if config.get("check_loopback") else None,
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


def pytest_collection_finish() -> None:
    """Conftests and test modules are imported by now: report what they left in place."""
    _write_report()


def pytest_sessionfinish() -> None:
    with contextlib.suppress(OSError):
        _write_report()


_START_CWD = os.getcwd()
_config = _load_config()
if _config is not None:
    _activate(_config)
