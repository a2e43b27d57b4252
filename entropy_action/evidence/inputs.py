"""The inputs a verdict is a function of, and one digest of them.

The same inputs give the same verdict: the head's work tree (the files git tracks or would
track), the base ref's tree, the manifest's bytes, the gate's version, and on each host the
interpreter and the installed distributions and the bytes of its report folder (`reports_a`,
`reports_b`: `publish` checks the folders beside the verdict against them). Every source of
randomness inside the test process is seeded from the pins (see docs/hosts.md), so a verdict that
changes while its `inputs_sha256` does not is a bug in the gate, or an entropy source nobody
pinned.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from entropy_action import __version__
from entropy_action.core import git, treestate
from entropy_action.core.errors import GateError
from entropy_action.core.hostinfo import HostInfo

MAX_REPORT_FILES = 10_000  # files below one host report folder
MAX_REPORT_BYTES = 512 * 1024 * 1024  # bytes below one host report folder
MISSING = "missing"  # the digest of a report folder that does not exist
UNREADABLE = "unreadable"  # what `verdict` records for a folder report_digest refuses
_CHUNK = 1024 * 1024


def tree_digest(
    root: Path, exclude: tuple[Path, ...] = (), replaced: Mapping[str, bytes | None] | None = None
) -> str:
    """sha256 over the work tree's files (path and content), as host B's copy would hold them;
    with `replaced`, as a copy holds them where those files were written in (None: removed)."""
    skipped = _skipped(root, tuple(path.absolute() for path in exclude))
    digest = hashlib.sha256()
    written = replaced or {}
    known = treestate.settled_contents(root)  # the judged tree, read once per gate run
    for name in sorted({*git.tracked_and_untracked(root), *written}):
        if skipped(name):
            continue
        path = root / name
        if name in written:
            data = written[name]
            content = None if data is None else hashlib.sha256(data).digest()
        elif known is not None and name in known:
            content = known[name]
        else:
            content = _content(path)
            if known is not None:
                known[name] = content
        if content is not None:
            digest.update(name.encode("utf-8", "surrogateescape") + b"\0" + content + b"\0")
    return digest.hexdigest()


def _skipped(root: Path, folders: tuple[Path, ...]) -> Callable[[str], bool]:
    """Whether `root / name` is one of `folders` or lies below one, decided on the names'
    text: the folders as prefixes relative to `root` (git lists names normalized), not a
    walk up each file's parents."""
    if any(folder == root or folder in root.parents for folder in folders):
        return lambda name: True
    prefixes = []
    for folder in folders:
        with contextlib.suppress(ValueError):
            prefixes.append(folder.relative_to(root).as_posix())
    below = tuple(prefix + "/" for prefix in prefixes)
    return lambda name: name in prefixes or name.startswith(below)


def _content(path: Path) -> bytes | None:
    """What tree_digest records of a file: its bytes' digest, a symlink's target (None: not
    a file)."""
    if path.is_symlink():
        return b"link:" + str(path.readlink()).encode("utf-8", "surrogateescape")
    if path.is_file():
        return hashlib.sha256(path.read_bytes()).digest()
    return None


def report_digest(folder: Path) -> str:
    """sha256 over every regular file below a host's report folder (relative POSIX path and
    content digest, sorted by path); MISSING when the folder does not exist. A symlink
    anywhere, anything but files and folders, or more than the caps is a GateError."""
    if not folder.is_symlink() and not folder.exists():
        return MISSING
    digest = hashlib.sha256()
    budget = [MAX_REPORT_FILES, MAX_REPORT_BYTES]
    for name, path in sorted(_report_files(folder, folder, budget)):
        content = _file_digest(path, folder, budget)
        digest.update(name.encode("utf-8", "surrogateescape") + b"\0" + content + b"\0")
    return digest.hexdigest()


def _report_files(root: Path, folder: Path, budget: list[int]) -> Iterator[tuple[str, Path]]:
    mode = _mode(folder, root)
    if not stat.S_ISDIR(mode):
        raise GateError(f"{root}: a host report folder, but {_what(folder, root)}")
    with os.scandir(folder) as entries:
        children = sorted(entries, key=lambda entry: entry.name)
    for entry in children:
        path = Path(entry.path)
        mode = _mode(path, root)
        if stat.S_ISDIR(mode):
            yield from _report_files(root, path, budget)
        elif stat.S_ISREG(mode):
            budget[0] -= 1
            if budget[0] < 0:
                raise GateError(f"{root}: more than {MAX_REPORT_FILES} files in a host report")
            yield path.relative_to(root).as_posix(), path
        else:
            raise GateError(f"{root}: {_what(path, root)} in a host report")


def _mode(path: Path, root: Path) -> int:
    try:
        mode = path.lstat().st_mode
    except OSError as exc:
        raise GateError(f"{root}: cannot read the host report: {exc.strerror}") from None
    if stat.S_ISLNK(mode):
        where = path.relative_to(root).as_posix() if path != root else "the folder itself"
        raise GateError(f"{root}: a symlink in a host report ({where}); never followed")
    return mode


def _what(path: Path, root: Path) -> str:
    where = path.relative_to(root).as_posix() if path != root else "it"
    return f"{where} is neither a file nor a folder"


def _file_digest(path: Path, root: Path, budget: list[int]) -> bytes:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                budget[1] -= len(chunk)
                if budget[1] < 0:
                    raise GateError(
                        f"{root}: more than {MAX_REPORT_BYTES // (1024 * 1024)} MiB in a "
                        "host report"
                    )
                digest.update(chunk)
    except OSError as exc:
        raise GateError(f"{root}: cannot read the host report: {exc.strerror}") from None
    return digest.digest()


def host_inputs(label: str, info: HostInfo | None) -> dict[str, str]:
    """One host's interpreter and installed distributions, as its host.json reports them."""
    if info is None:
        return {f"host_{label}": "missing"}
    fp = info.fingerprint
    return {
        f"interpreter_{label}": f"{fp.python_implementation} {fp.python_version}",
        f"distributions_{label}": info.distributions_sha256 or "unknown",
    }


def collect(
    head_tree: str,
    base_tree: str | None,
    manifest_sha256: str,
    hosts: Mapping[str, HostInfo | None],
    reports: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The named inputs of one verdict; `reports` maps a host's label to its report_digest."""
    found = {
        "gate_version": __version__,
        "head_tree": head_tree,
        "base_tree": base_tree or "none",
        "manifest_sha256": manifest_sha256,
    }
    for label, info in hosts.items():
        found.update(host_inputs(label, info))
    for label, report in (reports or {}).items():
        found[f"reports_{label}"] = report
    return found


def with_reports(named: Mapping[str, str], host_a: Path, host_b: Path) -> dict[str, str]:
    """`named` plus the report digests of both host folders (`verdict`, which has no tree).
    A folder that cannot be hashed (a symlink) is UNREADABLE: the verdict on it is `invalid`
    already, and `publish` refuses the folder when it hashes it."""
    reports = {"reports_a": _tolerant(host_a), "reports_b": _tolerant(host_b)}
    return {"gate_version": __version__, **named, **reports}


def _tolerant(folder: Path) -> str:
    try:
        return report_digest(folder)
    except GateError:
        return UNREADABLE


def digest(named: Mapping[str, str]) -> str:
    """sha256 of the named inputs, canonical JSON."""
    return hashlib.sha256(json.dumps(dict(named), sort_keys=True).encode()).hexdigest()
