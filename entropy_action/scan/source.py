"""The files a scan reads: the head work tree, or the base ref's tree read with `git show`."""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar, cast

from entropy_action.core import git, pyast, treestate

MAX_BYTES = 2 * 1024 * 1024  # a source file larger than this is not read
PARSED_KEPT = 600  # syntax trees kept (a closure's walk stops at 300 files a revision)
_T = TypeVar("_T")


class Tree(Protocol):
    """Read-only access to the files of one revision, by repository-relative POSIX path."""

    def is_file(self, relative: str) -> bool: ...

    def is_dir(self, relative: str) -> bool: ...

    def read(self, relative: str) -> bytes | None: ...


class WorkTree:
    """The patch's files as they are on disk (tracked or not); nothing outside `root`. While
    no run can write the tree (core.treestate.settled), each answer is read once for every
    property and every scan that asks."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def _inside(self, relative: str) -> Path | None:
        target = (self.root / relative).resolve()
        return target if target.is_relative_to(self.root) else None

    def is_file(self, relative: str) -> bool:
        return self._kept("file", relative, self._is_file)

    def is_dir(self, relative: str) -> bool:
        return self._kept("dir", relative, self._is_dir)

    def read(self, relative: str) -> bytes | None:
        return self._kept("read", relative, self._read)

    def _kept(self, kind: str, relative: str, answer: Callable[[str], _T]) -> _T:
        memo = treestate.settled_memo(self.root)
        if memo is None:
            return answer(relative)
        key = (WorkTree, kind, relative)
        if key not in memo:
            memo[key] = answer(relative)
        return cast(_T, memo[key])

    def _is_file(self, relative: str) -> bool:
        target = self._inside(relative)
        return target is not None and target.is_file()

    def _is_dir(self, relative: str) -> bool:
        target = self._inside(relative) if relative else self.root
        return target is not None and target.is_dir()

    def _read(self, relative: str) -> bytes | None:
        target = self._inside(relative)
        try:
            if target is None or not target.is_file() or target.stat().st_size > MAX_BYTES:
                return None
            return target.read_bytes()
        except OSError:
            return None


class _Listed:
    """A revision listed once by path: which files and folders it has."""

    def __init__(self, names: Iterable[str]) -> None:
        self.files = frozenset(names)
        dirs = {""}
        for name in self.files:  # git lists normalized names: each "/" ends a folder
            end = name.rfind("/")
            while end > 0 and name[:end] not in dirs:
                dirs.add(name[:end])
                end = name.rfind("/", 0, end)
        self.dirs = frozenset(dirs)

    def is_file(self, relative: str) -> bool:
        return relative in self.files

    def is_dir(self, relative: str) -> bool:
        return relative in self.dirs


class CommitTree(_Listed):
    """The files of a commit, listed once and read with `git show` (never checked out)."""

    def __init__(self, root: Path, commit: str) -> None:
        super().__init__(git.list_tree(root, commit))
        self.root = root
        self.commit = commit

    def read(self, relative: str) -> bytes | None:
        if relative not in self.files:
            return None
        data = git.show(self.root, self.commit, relative)
        return None if data is None or len(data) > MAX_BYTES else data


class IndexTree(_Listed):
    """The files of git's index, as the next commit will hold them (the pre-commit hook's
    head): read from their blobs, never from the work tree, whose unstaged edits and
    untracked files are not part of the commit."""

    def __init__(self, root: Path) -> None:
        self.blobs = git.index_files(root)
        super().__init__(self.blobs)
        self.root = root

    def read(self, relative: str) -> bytes | None:
        blob_id = self.blobs.get(relative)
        if blob_id is None:
            return None
        data = git.blob(self.root, blob_id)
        return None if len(data) > MAX_BYTES else data


def head_tree(root: Path, *, staged: bool) -> Tree:
    """The patch's side of a scan: git's index for the pre-commit hook, else the work tree."""
    return IndexTree(root) if staged else WorkTree(root)


@dataclass(frozen=True)
class Parsed:
    """A source file's syntax tree, or why it has none."""

    path: str
    tree: ast.Module | None
    error: str | None = None  # "path:line: cannot parse: ..." when tree is None


def parse(tree: Tree, relative: str) -> Parsed | None:
    """Parse `relative` in `tree`; None when the file is not there (or too large)."""
    data = tree.read(relative)
    return None if data is None else _parsed(relative, data)


@functools.lru_cache(maxsize=PARSED_KEPT)
def _parsed(relative: str, data: bytes) -> Parsed:
    """The same bytes under the same name parse once per process: a gate reads a property's
    closure at the base and the head, in the scan and in each strength plan, and every
    property of a manifest shares its conftests. Nothing that reads a tree changes it."""
    try:
        return Parsed(relative, pyast.parse(data, filename=relative))
    except SyntaxError as exc:
        line = exc.lineno or 1
        return Parsed(relative, None, f"{relative}:{line}: cannot parse: {exc.msg}")
    except (ValueError, RecursionError, MemoryError) as exc:
        return Parsed(relative, None, f"{relative}:1: cannot parse: {exc}")
