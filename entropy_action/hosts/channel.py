"""The channel: what the gate's plugin tells the gate's own process while the tests run.

The runner makes a pipe, passes its write end to pytest (the fd number is in the plugin's
config file, never in a variable a child inherits) and reads the other end in a thread
(`Listener`) while pytest runs. The plugin sends one JSON line per test report as each phase
ends, per collection report that did not pass, a begin line and an end line. Once pytest
and all it left are gone, the runner writes the gate's record of what it heard
(`DIR/outcomes.json`): per raw test id (as junit.xml names it) the worst outcome seen, the
terminal's counts, the begin and end facts. `cross_check` holds junit.xml and pytest's
terminal summary against that record when a report is read.

The lines come from the test process, so they are data: bounded in bytes and lines, a
malformed line is counted and never trusted.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from entropy_action.core.errors import GateError
from entropy_action.evidence.junitcases import RANK

MAX_BYTES = 256 << 20  # read from the channel; more is drained and discarded (truncated)
MAX_LINES = 4_000_000
MAX_LINE = 64 << 10  # bytes of one line; a longer one is malformed
JOIN_SECONDS = 10.0  # after pytest and all it left are gone, the pipe is closed: EOF is near
_ACTIONS = ("begin", "end", "test", "collect")
PROGRESS_SECONDS = 5.0  # a progress line (tests heard so far) at most this often
MAX_FILES = 10_000  # test files counted one by one in Heard.file_counts
OTHER_FILES = "<other files>"  # where the rest are counted (no property module's path)


def file_of(nodeid: str) -> str:
    """The test file of a node id ("tests/test_a.py::T::t[x::y]" -> "tests/test_a.py"); a
    collection report's id is its path already."""
    return nodeid.partition("[")[0].partition("::")[0]


@dataclass
class Heard:
    """What the plugin sent, as the gate counted it."""

    tests: dict[str, str] = field(default_factory=dict)  # pytest node id -> worst outcome
    collect_errors: list[str] = field(default_factory=list)  # node ids
    counts: dict[str, int] = field(default_factory=dict)  # terminal category -> reports
    # the same per test file (a node id's path): a session over several property modules is
    # split by file (hosts.split); files past MAX_FILES are counted under OTHER_FILES
    file_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    begin: dict[str, Any] | None = None
    end: dict[str, Any] | None = None
    lines: int = 0
    malformed: int = 0
    truncated: bool = False

    def take(self, line: bytes) -> None:
        self.lines += 1
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if not (isinstance(record, dict) and record.get("kind") in _ACTIONS):
            self.malformed += 1
            return
        kind = record["kind"]
        if kind in ("begin", "end"):
            facts = {k: v for k, v in record.items() if isinstance(v, int | str | None)}
            setattr(self, kind, {k: v for k, v in facts.items() if len(str(k)) < 40})
            return
        nodeid, outcome, cat = record.get("id"), record.get("outcome"), record.get("cat")
        if not (isinstance(nodeid, str) and outcome in ("passed", "failed", "skipped")):
            self.malformed += 1
            return
        if isinstance(cat, str) and cat and len(cat) < 40:
            self.counts[cat] = self.counts.get(cat, 0) + 1
            self._count_file(file_of(nodeid), cat)
        if kind == "collect":
            if outcome == "failed":
                self.collect_errors.append(nodeid)
            else:
                self._worst(nodeid, "skipped")
            return
        error = outcome == "failed" and record.get("when") != "call"
        self._worst(nodeid, "error" if error else outcome)

    def _count_file(self, file: str, cat: str) -> None:
        if file not in self.file_counts and len(self.file_counts) >= MAX_FILES:
            file = OTHER_FILES
        counts = self.file_counts.setdefault(file, {})
        counts[cat] = counts.get(cat, 0) + 1

    def _worst(self, nodeid: str, outcome: str) -> None:
        known = self.tests.get(nodeid)
        if known is None or RANK[outcome] > RANK[known]:
            self.tests[nodeid] = outcome


GATHER_SECONDS = 0.01  # a reader that has caught up waits this long before reading again


class _Gathering(io.RawIOBase):
    """The pipe's read end, read in gathered chunks: once a read has taken all there was,
    the next waits GATHER_SECONDS first, so the plugin's lines gather in the pipe instead of
    waking this process once per test (a wake-up per write cost the test process a context
    switch per test). A full pipe only makes the writer wait until the next read."""

    def __init__(self, fd: int) -> None:
        self._fd, self._caught_up = fd, False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._caught_up:
            time.sleep(GATHER_SECONDS)
        got = os.readv(self._fd, [buffer])
        self._caught_up = got < len(buffer)
        return got

    def close(self) -> None:
        if not self.closed:
            os.close(self._fd)
        super().close()


class Listener:
    """Reads the channel's read end in a thread until EOF (every write end closed)."""

    def __init__(self, fd: int, progress: Callable[[int], None] | None = None) -> None:
        self.heard = Heard()
        # told the number of tests heard so far, at most every PROGRESS_SECONDS
        self._progress, self._told = progress, time.monotonic()
        self._file = io.BufferedReader(_Gathering(fd), buffer_size=1 << 16)
        self._thread = threading.Thread(target=self._run, name="entropy-gate-channel", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        heard, total = self.heard, 0
        with self._file as handle:
            while True:
                line = handle.readline(MAX_LINE + 1)
                if not line:
                    return
                total += len(line)
                if total > MAX_BYTES or heard.lines >= MAX_LINES:
                    heard.truncated = True
                    continue  # drained, so the writer never blocks, but not kept
                if len(line) > MAX_LINE or not line.endswith(b"\n"):
                    heard.malformed += 1
                    while line and not line.endswith(b"\n"):
                        line = handle.readline(MAX_LINE + 1)
                    continue
                heard.take(line)
                if self._progress is not None:
                    self._tell()

    def _tell(self) -> None:
        now = time.monotonic()
        if now - self._told >= PROGRESS_SECONDS:
            self._told = now
            with contextlib.suppress(Exception):  # a display never stops the listening
                assert self._progress is not None
                self._progress(len(self.heard.tests))

    def finish(self) -> Heard:
        """What was heard; call once pytest and everything it left are gone."""
        self._thread.join(JOIN_SECONDS)
        if self._thread.is_alive():
            self.heard.truncated = True  # someone still holds a write end: stop listening
        return self.heard


def record(heard: Heard, junit_id: Callable[[str], str]) -> dict[str, Any]:
    """outcomes.json: what the gate heard, its test ids as junit.xml's reader names them."""
    tests: dict[str, str] = {}
    for nodeid, outcome in heard.tests.items():
        key = junit_id(nodeid)
        known = tests.get(key)
        if known is None or RANK[outcome] > RANK[known]:
            tests[key] = outcome
    return {
        "format": 1,
        "tests": tests,
        "collect_errors": heard.collect_errors[:1000],
        "counts": heard.counts,
        "file_counts": heard.file_counts,
        "begin": heard.begin,
        "end": heard.end,
        "lines": heard.lines,
        "malformed": heard.malformed,
        "truncated": heard.truncated,
    }


def write(path: Path, data: dict[str, Any]) -> None:
    try:
        path.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    except OSError as exc:
        raise GateError(f"{path}: cannot write the gate's record: {exc.strerror}") from None


# --- read side -----------------------------------------------------------------------------
