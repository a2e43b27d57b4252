"""The pins inside the test process: what it must see (`pinned_environ`), and what it saw,
from the plugin's report: pins_applied, pins_mismatch and the pieces of the fingerprint only
the test process knows.

The report comes from the test process, so it is data: read with a size cap, every field
checked for its type before use.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from entropy_action.core.hostinfo import Fingerprint
from entropy_action.hosts import isolate
from entropy_action.manifest.pinfile import Pins
from entropy_action.testproc import listing, protocol

REPORT_LIMIT = 4 * 1024 * 1024
RUNNER_VARS = ("RUNNER_NAME", "RUNNER_OS", "RUNNER_ARCH", "ImageOS", "ImageVersion")
NOTHING_REPORTED = "the test process reported nothing (was the gate's plugin disabled?)"


def pinned_environ(
    pins: Pins, temp_root: str | None, cassette: str | None, hash_seed: int | None = None
) -> list[tuple[str, str, str]]:
    """(pin, variable, value) for every variable the pins set in the test process: the
    variables protocol.PIN_ENV names for each pin, then the `env.NAME` pins.

    PYTHONHASHSEED is always set: the pin, else `hash_seed` (host B's plan), else host A's."""
    if pins.hash_seed is not None:
        hash_seed = pins.hash_seed
    values: dict[str, str | None] = {
        "hash_seed": str(isolate.HOST_A_HASH_SEED if hash_seed is None else hash_seed),
        "tz": pins.tz,
        "lang": pins.lang,
        "clock_unix": None if pins.clock_unix is None else str(pins.clock_unix),
        "rng_seed": None if pins.rng_seed is None else str(pins.rng_seed),
        "temp_root": temp_root,
        "cassette_sha256": pins.cassette_sha256,
        "cassette": cassette,
    }
    out = [
        (pin, name, value)
        for pin, names in protocol.PIN_ENV.items()
        if (value := values[pin]) is not None
        for name in names
    ]
    out += [(f"env.{name}", name, value) for name, value in (pins.env or {}).items()]
    return out


def set_pinned(env: dict[str, str], expected: list[tuple[str, str, str]]) -> None:
    """Set `pinned_environ`'s variables in `env`. Where they set the locale, gettext's
    LANGUAGE goes unless a pin sets it: Python's gettext reads it before LC_ALL, so a
    caller's `LANGUAGE=de` would translate what a property pinned to C.UTF-8 reads."""
    names = {name for _, name, _ in expected}
    if names & set(protocol.LANG_ENV) and protocol.LANGUAGE_ENV not in names:
        env.pop(protocol.LANGUAGE_ENV, None)
    env.update({name: value for _, name, value in expected})


def read_report(path: Path) -> dict[str, Any] | None:
    """The plugin's report: data from the test process, parsed with a size cap."""
    try:
        if path.stat().st_size > REPORT_LIMIT:
            return None
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def verify_pins(
    pins: Pins,
    expected: list[tuple[str, str, str]],
    report: Mapping[str, Any] | None,
    temp_root: Path | None,
) -> tuple[dict[str, str | int], list[str]]:
    """`pins_applied` and `pins_mismatch` from the test process's report."""
    if report is None:
        return {}, [NOTHING_REPORTED]
    env = _section(report, "env")
    applied: dict[str, str | int] = {}
    mismatch: list[str] = []
    for pin, name, want in expected:
        # PYTHONHASHSEED counts as it was when the test process started (the plugin's
        # "hash_seed"): set later, it changes nothing
        got = report.get("hash_seed") if pin == "hash_seed" else env.get(name)
        got = got if isinstance(got, str) else None
        listed = pin != "hash_seed" or pins.hash_seed is not None  # unpinned: the gate's own
        if got is not None and listed and name not in ("LANG", "TEMP", "TMP"):
            applied.setdefault(pin, _as_pinned(pin, got))
        if got != want:
            seen = "it unset" if got is None else repr(got)
            verb = "pinned" if listed else "set to"
            mismatch.append(f"{pin}: {name} {verb} {want!r}, the test process saw {seen}")
    if pins.umask is not None:
        umask = report.get("umask")
        applied["umask"] = f"{umask:04o}" if isinstance(umask, int) else str(umask)
        if umask != int(pins.umask, 8):
            mismatch.append(f"umask: pinned {pins.umask}, the test process has {applied['umask']}")
    if temp_root is not None:
        applied["temp_root"] = str(report.get("gettempdir"))
        if report.get("gettempdir_real") != os.path.realpath(temp_root):
            mismatch.append(f"temp_root: tempfile.gettempdir() is {applied['temp_root']!r}")
    if pins.lang is not None and not _same_locale(pins.lang, str(report.get("lc_ctype"))):
        mismatch.append(
            f"lang: {pins.lang} is not available here; the test process runs in "
            f"{report.get('lc_ctype')} (install the locale or pin C.UTF-8)"
        )
    return applied, mismatch


def _section(report: Mapping[str, Any] | None, key: str) -> dict[str, Any]:
    value = report.get(key) if report else None
    return value if isinstance(value, dict) else {}


def _as_pinned(pin: str, seen: str) -> str | int:
    """Integer pins as integers, like `Pins.flat()`."""
    numeric = pin in ("clock_unix", "rng_seed", "hash_seed") and seen.lstrip("-").isdigit()
    return int(seen) if numeric else seen


def _same_locale(pinned: str, seen: str) -> bool:
    def norm(name: str) -> str:
        name = name.lower().replace("utf-8", "utf8")
        return "c" if name == "posix" else name

    return norm(pinned) == norm(seen)


def fingerprint(
    report: Mapping[str, Any] | None, environ: Mapping[str, str], *, isolated: bool
) -> Fingerprint:
    """The host's fingerprint; the gate's own values where the test process reported none."""
    seen = _section(report, "fingerprint")
    env = _section(report, "env")
    tzname = report.get("tzname") if report else None
    hostname = socket.gethostname().encode()
    return Fingerprint(
        python_version=str(seen.get("python_version") or platform.python_version()),
        python_implementation=str(
            seen.get("python_implementation") or platform.python_implementation()
        ),
        platform=str(seen.get("platform") or listing.platform_name()),
        hostname_sha256=str(seen.get("hostname_sha256") or hashlib.sha256(hostname).hexdigest()),
        runner={k: environ[k] for k in RUNNER_VARS if environ.get(k)},
        locale=str(report.get("lc_ctype") if report else "unknown"),
        tz=str(env.get("TZ") or "/".join(map(str, tzname or [])) or "unknown"),
        uid=seen.get("uid") if isinstance(seen.get("uid"), int) else None,
        isolated=isolated,
    )


# --- what isolation took effect on host B ------------------------------------------------


def effects(
    plan: isolate.HostB, report: Mapping[str, Any] | None, started: float
) -> tuple[list[str], list[str]]:
    """The isolation that took effect (from the test process's report) and what did not."""
    isolation = [
        f"environment scrubbed to an allowlist ({plan.dropped} caller variables dropped); "
        "HOME is a fresh empty directory",
        f"tree copied to {plan.tree} ({plan.files_copied} files)",
    ]
    notes: list[str] = []
    if plan.interpreter:
        isolation.append(f"interpreter {plan.interpreter}")
    if plan.tz:
        isolation.append(f"TZ unpinned: {plan.tz}")
    if plan.umask is not None:
        isolation.append(f"umask unpinned: {plan.umask:04o}")
    if plan.tmpdir:
        isolation.append(f"temp_root unpinned: TMPDIR is a fresh private directory {plan.tmpdir}")
    if plan.lang:
        isolation.append(f"lang unpinned: LANG and LC_ALL are {plan.lang}")
    if plan.rng_seed is not None:
        isolation.append(
            f"rng_seed unpinned: random, numpy and hypothesis seeded from {plan.rng_seed} "
            f"(host A: {isolate.HOST_A_RNG_SEED})"
        )
    if plan.hash_seed is not None:
        isolation.append(
            f"hash_seed unpinned: PYTHONHASHSEED={plan.hash_seed} (host A: "
            f"{isolate.HOST_A_HASH_SEED}), so sets and dicts of strings iterate in another order"
        )
    if report is None:
        notes.append("the test process reported nothing: clock, network and hostname unverified")
        return isolation, notes
    _clock_effect(plan, report, started, isolation, notes)
    _machine_effect(plan, report, isolation, notes)
    _network_effect(plan, report, isolation, notes)
    return isolation, notes


def _clock_effect(
    plan: isolate.HostB,
    report: Mapping[str, Any],
    started: float,
    isolation: list[str],
    notes: list[str],
) -> None:
    if plan.clock.note:
        notes.append(plan.clock.note)
        return
    seen = report.get("time")
    shifted = isinstance(seen, (int, float)) and seen - started > isolate.SHIFT_SECONDS - 3600
    if not shifted:
        why = report.get("clock_error") or "the test process saw the real time"
        notes.append(f"live clock not shifted: {why}")
        return
    files = report.get("file_times")
    patched = files.get("patched") if isinstance(files, dict) else None
    reached = [
        what
        for what, name in (("file timestamps", "os.stat"), ("uuid1", "uuid.uuid1"))
        if isinstance(patched, list) and name in patched
    ]
    also = f", {' and '.join(reached)} too" if reached else ""
    isolation.append(
        f"live wall clock shifted forward {isolate.describe_shift(isolate.SHIFT_SECONDS)} by "
        f"{plan.clock.method} (ticking{also}; monotonic clocks untouched)"
    )
    if isinstance(files, dict) and files.get("error"):
        notes.append(f"file timestamps not shifted: {str(files['error'])[:200]}")
    if report.get("dateutil_preimported"):
        notes.append(
            "dateutil.parser was imported before the clock shift: its default parser keeps "
            "the real year for two-digit years"
        )


def _machine_effect(
    plan: isolate.HostB, report: Mapping[str, Any], isolation: list[str], notes: list[str]
) -> None:
    """Host B's listing order and CPU count, as the plugin reported them (listing.py)."""
    order, cpus = _section(report, "file_order"), _section(report, "cpu_count")
    if plan.file_order_seed is not None:
        listed = order.get("patched")
        patched = [n for n in listed if isinstance(n, str)] if isinstance(listed, list) else []
        if order.get("error") or not patched:
            notes.append(f"file_order not shuffled: {order.get('error') or 'nothing patched'}")
        else:
            isolation.append(
                f"file_order: {', '.join(patched)} list in an order seeded from "
                f"{plan.file_order_seed} (Python only: ls and find list as the OS does)"
            )
    if plan.cpu_count is not None:
        if cpus.get("seen") != plan.cpu_count:
            notes.append(f"cpu_count not shown: the test process saw {cpus.get('seen')!r}")
        else:
            padded = cpus.get("affinity_padded")
            extra = f", {padded} of them past the machine's" if isinstance(padded, int) else ""
            isolation.append(
                f"cpu_count: Python sees {plan.cpu_count} CPUs (os.sched_getaffinity lists "
                f"{plan.cpu_count}{extra}; the machine has {cpus.get('real')}); nproc and other "
                "non-Python children see the real count"
            )
        if isinstance(cpus.get("error"), str):
            notes.append(f"cpu_count: {cpus['error']}")


def _network_effect(
    plan: isolate.HostB, report: Mapping[str, Any], isolation: list[str], notes: list[str]
) -> None:
    fingerprint = report.get("fingerprint") or {}
    if plan.namespaces.usable:
        if report.get("interfaces") == ["lo"]:
            isolation.append("network: a fresh network namespace, loopback only")
        else:
            notes.append(f"network namespace not in effect: interfaces {report.get('interfaces')}")
        if report.get("loopback_works") is False:
            notes.append("loopback is down in the network namespace: 127.0.0.1 servers fail")
        how = "UTS namespace"
    else:
        notes.append(
            f"no network/UTS namespace ({plan.namespaces.reason}): non-loopback sockets are "
            "refused in-process and the hostname is replaced in-process only (child processes "
            "still see the network and the real hostname)"
        )
        if report.get("network_blocked_in_process"):
            isolation.append("network: non-loopback sockets refused in-process")
        how = "in-process: socket.gethostname, os.uname"
    if fingerprint.get("hostname") == plan.hostname:
        isolation.append(f"hostname {plan.hostname} ({how})")
    else:
        notes.append(f"hostname not changed: the test process saw {fingerprint.get('hostname')!r}")


# --- what reached the Python processes the tests started (host B) --------------------------

MAX_CHILDREN = 1000  # lines of the children file read


def in_process(report: Mapping[str, Any] | None) -> list[str]:
    """The note that the plugin kept pytest-xdist's workers from starting (plugin.py)."""
    workers = report.get("xdist_in_process") if report else None
    if not isinstance(workers, str):
        return []
    return [
        f"pytest-xdist ({workers} in the project's options): the tests ran in one process, "
        "where the gate's audit, provenance and inventory see every one of them"
    ]


def read_children(path: Path) -> list[dict[str, Any]]:
    """The children's lines (data written by processes the tests started), capped."""
    try:
        with open(path, "rb") as handle:
            text = handle.read(REPORT_LIMIT).decode("utf-8", "replace")
    except OSError:
        return []
    found: list[dict[str, Any]] = []
    for line in text.splitlines()[:MAX_CHILDREN]:
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            found.append(data)
    return found


def child_effects(
    plan: isolate.HostB, children: list[dict[str, Any]], notes: list[str]
) -> list[str]:
    """The isolation line about child Python processes, with a note for what missed them."""
    what = ["the clock shift" if plan.clock.plugin_shift else None]
    what.append(None if plan.namespaces.usable else "the in-process network block")
    parts = [w for w in what if w]
    if not parts:
        return []  # namespaces and libfaketime reach children without help
    wanted = " and ".join(parts)
    if not children:
        return [f"child Python processes: {wanted} through sitecustomize (none started)"]
    shifted = sum(child.get("clock") == "shifted" for child in children)
    blocked = sum(child.get("network_blocked") is True for child in children)
    reached = [f"clock shifted in {shifted}"] if plan.clock.plugin_shift else []
    if not plan.namespaces.usable:
        reached.append(f"network refused in {blocked}")
    for child in children:
        why = child.get("error") or (
            child.get("clock") if child.get("clock") != "shifted" else None
        )
        if why and plan.clock.plugin_shift:
            notes.append(f"child Python process {child.get('pid')}: {why}")
    return [
        f"child Python processes: {wanted} through sitecustomize; {len(children)} started, "
        + ", ".join(reached)
    ]


def read_imports(path: Path) -> dict[str, Any]:
    """The plugin's imports report, every value checked:
    {"code": {name: dir}, "outside": [..], "early": [..]}."""
    data = read_report(path) or {}
    code = data.get("code")
    outside = data.get("outside")
    early = data.get("early")
    return {
        "code": {str(k): str(v) for k, v in (code.items() if isinstance(code, dict) else ())},
        "outside": [str(p) for p in outside] if isinstance(outside, list) else [],
        "early": [str(n) for n in early] if isinstance(early, list) else [],
    }
