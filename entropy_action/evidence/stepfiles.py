"""What a host job leaves beside its report for the judge: strength.json and attribution.json.

Steps that need the PR's code to run (the base's module on the head's code, mutation, the
attribution re-runs) run where PR code already runs — host A's and host B's jobs, or the
local gate's host phases — and write their results here. The judge reads them as it reads
host.json: untrusted data, size-capped, schema-checked, and bound to the host run they
belong to (the manifest's bytes, the commit and the property); one that does not match is
unusable, never a pass.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from entropy_action.core.errors import GateError
from entropy_action.core.findings import Finding
from entropy_action.core.hostinfo import HostInfo
from entropy_action.core.layout import ATTRIBUTION_JSON, PROBES_JSON, STRENGTH_JSON
from entropy_action.core.score import MutationScore

MAX_EVIDENCE = 4 << 20  # bytes of one evidence file
STRENGTH_KINDS = frozenset({"test_changed_to_pass", "weakened_property"})
_SHA = r"^[0-9a-f]{40,64}$"


class Bound(BaseModel):
    """The host run an evidence file belongs to (its host.json says the same)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    format: Literal[1] = 1
    property_id: str = Field(max_length=200)
    manifest_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    commit: str | None = Field(None, pattern=_SHA)


class StrengthReport(Bound):
    """The strength step of host A's job (strength.py): its findings, notes and score."""

    base_commit: str = Field(pattern=_SHA, description="The base commit it measured against")
    measured: bool = Field(description="False: the property module is as at the base")
    findings: list[Finding] = Field(default_factory=list, max_length=1000)
    notes: list[str] = Field(default_factory=list, max_length=100)
    mutation: MutationScore | None = None
    unmeasured: list[str] = Field(
        default_factory=list,
        max_length=100,
        description="What the strength check could not measure, and why (never clean: under "
        "the manifest's strength constraints the verdict is invalid)",
    )
    moved: list[str] = Field(
        default_factory=list,
        max_length=10_000,
        description="The base's tests the head has no test of that name for whose cases the "
        "head still runs: each passes on the head's code, and the head's module kills every "
        "mutant it killed (moved or merged, not removed)",
    )

    @field_validator("findings")
    @classmethod
    def _kinds(cls, value: list[Finding]) -> list[Finding]:
        for finding in value:
            if finding.kind not in STRENGTH_KINDS:
                raise ValueError(f"{finding.kind!r} is not a strength finding")
        return value


class Trial(BaseModel):
    """One re-run of host B with some perturbations left out, and what the tests did."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    revert: list[str] = Field(default_factory=list, max_length=20)
    keep_env: list[str] = Field(default_factory=list, max_length=10_000)
    order: list[str] = Field(
        default_factory=list, max_length=10_000, description="Exactly these tests, in order"
    )
    repeat: int = Field(0, ge=0, le=1, description="1: the same trial again, confirming it")
    outcomes: dict[str, str] = Field(default_factory=dict, max_length=10_000)
    base: dict[str, str] | None = Field(
        None,
        max_length=10_000,
        description="An order probe that failed a test the base has: what the base's tests did "
        "in the same order on host B (None: not run)",
    )


class AttributionReport(Bound):
    """The attribution re-runs of host B's job (attribution.py) over the tests it failed."""

    tests: list[str] = Field(max_length=10_000, description="The tests the trials re-ran")
    dimensions: list[str] = Field(max_length=20)
    scrubbed: list[str] = Field(
        default_factory=list, max_length=10_000, description="Variable names, never values"
    )
    trials: list[Trial] = Field(default_factory=list, max_length=200)
    order_a: list[str] = Field(
        default_factory=list,
        max_length=10_000,
        description="Host A's order (host B's collection order) the order trials searched",
    )
    order_b: list[str] = Field(
        default_factory=list,
        max_length=10_000,
        description="Host B's run order (empty: host B did not shuffle its tests)",
    )


_B = TypeVar("_B", bound=Bound)


def write(folder: Path, name: str, report: BaseModel) -> None:
    """Write an evidence file into a host's report folder."""
    path = folder / name
    try:
        path.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise GateError(f"{path}: cannot write: {exc.strerror}") from None


def read_strength(folder: Path, info: HostInfo) -> StrengthReport | None:
    """strength.json of host A's folder, bound to its run; None when there is none."""
    return _read(folder / STRENGTH_JSON, StrengthReport, info)


class ProbeReport(Bound):
    """Host B's order probes (gate.orderdep.probe_orders): the module re-run in designed
    orders because the patch added or changed tests of the property; each probe is a Trial
    with its exact order and what the tests did."""

    changed: list[str] = Field(
        max_length=10_000, description="The node ids of the tests the patch added or changed"
    )
    probes: list[Trial] = Field(default_factory=list, max_length=3)


def read_probes(folder: Path, info: HostInfo) -> ProbeReport | None:
    """probes.json of host B's folder, bound to its run; None when there is none."""
    return _read(folder / PROBES_JSON, ProbeReport, info)


def read_attribution(folder: Path, info: HostInfo) -> AttributionReport | None:
    """attribution.json of host B's folder, bound to its run; None when there is none."""
    return _read(folder / ATTRIBUTION_JSON, AttributionReport, info)


def _read(path: Path, model: type[_B], info: HostInfo) -> _B | None:
    from entropy_action.evidence import bounded  # noqa: PLC0415 (junitparser stays out of the writers)

    if not path.exists() and not path.is_symlink():
        return None
    loaded = bounded.read_json_object(path, MAX_EVIDENCE, f"the {path.name} a host job writes")
    try:
        report = model.model_validate(loaded)
    except ValidationError as exc:
        raise GateError(f"{path}: {bounded.field_problem(exc)}") from None
    for field in ("property_id", "manifest_sha256", "commit"):
        if getattr(report, field) != getattr(info, field):
            raise GateError(
                f"{path}: {field} is not the one its host.json names: it belongs to another run"
            )
    return report
