"""Workflow commands and files the gate writes for the GitHub Actions runner.

- `annotation()`, `group()`: `::error file=..,line=..,title=..::message` and friends, escaped
  by GitHub's rules: in the message `%`, CR and LF become `%25`, `%0D`, `%0A`; in properties
  `:` and `,` become `%3A` and `%2C` as well. A message can then never end the command early
  or start another one.
- `fenced_log()`: output the gate echoes from PR code (pytest's log) wrapped in
  `::stop-commands::<random token>` ... `::<token>::`, so a line a test prints that starts
  with `::` is shown, not executed by the runner.
- `set_output()`: `name<<DELIMITER` ... `DELIMITER` appended to `$GITHUB_OUTPUT`, the
  delimiter random and checked absent from the value.
- `append_summary()`: Markdown appended to `$GITHUB_STEP_SUMMARY`, capped at 1 MiB per step.

Why not actions-toolkit (the design card's choice; 0.1.15 evaluated here): it writes to
`sys.stdout` and reads `os.environ` itself (the gate passes settings down and returns strings
it can test), ships no type information (mypy strict), has no step-summary helper, falls back
to the deprecated `::set-output` when `GITHUB_OUTPUT` is unset, and installs PyGithub,
requests, PyJWT, PyNaCl and cryptography (~27 MB) into the action's hashed lock file for ~40
lines of escaping. Its escaping rules are the same as these.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

MAX_STEP_SUMMARY = 1024 * 1024  # bytes GitHub accepts from one step's summary
SUMMARY_CHARS = MAX_STEP_SUMMARY // 4  # characters that fit it whatever they are (a many-
# property summary is fitted to them, render.properties; append_summary still cuts at bytes)
Severity = Literal["error", "warning", "notice"]


def escape_data(value: str) -> str:
    """A command's message: `%`, CR and LF encoded."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """A command's property value: as data, plus `:` and `,`."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str = "", properties: Mapping[str, str | int] | None = None) -> str:
    """One workflow command line (without the newline)."""
    props = ",".join(
        f"{key}={escape_property(str(value))}" for key, value in (properties or {}).items()
    )
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def annotation(
    severity: Severity,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    end_line: int | None = None,
    title: str | None = None,
) -> str:
    """`::error file=F,line=L,endLine=E,title=T::message` (properties that are None left out)."""
    properties: dict[str, str | int] = {}
    if file is not None:
        properties["file"] = file
    if line is not None:
        properties["line"] = line
        properties["endLine"] = end_line if end_line is not None else line
    if title is not None:
        properties["title"] = title
    return command(severity, message, properties)


def group(title: str, lines: Iterable[str]) -> list[str]:
    """`::group::title`, the lines, `::endgroup::`."""
    return [command("group", title), *lines, command("endgroup")]


def new_token() -> str:
    return secrets.token_hex(16)


def fenced_log(text: str, token: str | None = None) -> list[str]:
    """Untrusted output as log lines the runner does not read as commands."""
    token = token or new_token()
    if token in text:  # a 128-bit random token cannot be guessed; refuse rather than trust
        raise ValueError("the stop-commands token occurs in the text")
    return [f"::stop-commands::{token}", *text.splitlines(), f"::{token}::"]


def output_record(name: str, value: str, delimiter: str | None = None) -> str:
    """The `$GITHUB_OUTPUT` record for one output (a heredoc with a random delimiter)."""
    delimiter = delimiter or f"ghadelimiter_{new_token()}"
    if delimiter in name or delimiter in value or "\n" in name:
        raise ValueError("an output's name or value contains the heredoc delimiter")
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


def set_output(name: str, value: str, environ: Mapping[str, str]) -> bool:
    """Append an output to `$GITHUB_OUTPUT`; False when the variable is unset (not in CI)."""
    target = environ.get("GITHUB_OUTPUT")
    if not target:
        return False
    with Path(target).open("a", encoding="utf-8", newline="\n") as handle:
        handle.write(output_record(name, value))
    return True


def append_summary(text: str, environ: Mapping[str, str]) -> bool:
    """Append Markdown to `$GITHUB_STEP_SUMMARY` within the 1 MiB a step may write, counting
    what the step already wrote; False when the variable is unset."""
    target = environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return False
    path = Path(target)
    used = path.stat().st_size if path.exists() else 0
    budget = max(MAX_STEP_SUMMARY - used, 0)
    from entropy_action.render.markdown import truncate  # noqa: PLC0415 (keeps this module light)

    chunk = truncate(text if text.endswith("\n") else text + "\n", budget, unit="bytes")
    if len(chunk.encode("utf-8")) > budget:  # not even the note fits
        return True
    with path.open("a", encoding="utf-8", newline="\n") as handle:
        handle.write(chunk)
    return True
