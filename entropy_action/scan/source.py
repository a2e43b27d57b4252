"""The files a scan reads: the head work tree, or the base ref's tree read with `git show`."""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

from entropy_action.core import git

MAX_BYTES = 2 * 1024 * 1024  # a source file larger than this is not read


class Tree(Protocol):
    """Read-only access to the files of one revision, by repository-relative POSIX path."""

    def is_file(self, relative: str) -> bool: ...

    def is_dir(self, relative: str) -> bool: ...

    def read(self, relative: str) -> bytes | None: ...


class WorkTree:
    """The patch's files as they are on disk (tracked or not); nothing outside `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def _inside(self, relative: str) -> Path | None:
        target = (self.root / relative).resolve()
        return target if target.is_relative_to(self.root) else None

    def is_file(self, relative: str) -> bool:
        target = self._inside(relative)
        return target is not None and target.is_file()

    def is_dir(self, relative: str) -> bool:
        target = self._inside(relative) if relative else self.root
        return target is not None and target.is_dir()

    def read(self, relative: str) -> bytes | None:
        target = self._inside(relative)
        try:
            if target is None or not target.is_file() or target.stat().st_size > MAX_BYTES:
                return None
            return target.read_bytes()
        except OSError:
            return None


class CommitTree:
    """The files of a commit, listed once and read with `git show` (never checked out)."""

    def __init__(self, root: Path, commit: str) -> None:
        self.root = root
        self.commit = commit
        self.files = frozenset(git.list_tree(root, commit))
        dirs = {""}
        for name in self.files:
            dirs.update(str(parent) for parent in PurePosixPath(name).parents)
        dirs.discard(".")
        self.dirs = frozenset(dirs)

    def is_file(self, relative: str) -> bool:
        return relative in self.files

    def is_dir(self, relative: str) -> bool:
        return relative in self.dirs

    def read(self, relative: str) -> bytes | None:
        if relative not in self.files:
            return None
        data = git.show(self.root, self.commit, relative)
        return None if data is None or len(data) > MAX_BYTES else data


@dataclass(frozen=True)
class Parsed:
    """A source file's syntax tree, or why it has none."""

    path: str
    tree: ast.Module | None
    error: str | None = None  # "path:line: cannot parse: ..." when tree is None


def parse(tree: Tree, relative: str) -> Parsed | None:
    """Parse `relative` in `tree`; None when the file is not there (or too large)."""
    data = tree.read(relative)
    if data is None:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for "\d" and the like
            return Parsed(relative, ast.parse(data, filename=relative))
    except SyntaxError as exc:
        line = exc.lineno or 1
        return Parsed(relative, None, f"{relative}:{line}: cannot parse: {exc.msg}")
    except (ValueError, RecursionError, MemoryError) as exc:
        return Parsed(relative, None, f"{relative}:1: cannot parse: {exc}")
