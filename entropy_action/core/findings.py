"""A finding: a place in the patch where entropy was silenced, as a value."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

FindingKind = Literal[
    "skip_marker",  # skip/skipif/xfail/forbidden marker on a property test, class or module
    "skip_call",  # pytest.skip/xfail/importorskip, SkipTest, skipTest reachable from a test
    "collection_tampering",  # hooks and conftest variables that drop or reorder collection
    "report_tampering",  # hooks that rewrite outcomes
    "config_selection",  # -k/-m/--deselect/--ignore/-p no: in the pytest configuration
    "entropy_patched",  # clock/RNG/env/hostname/resolver/tempfile patched inside the test
    "reseeded",  # random.seed(...) with anything but the pinned seed
    "env_write",  # os.environ written for a pinned variable
    "test_removed",  # a property test removed or renamed against the base
    "assertions_dropped",  # fewer assertions than at the base
    "tautology",  # an assertion replaced by one that cannot fail
    "assertion_swallowed",  # AssertionError caught and discarded
    "not_executed",  # runtime: a property test skipped, deselected or absent on a host
    "live_entropy",  # runtime: code under test read a live source (audit; a warning by default)
    "self_comparison",  # an assertion comparing a value with itself (calls, local aliases)
    "unit_patched",  # a test replaces the production function it tests with its own copy
    "conditional_exit",  # a test exits before its assertions on the env, platform or time
    "test_changed_to_pass",  # the base's test fails on the head's code, the head's passes
    "weakened_property",  # a mutant the base's module kills survives the head's module
    "assertions_skipped_at_runtime",  # runtime: a test ran none or most fewer of its asserts
    "gate_config_changed",  # the patch changed a file under constraints.protected_paths
    "live_read_removed",  # runtime: a clock/RNG/env read the base made in production is gone
    "live_read_constant",  # a production clock read replaced by a constant (the patch's diff)
    "gate_pin_read",  # production code reads an ENTROPY_* variable, the gate's own pins
    "unit_replaced",  # the tests ran a copy of production code: shadowed, sys.modules, reassigned
    "assertion_broadened",  # a broad raises (Exception) new where a value assertion was
    "hook_added",  # a plugin the run loads that the scan cannot read: register(), pytest11
    "test_detection",  # production branches on running under a test: PYTEST_*, sys.modules
]


class Remediation(BaseModel):
    """What to do about a finding (or a verdict), as data an author or an agent acts on."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    what: str = Field(description="What to change, as a short imperative")
    where: str = Field(
        description="The place to change: path:line, repository-relative (empty: no place in "
        "the repository, such as a run that reported nothing)"
    )
    evidence: str = Field(
        description="What shows it: the base's test on the head's code and its message, the "
        "surviving mutant, the polluter, the read and its values, the rejected pin"
    )


class Finding(BaseModel):
    """One silencing finding, pointing at the line a reviewer must read."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: FindingKind
    path: str  # repository-relative, POSIX separators
    line: int  # 1-based
    message: str  # what was silenced and why it matters
    introduced: bool = True  # False: it stood the same at the base ref (a notice, not a reject)
    test: str | None = None  # the property test it concerns, when there is one
    level: Literal["error", "warning"] = "error"  # warning: explains a verdict, never rejects
    folded: int = Field(
        0,
        ge=0,
        description="Findings of the same fact folded into this one (mutants its test "
        "killed at the base that survive the head's module)",
    )
    remediation: Remediation | None = Field(
        None, description="What to do about it (set by the judge: verdict.remediation)"
    )

    def location(self) -> str:
        return f"{self.path}:{self.line}"

    def render(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def fakes_clock(finding: Finding) -> bool:
    """An `entropy_patched` finding whose test fakes the clock (scan.patching's wording: "— the
    clock is faked …", "— the clock is frozen …"): the live-entropy audit cannot see the
    clock reads that test makes (a freezer's fakes stand in for the functions)."""
    return finding.kind == "entropy_patched" and " — the clock is " in finding.message
