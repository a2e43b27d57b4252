"""The base evidence cache: a run of the base ref's module, kept for the next push of a PR.

What a run of the base's module reports is a function of the base commit, the manifest's
bytes, the interpreter, the installed distributions and the host (A, or the isolated B).
An entry is stored under the user cache directory, named by the sha256 of those, and
holds the run's host.json and junit.xml with the key it was stored under (key.json).

An entry is data, not a verdict: on the way back it is read with the same limits as any
report (no symlinks, size caps, no DTD), its key must equal the one asked for, and the
report must name the same host and manifest. An entry that fails any of that is removed and
ignored with a note: the base then runs again, never trusted. The cache is capped in
bytes; the least recently used entries go first.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from entropy_action import __version__
from entropy_action.core import layout, variations
from entropy_action.core.errors import GateError
from entropy_action.core.layout import HOST_JSON, JUNIT_XML
from entropy_action.evidence import bounded, hostreport, outcomes

KEY_JSON = "key.json"
ENTRIES = "base-runs"
BASE_ON_HEAD = "base-on-head"  # the runs of the base's test side on the head's code
DEFAULT_CAP = 256 << 20  # bytes of entries kept in all
MAX_KEY_JSON = 64 << 10
# Printed by the run's interpreter: what it is and what it has installed.
# Where each pytest plugin's top-level package is found too (found, never imported): the
# hook inventory names a plugin outside site-packages by its path (an editable install), so a
# base run made with the plugin at another path would read as lacking it.
_INTERPRETER = """\
import importlib.metadata as m, importlib.util as u, json, platform, sys
dists = sorted({f"{d.metadata['Name']}=={d.version}".lower() for d in m.distributions()})
def where(name):
    try:
        spec = u.find_spec(name)
    except (ImportError, ValueError):
        return ""
    return (spec.origin or "") if spec else ""
tops = sorted({e.value.split(":")[0].split(".")[0] for e in m.entry_points(group="pytest11")})
print(json.dumps({"python": sys.version, "implementation": platform.python_implementation(),
                  "platform": platform.platform(), "executable": sys.executable,
                  "distributions": dists, "plugins": [f"{t}={where(t)}" for t in tops]}))
"""


@dataclass(frozen=True)
class CacheKey:
    """What a base run's outcome is a function of, as strings."""

    fields: dict[str, str]

    @property
    def digest(self) -> str:
        return hashlib.sha256(_canonical(self.fields)).hexdigest()


def _canonical(fields: dict[str, str]) -> bytes:
    return json.dumps(fields, sort_keys=True, separators=(",", ":")).encode("utf-8")


def base_run_key(
    *, base_commit: str, manifest_sha256: str, host: str, python: str | None = None
) -> CacheKey:
    """The key of a base run on `host` ("a" or "b") with `python` (default: this one)."""
    return _key({"base_commit": base_commit}, manifest_sha256, host, python)


def base_on_head_key(
    *, tree: str, closure: str, manifest_sha256: str, python: str | None = None, host: str = "a"
) -> CacheKey:
    """The key of a run of the base's test side on the head's code (strength.base_on_head):
    `tree` digests the copy it runs in (the head's files, the base's test side written in),
    `closure` the base's test side itself; on `host` with `python`."""
    fields = {"kind": "base-on-head", "tree_sha256": tree, "closure_sha256": closure}
    return _key(fields, manifest_sha256, host, python)


def _key(run: dict[str, str], manifest_sha256: str, host: str, python: str | None) -> CacheKey:
    interpreter = _interpreter(python or sys.executable, isolated=host == "b")
    listed = interpreter.pop("distributions", None)
    distributions = "\n".join(map(str, listed)) if isinstance(listed, list) else ""
    found = interpreter.pop("plugins", None)
    plugins = "\n".join(map(str, found)) if isinstance(found, list) else ""
    fields = {
        **run,
        "manifest_sha256": manifest_sha256,
        "host": host,
        "gate_version": __version__,
        # the run imports the base's code, not the head's through an editable install:
        # entries of runs made before that are never reused
        "imports": "base-tree",
        # what host B varies (issue 22 added the hash seed, listings, CPU count): a base run
        # from a host B that varied less is never reused; pins are in the manifest's sha
        "varies": ",".join(variations.NAMES) if host == "b" else "",
        "distributions_sha256": hashlib.sha256(distributions.encode("utf-8")).hexdigest(),
        "plugins_sha256": hashlib.sha256(plugins.encode("utf-8")).hexdigest(),
        **{name: str(value) for name, value in sorted(interpreter.items())},
    }
    return CacheKey(fields)


def _interpreter(python: str, *, isolated: bool) -> dict[str, object]:
    """The interpreter as the host sees it: host A inherits the environment (PYTHONPATH and
    the user site included), isolated host B does not."""
    try:
        done = subprocess.run(
            [python, *(["-I"] if isolated else []), "-c", _INTERPRETER],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        loaded = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        raise GateError(f"cannot describe the interpreter {python} for the cache: {exc}") from None
    if not isinstance(loaded, dict):
        raise GateError(f"cannot describe the interpreter {python} for the cache")
    return loaded


class EvidenceCache:
    """Entries under `root`/base-runs, at most `cap` bytes in all."""

    def __init__(self, root: Path, cap: int = DEFAULT_CAP, entries: str = ENTRIES) -> None:
        self.root = root / entries
        self.cap = cap

    def restore(self, key: CacheKey, dest: Path) -> tuple[bool, list[str]]:
        """Copy the entry for `key` into `dest` if it is sound; (hit, notes)."""
        entry = self.root / key.digest
        if not entry.is_dir():
            return False, []
        problem = "it is a symbolic link" if entry.is_symlink() else _check(entry, key, dest)
        if problem is not None:
            _remove(entry)
            shutil.rmtree(dest, ignore_errors=True)
            return False, [f"cache entry {key.digest[:12]} ignored and removed: {problem}"]
        os.utime(entry)  # recently used
        return True, []

    def store(self, key: CacheKey, source: Path) -> list[str]:
        """Keep the report in `source` under `key` (only a report that reads back); notes."""
        try:
            report = hostreport.read_host(source)
        except GateError as exc:
            return [f"the base run was not cached: {exc.message}"]
        if report.info.host != key.fields["host"]:
            return ["the base run was not cached: it names another host"]
        try:
            self._write(key, source)
        except OSError as exc:
            return [f"the base run was not cached: {self.root}: {exc.strerror}"]
        return self._evict(keep=key.digest)

    def _write(self, key: CacheKey, source: Path) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".new-", dir=self.root))
        try:
            (scratch / KEY_JSON).write_bytes(_canonical(key.fields))
            for name in (HOST_JSON, JUNIT_XML, layout.OUTCOMES_JSON):
                if name == layout.OUTCOMES_JSON and not (source / name).is_file():
                    continue  # an older gate's report: none
                shutil.copyfile(source / name, scratch / name, follow_symlinks=False)
            entry = self.root / key.digest
            shutil.rmtree(entry, ignore_errors=True)
            os.replace(scratch, entry)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _evict(self, keep: str) -> list[str]:
        """Remove the least recently used entries until the cache fits its cap."""
        entries = []
        for entry in self.root.iterdir():
            try:
                if entry.name.startswith(".new-") and time.time() - entry.stat().st_mtime < 3600:
                    continue  # another gate is writing it
                size = sum(f.lstat().st_size for f in entry.iterdir()) if entry.is_dir() else 0
                entries.append((entry.stat().st_mtime, entry, size))
            except FileNotFoundError:  # another gate replaced or evicted it since the listing
                continue
        total = sum(size for _, _, size in entries)
        notes = []
        for _, entry, size in sorted(entries, key=lambda item: item[0]):
            if total <= self.cap:
                break
            if entry.name == keep and len(entries) > 1:
                continue
            shutil.rmtree(entry, ignore_errors=True)
            total -= size
            notes.append(f"cache entry {entry.name[:12]} evicted (cache over {self.cap} bytes)")
        return notes


_STORED = (
    (HOST_JSON, hostreport.MAX_HOST_JSON),
    (JUNIT_XML, hostreport.MAX_JUNIT_XML),
    (layout.OUTCOMES_JSON, outcomes.MAX_OUTCOMES_JSON),
)


def _remove(entry: Path) -> None:
    """Remove an entry; a symlinked one is unlinked, never followed."""
    if entry.is_symlink():
        entry.unlink()
    else:
        shutil.rmtree(entry, ignore_errors=True)


def _check(entry: Path, key: CacheKey, dest: Path) -> str | None:
    """Why the entry cannot be used for `key` (None: it is sound and now copied to `dest`)."""
    try:
        stored = json.loads(bounded.read_capped(entry / KEY_JSON, MAX_KEY_JSON).decode("utf-8"))
    except GateError as exc:
        return exc.message
    except (UnicodeDecodeError, ValueError, RecursionError):
        return f"{entry / KEY_JSON}: not a JSON key"
    if stored != key.fields:
        return "its key does not match the one asked for (a collision or a tampered entry)"
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    try:
        for name, limit in _STORED:
            if name == layout.OUTCOMES_JSON and not os.path.lexists(entry / name):
                continue  # read_host says whether host.json needs it
            (dest / name).write_bytes(bounded.read_capped(entry / name, limit))
        report = hostreport.read_host(dest)
    except GateError as exc:
        return exc.message
    if report.info.host != key.fields["host"]:
        return f"it is a report of host {report.info.host.upper()}"
    if report.info.manifest_sha256 != key.fields["manifest_sha256"]:
        return "it ran another manifest"
    return None
