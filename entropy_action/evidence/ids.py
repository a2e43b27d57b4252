"""Test ids as both hosts and the scan spell them: pytest node ids from JUnit cases, and the
run's own paths replaced by placeholders."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence

from entropy_action.core.hostinfo import HostInfo
from entropy_action.evidence.bounded import (
    one_line,
)

ROOT_PLACEHOLDER = "<root>"


TMP_PLACEHOLDER = "<tmp>"


def placeholders(info: HostInfo) -> list[tuple[str, str]]:
    """(absolute path, placeholder) pairs to normalize out of ids, longest path first."""
    pairs = [(info.root, ROOT_PLACEHOLDER)]
    if info.temp_root:
        pairs.append((info.temp_root, TMP_PLACEHOLDER))
    usable = [(p.rstrip("/\\"), name) for p, name in pairs if _is_dedicated(p)]
    return sorted(usable, key=lambda pair: len(pair[0]), reverse=True)


def _is_dedicated(path: str) -> bool:
    """An absolute path below the file system's root (replacing "/" would mangle every id)."""
    parts = [part for part in re.split(r"[\\/]", path) if part]
    if re.match(r"^[A-Za-z]:[\\/]", path):
        return len(parts) >= 2
    return path.startswith("/") and len(parts) >= 1


def normalizer(pairs: list[tuple[str, str]]) -> Callable[[str], str]:
    """A function replacing each absolute root in a text by its placeholder (whole segments)."""
    if not pairs:
        return lambda text: text
    names = dict(pairs)
    either = "|".join(re.escape(path) for path, _ in pairs)
    pattern = re.compile(f"(?:{either})" + r"(?![\w.\-])")
    paths = tuple(names)

    def by_pattern(text: str) -> str:
        if not any(path in text for path in paths):  # most ids name no root: no regex
            return text
        return pattern.sub(lambda m: names[m.group(0)], text)

    if not _disjoint(paths):
        return by_pattern
    slashed = tuple((path + "/", name + "/") for path, name in pairs)

    def normalize(text: str) -> str:
        # Without a regex where that is exact: each root followed by "/" (a whole segment, as
        # the pattern's lookahead asks) is replaced; a root left over (followed by anything
        # else) sends the text to the pattern. Exact because no two occurrences of the roots
        # can overlap (`_disjoint`): both replace the same occurrences.
        out = text
        for path, name in slashed:
            out = out.replace(path, name)
        for path in paths:
            if path in out:
                return by_pattern(text)
        return out

    return normalize


def _disjoint(paths: tuple[str, ...]) -> bool:
    """Whether occurrences of these paths in any text are pairwise disjoint (no path holds
    another, no suffix of one begins one) and no placeholder can make a new one."""
    for path in paths:
        if "<" in path or ">" in path:
            return False
        for other in paths:
            if other != path and other in path:
                return False
            if any(other.startswith(path[cut:]) for cut in range(1, len(path))):
                return False
    return True


def node_id(
    file: str | None,
    classname: str,
    name: str,
    module: str | None = None,
    others: Sequence[str] = (),
) -> str:
    """pytest's node id "<module path>::<Class>::<name>[params]" from xunit1 attributes.

    The collecting `module` is tried first: `file` names where the test function is defined,
    which for a test inherited from a base class in another file is not where it ran. A
    session over several properties' modules (hosts.sessions) collected from each of them:
    `others`, tried next (workalendar's test classes inherit their tests from
    tests/__init__.py, in all nine modules of one session).
    """
    if not classname:
        return file or name
    for path in (module, *others, file):
        if path:
            dotted = dotted_module(path)
            if classname == dotted:
                return f"{path}::{name}"
            if classname.startswith(dotted + "."):
                return "::".join([path, *classname[len(dotted) + 1 :].split("."), name])
    return f"{classname}::{name}"


def junit_id(nodeid: str, module: str | None) -> str:
    """The raw id this reader gives the testcase pytest writes for `nodeid`: pytest's
    classname and name (junitxml's mangle_test_address), then `node_id`."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    if len(names) == 1:
        return one_line(nodeid)  # a collection report: named by its file
    classname = ".".join([dotted_module(names[0]), *names[1:-1]])
    return node_id(names[0], one_line(classname), one_line(names[-1] + bracket + params), module)


@functools.lru_cache(maxsize=256)
def dotted_module(file: str) -> str:
    """The module part of pytest's classname for a test file: a/b/test_c.py -> a.b.test_c."""
    return file.removesuffix(".py").replace("/", ".")
