"""DIR/error.json: why a host could not report, in one line (the host's cause of `invalid`).

A host job that fails before its run writes host.json (the project's install brought no
pytest, the manifest did not load, the run stopped on an error) still uploads its folder,
with this small report in it: the format, the host, the step that failed and its one-line
message. `entropy-gate run` writes it when it fails before reporting; `entropy-gate
host-error` writes it for a step of the host job before the run. The judge reads it as data
(size-capped, strict schema): a folder holding it is never judged as a report, and its
message leads the invalid verdict's reasons.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from entropy_action.core.errors import GateError
from entropy_action.core.layout import ERROR_JSON, HOST_JSON
from entropy_action.evidence.bounded import field_problem, one_line, read_json_object

MAX_ERROR_JSON = 4096  # bytes
MAX_STEP = 80  # characters of the step's name
MAX_MESSAGE = 600  # characters of the message


class HostError(BaseModel):
    """What a host job's failed step said, before the host could report."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    format: Literal[1] = 1
    host: Literal["a", "b"]
    step: str = Field(min_length=1, max_length=MAX_STEP, pattern=r"^[^\x00-\x1f\x7f]+$")
    message: str = Field(min_length=1, max_length=MAX_MESSAGE, pattern=r"^[^\x00-\x1f\x7f]+$")


def make(host: Literal["a", "b"], step: str, message: str) -> HostError:
    """The report of `step` on `host`, its texts made one line and cut to their limits."""
    return HostError(
        host=host,
        step=_cut(step, MAX_STEP) or "unnamed step",
        message=_cut(message, MAX_MESSAGE) or "the step failed (no message)",
    )


def _cut(text: str, limit: int) -> str:
    flat = one_line(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def write(folder: Path, error: HostError) -> Path:
    """FOLDER/error.json (the folder created); GateError when it cannot be written."""
    path = folder / ERROR_JSON
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(error.model_dump_json(indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise GateError(f"{path}: cannot write the host's error report: {exc.strerror}") from None
    return path


def reported(folder: Path) -> bool:
    """Whether FOLDER already holds a host's word: its host.json or an error.json."""
    return os.path.lexists(folder / HOST_JSON) or os.path.lexists(folder / ERROR_JSON)


def unreported(folder: Path) -> str | None:
    """Why FOLDER cannot hold a host's report at all, in words; None when it may."""
    if folder.is_symlink():
        return f"report folder {folder.name} is a symbolic link"
    if not folder.exists():
        return f"no report folder {folder.name}"
    if not folder.is_dir():
        return f"report folder {folder.name} is not a folder"
    try:
        with os.scandir(folder) as entries:
            empty = next(entries, None) is None
    except OSError as exc:
        return f"report folder {folder.name} cannot be listed ({exc.strerror})"
    return f"report folder {folder.name} is empty" if empty else None


def read(folder: Path) -> HostError | None:
    """FOLDER/error.json, validated; None when there is none; GateError naming the file when
    it cannot be used (the folder is then unusable: never judged as a report)."""
    path = folder / ERROR_JSON
    if not os.path.lexists(path):
        return None
    loaded = read_json_object(path, MAX_ERROR_JSON, "the host's error report")
    try:
        return HostError.model_validate(loaded)
    except ValidationError as exc:
        raise GateError(f"{path}: {field_problem(exc)}") from None
