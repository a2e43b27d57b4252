"""The in-process network block: one loopback test and one set of socket wrappers, for the
gate's plugin (host B, always on), the user's seams (during each test only, naming it) and
host B's Python children (childsite.py, through the plugin).

Standard library only. Copied into the test process beside the plugin as
`entropy_gate_netblock` (hosts.testfiles); the seams import it as
`entropy_action.testproc.netblock`.

ENTRY_POINTS is every socket function the block wraps: the resolvers refuse a name that is
not loopback (socket.gaierror, EAI_NONAME), the socket methods an address family AF_INET or
AF_INET6 whose host is not loopback (OSError, ENETUNREACH). Loopback, the unspecified
address and `*.localhost` pass; so do other families (AF_UNIX).
"""

from __future__ import annotations

import errno
import ipaddress
import socket
import sys
from collections.abc import Callable
from typing import Any

LOOPBACK_NAMES = frozenset({"", "localhost", "localhost.localdomain", "ip6-localhost"})
INET = (socket.AF_INET, socket.AF_INET6)
# Functions of `socket` whose first argument is a host.
RESOLVERS = ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr")
# Methods of `socket.socket`, and where their address is among the arguments after `self`.
ADDRESS_AT = {"connect": 0, "connect_ex": 0, "sendto": -1, "sendmsg": 3}
METHODS = tuple(ADDRESS_AT)
ENTRY_POINTS = (
    *(f"socket.{name}" for name in RESOLVERS),
    *(f"socket.socket.{name}" for name in METHODS),
)
# The audit event each raises (sys.audit), when the caller asks the attempt to be seen.
AUDIT_EVENTS = {
    "getaddrinfo": "socket.getaddrinfo",
    "gethostbyname": "socket.gethostbyname",
    "gethostbyname_ex": "socket.gethostbyname",
    "gethostbyaddr": "socket.gethostbyaddr",
    "connect": "socket.connect",
    "connect_ex": "socket.connect",
    "sendto": "socket.sendto",
    "sendmsg": "socket.sendmsg",
}

Refusal = Callable[[object], "str | None"]  # the host tried -> the message, None: allowed now


def is_loopback(host: object) -> bool:
    """Whether `host` (a name, an address, bytes, None) stays on this machine."""
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    name = str(host).split("%", 1)[0].strip().lower().rstrip(".")
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def install(refusal: Refusal, *, audit: bool = False) -> None:
    """Wrap every entry point: a host that is not loopback, when `refusal` gives a message
    for it, is refused with that message. `audit`: first raise the audit event the real
    function would have raised (the attempt never reaches it), for the audit hook."""
    for name in RESOLVERS:
        setattr(socket, name, _resolver(name, getattr(socket, name), refusal, audit))
    for name in METHODS:
        setattr(socket.socket, name, _method(name, getattr(socket.socket, name), refusal, audit))


def _resolver(name: str, real: Any, refusal: Refusal, audit: bool) -> Any:
    def resolve(host: Any, *args: Any, **kwargs: Any) -> Any:
        message = None if is_loopback(host) else refusal(host)
        if message is not None:
            if audit:
                sys.audit(AUDIT_EVENTS[name], host, *args)
            raise socket.gaierror(socket.EAI_NONAME, message)
        return real(host, *args, **kwargs)

    resolve.__name__ = resolve.__qualname__ = name
    return resolve


def _address(name: str, args: tuple[Any, ...]) -> Any:
    """connect(address), sendto(data[, flags], address), sendmsg(buffers, ancdata, flags,
    address): the address, or None when the call names none."""
    at = ADDRESS_AT[name]
    return args[at] if -len(args) <= at < len(args) else None


def _method(name: str, real: Any, refusal: Refusal, audit: bool) -> Any:
    def method(self: socket.socket, *args: Any) -> Any:
        address = _address(name, args)
        inet = self.family in INET and isinstance(address, tuple) and len(address) > 0
        tried = address[0] if inet else None
        message = None if is_loopback(tried) else refusal(tried)
        if message is not None:
            if audit:
                sys.audit(AUDIT_EVENTS[name], self, address)
            raise OSError(errno.ENETUNREACH, message)
        return real(self, *args)

    method.__name__ = method.__qualname__ = name
    return method
