"""Mutant outcomes remembered across gate runs, per (mutant, modules, tests) digest.

The key is the mutant's digest (its file and the whole mutated source), the digests of the
base's and the head's property modules, and the tests run; the value is the outcome per
test. An entry is read as untrusted data; one that does not parse is a miss. A run that
imported code from outside its copy is never stored.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from entropy_action import __version__
from entropy_action.strength.mutation.harness import Outcome
from entropy_action.strength.mutation.operators import Mutant

MAX_ENTRY = 1 << 20


def key(mutant: Mutant, selection: Sequence[str], base_module: bytes, head_module: bytes) -> str:
    """The entry's name: the mutant, both modules, the tests run, and the gate's version (a
    gate that runs the tests otherwise — seeds os.urandom, blocks a plugin — is not the one
    that measured)."""
    digest = hashlib.sha256()
    for part in (
        __version__,
        mutant.digest,
        hashlib.sha256(base_module).hexdigest(),
        hashlib.sha256(head_module).hexdigest(),
        "\0".join(selection),
    ):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def load(cache: Path | None, name: str) -> Outcome | None:
    if cache is None:
        return None
    try:
        path = cache / f"{name}.json"
        if path.stat().st_size > MAX_ENTRY:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        outcomes = {str(k): str(v) for k, v in data["outcomes"].items()}
        confirmed = data.get("confirmed") is True
        return Outcome(outcomes, {}, bool(data["timed_out"]), confirmed=confirmed)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def store(cache: Path | None, name: str, outcome: Outcome) -> None:
    if cache is None or outcome.outside is not None:
        return
    try:
        cache.mkdir(parents=True, exist_ok=True)
        data = {
            "outcomes": outcome.outcomes,
            "timed_out": outcome.timed_out,
            "confirmed": outcome.confirmed,
        }
        (cache / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
    except OSError:
        pass
