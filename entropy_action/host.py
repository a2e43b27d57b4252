"""host.json: what one host run reports about itself, beside its junit.xml."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

HOST_JSON = "host.json"
JUNIT_XML = "junit.xml"


class Fingerprint(BaseModel):
    """Enough of a machine to tell two hosts apart; equal fingerprints mean one host."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    python_version: str
    python_implementation: str
    platform: str
    hostname_sha256: str
    runner: dict[str, str] = Field(
        default_factory=dict, description="RUNNER_NAME, ImageOS, ... where known"
    )
    locale: str
    tz: str
    uid: int | None
    isolated: bool


class HostInfo(BaseModel):
    """The contents of host.json."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    format: Literal[1] = 1
    host: Literal["a", "b"]
    gate_version: str
    property_id: str
    module: str
    manifest_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    returncode: int
    fingerprint: Fingerprint
    pins_applied: dict[str, str | int] = Field(
        description="The pinned values as the test process saw them."
    )
    pins_mismatch: list[str] = Field(
        default_factory=list,
        description="Pins the test process did not see as pinned; any entry makes the run invalid",
    )
    started_at: str = Field(description="ISO 8601, UTC, from the gate's own (unshifted) clock")
    finished_at: str
    isolated: bool
    isolation: list[str] = Field(
        default_factory=list, description="What made this host differ (isolated runs)."
    )
    notes: list[str] = Field(default_factory=list, description="What could not be done, in words.")
    root: str = Field(
        description="Absolute checkout root the tests ran in (normalized out of ids)."
    )
    temp_root: str | None = None
    pytest_args: list[str] = Field(default_factory=list)
    python: str = Field(description="The interpreter that ran pytest.")
    imported_from: dict[str, str] = Field(
        default_factory=dict,
        description="The project's top-level modules and the folder each was imported from "
        "(inside the tree the tests ran in)",
    )
    imported_outside: list[str] = Field(
        default_factory=list,
        description="Files of the code under test imported from the original checkout instead "
        "of host B's own copy; any entry makes the run invalid",
    )
    distributions_sha256: str | None = Field(
        None,
        description="sha256 of the sorted name==version list of the distributions installed "
        "for the interpreter that ran the tests (an input of the verdict)",
    )
    rng_seed: int | None = Field(
        None,
        description="The base seed the test process seeded random, numpy and hypothesis from "
        "before each test (the pin, or the host's own value when rng_seed is unpinned)",
    )
    commit: str | None = Field(
        None,
        pattern=r"^[0-9a-f]{40,64}$",
        description="The checkout's HEAD commit (None outside git); both hosts must agree.",
    )
