"""The project's one error type and its exit codes."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Exit codes of every command; documented in `--help`, the README and docs/errors.md."""

    OK = 0  # ok / merge candidate
    REJECTED = 1  # the patch is rejected (pin mutation, silencing, failing properties ...)
    INVALID = 2  # invalid input or usage
    INTERNAL = 3  # a bug in entropy-gate


class GateError(Exception):
    """An error the user can act on: one line, already phrased for them.

    `message` should name the file and line (or the field) at fault.
    """

    def __init__(self, message: str, code: ExitCode = ExitCode.INVALID) -> None:
        super().__init__(message)
        self.message = message
        self.code = code

    def __str__(self) -> str:
        return self.message
