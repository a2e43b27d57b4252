"""Absolute paths shortened for what a reviewer reads (the summary, the check run, its
annotations): a runner's temp folders, tool caches and home say nothing to a PR author and
tell a reader of a public check run about the machine.

A path the gate names is repository-relative or a report's name already (`host-a`,
`error.json`); what is left absolute (an interpreter, a host's copy of the tree, a report
folder under the runner's temp) keeps its last two parts behind an ellipsis.
"""

from __future__ import annotations

import re

KEPT = 2  # trailing parts of an absolute path that stay
ELLIPSIS = "…"
# An absolute POSIX path: starts the text or follows a space, a quote, a bracket, `=` or `,`
# (so `…/x/y`, URLs and `a/b` are left alone); ends before a space, a quote, a bracket, `:`,
# `,` or `;` (the line numbers and the prose around it).
_ABSOLUTE = re.compile(r"(?:^|(?<=[\s'\"(\[=,]))/[^\s'\"()\[\]:,;]+")


def shorten(text: str) -> str:
    """`text` with every absolute path of more than two parts cut to `…/` and its last two."""
    if "/" not in text:
        return text
    return _ABSOLUTE.sub(_short, text)


def _short(match: re.Match[str]) -> str:
    path = match.group(0)
    trailing = "/" if path.endswith("/") and len(path) > 1 else ""
    parts = [part for part in path.split("/") if part]
    if len(parts) <= KEPT:
        return path
    return f"{ELLIPSIS}/{'/'.join(parts[-KEPT:])}{trailing}"
