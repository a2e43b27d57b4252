"""Every git call the gate makes: explicit argument lists, never a shell."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from entropy_action.core.errors import GateError

_SHALLOW_HINT = (
    "in a shallow clone fetch the base first (actions/checkout: fetch-depth: 0, "
    "or git fetch origin BRANCH)"
)


# Commands that only read: inside `memo()`, each is asked once per (folder, arguments).
_READS = frozenset(
    {"cat-file", "show", "ls-tree", "diff", "ls-files", "rev-parse", "--literal-pathspecs"}
)
_memo: dict[tuple[str, tuple[str, ...]], subprocess.CompletedProcess[bytes]] = {}
_memo_lock = threading.Lock()
_memo_depth = [0]
_blobs: dict[tuple[str, str], bytes | None] = {}  # (folder, "commit:path") -> bytes, in memo()
_batches: dict[str, _Batch] = {}  # folder -> its `git cat-file --batch`, in memo()
_UNREAD = object()  # what the batch cannot answer as `git show` would: ask `git show`


@contextlib.contextmanager
def memo() -> Iterator[None]:
    """Within this block, a read-only git call with the same folder and arguments is made once:
    one gate run asks the same questions for each of a manifest's properties (the files the
    patch changed, the base's bytes of a conftest), and the answers cannot change while it
    runs (the tree is the PR's, the base a commit). Nested blocks share the outermost's
    answers; leaving it forgets them."""
    with _memo_lock:
        _memo_depth[0] += 1
    try:
        yield
    finally:
        with _memo_lock:
            _memo_depth[0] -= 1
            closing = list(_batches.values()) if not _memo_depth[0] else []
            if not _memo_depth[0]:
                _memo.clear()
                _blobs.clear()
                _batches.clear()
        for batch in closing:
            batch.close()


class _Batch:
    """One `git cat-file --batch` in a folder for a `memo()` block: a file's bytes at a
    commit without a process of its own (`show` would start two for each file of a closure,
    at the base, for every property)."""

    def __init__(self, cwd: Path) -> None:
        executable = shutil.which("git")
        if executable is None:
            raise GateError("git: not found on PATH; the gate reads the base ref with git")
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[bytes] | None = subprocess.Popen(
            [executable, "cat-file", "--batch"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def read(self, spec: str) -> bytes | object | None:
        """The blob `spec` names, None when there is none, `_UNREAD` when not a blob (or
        when the process is gone: `git show` then answers, as outside a memo block)."""
        with self.lock:
            proc = self.proc
            if proc is None or proc.stdin is None or proc.stdout is None:
                return _UNREAD
            asked = spec.encode("utf-8", "surrogateescape")
            try:
                proc.stdin.write(asked + b"\n")
                proc.stdin.flush()
                line = proc.stdout.readline().rstrip(b"\n")
                if line in (asked + b" missing", asked + b" ambiguous"):
                    return None
                header = line.split()  # the object's id, its type and its size
                if len(header) != 3:
                    raise OSError("unexpected answer")
                size = int(header[2])
                data = proc.stdout.read(size + 1)
                if len(data) != size + 1:
                    raise OSError("short answer")
            except (OSError, ValueError):
                self._stop()
                return _UNREAD
            return data[:-1] if header[1] == b"blob" else _UNREAD

    def close(self) -> None:
        with self.lock:
            self._stop()

    def _stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError):
            if proc.stdin is not None:
                proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def _git(
    args: list[str],
    cwd: Path,
    *,
    check: bool = True,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    if env is not None or not _memo_depth[0] or not args or args[0] not in _READS:
        return _run_git(args, cwd, check=check, env=env)
    key = (str(cwd.resolve()), tuple(args))
    with _memo_lock:
        known = _memo.get(key)
    if known is None:
        known = _run_git(args, cwd, check=False)
        with _memo_lock:
            if _memo_depth[0]:
                _memo[key] = known
    if check and known.returncode != 0:
        err = known.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GateError(f"git {' '.join(args)}: {err[-1] if err else 'failed'}")
    return known


def _run_git(
    args: list[str], cwd: Path, *, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """`env`: variables set for this call on top of the gate's own environment."""
    executable = shutil.which("git")
    if executable is None:
        raise GateError("git: not found on PATH; the gate reads the base ref with git")
    environ = None if env is None else {**os.environ, **env}
    try:
        proc = subprocess.run(
            [executable, *args], cwd=cwd, capture_output=True, check=False, timeout=300, env=environ
        )
    except subprocess.TimeoutExpired:
        raise GateError(f"git {' '.join(args)}: no answer after 300 s") from None
    except OSError as exc:
        raise GateError(f"git {' '.join(args)}: {exc.strerror}") from None
    if check and proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GateError(f"git {' '.join(args)}: {err[-1] if err else 'failed'}")
    return proc


def toplevel(path: Path) -> Path:
    """The root of the work tree containing `path`."""
    proc = _git(
        ["rev-parse", "--show-toplevel"], path if path.is_dir() else path.parent, check=False
    )
    if proc.returncode != 0:
        raise GateError(f"{path}: not inside a git work tree (the base ref is read with git)")
    return Path(proc.stdout.decode().strip())


def head_commit(path: Path) -> str | None:
    """The HEAD commit of the work tree at `path`, or None outside git (or without a commit)."""
    if shutil.which("git") is None:
        return None
    proc = _git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], path, check=False)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


def resolve_ref(root: Path, ref: str) -> str:
    """The commit id `ref` names, or a GateError with the shallow-clone hint."""
    if ref.startswith("-") or not ref:
        raise GateError(f"--base-ref {ref!r}: not a git ref")
    proc = _git(
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"],
        root,
        check=False,
    )
    if proc.returncode != 0:
        raise GateError(f"--base-ref {ref!r}: no such commit in this clone; {_SHALLOW_HINT}")
    return proc.stdout.decode().strip()


def repo_path(root: Path, path: Path) -> str:
    """`path` as a repository-relative POSIX path (what `git show REF:PATH` wants)."""
    absolute = path if path.is_absolute() else Path.cwd() / path
    try:
        relative = absolute.resolve().relative_to(root.resolve())
    except ValueError:
        raise GateError(f"{path}: is outside the repository at {root}") from None
    return str(PurePosixPath(*relative.parts))


def show(root: Path, commit: str, relative: str) -> bytes | None:
    """The bytes of `relative` at `commit`, or None when the file does not exist there.
    Inside `memo()`, read through one `git cat-file --batch` per folder and kept."""
    spec = f"{commit}:{relative}"
    if _memo_depth[0] and "\n" not in spec:
        key = (str(root.resolve()), spec)
        with _memo_lock:
            if key in _blobs:
                return _blobs[key]
            batch = _batches.get(key[0])
            if batch is None and _memo_depth[0]:
                batch = _batches[key[0]] = _Batch(root)
        found = batch.read(spec) if batch is not None else _UNREAD
        if found is not _UNREAD:
            assert found is None or isinstance(found, bytes)
            with _memo_lock:
                if _memo_depth[0]:
                    _blobs[key] = found
            return found
    exists = _git(["cat-file", "-e", f"{commit}:{relative}"], root, check=False)
    if exists.returncode != 0:
        return None
    return _git(["show", f"{commit}:{relative}"], root).stdout


def list_tree(root: Path, commit: str) -> list[str]:
    """Every file path at `commit`."""
    out = _git(["ls-tree", "-r", "-z", "--name-only", commit], root).stdout
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


def is_symlink(root: Path, commit: str, relative: str) -> bool:
    """Whether `relative` is a symbolic link at `commit` (`git show` gives its target's path)."""
    out = _git(["ls-tree", "-z", commit, "--", relative], root, check=False).stdout
    return out.startswith(b"120000 ")


def changed_files(root: Path, commit: str, *, staged: bool = False) -> list[str]:
    """Files that differ between `commit` and the work tree, untracked ones included; with
    `staged`, between `commit` and git's index (what the next commit holds). A renamed file
    is both its paths: the one it left differs too (git's rename detection, on by default,
    would name only where it went: a protected file moved out of its folder, unseen)."""
    if staged:
        args = ["diff", "--cached", "--no-renames", "--name-only", "-z", commit, "--"]
        diff = _git(args, root).stdout
        return sorted({p.decode("utf-8", "surrogateescape") for p in diff.split(b"\0") if p})
    diff = _git(["diff", "--no-renames", "--name-only", "-z", commit, "--"], root).stdout
    untracked = _git(["ls-files", "--others", "--exclude-standard", "-z"], root).stdout
    names = {p.decode("utf-8", "surrogateescape") for p in (diff + untracked).split(b"\0") if p}
    return sorted(names)


def diff_zero_context(root: Path, commit: str, relative: str, *, staged: bool = False) -> bytes:
    """`git diff --unified=0` of one path from `commit` to the work tree (no textconv); with
    `staged`, to git's index."""
    args = ["--literal-pathspecs", "diff", "--unified=0", "--no-color", "--no-ext-diff"]
    args += ["--cached"] if staged else []
    return _git([*args, "--no-textconv", "--no-renames", commit, "--", relative], root).stdout


# The index entries a file's bytes can be read from: regular files, not symbolic links (120000)
# or submodules (160000).
_BLOB_MODES = frozenset({b"100644", b"100755"})


def index_files(root: Path) -> dict[str, str]:
    """Repository-relative path -> blob id of each regular file in git's index (stage 0: a
    path with an unresolved conflict has none), i.e. what the next commit holds."""
    out = _git(["ls-files", "--stage", "-z"], root).stdout
    files = {}
    for entry in out.split(b"\0"):
        info, _, name = entry.partition(b"\t")
        fields = info.split()
        if len(fields) == 3 and fields[0] in _BLOB_MODES and fields[2] == b"0":
            files[name.decode("utf-8", "surrogateescape")] = fields[1].decode()
    return files


def blob(root: Path, blob_id: str) -> bytes:
    """The bytes of the blob `blob_id`."""
    return _git(["cat-file", "blob", blob_id], root).stdout


# Folders of files derived from the tree by the tools that run in it (bytecode, pytest's and
# mypy's caches): never part of the tree a host copies or the verdict digests, ignored or not.
CACHE_DIRS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache"})


def tracked_and_untracked(root: Path) -> list[str]:
    """Files of the work tree that git tracks or would track (not ignored), without caches
    (CACHE_DIRS): a run that writes bytecode into the checkout does not change the tree."""
    out = _git(["ls-files", "--cached", "--others", "--exclude-standard", "-z"], root).stdout
    names = [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]
    return [name for name in names if CACHE_DIRS.isdisjoint(name.split("/")[:-1])]


def changed_tracked(root: Path) -> list[str]:
    """Tracked files whose work-tree bytes (or mode, or existence) differ from HEAD's, staged or
    not; git's own comparison, no content filters run. Never memoized: the tree is asked at the
    end of a run that may have changed it."""
    args = ["--literal-pathspecs", "diff", "HEAD", "--name-only", "--no-renames", "--no-ext-diff"]
    out = _run_git([*args, "--no-textconv", "-z", "--"], root).stdout
    return sorted(p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p)


def untracked(root: Path) -> list[str]:
    """Files git does not track and does not ignore, without caches (CACHE_DIRS); never
    memoized (as changed_tracked)."""
    out = _run_git(["ls-files", "--others", "--exclude-standard", "-z"], root).stdout
    names = [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]
    return [name for name in names if CACHE_DIRS.isdisjoint(name.split("/")[:-1])]


def tracked(root: Path) -> list[str]:
    """Files of the work tree that git tracks."""
    out = _git(["ls-files", "--cached", "-z"], root).stdout
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


def ignored(root: Path) -> list[str]:
    """What git ignores in the work tree, relative: files, and the folders it ignores as a
    whole with a trailing slash (`.venv/`, `build/`; never descended into)."""
    args = ["ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z"]
    out = _git(args, root).stdout
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


def ignored_dirs(root: Path) -> list[str]:
    """The untracked folders git ignores as a whole (`.venv/`, `build/`), relative, no slash."""
    return [name.rstrip("/") for name in ignored(root) if name.endswith("/")]


def worktrees(root: Path) -> list[Path]:
    """Every work tree of the repository `root` belongs to (the main one first); [] outside
    git. An editable install may point at any of them."""
    proc = _git(["worktree", "list", "--porcelain"], root, check=False)
    if proc.returncode != 0:
        return []
    lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    return [Path(line.removeprefix("worktree ")) for line in lines if line.startswith("worktree ")]


def add_worktree(root: Path, commit: str, dest: Path) -> None:
    """A detached work tree of `commit` at `dest`."""
    _git(["worktree", "add", "--detach", "--force", str(dest), commit], root)


def remove_worktree(root: Path, dest: Path) -> None:
    _git(["worktree", "remove", "--force", str(dest)], root, check=False)
    _git(["worktree", "prune"], root, check=False)


def init(root: Path) -> None:
    """A new repository at `root` (branch main)."""
    _git(["init", "-q", "-b", "main"], root)


IDENTITY = ["-c", "user.name=entropy-gate", "-c", "user.email=entropy-gate@localhost.invalid"]


def commit_all(
    root: Path, message: str, *, date: int | None = None, paths: tuple[str, ...] = ()
) -> str:
    """Commit everything in the work tree (or only `paths`) as the gate's own author (its own
    identity: a fresh machine has none); the new commit id. With `date` (Unix seconds) as both
    the author's and the committer's date, the same tree, parent and message give the same
    commit id."""
    _git(["add", "-A", "--", *paths] if paths else ["add", "-A"], root)
    env = None if date is None else {"GIT_AUTHOR_DATE": f"@{date} +0000"}
    if env is not None:
        env["GIT_COMMITTER_DATE"] = env["GIT_AUTHOR_DATE"]
    _git([*IDENTITY, "commit", "-q", "--no-verify", "-m", message], root, env=env)
    return _git(["rev-parse", "HEAD"], root).stdout.decode().strip()


def checkout_detached(root: Path, commit: str) -> None:
    """Check `commit` out, detached, in the work tree at `root` (a temporary worktree), after
    removing the untracked files git does not ignore (what a run there left behind)."""
    _git(["clean", "-q", "-f", "-d"], root)
    _git(["checkout", "-q", "--detach", "--force", commit, "--"], root)


def rev_list(root: Path, args: list[str]) -> list[str]:
    """`git rev-list ARGS` (commit ids, one per line)."""
    return _git(["rev-list", *args, "--"], root).stdout.decode().split()


def commit_info(root: Path, commit: str) -> tuple[str, int]:
    """A commit's subject line and its committer date (Unix seconds)."""
    out = _git(["show", "-s", "--format=%ct%x00%s", commit, "--"], root).stdout
    date, _, subject = out.decode("utf-8", "replace").strip().partition("\0")
    return subject, int(date)


def dirty(root: Path) -> list[str]:
    """Tracked files of the work tree that differ from HEAD or the index (`git status`)."""
    out = _git(["status", "--porcelain", "-z", "--untracked-files=no"], root).stdout
    return [p.decode("utf-8", "surrogateescape")[3:] for p in out.split(b"\0") if p[:3].strip()]


def tree_of(root: Path, commit: str) -> str:
    """The id of `commit`'s tree (equal trees, equal contents)."""
    return _git(["rev-parse", "--verify", f"{commit}^{{tree}}"], root).stdout.decode().strip()


def has_commit(root: Path, sha: str) -> bool:
    """Whether the commit `sha` is in the clone at `root` (`git cat-file -e SHA^{commit}`)."""
    return _git(["cat-file", "-e", f"{sha}^{{commit}}"], root, check=False).returncode == 0


def parents(root: Path, commit: str) -> list[str]:
    """The parent commits of `commit`, in order (a merge's first parent first)."""
    out = _git(["rev-list", "--parents", "-n", "1", commit, "--"], root).stdout.decode().split()
    return out[1:]


def is_ancestor(root: Path, ancestor: str, descendant: str) -> bool:
    """Whether `ancestor` is reachable from `descendant` (a commit is its own ancestor)."""
    proc = _git(["merge-base", "--is-ancestor", ancestor, descendant], root, check=False)
    return proc.returncode == 0


def merge_base(root: Path, one: str, other: str) -> str | None:
    """The best common ancestor of two commits, or None when they share no history."""
    proc = _git(["merge-base", one, other], root, check=False)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


def merge_tree(root: Path, base: str, head: str) -> str | None:
    """The tree of git's own merge of `head` into `base` (`git merge-tree --write-tree`, git
    2.38 or later), or None when they conflict or this git cannot say."""
    proc = _git(["merge-tree", "--write-tree", "--no-messages", base, head], root, check=False)
    lines = proc.stdout.decode().split()
    return lines[0] if proc.returncode == 0 and lines else None


def blob_id(root: Path, commit: str, relative: str) -> str | None:
    """The blob id of `relative` at `commit` (None: no such file there)."""
    spec = f"{commit}:{relative}"
    proc = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", spec], root, check=False)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


def fetch(root: Path, remote: str, refspecs: list[str], env: dict[str, str]) -> str | None:
    """`git fetch --no-tags REMOTE REFSPEC...` with `env` added (GIT_CONFIG_* for the token's
    header: never on the command line); None, or git's last line when it failed."""
    executable = shutil.which("git")
    if executable is None:
        return "git: not found on PATH"
    args = [executable, "fetch", "--no-tags", "--quiet", remote, *refspecs]
    try:
        proc = subprocess.run(
            args, cwd=root, capture_output=True, check=False, timeout=300,
            env={**os.environ, **env},
        )  # fmt: skip
    except (subprocess.TimeoutExpired, OSError) as exc:
        return f"git fetch: {exc}"
    if proc.returncode == 0:
        return None
    lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else f"git fetch exited {proc.returncode}"
