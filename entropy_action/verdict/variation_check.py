"""Host B's variation set, checked (pure): a report that lists less than every dimension, or
that claims the manifest turned one off when the head manifest does not, cannot be judged.

The lesson of reprotest: a variation set that silently shrinks passes everything it no
longer varies. host.json `variations` makes the set evidence; this makes its shrinking loud.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from entropy_action.core import variations
from entropy_action.core.variations import Variation

OFF_PREFIX = variations.OFF_PREFIX  # hosts/varied.py writes a switch as this + its reason


def problems(
    listed: Sequence[Variation], head_off: Mapping[str, str], *, current: bool
) -> list[str]:
    """Why host B's `variations` cannot be trusted, one line each ([] when they can).

    `current`: the report was written by this gate version, which lists every dimension (an
    older gate's report lists none and is judged as before)."""
    if not current:
        return []
    names = [variation.dimension for variation in listed]
    found = []
    missing = [name for name in variations.NAMES if name not in names]
    if missing:
        found.append(
            f"host B: host.json lists no variation for {', '.join(missing)}: every dimension "
            "of host B must be listed, varied or not (a variation set that silently shrinks "
            "is refused)"
        )
    unknown = sorted({name for name in names if name not in variations.BY_NAME})
    repeated = sorted({name for name in names if names.count(name) > 1})
    if unknown or repeated:
        bad = ", ".join(f"{name!r}" for name in [*unknown, *repeated])
        found.append(f"host B: host.json lists unknown or repeated variations: {bad}")
    claimed = [
        v.dimension
        for v in listed
        if (v.why_not or "").startswith(OFF_PREFIX) and v.dimension not in head_off
    ]
    if claimed:
        found.append(
            f"host B: host.json says the manifest turned off {', '.join(claimed)}, the head "
            "manifest does not (constraints.host_b_off): host B did not vary what it had to"
        )
    return found


def held(listed: Sequence[Variation]) -> list[Variation]:
    """The dimensions host B did not vary."""
    return [variation for variation in listed if not variation.varied]
