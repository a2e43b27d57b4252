"""Which properties can share one pytest session: those whose effective pins and run options
are identical (one start-up and one plugin load for all of them on each host).

Pure: the grouping is a function of the manifest alone, so the check job, every host leg and
the local gate agree on it without talking to each other.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from entropy_action.manifest.pinfile import LoadedManifest


@dataclass(frozen=True)
class Group:
    """Properties that run in one session: named after its first property."""

    name: str
    views: tuple[LoadedManifest, ...]
    key: str  # sha256 of the effective pins and run options they share

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(view.property_id for view in self.views)

    @property
    def modules(self) -> tuple[str, ...]:
        return tuple(view.manifest.module for view in self.views)


def session_key(view: LoadedManifest) -> str:
    """What must be equal for two properties to share a session: the pins, run options and
    the variations host B leaves out (host_b_off, which a property may set for itself; the
    other constraints are the file's, shared by every property)."""
    manifest = view.manifest
    shared = {
        "pins": manifest.pins.model_dump(mode="json", exclude_none=True),
        "run": manifest.run.model_dump(mode="json"),
    }
    if manifest.constraints.host_b_off:  # absent when empty: old keys stay as they were
        shared["host_b_off"] = dict(manifest.constraints.host_b_off)
    return hashlib.sha256(json.dumps(shared, sort_keys=True).encode()).hexdigest()


def groups(views: Sequence[LoadedManifest]) -> list[Group]:
    """The properties grouped by `session_key`, in the manifest's order of first appearance."""
    by_key: dict[str, list[LoadedManifest]] = {}
    for view in views:
        by_key.setdefault(session_key(view), []).append(view)
    return [Group(members[0].property_id, tuple(members), key) for key, members in by_key.items()]
