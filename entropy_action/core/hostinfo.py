"""host.json: what one host run reports about itself, beside its junit.xml."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from entropy_action.core.variations import Variation

MAX_ORDER_LISTED = 2_000  # node ids per list in host.json's test_order (host.json is capped)


class TestOrder(BaseModel):
    """Host B: the order its tests were collected in (host A's) and the order they ran in."""

    __test__ = False  # not a pytest test class
    model_config = ConfigDict(frozen=True, extra="forbid")

    collected: list[Annotated[str, Field(max_length=2000)]] = Field(max_length=MAX_ORDER_LISTED)
    ran: list[Annotated[str, Field(max_length=2000)]] = Field(max_length=MAX_ORDER_LISTED)


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


MAX_AUDIT_RECORDS = 1000  # audit.MAX_RECORDS: the test process keeps no more
_PRINTABLE = r"^[^\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]*$"


def repository_relative(value: str) -> str:
    parts = value.split("/")
    if not value or value.startswith("/") or ".." in parts or "\\" in value:
        raise ValueError(f"not a repository-relative path: {value[:80]!r}")
    return value


class AuditRecord(BaseModel):
    """One live read made from code under test (or from test code, in `test_records`), as the
    audit in the test process counted it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    api: str = Field(
        max_length=60, pattern=r"^[a-z_][a-z0-9_.]*(\(\))?$", description="e.g. datetime.now()"
    )
    name: str | None = Field(
        None,
        max_length=200,
        pattern=_PRINTABLE,
        description="The variable (os.environ) or host (socket) read; never a variable's value",
    )
    path: str = Field(max_length=1000, pattern=_PRINTABLE, description="Repository-relative")
    line: int = Field(ge=1, le=10_000_000)
    test: str = Field(max_length=2000, pattern=_PRINTABLE, description="The test that ran it")
    count: int = Field(ge=1)
    seen: str | None = Field(
        None,
        max_length=200,
        pattern=_PRINTABLE,
        description="What the first read saw: the clock's time (UTC), a variable's value for "
        "the few that hold no secret (audit.SEEN_VALUES: HOME, USER, TZ, LANG, ...), else "
        "'set (value not recorded)' or 'unset'; None for other sources or an older gate",
    )

    @field_validator("path")
    @classmethod
    def _relative(cls, value: str) -> str:
        return repository_relative(value)

    def call(self) -> str:
        """The read as code: `datetime.now()`, `os.environ['NAME']`, `socket.connect('host')`."""
        if self.api == "os.environ":
            return f"os.environ[{self.name!r}]"
        if self.name is not None:
            return f"{self.api[:-1]}{self.name!r})"
        return self.api


class Audit(BaseModel):
    """The live-entropy audit of one host run (`audit` in host.json)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mechanism: str = Field(max_length=80, pattern=_PRINTABLE)
    unseen: list[Annotated[str, Field(max_length=300, pattern=_PRINTABLE)]] = Field(
        default_factory=list,
        max_length=20,
        description="What this interpreter's mechanism cannot see (empty: an older gate)",
    )
    records: list[AuditRecord] = Field(default_factory=list, max_length=MAX_AUDIT_RECORDS)
    test_records: list[AuditRecord] = Field(
        default_factory=list,
        max_length=MAX_AUDIT_RECORDS,
        description="Live reads made from test code (the property module, conftest.py, "
        "tests/): no missing seam of the code, but what a host-B failure may follow",
    )
    dropped: int = Field(0, ge=0, description="Records past the cap, counted only")


MAX_PROVENANCE = 200  # provenance.MAX_ENTRIES: the test process keeps no more of each
_SHA256 = r"^[0-9a-f]{64}$"


def _repository_relative(value: str | None) -> str | None:
    return None if value is None else repository_relative(value)


class ProvenanceUnit(BaseModel):
    """A repository module the property module imports, and the file it was loaded from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    module: str = Field(max_length=300, pattern=_PRINTABLE)
    path: str = Field(max_length=1000, pattern=_PRINTABLE, description="Repository-relative")
    sha256: str | None = Field(None, pattern=_SHA256, description="Of the file's bytes")
    tests_area: bool = Field(description="Loaded from test code (tests/, conftest, test_*)")
    candidates: list[Annotated[str, Field(max_length=1000, pattern=_PRINTABLE)]] = Field(
        default_factory=list,
        max_length=5,
        description="Other production files of the tree its name could be loaded from",
    )

    @field_validator("path")
    @classmethod
    def _relative(cls, value: str) -> str:
        return _repository_relative(value) or value

    @field_validator("candidates")
    @classmethod
    def _all_relative(cls, value: list[str]) -> list[str]:
        return [_repository_relative(item) or item for item in value]


class Replacement(BaseModel):
    """One way the unit under test was replaced outside the property module."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    how: Literal["shadowed", "substituted", "reassigned"]
    module: str = Field(max_length=300, pattern=_PRINTABLE)
    name: str | None = Field(None, max_length=300, pattern=_PRINTABLE)
    path: str | None = Field(
        None, max_length=1000, pattern=_PRINTABLE, description="The replacement's file"
    )
    line: int | None = Field(None, ge=1, le=10_000_000)
    production: str = Field(
        max_length=1000, pattern=_PRINTABLE, description="The production file it stands for"
    )
    same_source: bool = Field(False, description="The replacement's file is a verbatim copy")
    sha256: str | None = Field(None, pattern=_SHA256, description="Of the replacement's file")
    test: str | None = Field(None, max_length=2000, pattern=_PRINTABLE)
    detail: str = Field(max_length=1000, pattern=_PRINTABLE)

    @field_validator("path", "production")
    @classmethod
    def _relative(cls, value: str | None) -> str | None:
        return _repository_relative(value)

    def key(self) -> tuple[str, str, str | None, str | None]:
        return (self.how, self.module, self.name, self.path)


class Provenance(BaseModel):
    """Where the code under test came from (`provenance` in host.json)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    units: list[ProvenanceUnit] = Field(default_factory=list, max_length=MAX_PROVENANCE)
    replaced: list[Replacement] = Field(default_factory=list, max_length=MAX_PROVENANCE)
    dropped: int = Field(0, ge=0, description="Entries past the cap, counted only")


MAX_TEST_DATA = 200  # testproc.datafiles.MAX_FILES: the test process keeps no more


class DataFile(BaseModel):
    """A file of the tree the tests opened for reading (testproc/datafiles.py)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    path: str = Field(max_length=1000, pattern=_PRINTABLE, description="Repository-relative")
    opener: str | None = Field(
        None,
        max_length=1000,
        pattern=_PRINTABLE,
        description="The file of the code in the tree that opened it (repository-relative)",
    )
    test: str | None = Field(
        None, max_length=1000, pattern=_PRINTABLE, description="The test running (None: none)"
    )

    @field_validator("path", "opener")
    @classmethod
    def _relative(cls, value: str | None) -> str | None:
        return _repository_relative(value)


class TestData(BaseModel):
    """The data files the tests opened (`test_data` in host.json; scan.closure keeps the
    property's own)."""

    __test__ = False  # not a pytest test class
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    files: list[DataFile] = Field(default_factory=list, max_length=MAX_TEST_DATA)
    dropped: int = Field(0, ge=0, description="Files past the cap, counted only")


Place = Literal["repository", "pytest", "gate", "site-packages", "other", "unknown"]


class _Placed(BaseModel):
    """A file the inventory names: repository-relative when it lies in the repository."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    place: Place
    path: str = Field(max_length=1000, pattern=_PRINTABLE)

    @model_validator(mode="after")
    def _relative_in_repository(self) -> _Placed:
        if self.place == "repository":
            repository_relative(self.path)
        return self


class PluginEntry(_Placed):
    """One registered plugin (`hooks.plugins` in host.json)."""

    name: str = Field(max_length=300, pattern=_PRINTABLE)
    entry_point: str | None = Field(
        None, max_length=200, pattern=_PRINTABLE, description="Its distribution (pytest11)"
    )


class HookEntry(_Placed):
    """One hook implementation, by the spec it implements (`specname=` counts)."""

    plugin: str = Field(max_length=300, pattern=_PRINTABLE)
    spec: str = Field(max_length=100, pattern=r"^pytest_[a-z0-9_]*$")
    function: str = Field(max_length=200, pattern=_PRINTABLE)
    line: int = Field(ge=1, le=10_000_000, description="The function's first line (decorators)")
    wrapper: bool = False
    hookwrapper: bool = False


class ReplacedInternal(_Placed):
    """One of pytest's internals whose code no longer lies in pytest's package."""

    target: str = Field(max_length=200, pattern=r"^_pytest\.[A-Za-z0-9_.]+$")
    line: int = Field(ge=1, le=10_000_000)


MAX_CRASH_FRAMES = 30  # frames of the crashing thread kept in host.json (most recent first)


class CrashFrame(_Placed):
    """One Python frame of the thread a fatal signal stopped, as faulthandler wrote it."""

    line: int | None = Field(description="None where faulthandler printed `???`")
    function: str = Field(max_length=200, pattern=_PRINTABLE)

    def where(self) -> str:
        """`tests/test_x.py:7 in test_f`; a gate or installed file by its last two parts."""
        path = self.path if self.place == "repository" else "/".join(self.path.split("/")[-2:])
        return f"{path}:{self.line or '?'} in {self.function}"


class Crash(BaseModel):
    """How the test process died of a signal (`crash` in host.json): the signal, and where
    faulthandler saw the crashing thread when it was one faulthandler catches (SIGSEGV,
    SIGFPE, SIGABRT, SIGBUS, SIGILL); none for SIGKILL and the like."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    signal: str = Field(max_length=24, pattern=r"^(SIG[A-Z0-9]+|signal [0-9]+)$")
    fatal: str | None = Field(
        None, max_length=200, pattern=_PRINTABLE, description="faulthandler's `Fatal Python error`"
    )
    frames: list[CrashFrame] = Field(default_factory=list, max_length=MAX_CRASH_FRAMES)

    def frame(self) -> CrashFrame | None:
        """The frame that names the crash best: the most recent one in the repository or the
        gate's own code, else the most recent one."""
        for frame in self.frames:
            if frame.place in ("repository", "gate"):
                return frame
        return self.frames[0] if self.frames else None

    def words(self) -> str:
        """`SIGSEGV (Segmentation fault) in tests/test_x.py:7 in test_f`."""
        frame = self.frame()
        fatal = f" ({self.fatal})" if self.fatal else ""
        return f"{self.signal}{fatal}" + (f" at {frame.where()}" if frame else "")


HOOKS_UNUSABLE = "hook inventory: "  # a host note: the test process spoiled or lost it
MAX_PLUGINS = 300  # hookinventory.MAX_PLUGINS: the test process lists no more
MAX_HOOKS = 1000  # hookinventory.MAX_HOOKS


class HookInventory(BaseModel):
    """The plugins and hooks the test process had registered (`hooks` in host.json)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    plugins: list[PluginEntry] = Field(default_factory=list, max_length=MAX_PLUGINS)
    hooks: list[HookEntry] = Field(
        default_factory=list, max_length=MAX_HOOKS, description="Not pytest's or the gate's own"
    )
    replaced: list[ReplacedInternal] = Field(default_factory=list, max_length=50)
    truncated: bool = False


class ChannelInfo(BaseModel):
    """What the gate heard from its plugin over the channel (`channel` in host.json)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    tests: int = Field(ge=0, description="Tests the gate heard run (the ids in outcomes.json)")
    complete: bool = Field(description="A begin and an end line arrived, nothing was cut")
    lines: int = Field(0, ge=0)
    malformed: int = Field(0, ge=0, description="Lines that were not the plugin's: not trusted")
    truncated: bool = False


MAX_TREE_LISTED = 50  # paths per list in host.json's tree


class TreeState(BaseModel):
    """The checkout's state at the end of the run, against the commit host.json names: what a
    step of the host job (the project's install, a test, a setup.py) changed in it."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    changed: list[Annotated[str, Field(max_length=1000, pattern=_PRINTABLE)]] = Field(
        default_factory=list,
        max_length=MAX_TREE_LISTED,
        description="Tracked files whose bytes differ from the commit (changed or deleted), "
        "the first MAX_TREE_LISTED by path",
    )
    changed_count: int = Field(0, ge=0)
    changed_sha256: str = Field(
        pattern=_SHA256,
        description="sha256 over every changed tracked file's path and bytes (or its absence)",
    )
    untracked: list[Annotated[str, Field(max_length=1000, pattern=_PRINTABLE)]] = Field(
        default_factory=list,
        max_length=MAX_TREE_LISTED,
        description="Untracked, not ignored files that can change what runs (Python files, "
        ".pth files, pytest and build configuration), the first MAX_TREE_LISTED by path",
    )
    untracked_count: int = Field(0, ge=0)

    @field_validator("changed", "untracked")
    @classmethod
    def _all_relative(cls, value: list[str]) -> list[str]:
        return [repository_relative(item) for item in value]

    @property
    def dirty(self) -> bool:
        return self.changed_count > 0


class ReplayPlan(BaseModel):
    """Host B's own values for what the manifest left unpinned, as its run was started with
    them: what `entropy-gate replay` needs to run a test as host B did on another machine
    (the time zone, locale, umask and CPU count it picked depend on the machine and the
    caller's environment). Data from a host job: each value is checked before any is used."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    clock_shift_seconds: int | None = Field(None, ge=0, le=100 * 365 * 86400)
    tz: str | None = Field(None, pattern=r"^[A-Za-z0-9_+\-/]{1,64}$")
    lang: str | None = Field(None, pattern=r"^[A-Za-z0-9_.@\-]{1,40}$")
    umask: int | None = Field(None, ge=0, le=0o777)
    hash_seed: int | None = Field(None, ge=0, le=4_294_967_295)
    rng_seed: int | None = Field(None, ge=0, le=2**63)
    test_order_seed: int | None = Field(None, ge=0, le=2**63)
    file_order_seed: int | None = Field(None, ge=0, le=2**63)
    cpu_count: int | None = Field(None, ge=1, le=65_536)


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
    imported_before_plugin: list[str] = Field(
        default_factory=list,
        description="The top-level modules of imported_outside, when pytest itself imported "
        "every one of them before the gate's plugin loaded (else empty)",
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
    test_order_seed: int | None = Field(
        None,
        description="Host B: the seed of the shuffle its tests ran in (derived from rng_seed); "
        "None: collection order (host A, or test_order not varied)",
    )
    test_order: TestOrder | None = Field(
        None,
        description="Host B, when it shuffled: collection and run order, for attribution's "
        "order trials (None: not shuffled, or more tests than listed)",
    )
    variations: list[Variation] = Field(
        default_factory=list,
        max_length=100,
        description="Host B: every dimension of core.variations, varied or not and why",
    )
    commit: str | None = Field(
        None,
        pattern=r"^[0-9a-f]{40,64}$",
        description="The checkout's HEAD commit (None outside git); both hosts must agree.",
    )
    audit: Audit | None = Field(
        None, description="Live reads from code under test (None: the audit did not run)"
    )
    provenance: Provenance | None = Field(
        None,
        description="Where the units the property module imports came from, and how they were "
        "replaced outside it (None: an older gate, not recorded)",
    )
    hooks: HookInventory | None = Field(
        None, description="The hook and plugin inventory (None: not taken, an older gate)"
    )
    test_data: TestData | None = Field(
        None,
        description="Host A: the data files of the tree its tests opened (None: not recorded: "
        "host B, an older gate)",
    )
    channel: ChannelInfo | None = Field(
        None,
        description="The gate's own record of the run, heard from its plugin as each test "
        "finished, is in outcomes.json beside this file (None: an older gate, no record)",
    )
    crash: Crash | None = Field(
        None,
        description="pytest died of a signal: which, and the frames faulthandler left "
        "(faulthandler.log beside this file); None: it did not",
    )
    tree: TreeState | None = Field(
        None,
        description="The checkout at the end of the run against `commit` (None: outside git, "
        "or an older gate)",
    )
    replay: ReplayPlan | None = Field(
        None,
        description="Host B: its values for the unpinned sources, for `entropy-gate replay` "
        "(None: host A, or an older gate)",
    )


def outside_reason(info: HostInfo) -> str:
    """Why a run that imported the code under test from outside its own tree is invalid."""
    files = info.imported_outside
    if info.imported_before_plugin:
        names = ", ".join(info.imported_before_plugin)
        verb = "were" if len(info.imported_before_plugin) > 1 else "was"
        return (
            f"{names} {verb} imported by pytest itself before the gate's plugin loaded, from the "
            f"original checkout ({files[0]}): host {info.host.upper()} cannot test its own copy "
            "of a package pytest depends on; install it non-editable in the interpreter host "
            f"{info.host.upper()} uses (pip install .), or run host {info.host.upper()} on "
            "another machine (the Action's matrix)"
        )
    more = len(files) - 3
    return (
        "the code under test was imported from outside its own tree: "
        + ", ".join(files[:3])
        + (f" and {more} more" if more > 0 else "")
    )
