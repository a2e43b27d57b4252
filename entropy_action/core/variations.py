"""Host B's variations, named once: every dimension in which host B differs from host A.

One table (DIMENSIONS) read by the plan (hosts.isolate), the evidence (host.json `variations`),
the manifest's off-switch (`host_b_off`), attribution (which dimensions one re-run can leave
out, and the advice for each) and the summary. A dimension added here is on every path; a
test (tests/unit/test_variations.py) fails when a side names one this table does not.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field


@dataclass(frozen=True)
class Dimension:
    """One way host B differs from host A."""

    name: str
    what: str  # words for the summary: "the order the tests run in"
    advice: str  # the seam: what a test or its code should do instead
    # the pin that makes host B use host A's value (a key of Pins.flat()); the live clock and
    # the network differ whatever clock_unix or a cassette pin
    pin: str | None = None
    switchable: bool = False  # a manifest may turn it off (host_b_off), as a reviewed change
    revertible: bool = False  # one attribution re-run of host B can leave it out


DIMENSIONS: tuple[Dimension, ...] = (
    Dimension(
        "clock",
        "the clock",
        "pin it (clock_unix) and pass it through a Clock port",
        revertible=True,
    ),
    Dimension(
        "env",
        "the environment",
        "pin the variables it reads (pins.env) or pass them in",
        revertible=True,
    ),
    Dimension(
        "network",
        "the network",
        "pin a cassette or pass a client in",
        revertible=True,
    ),
    Dimension("hostname", "the host name", "do not read the host name in a property; pass it in"),
    Dimension(
        "path",
        "the checkout path",
        "build paths from the repository root, not absolute ones",
        revertible=True,
    ),
    Dimension("tz", "the time zone", "pin it (tz) or pass a zone in", pin="tz"),
    Dimension("umask", "the umask", "pin it (umask) or set modes explicitly", pin="umask"),
    Dimension(
        "temp_root",
        "the temporary directory",
        "pin it (temp_root) or use the tmp_path fixture",
        pin="temp_root",
    ),
    Dimension("lang", "the locale", "pin it (lang) or pass an encoding explicitly", pin="lang"),
    Dimension(
        "rng_seed",
        "the RNG seed",
        "pin it (rng_seed) or pass a seeded random.Random in",
        pin="rng_seed",
    ),
    Dimension(
        "hash_seed",
        "the hash seed (PYTHONHASHSEED)",
        "do not depend on the iteration order of a set or of hashed keys: sort them, or pin "
        "it (hash_seed)",
        pin="hash_seed",
        revertible=True,
    ),
    Dimension(
        "python",
        "the interpreter",
        "look for version-dependent behaviour",
        revertible=True,
    ),
    Dimension(
        "test_order",
        "the order the tests run in",
        "make each test set up the state it needs and undo what it changes (a fixture)",
        switchable=True,
        revertible=True,
    ),
    Dimension(
        "file_order",
        "the order directory listings return",
        "sort what os.listdir, os.scandir, glob or Path.iterdir return before relying on it",
        switchable=True,
        revertible=True,
    ),
    Dimension(
        "cpu_count",
        "the CPU count",
        "pass the worker count in instead of reading os.cpu_count(), or do not assert on it",
        switchable=True,
        revertible=True,
    ),
)

BY_NAME = {dimension.name: dimension for dimension in DIMENSIONS}
NAMES = tuple(BY_NAME)
# What a manifest may turn off (constraints.host_b_off, and a property's own host_b_off):
# dimensions without a pin of their own. The others are held equal by pinning them.
SWITCHABLE = tuple(d.name for d in DIMENSIONS if d.switchable)
# What one attribution re-run of host B can leave out (RunSettings.revert); "python" is the
# gate's (host B runs on host A's interpreter), "env" reverts TZ and LANG with it.
REVERTIBLE = tuple(d.name for d in DIMENSIONS if d.revertible)
# Variation.why_not of a dimension the manifest turned off: this, then its reason
OFF_PREFIX = "turned off by the manifest: "


class Variation(BaseModel):
    """One dimension of host B, as a run applied it (host.json `variations`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    dimension: str = Field(max_length=40, description="A name of core.variations.DIMENSIONS")
    varied: bool = Field(description="Whether host B's value differed from host A's")
    how: str = Field(
        max_length=2000, description="What host B used, in words, e.g. 'PYTHONHASHSEED=1843'"
    )
    why_not: str | None = Field(
        None,
        max_length=2000,
        description="Why it was not varied: pinned, turned off by the manifest (with its "
        "reason), reverted by an attribution re-run, or not possible on this machine",
    )
