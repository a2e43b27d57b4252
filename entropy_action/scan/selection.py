"""Whether pytest's selection can keep the property module's tests from running: paths that
`collect_ignore`, `collect_ignore_glob`, `--ignore`, `--ignore-glob` and `--deselect` name, and
`-m` marker expressions evaluated against the markers each property test carries.

Pure functions of strings; an entry or expression the scan cannot read counts as selecting.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Iterable
from pathlib import PurePosixPath

_TOKEN = re.compile(r"\s*(\(|\)|[\w:+\-.\[\]\\/]+|\S)")
_NAME = re.compile(r"[\w:+\-.\[\]\\/]+")
_WORDS = frozenset({"and", "or", "not"})


def _normal(path: str) -> str:
    text = posixpath.normpath(path.replace("\\", "/"))
    return "" if text == "." else text.lstrip("/") if text.startswith("./") else text


def _joined(base_dir: str, entry: str) -> str:
    return _normal(posixpath.join(base_dir, entry) if base_dir else entry)


def _and_parents(module: str) -> list[str]:
    """The module and every folder above it (pytest asks about each as it collects)."""
    pure = PurePosixPath(module)
    return [str(pure), *(str(p) for p in pure.parents if str(p) != ".")]


def ignores(module: str, base_dir: str, entry: str, *, glob: bool) -> bool:
    """Whether an ignore entry (relative to `base_dir`) matches the module or a folder above."""
    if posixpath.isabs(entry):
        return True  # an absolute path the scan cannot place: it may be the module
    target = _joined(base_dir, entry)
    if glob:
        return any(fnmatch.fnmatch(path, target) for path in _and_parents(module))
    return target in _and_parents(module)


def deselects_id(module: str, test_names: Iterable[str], value: str) -> bool:
    """Whether `--deselect value` (a node id prefix) deselects a property test."""
    prefix = value.removeprefix("./")
    ids = [f"{module}::{name}" for name in test_names] or [module]
    return any(node_id.startswith(prefix) or prefix.startswith(node_id + "[") for node_id in ids)


def deselects_marks(expression: str, carried: Iterable[frozenset[str]]) -> bool:
    """Whether `-m expression` leaves out a test carrying one of the `carried` marker sets
    (an expression the scan cannot read counts as leaving one out)."""
    tokens = [m.group(1) for m in _TOKEN.finditer(expression)]
    for names in carried:
        parser = _Parser(tokens, names)
        value = parser.parse()
        if value is not True:
            return True
    return False


class _Parser:
    """pytest's marker expressions: `or`, `and`, `not`, parentheses, names, and `name(k=v)`
    (which needs the marker's arguments to decide: unknown, None). Values are three-valued."""

    def __init__(self, tokens: list[str], names: frozenset[str]) -> None:
        self.tokens = tokens
        self.names = names
        self.at = 0

    def parse(self) -> bool | None:
        if not self.tokens:
            return True  # an empty expression selects everything
        try:
            value = self._or()
        except ValueError:
            return None
        return value if self.at == len(self.tokens) else None

    def _peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def _take(self) -> str:
        token = self._peek()
        if token is None:
            raise ValueError("unexpected end")
        self.at += 1
        return token

    def _or(self) -> bool | None:
        value = self._and()
        while self._peek() == "or":
            self._take()
            right = self._and()
            value = True if True in (value, right) else None if None in (value, right) else False
        return value

    def _and(self) -> bool | None:
        value = self._not()
        while self._peek() == "and":
            self._take()
            right = self._not()
            value = False if False in (value, right) else None if None in (value, right) else True
        return value

    def _not(self) -> bool | None:
        word = self._take()
        if word == "not":
            inner = self._not()
            return None if inner is None else not inner
        if word == "(":
            value = self._or()
            if self._take() != ")":
                raise ValueError("unbalanced")
            return value
        if word in _WORDS or not _NAME.fullmatch(word):
            raise ValueError(f"unexpected {word}")
        if self._peek() == "(":  # name(key=value, ...): decided by the marker's arguments
            self._take()
            depth = 1
            while depth:
                depth += {"(": 1, ")": -1}.get(self._take(), 0)
            return None if word in self.names else False
        return word in self.names
