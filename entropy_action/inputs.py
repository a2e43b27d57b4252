"""The inputs a verdict is a function of, and one digest of them.

The same inputs give the same verdict: the head's work tree (the files git tracks or would
track), the base ref's tree, the manifest's bytes, the gate's version, and on each host the
interpreter and the installed distributions. Every source of randomness inside the test
process is seeded from the pins (see the README), so a verdict that changes while its
`inputs_sha256` does not is a bug in the gate, or an entropy source nobody pinned.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

from entropy_action import __version__, git
from entropy_action.host import HostInfo


def tree_digest(root: Path, exclude: tuple[Path, ...] = ()) -> str:
    """sha256 over the work tree's files (path and content), as host B's copy would hold them."""
    skip = tuple(path.absolute() for path in exclude)
    digest = hashlib.sha256()
    for name in sorted(git.tracked_and_untracked(root)):
        path = root / name
        if any(path == folder or folder in path.parents for folder in skip):
            continue
        if path.is_symlink():
            content = b"link:" + str(path.readlink()).encode("utf-8", "surrogateescape")
        elif path.is_file():
            content = hashlib.sha256(path.read_bytes()).digest()
        else:
            continue
        digest.update(name.encode("utf-8", "surrogateescape") + b"\0" + content + b"\0")
    return digest.hexdigest()


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
) -> dict[str, str]:
    """The named inputs of one verdict."""
    found = {
        "gate_version": __version__,
        "head_tree": head_tree,
        "base_tree": base_tree or "none",
        "manifest_sha256": manifest_sha256,
    }
    for label, info in hosts.items():
        found.update(host_inputs(label, info))
    return found


def digest(named: Mapping[str, str]) -> str:
    """sha256 of the named inputs, canonical JSON."""
    return hashlib.sha256(json.dumps(dict(named), sort_keys=True).encode()).hexdigest()
