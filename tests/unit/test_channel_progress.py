"""The channel's progress count (hosts.channel.Listener): the tests heard so far, told at
most every PROGRESS_SECONDS; and its counts per test file, which the split of a shared
session reads."""

from __future__ import annotations

import json
import os
import time

import pytest

from entropy_action.hosts import channel


def _line(nodeid: str, outcome: str = "passed", when: str = "call") -> bytes:
    record = {"kind": "test", "id": nodeid, "when": when, "outcome": outcome, "cat": outcome}
    return (json.dumps(record) + "\n").encode()


def _listen(lines: list[bytes], progress: list[int] | None) -> channel.Heard:
    read, write = os.pipe()
    listener = channel.Listener(read, None if progress is None else progress.append)
    with os.fdopen(write, "wb") as handle:
        handle.write(b"".join(lines))
    return listener.finish()


def test_the_tests_heard_are_told_as_they_arrive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(channel, "PROGRESS_SECONDS", 0.0)
    told: list[int] = []
    _listen([_line(f"tests/test_a.py::test_{n}") for n in range(3)], told)
    assert told == [1, 2, 3]


def test_no_more_than_one_line_every_few_seconds() -> None:
    told: list[int] = []
    _listen([_line(f"tests/test_a.py::test_{n}") for n in range(500)], told)
    assert told == []  # 500 tests heard within the first PROGRESS_SECONDS: nothing said yet


def test_a_progress_display_that_fails_never_stops_the_listening(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(channel, "PROGRESS_SECONDS", 0.0)
    read, write = os.pipe()

    def broken(count: int) -> None:
        raise OSError("the terminal went away")

    listener = channel.Listener(read, broken)
    with os.fdopen(write, "wb") as handle:
        handle.write(_line("tests/test_a.py::test_x") + _line("tests/test_b.py::test_y"))
    assert len(listener.finish().tests) == 2


def test_counts_are_kept_per_test_file_too() -> None:
    heard = _listen(
        [
            _line("tests/test_a.py::test_x"),
            _line("tests/test_a.py::T::test_y[a::b]", "failed"),
            _line("tests/test_b.py::test_z", "skipped"),
        ],
        None,
    )
    assert heard.counts == {"passed": 1, "failed": 1, "skipped": 1}
    assert heard.file_counts == {
        "tests/test_a.py": {"passed": 1, "failed": 1},
        "tests/test_b.py": {"skipped": 1},
    }


def test_files_past_the_cap_are_counted_together(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(channel, "MAX_FILES", 2)
    heard = _listen([_line(f"tests/test_{n}.py::t") for n in range(4)], None)
    assert heard.file_counts == {
        "tests/test_0.py": {"passed": 1},
        "tests/test_1.py": {"passed": 1},
        channel.OTHER_FILES: {"passed": 2},
    }


def test_lines_written_one_by_one_while_the_reader_waits_are_all_heard() -> None:
    read, write = os.pipe()
    listener = channel.Listener(read)
    half = _line("tests/test_a.py::test_split")
    for n in range(5):  # each write lands while the reader has caught up and waits
        os.write(write, _line(f"tests/test_a.py::test_{n}"))
        time.sleep(channel.GATHER_SECONDS / 2)
    os.write(write, half[:10])  # a line cut across two reads is still one line
    time.sleep(channel.GATHER_SECONDS * 2)
    os.write(write, half[10:])
    os.close(write)
    heard = listener.finish()
    assert len(heard.tests) == 6
    assert (heard.lines, heard.malformed) == (6, 0)
