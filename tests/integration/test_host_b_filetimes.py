"""Host B's clock shift reaches file timestamps and uuid1 (testproc/filetimes.py).

time-machine moves what Python reads as the time, not what the kernel stamps on files: before
this, on host B a file written a moment ago was five years old, so an honest property of a
file's age failed there only (`env_coupled`, a false rejection), and production that read
the time from a fresh file's mtime escaped the shift (the red team's V2, which merged). Under
time-machine alone uuid1 took a slower path that lagged the clock by milliseconds: uuid6's
own test of its timestamps was `env_coupled` on every commit. Real repositories built from
the demo's base, real gates, real host runs; the patching itself in a child interpreter,
never in this one.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from entropy_action.gate import demo
from entropy_action.testproc import filetimes
from tests.support.helpers import Repo


def libuuid() -> bool:
    """Whether this Python's uuid1 has libuuid's generator (filetimes._shift_uuid1)."""
    return importlib.util.find_spec("_uuid") is not None and hasattr(uuid, "_generate_time_safe")


needs_libuuid = pytest.mark.skipif(
    not libuuid(),
    reason="this Python's uuid1 has no C generator: time-machine shifts its Python path",
)

FRESH_LIB = '''

def is_fresh(path: str, max_age: float = 3600.0) -> bool:
    """Whether the file at `path` was written within `max_age` seconds."""
    import os
    import time

    return time.time() - os.path.getmtime(path) < max_age
'''
FRESH_TEST = """

def test_a_report_just_written_is_fresh(tmp_path) -> None:
    from invoice_lib import is_fresh

    report = tmp_path / "report.txt"
    report.write_text("total")
    assert is_fresh(str(report))
"""
# uuid6's test_time in production's words: a version-1 token's time is the clock's
UUID_LIB = '''

def issued_at(token: "uuid.UUID") -> float:
    """When a version-1 token was issued, in seconds since the epoch."""
    return (token.time - 0x01B21DD213814000) / 10_000_000
'''
UUID_TEST = """

def test_a_version_1_token_carries_the_time_it_was_issued() -> None:
    import time
    import uuid

    from invoice_lib import issued_at

    token = uuid.uuid1()
    assert abs(issued_at(token) - time.time()) < 0.001  # uuid6's own test asks 0.0005
"""
# The red team's V2: the live clock read through the file system, not `time`
MTIME_CLOCK_LIB = '''

def is_overdue(due: datetime) -> bool:
    """Whether `due` has passed."""
    import os
    import tempfile

    handle, path = tempfile.mkstemp()
    try:
        now = os.fstat(handle).st_mtime
    finally:
        os.close(handle)
        os.unlink(path)
    return now > due.timestamp()
'''
MTIME_CLOCK_TEST = """

def test_an_invoice_due_in_thirty_days_is_not_overdue() -> None:
    from invoice_lib import is_overdue

    assert not is_overdue(frozen_now() + timedelta(days=30))
"""


def _patched(repo: Repo, tmp_path: Path, lib: str, test: str) -> str:
    midnight = int(time.time()) // 86400 * 86400
    base = demo.build_base(repo.path, clock_unix=midnight, temp_root=tmp_path / "pins-tmp")
    for name, text in (("invoice_lib.py", lib), ("tests/properties/test_invoice_total.py", test)):
        target = repo.path / name
        target.write_text(target.read_text(encoding="utf-8") + text, encoding="utf-8")
    repo.commit("the patch")
    return base


def _judged(repo: Repo, command: str, *args: str) -> tuple[int, dict[str, Any]]:
    out = repo.path.parent / f"{command}.json"
    done = repo.cli(command, *args, "--json", str(out))
    return done.code, json.loads(out.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("lib", "test"),
    [(FRESH_LIB, FRESH_TEST), pytest.param(UUID_LIB, UUID_TEST, marks=needs_libuuid)],
    ids=["file-age", "uuid1-age"],
)
def test_a_property_of_an_age_merges_on_every_path(
    repo: Repo, tmp_path: Path, lib: str, test: str
) -> None:
    """The local gate, and the workflow's commands (each host's job with the base ref, then
    `verdict` and `compare` on their folders): host B's file, and its version-1 UUID, are as
    fresh as its clock says."""
    base = _patched(repo, tmp_path, lib, test)
    judged = {"gate": _judged(repo, "gate", "--base-ref", base, "--no-cache")}
    out = repo.path.parent
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        ran = repo.cli("run", "--host", host, "--out", str(out / host), "--base-ref", base, *extra)
        assert ran.code == 0, ran.out + ran.err
    folders = ("--host-a", str(out / "a"), "--host-b", str(out / "b"), "--base-ref", base)
    judged |= {command: _judged(repo, command, *folders) for command in ("verdict", "compare")}
    for command, (code, verdict) in judged.items():
        assert (code, verdict["classification"]) == (0, "merge_candidate"), (
            command,
            verdict["reasons"],
        )
        clock = next(v for v in verdict["host_b_variations"] if v["dimension"] == "clock")
        assert clock["varied"] is True
        also = "file timestamps and uuid1 too" if libuuid() else "file timestamps too"
        assert f"(ticking, {also}; monotonic clocks untouched)" in clock["how"]


def test_a_clock_read_from_a_fresh_files_mtime_is_shifted_on_host_b(
    repo: Repo, tmp_path: Path
) -> None:
    """Production that takes the time from a file it just made, so that no `time` read shows:
    on host B the file carries the shifted clock, and the defect with it."""
    base = _patched(repo, tmp_path, MTIME_CLOCK_LIB, MTIME_CLOCK_TEST)
    code, verdict = _judged(repo, "gate", "--base-ref", base, "--no-cache")
    assert (code, verdict["classification"]) == (1, "env_coupled"), verdict["reasons"]
    assert verdict["coupled_to"] == ["clock"]
    failed = [t["id"].split("::")[-1] for t in verdict["tests"] if t["host_b"] == "failed"]
    assert failed == ["test_an_invoice_due_in_thirty_days_is_not_overdue"]


CHILD = """
import json, os, shutil, sys, tempfile, time
sys.path.insert(0, sys.argv[1])
import filetimes
folder = tempfile.mkdtemp()
made = os.path.join(folder, "made")
open(made, "w").close()
real = os.stat(made)
import uuid
before = uuid.uuid1()
patched = filetimes.shift(86400.0 * 365)
shifted = os.stat(made)
after, later = uuid.uuid1(), uuid.uuid1()
copy = os.path.join(folder, "copy")
shutil.copy2(made, copy)
seen = {
    "patched": patched,
    "again": filetimes.shift(1.0),
    "moved": shifted.st_mtime - real.st_mtime,
    "moved_ns": shifted.st_mtime_ns - real.st_mtime_ns,
    "moved_int": shifted[8] - real[8],
    "same_size": shifted.st_size == real.st_size and shifted.st_ino == real.st_ino,
    "lstat": os.lstat(made).st_mtime - real.st_mtime,
    "fstat": os.fstat(os.open(made, os.O_RDONLY)).st_mtime - real.st_mtime,
    "copy_kept": os.stat(copy).st_mtime == shifted.st_mtime,
    "uuid1_moved": (after.time - before.time) / 10_000_000,
    "uuid1_same": [after.version, after.node == before.node, after.time < later.time],
}
os.utime(made, (time.time() - 60, time.time() - 60))
print(json.dumps({
    **seen,
    "utime_back": round(os.path.getmtime(made) - (time.time() - 60)),
    "supports": os.stat in os.supports_fd and os.utime in os.supports_dir_fd,
}))
shutil.rmtree(folder)
"""


def test_stat_reports_the_shift_and_utime_takes_it_back(tmp_path: Path) -> None:
    """In a child interpreter: stat, lstat, fstat, getmtime and copystat agree, a time the
    tests set with os.utime reads back as set, and uuid1's timestamp moved by the shift."""
    folder = Path(filetimes.__file__).parent
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    seen = json.loads(done.stdout)
    year = 86400 * 365
    named = ["uuid.uuid1"] if libuuid() else []
    assert seen["patched"] == ["os.stat", "os.lstat", "os.fstat", "os.utime", *named]
    assert seen["again"] == sorted(["os.fstat", "os.lstat", "os.stat", "os.utime", *named])
    assert year <= seen["uuid1_moved"] < year + 5  # libuuid's time or time.time_ns, shifted
    assert seen["uuid1_same"] == [1, True, True]  # a version-1 UUID, its node, still ordered
    assert abs(seen["moved"] - year) < 1e-3
    assert seen["moved_ns"] == year * 1_000_000_000
    assert seen["moved_int"] in (year, year + 1)
    assert seen["same_size"] is True
    assert abs(seen["lstat"] - year) < 1e-3
    assert abs(seen["fstat"] - year) < 1e-3
    assert seen["copy_kept"] is True  # shutil.copy2 reads shifted times and writes them back
    assert seen["utime_back"] == 0
    assert seen["supports"] is True


def test_shifted_moves_every_timestamp_and_nothing_else(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    real = os.stat(tmp_path / "f")
    moved = filetimes.shifted(real, 10.5)
    assert isinstance(moved, os.stat_result)
    assert moved.st_mtime == real.st_mtime + 10.5
    assert moved.st_atime_ns == real.st_atime_ns + 10_500_000_000
    assert moved.st_ctime_ns == real.st_ctime_ns + 10_500_000_000
    assert moved[8] == int(real.st_mtime + 10.5)
    assert moved[:7] == real[:7]  # mode, inode, device, links, owner, group, size
    assert (moved.st_blksize, moved.st_blocks) == (real.st_blksize, real.st_blocks)
