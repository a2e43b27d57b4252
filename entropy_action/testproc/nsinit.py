"""Set up the inside of fresh namespaces, then exec the test command.

Run by the runner as `unshare ... PYTHON -I -S entropy_gate_nsinit.py [OPTIONS] -- ARGV...`:

- `--loopback`: bring `lo` up (a fresh network namespace starts with it down) — with an ioctl,
  else `ip link set lo up`;
- `--hostname NAME`: the hostname to set in the fresh UTS namespace;
- `--bind PRIVATE TARGET`: bind-mount the private directory PRIVATE over TARGET (the pinned
  temp_root) in the fresh mount namespace, so two runs never share a temp_root;
- `--as UID GID`: the caller is not root and the namespaces came with a user namespace where
  it is (`unshare --user --map-root-user`): once the rest is set up, a nested user namespace
  gives the command the caller's own uid and gid back, so the tests see the uid they see
  outside and may read only what that user may (a test that a file with mode 000 cannot be
  read, or one that skips as root, runs as on host A; environs' and python-dotenv's do);
- `--result FILE`: nsinit is PID 1 of a fresh PID namespace (`unshare --pid --fork
  --mount-proc`): instead of exec'ing the command it starts it as its child, reaps every
  orphan while it runs, and once the command exits lists every process still in the namespace
  ("pid N (comm)"), kills them, and writes {"returncode": ..., "left": [...]} to the file
  (PID 1 cannot die of its child's signal, so the signal is in the file as a negative code).
  A process the tests started cannot leave the namespace, whatever its environment or session.

Standard library only; the runner copies this file alone next to the plugin. A failure to bind
the temp root stops the run (exit 125); the others are reported on stderr and left to the
plugin's report, which checks loopback and the hostname from inside the test process.

Every host run in a namespace starts this process before pytest, so it imports only what the
options it was given need (sockets for the loopback and hostname, ctypes for the bind) and
neither json nor subprocess: importing those alone took ~30 ms of its ~60 ms.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # signal's C part (signal imports enum)
import os
import sys
import time

TYPE_CHECKING = False  # typing's, without importing typing
if TYPE_CHECKING:
    from typing import Any

SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
MS_BIND = 4096
MS_REC = 16384
CLONE_NEWUSER = 0x10000000
FAILED = 125


def _say(message: str) -> None:
    print(f"entropy-gate nsinit: {message}", file=sys.stderr, flush=True)


def loopback_up() -> None:
    """`lo` up through SIOCSIFFLAGS; falls back to the `ip` command."""
    import fcntl  # noqa: PLC0415  # each import on the path that needs it (the docstring)
    import socket  # noqa: PLC0415
    import struct  # noqa: PLC0415

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
    if _command("ip", "link", "set", "lo", "up"):
        _say(f"could not bring loopback up ({reason})")


def _command(name: str, *args: str) -> int:
    """Run the command `name` from PATH; its exit status, 127 when there is none."""
    import shutil  # noqa: PLC0415  # a fallback's only
    import subprocess  # noqa: PLC0415

    found = shutil.which(name)
    return 127 if found is None else subprocess.run([found, *args], check=False).returncode


def set_hostname(name: str) -> None:
    import socket  # noqa: PLC0415

    try:
        socket.sethostname(name)
    except OSError as exc:
        _say(f"could not set the hostname: {exc}")


def bind(private: str, target: str) -> bool:
    """Bind-mount `private` over `target`: with mount(2), else the `mount` command."""
    import ctypes  # noqa: PLC0415

    try:
        libc = ctypes.CDLL(None, use_errno=True)  # the interpreter's own libc
        status = libc.mount(private.encode(), target.encode(), None, MS_BIND | MS_REC, None)
        reason = os.strerror(ctypes.get_errno()) if status else ""
    except (OSError, AttributeError) as exc:
        status, reason = -1, str(exc)
    if status == 0:
        return True
    if _command("mount", "--bind", private, target) == 0:
        return True
    _say(f"could not bind a private temp root over {target}: {reason}")
    return False


def become(uid: str, gid: str) -> bool:
    """This process (and what it starts) in a nested user namespace as `uid`:`gid`, mapped to
    the root of the one it is in: the command's exec then drops every capability."""
    import ctypes  # noqa: PLC0415

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        failed = libc.unshare(CLONE_NEWUSER) != 0
        reason = os.strerror(ctypes.get_errno()) if failed else ""
    except (OSError, AttributeError) as exc:
        failed, reason = True, str(exc)
    maps = (
        ("setgroups", "deny"),
        ("uid_map", f"{int(uid)} 0 1\n"),
        ("gid_map", f"{int(gid)} 0 1\n"),
    )
    for name, text in maps if not failed else ():
        try:
            with open(f"/proc/self/{name}", "w", encoding="ascii") as handle:
                handle.write(text)
        except OSError as exc:
            failed = failed or name != "setgroups"
            reason = reason or f"{name}: {exc.strerror}"
    if failed:
        _say(f"could not give the tests the caller's uid {uid} back: {reason}")
    return not failed


def _others() -> dict[int, str]:
    """Every process in this PID namespace but this one: pid -> comm."""
    found: dict[int, str] = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                with open(f"/proc/{name}/comm", encoding="utf-8", errors="replace") as handle:
                    found[int(name)] = handle.read().strip()
            except OSError:
                continue  # gone meanwhile
    return found


def _reap_all() -> None:
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def supervise(command: list[str], result: str) -> int:
    """Run `command` as PID 1's child; reap orphans; kill and list what it leaves."""
    try:  # every inheritable descriptor passes on (the channel's write end); as Popen would,
        # the signals Python ignores are the command's to handle again
        default = (_signal.SIGPIPE, _signal.SIGXFSZ)
        child = os.posix_spawn(command[0], command, os.environ, setsigdef=default)
    except OSError as exc:
        _say(f"cannot run {command[0]}: {exc.strerror}")
        return FAILED
    status = 0
    while True:
        try:
            pid, waited = os.waitpid(-1, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            break
        if pid == child:
            status = waited
            break
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.waitstatus_to_exitcode(status)
    left: dict[int, str] = {}
    for _ in range(100):  # a process forking meanwhile is caught on a later pass
        found = _others()
        if not found:
            break
        left.update({pid: name for pid, name in found.items() if pid not in left})
        for pid in found:
            try:
                os.kill(pid, _signal.SIGKILL)
            except OSError:
                continue
        _reap_all()
        time.sleep(0.001)
    shown = [f"pid {pid} ({name})" for pid, name in sorted(left.items())]
    with open(result + ".part", "w", encoding="utf-8") as handle:
        handle.write(result_json(code, shown))
    os.replace(result + ".part", result)
    return code if code >= 0 else 128 - code


def result_json(code: int, left: list[str]) -> str:
    """{"returncode": code, "left": [...]} as JSON, with the json module's own string escaping
    (its C part, `_json`, which needs none of the module's imports)."""
    try:
        from _json import encode_basestring_ascii as quote  # noqa: PLC0415
    except ImportError:  # an interpreter without the accelerator
        from json import dumps as quote  # noqa: PLC0415
    return f'{{"returncode": {int(code)}, "left": [{", ".join(quote(item) for item in left)}]}}'


def parse(argv: list[str]) -> tuple[dict[str, Any], list[str]] | None:
    """The options before `--` and the command after it; None when they do not parse."""
    spec: dict[str, Any] = {}
    takes = {"--loopback": 0, "--hostname": 1, "--bind": 2, "--as": 2, "--result": 1}
    index = 0
    while index < len(argv) and argv[index] != "--":
        option = argv[index]
        count = takes.get(option)
        if count is None or index + count >= len(argv):
            return None
        values = argv[index + 1 : index + 1 + count]
        spec[option[2:]] = True if count == 0 else values[0] if count == 1 else values
        index += 1 + count
    command = argv[index + 1 :]
    return (spec, command) if index < len(argv) and command else None


def main(argv: list[str]) -> int:
    parsed = parse(argv)
    if parsed is None:
        _say("usage: entropy_gate_nsinit.py [--loopback] [--hostname NAME] "
             "[--bind PRIVATE TARGET] [--as UID GID] [--result FILE] -- COMMAND...")  # fmt: skip
        return FAILED
    spec, command = parsed
    if spec.get("loopback"):
        loopback_up()
    if spec.get("hostname"):
        set_hostname(str(spec["hostname"]))
    pair = spec.get("bind")
    if pair and not bind(str(pair[0]), str(pair[1])):
        return FAILED
    ids = spec.get("as")
    if ids:  # where nesting is refused the tests run as the namespace's root, as they did
        become(str(ids[0]), str(ids[1]))
    if spec.get("result"):
        return supervise(command, str(spec["result"]))
    try:
        os.execv(command[0], command)  # noqa: S606
    except OSError as exc:
        _say(f"cannot run {command[0]}: {exc.strerror}")
    return FAILED


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
