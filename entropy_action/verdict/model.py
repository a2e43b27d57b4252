"""The verdict as a value: its classifications, the seed's table rows, per-test results and
the Verdict model every reporter renders (verdict.classify decides it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, with_config

from entropy_action.core.findings import Finding, Remediation
from entropy_action.core.score import MutationScore
from entropy_action.core.variations import Variation
from entropy_action.manifest.pindiff import PinChange

Classification = Literal[
    "merge_candidate",
    "real_defect",
    "env_coupled",
    "env_coupled_reverse",
    "pin_mutation",
    "entropy_silenced",
    "masked_defect",
    "invalid",
]
HostOutcome = Literal["pass", "fail", "missing"]
TestOutcome = Literal["passed", "failed", "error", "skipped", "missing"]
FAILING = frozenset({"failed", "error"})
EXECUTED = frozenset({"passed", "failed", "error"})

# The seed's table, one row per classification: host A, host B, pins intact, markers, action.
ROWS: dict[Classification, str] = {
    "merge_candidate": "pass | pass | pins intact | no silencing → merge candidate",
    "real_defect": "fail | fail | pins intact | no silencing → real defect; do not freeze the "
    "property",
    "env_coupled": "pass | fail | pins intact | no silencing → env-coupled behavior; do not merge",
    "env_coupled_reverse": "fail | pass | pins intact | no silencing → env-coupled the other "
    "way; do not merge",
    "pin_mutation": "pass | pass | pins changed | no silencing → pin mutation; reject even if "
    "green",
    "entropy_silenced": "pass | * | * | silencing present → entropy silenced in the test; reject",
    "masked_defect": "fail | fail | pins intact | silencing present → masked defect plus skip; "
    "reject",
    "invalid": "the inputs cannot be judged → invalid; fix the run and try again",
}


# The per-test values are slotted standard-library dataclasses, not pydantic models: a
# verdict holds one TestResult per test (100,000 of them for a large suite), and pydantic
# neither validates again a dataclass instance it is handed nor builds anything in Python
# when it writes one as JSON. `with_config` gives them the models' schema (extra fields
# forbidden); pydantic validates them like models where a verdict is read back from a file.


@with_config(ConfigDict(extra="forbid"))
@dataclass(frozen=True, slots=True, kw_only=True)
class TestSeed:
    """How a host's test process seeded one test (random, numpy, hypothesis)."""

    __test__: ClassVar[bool] = False

    rng_seed: Annotated[
        int, Field(description="The run's base seed (the pin, or the host's own value)")
    ]
    seed: Annotated[int, Field(description="test_seed(rng_seed, normalized node id)")]


@with_config(ConfigDict(extra="forbid"))
@dataclass(frozen=True, slots=True, kw_only=True)
class Assertions:
    """How many rewritten `assert` statements one test executed on one host (plugin.py)."""

    executed: Annotated[
        int, Field(description="Assertions that executed and passed (a loop counts each)")
    ]
    sites: Annotated[int, Field(description="Distinct assert statements among them")]


@with_config(ConfigDict(extra="forbid"))
@dataclass(slots=True, kw_only=True)  # not frozen: building 100,000 frozen ones costs 3x
class TestResult:
    """One test paired across the two hosts."""

    __test__: ClassVar[bool] = False  # not a pytest test class
    # A value like the others: nothing sets a field after pairing (`dataclasses.replace`
    # makes the changed copy).

    id: Annotated[
        str, Field(description="Normalized id: checkout and temp roots replaced by placeholders")
    ]
    raw_ids: Annotated[list[str], Field(description="The ids as each host wrote them")] = field(
        default_factory=list
    )
    host_a: TestOutcome
    host_b: TestOutcome
    path: str | None = None
    line: int | None = None
    message_a: str | None = None
    message_b: str | None = None
    base_a: Annotated[
        TestOutcome | None,
        Field(description="The outcome in the base ref's run on host A (None: no such run)"),
    ] = None
    base_b: Annotated[
        TestOutcome | None,
        Field(description="The outcome in the base ref's run on host B (None: no such run)"),
    ] = None
    seed_a: Annotated[TestSeed | None, Field(description="The test's seed on host A")] = None
    seed_b: Annotated[TestSeed | None, Field(description="The test's seed on host B")] = None
    assertions_a: Annotated[Assertions | None, Field(description="Assertions it ran on host A")] = (
        None
    )
    assertions_b: Annotated[Assertions | None, Field(description="Assertions it ran on host B")] = (
        None
    )
    base_assertions_a: Annotated[
        Assertions | None, Field(description="Assertions it ran in the base ref's run on host A")
    ] = None
    base_assertions_b: Annotated[
        Assertions | None, Field(description="Assertions it ran in the base ref's run on host B")
    ] = None
    failed_at_base: Annotated[
        bool,
        Field(
            description="It fails at the head on a host where the base ref's run failed it "
            "too: the patch did not cause it, and it does not fix it (explanation only; it "
            "still fails the host)"
        ),
    ] = False

    def outcome(self, host: Literal["a", "b"]) -> TestOutcome:
        return self.host_a if host == "a" else self.host_b

    def failed_before(self, host: Literal["a", "b"]) -> bool:
        """Whether this test failed on `host` and already failed there at the base ref."""
        base = self.base_a if host == "a" else self.base_b
        return self.outcome(host) in FAILING and base in FAILING


# Validation of a TestResult from plain data (a verdict file's entry, a test's sample).
TEST_RESULT: TypeAdapter[TestResult] = TypeAdapter(TestResult)


def not_run_on(tests: Sequence[TestResult], host: Literal["a", "b"]) -> list[TestResult]:
    """The tests that executed on the other host and are absent or not executed on `host`."""
    # the fields themselves, not outcome(): this runs over every test, several times a verdict
    if host == "a":
        return [t for t in tests if t.host_b in EXECUTED and t.host_a not in EXECUTED]
    return [t for t in tests if t.host_a in EXECUTED and t.host_b not in EXECUTED]


class Verdict(BaseModel):
    """The gate's answer, as written to the verdict JSON."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        title="entropy-gate verdict",
        json_schema_extra={"$schema": "https://json-schema.org/draft/2020-12/schema"},
    )

    classification: Classification
    merge: bool
    row: str = Field(description="The row of the seed's table that decided")
    host_a: HostOutcome
    host_b: HostOutcome
    pins_intact: bool
    pin_changes: dict[str, list[str]] = Field(
        description="Dotted manifest keys by kind: missing, changed, added, weakened, invalid"
    )
    pin_diff: list[PinChange] = Field(
        default_factory=list,
        description="Each pin change with the line of entropy.yaml a reviewer reads",
    )
    strict_baseline: bool = Field(
        False, description="Pre-existing findings counted against the patch too"
    )
    findings: list[Finding] = Field(
        description="Silencing findings; introduced=false ones stood at the base (notices)"
    )
    reasons: list[str] = Field(description="Every rule that fired, in words")
    next_steps: list[Remediation] = Field(
        default_factory=list,
        description="What to do, deciding first: the counted findings' remediation, then what "
        "the classification asks (a pin to restore, the read an env_coupled failure follows, "
        "a test failing on both hosts, the cause of an invalid verdict); empty for a merge "
        "candidate",
    )
    tests: list[TestResult]
    errors: list[str] = Field(
        default_factory=list, description="Collection errors and other host errors, verbatim"
    )
    inputs: dict[str, str] = Field(
        default_factory=dict,
        description="What the verdict is a function of: gate_version, head_tree (sha256 of the "
        "work tree's files), base_tree (git tree id), manifest_sha256, and per host the "
        "interpreter and distributions (sha256 of name==version) and reports_a/reports_b "
        "(sha256 of every file in the host's report folder, or missing; publish checks them "
        "against the folders beside the verdict)",
    )
    inputs_sha256: str | None = Field(
        None, description="sha256 of `inputs`: the same inputs give the same verdict"
    )
    coupled_to: list[str] = Field(
        default_factory=list,
        description="What an env_coupled outcome follows, found by re-running the disagreeing "
        "tests on host B with one perturbation left out: clock, env:NAME, env, network, path, "
        "python",
    )
    coupled_reads: list[CoupledRead] = Field(
        default_factory=list,
        description="The read each source of an env_coupled outcome follows (verdict.coupled): "
        "made during a test the hosts judged differently, on either host, test code included, "
        "with what it saw on each host; reads that stood at the base rank last",
    )
    order_dependence: list[OrderPair] = Field(
        default_factory=list,
        description="Order-dependent tests host B's shuffle exposed, each with the test it "
        "depends on (gate.orderdep: bisection over the tests that ran before it)",
    )
    mutation: MutationScore | None = Field(
        None, description="Mutation strength at the base and at the head (None: not measured)"
    )
    host_b_variations: list[Variation] = Field(
        default_factory=list,
        description="Host B's dimensions as its host.json lists them: each varied or not, how, "
        "and why not (pinned, turned off by the manifest, not possible on that machine)",
    )
    crash: CrashCause | None = Field(
        None,
        description="A host's pytest died of a signal (SIGSEGV, ...): the patch or the "
        "environment, from the frame faulthandler left and the base ref's run (None: no host "
        "died of one)",
    )
    properties: list[PropertyVerdict] | None = Field(
        None,
        description="A manifest that lists its properties: each one's own verdict (the fields "
        "above roll them up: the classification is the worst by the table's precedence)",
    )


class CrashCause(BaseModel):
    """A host's pytest died of a signal: whether it is the patch or the environment, in the
    one line the page leads with (verdict.crash)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    blame: Literal["patch", "environment", "unknown"]
    line: str = Field(description="The page's first line: the signal, the frame, and why")
    title: str = Field(description="The check run's title")


class CoupledRead(BaseModel):
    """A live read made during a test the hosts judged differently: what an env_coupled
    failure follows (the live-entropy audit of both hosts, verdict.coupled)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str = Field(description="What it reads, as coupled_to names it: clock, env:NAME, ...")
    path: str = Field(description="Repository-relative")
    line: int
    call: str = Field(description="The read as code: date.today(), os.environ['HOME']")
    test: str = Field(description="The test during which it was read")
    test_code: bool = Field(description="Read by the test itself (or its conftest), not the code")
    at_base: bool = Field(description="The base's run recorded the same read: it stood there")
    seen_a: str | None = Field(None, description="What it saw on host A (audit `seen`)")
    seen_b: str | None = Field(None, description="What it saw on host B")

    def location(self) -> str:
        return f"{self.path}:{self.line}"


class OrderPair(BaseModel):
    """An order-dependent test and the one it depends on, found by host B's attribution."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    victim: str = Field(description="The test that fails in host B's order")
    other: str | None = Field(
        description="The polluter (run before it, it fails) or the state-setter (run before "
        "it, it passes); None: no single test found (two or more needed)"
    )
    kind: Literal["polluter", "state_setter"]
    replay: str | None = Field(
        None, description="A command that runs the pair in that order, under host B's hash seed"
    )


class PropertyVerdict(BaseModel):
    """One property's verdict inside a rolled-up one."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    property_id: str
    module: str | None = Field(description="Its module (None: dropped from the manifest)")
    verdict: Verdict


Verdict.model_rebuild()
