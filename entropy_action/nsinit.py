"""Set up the inside of fresh namespaces, then exec the test command.

Run by the runner as `unshare ... PYTHON -I -S entropy_gate_nsinit.py SPEC -- ARGV...`, where
SPEC is a JSON object:

- "loopback": bring `lo` up (a fresh network namespace starts with it down) — with an ioctl,
  else `ip link set lo up`;
- "hostname": the hostname to set in the fresh UTS namespace;
- "bind": [PRIVATE, TARGET] — bind-mount the private directory PRIVATE over TARGET (the pinned
  temp_root) in the fresh mount namespace, so two runs never share a temp_root.

Standard library only; the runner copies this file alone next to the plugin. A failure to bind
the temp root stops the run (exit 125); the others are reported on stderr and left to the
plugin's report, which checks loopback and the hostname from inside the test process.
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
from typing import Any

SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
MS_BIND = 4096
MS_REC = 16384
FAILED = 125


def _say(message: str) -> None:
    print(f"entropy-gate nsinit: {message}", file=sys.stderr, flush=True)


def loopback_up() -> None:
    """`lo` up through SIOCSIFFLAGS; falls back to the `ip` command."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            request = struct.pack("16sH14s", b"lo", 0, bytes(14))
            flags = struct.unpack("16sH", fcntl.ioctl(sock, SIOCGIFFLAGS, request)[:18])[1]
            fcntl.ioctl(
                sock, SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, bytes(14))
            )
        return
    except OSError as exc:
        reason = str(exc)
    ip = shutil.which("ip")
    if ip is None or subprocess.run([ip, "link", "set", "lo", "up"], check=False).returncode:
        _say(f"could not bring loopback up ({reason})")


def set_hostname(name: str) -> None:
    try:
        socket.sethostname(name)
    except OSError as exc:
        _say(f"could not set the hostname: {exc}")


def bind(private: str, target: str) -> bool:
    """Bind-mount `private` over `target`: with mount(2), else the `mount` command."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # the interpreter's own libc
        status = libc.mount(private.encode(), target.encode(), None, MS_BIND | MS_REC, None)
        reason = os.strerror(ctypes.get_errno()) if status else ""
    except (OSError, AttributeError) as exc:
        status, reason = -1, str(exc)
    if status == 0:
        return True
    mount = shutil.which("mount")
    if mount and subprocess.run([mount, "--bind", private, target], check=False).returncode == 0:
        return True
    _say(f"could not bind a private temp root over {target}: {reason}")
    return False


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        _say("usage: entropy_gate_nsinit.py SPEC -- COMMAND...")
        return FAILED
    spec: dict[str, Any] = json.loads(argv[0])
    command = argv[2:]
    if spec.get("loopback"):
        loopback_up()
    if spec.get("hostname"):
        set_hostname(str(spec["hostname"]))
    pair = spec.get("bind")
    if pair and not bind(str(pair[0]), str(pair[1])):
        return FAILED
    try:
        os.execv(command[0], command)  # noqa: S606
    except OSError as exc:
        _say(f"cannot run {command[0]}: {exc.strerror}")
    return FAILED


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
