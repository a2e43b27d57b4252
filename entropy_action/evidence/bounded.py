"""Bounded reads of files a test process or a PR could have written (size caps, regular files
only, never through a symlink, one GateError line naming the file), and untrusted text made
printable on one line."""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError

from entropy_action.core.errors import GateError

MAX_ID = 2000  # characters kept of a test id (a longer one is cut, not trusted)


CHUNK = 1 << 16  # bytes of a report parsed at a time


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def read_capped(path: Path, limit: int) -> bytes:
    """The bytes of a regular file at `path` (not through a symlink), at most `limit`."""
    with open_regular(path) as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise GateError(f"{path}: cannot read: {exc.strerror}") from None
    if len(data) > limit:
        raise _too_large(path, limit)
    return data


def open_capped(path: Path, limit: int) -> BinaryIO:
    """A regular file at `path`, refused unread when it is larger than `limit`."""
    handle = open_regular(path)
    if os.fstat(handle.fileno()).st_size > limit:
        handle.close()
        raise _too_large(path, limit)
    return handle


def chunks_of(handle: BinaryIO, path: Path, limit: int) -> Iterator[bytes]:
    """The bytes of `handle` in chunks, read lazily; more than `limit` in all is refused."""
    total = 0
    while True:
        try:
            chunk = handle.read(CHUNK)
        except OSError as exc:
            raise GateError(f"{path}: cannot read: {exc.strerror}") from None
        if not chunk:
            return
        total += len(chunk)
        if total > limit:  # it grew while being read
            raise _too_large(path, limit)
        yield chunk


def _too_large(path: Path, limit: int) -> GateError:
    return GateError(f"{path}: larger than the limit of {limit} bytes; refusing to read it")


def open_regular(path: Path) -> BinaryIO:
    """A regular file at `path`, opened for reading without following a symlink or blocking."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        if path.is_symlink():
            raise GateError(f"{path}: is a symbolic link; a report's files are never followed")
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise GateError(f"{path}: no such file (did the host run write its report here?)") from None
    except OSError as exc:
        raise GateError(f"{path}: cannot open: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise GateError(f"{path}: is not a regular file")
    return os.fdopen(fd, "rb")


def read_json_object(path: Path, limit: int, what: str) -> dict[str, Any]:
    """A JSON object from an untrusted file, size-capped; one line naming the file if not."""
    data = read_capped(path, limit)
    try:
        loaded = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise GateError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise GateError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except (ValueError, RecursionError):
        raise GateError(f"{path}: not valid JSON (a number too long or nesting too deep)") from None
    if not isinstance(loaded, dict):
        raise GateError(f"{path}: must be a JSON object ({what})")
    return loaded


def field_problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    field = one_line(".".join(str(part) for part in error["loc"]))[:80]
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    if error["type"] == "missing":
        return f"missing required field {field!r}{more}"
    if error["type"] == "extra_forbidden":
        return f"unknown field {field!r}{more}"
    return f"field {field!r}: {error['msg']}{more}"


def printable(text: str, limit: int | None) -> str:
    """`text` with control characters escaped (newlines and tabs kept), cut at `limit`."""
    cleaned = _CONTROL.sub(_escape, text)
    if limit is not None and len(cleaned) > limit:
        return cleaned[: limit - 1] + "…"
    return cleaned


def one_line(text: str | None) -> str:
    """An attribute value as one printable line, cut at MAX_ID characters."""
    text = text or ""
    if text.isprintable() and len(text) <= MAX_ID:  # the common case, fast
        return text
    return printable(text.replace("\n", "\\n").replace("\t", "\\t"), MAX_ID)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
