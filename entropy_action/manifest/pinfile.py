"""entropy.yaml: the model of the pin file, and loading it with errors that point at a line."""

from __future__ import annotations

import difflib
import hashlib
import re
import typing
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from entropy_action.core import variations
from entropy_action.core.errors import GateError
from entropy_action.manifest import safe_yaml
from entropy_action.manifest.run_options import RunOptions

MANIFEST_NAME = "entropy.yaml"

# Variables the runner sets itself from the named pins; `env` may not override them.
RESERVED_ENV = frozenset(
    {"TZ", "LANG", "LC_ALL", "PYTHONHASHSEED", "TMPDIR", "TEMP", "TMP", "PYTHONPATH"}
)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_LANG = re.compile(r"^(C|POSIX|[a-z]{2,3}(_[A-Z]{2})?)(\.[A-Za-z0-9-]+)?(@[A-Za-z0-9]+)?$")
_UMASK = re.compile(r"^[0-7]{3,4}$")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_MARKER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PROPERTY_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

_STRICT = ConfigDict(strict=True, extra="forbid", frozen=True)


def _repo_relative(value: str, what: str) -> str:
    if not value:
        raise ValueError(f"{what} must not be empty")
    if "\\" in value or PureWindowsPath(value).drive or PurePosixPath(value).is_absolute():
        raise ValueError(f"{what} must be a path relative to the repository root, got {value!r}")
    parts = PurePosixPath(value).parts
    if ".." in parts:
        raise ValueError(f"{what} must stay inside the repository, got {value!r}")
    return str(PurePosixPath(*[p for p in parts if p != "."]))


class PinFields(BaseModel):
    """The pinned entropy sources, each optional: one property's own pins in `properties:`,
    laid over the shared top-level `pins` (`Pins`, which must pin something)."""

    model_config = _STRICT

    clock_unix: int | SkipJsonSchema[None] = Field(
        None, ge=0, description="The pinned clock as a Unix timestamp (ENTROPY_CLOCK_UNIX)."
    )
    rng_seed: int | SkipJsonSchema[None] = Field(
        None, description="Integer RNG seed (ENTROPY_RNG_SEED)."
    )
    hash_seed: int | SkipJsonSchema[None] = Field(
        None,
        ge=0,
        le=4294967295,
        description="PYTHONHASHSEED on both hosts. Unpinned, host A uses 0 and host B another "
        "value, so a test that depends on the iteration order of a set of strings diverges.",
    )
    tz: str | SkipJsonSchema[None] = Field(None, description="An IANA time zone, e.g. UTC.")
    lang: str | SkipJsonSchema[None] = Field(
        None, description="Locale name for LANG and LC_ALL, e.g. C.UTF-8."
    )
    umask: str | SkipJsonSchema[None] = Field(
        None,
        pattern=r"^[0-7]{3,4}$",
        description='Octal umask as a quoted string, e.g. "0022".',
    )
    temp_root: str | SkipJsonSchema[None] = Field(
        None, description="Absolute path used as TMPDIR, created fresh for each run."
    )
    cassette_sha256: str | SkipJsonSchema[None] = Field(
        None,
        pattern=r"^[0-9a-fA-F]+$",
        description="sha256 (64 hex digits) of the replay cassette (ENTROPY_CASSETTE_SHA256).",
    )
    cassette: str | SkipJsonSchema[None] = Field(
        None, description="Repository-relative path of the replay cassette whose hash is pinned."
    )
    env: dict[str, str] | SkipJsonSchema[None] = Field(
        None, description="Extra environment variables to pin (string to string)."
    )

    @model_validator(mode="before")
    @classmethod
    def _no_empty_values(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key, value in data.items():
                if value is None:
                    raise ValueError(
                        f"pin {key!r} has no value; remove the key to leave it unpinned"
                    )
        return data

    @field_validator("tz")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            zoneinfo.ZoneInfo(value)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"unknown time zone {value!r} (use an IANA name such as UTC)"
            ) from None
        return value

    @field_validator("lang")
    @classmethod
    def _locale_name(cls, value: str) -> str:
        if not _LANG.match(value):
            raise ValueError(f"{value!r} is not a locale name such as C.UTF-8 or en_US.UTF-8")
        return value

    @field_validator("umask")
    @classmethod
    def _octal(cls, value: str) -> str:
        if not _UMASK.match(value):
            raise ValueError(f'{value!r} is not 3 or 4 octal digits such as "0022"')
        return value

    @field_validator("temp_root")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if not (PurePosixPath(value).is_absolute() or PureWindowsPath(value).drive):
            raise ValueError(f"temp_root must be an absolute path, got {value!r}")
        if ".." in PurePosixPath(value).parts or len(PurePosixPath(value).parts) < 2:
            raise ValueError(f"temp_root must be a dedicated directory, got {value!r}")
        return value

    @field_validator("cassette_sha256")
    @classmethod
    def _hex(cls, value: str) -> str:
        # A digest of another length is accepted only as an opaque pin (the seed's own
        # example has 62 digits); `_cassette_digest` refuses it once a cassette is named.
        if not _HEX.match(value):
            raise ValueError(f"{value!r} is not hexadecimal (a sha256 is 64 hex digits)")
        return value.lower()

    @field_validator("cassette")
    @classmethod
    def _cassette_path(cls, value: str) -> str:
        return _repo_relative(value, "cassette")

    @field_validator("env")
    @classmethod
    def _env_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            if not _ENV_NAME.match(name):
                raise ValueError(f"{name!r} is not a valid environment variable name")
            if name in RESERVED_ENV or name.startswith("ENTROPY_"):
                raise ValueError(
                    f"{name!r} is set by the gate from the named pins; it cannot be an env pin"
                )
        return value

    def flat(self) -> dict[str, str | int]:
        """The pins that are set, with `env` flattened to `env.NAME` keys."""
        out: dict[str, str | int] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if value is None:
                continue
            if name == "env":
                out.update({f"env.{k}": v for k, v in value.items()})
            else:
                out[name] = value
        return out

    def set_values(self) -> dict[str, Any]:
        """The fields that are set, as plain data (for laying one set of pins over another)."""
        return {
            name: getattr(self, name)
            for name in type(self).model_fields
            if getattr(self, name) is not None
        }


class Pins(PinFields):
    """The pinned entropy sources. Each is optional; an empty pin is noise."""

    @model_validator(mode="after")
    def _not_empty(self) -> Pins:
        if not self.flat():
            raise ValueError(
                "no pins: pin at least one entropy source (see entropy-gate's docs/manifest.md)"
            )
        return self

    @model_validator(mode="after")
    def _cassette_digest(self) -> Pins:
        digest = self.cassette_sha256
        if self.cassette is not None and (digest is None or len(digest) != 64):
            raise ValueError(
                "cassette is named, so cassette_sha256 must be its sha256 (64 hex digits)"
            )
        return self


DEFAULT_FORBIDDEN_MARKERS = ("network", "flaky", "skipif_tz")
# What decides the gate's run: the workflows that call it and who must review them.
DEFAULT_PROTECTED_PATHS = (
    ".github/workflows/",
    ".github/CODEOWNERS",
    "CODEOWNERS",
    "docs/CODEOWNERS",
)


MAX_OFF_REASON = 500


def _switchable(name: str) -> str:
    """A key of host_b_off: a dimension the manifest may turn off (core.variations)."""
    if name in variations.SWITCHABLE:
        return name
    dimension = variations.BY_NAME.get(name)
    if dimension is not None and dimension.pin:
        raise ValueError(
            f"{name!r} cannot be turned off; pin it instead: pins.{dimension.pin} "
            "(host B then uses host A's value)"
        )
    raise ValueError(
        f"{name!r} is no dimension host B may leave out; one of: "
        + ", ".join(variations.SWITCHABLE)
    )


def _off_reason(text: str) -> str:
    """The reason of a host_b_off entry: why the suite cannot run under the variation."""
    if not text.strip():
        raise ValueError("give the reason the suite cannot run under it (a non-empty string)")
    if len(text) > MAX_OFF_REASON:
        raise ValueError(f"the reason is {len(text)} characters; at most {MAX_OFF_REASON}")
    return text


# constraints.host_b_off / properties[i].host_b_off: dimension -> why the suite cannot run
# under it. Turning one off at the head is a weakened constraint (manifest/pindiff.py).
HostBOff = dict[
    Annotated[
        str,
        AfterValidator(_switchable),
        WithJsonSchema({"type": "string", "enum": list(variations.SWITCHABLE)}),
    ],
    Annotated[
        str,
        AfterValidator(_off_reason),
        WithJsonSchema({"type": "string", "minLength": 1, "maxLength": MAX_OFF_REASON}),
    ],
]


class Constraints(BaseModel):
    """What the gate enforces beyond the pins. Weakening any of these is a pin mutation."""

    model_config = _STRICT

    forbid_skip_markers: list[str] = Field(
        default_factory=lambda: list(DEFAULT_FORBIDDEN_MARKERS),
        description="Markers that may not appear on a property test, whatever their condition.",
    )
    forbid_dropped_pins: bool = Field(True, description="A pin removed by the patch rejects it.")
    require_host_b: bool = Field(True, description="Both hosts must report, from different hosts.")
    strict_baseline: bool = Field(
        False,
        description="Reject silencing that already stood at the base ref too (the seed's reading).",
    )
    forbid_live_entropy: bool = Field(
        False,
        description="A live read of clock, RNG, network, temp dir or unpinned environment that "
        "the patch introduced in code under test rejects (by default a warning).",
    )
    mutation: Literal["off", "changed", "all"] = Field(
        "changed",
        description="Mutation strength, base vs head: off; changed (functions the patch "
        "touched or its changed tests reach); all (every function the property reaches).",
    )
    protected_paths: list[str] = Field(
        default_factory=lambda: list(DEFAULT_PROTECTED_PATHS),
        description="The gate's own configuration: repository-relative files, or folders ending "
        "in '/', that a patch may not change (a maintainer lands such a change on its own).",
    )
    max_mutants: int = Field(40, ge=1, le=10_000, description="At most this many mutants.")
    time_budget_seconds: int = Field(
        300, ge=1, le=86_400, description="The mutation step stops starting mutants after this."
    )
    host_b_off: HostBOff = Field(
        default_factory=dict,
        description="Variations of host B the suite cannot run under, each with the reason: "
        "test_order, file_order, cpu_count. Host B keeps host A's behaviour there; turning one "
        "off is a weakened constraint.",
    )

    @field_validator("forbid_skip_markers")
    @classmethod
    def _marker_names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not _MARKER.match(name):
                raise ValueError(f"{name!r} is not a marker name")
        return value

    @field_validator("protected_paths")
    @classmethod
    def _protected(cls, value: list[str]) -> list[str]:
        for entry in value:
            why = _protected_problem(entry)
            if why:
                raise ValueError(f"protected_paths entry {entry!r} {why}")
        return value


def _protected_problem(entry: str) -> str | None:
    """Why `entry` is no repository-relative POSIX file or folder ('dir/'), or None."""
    if not entry.strip():
        return "must not be empty"
    if "\\" in entry:
        return "must use '/' as the separator, not a backslash"
    if entry.startswith("/") or PureWindowsPath(entry).drive:
        return "must be relative to the repository root (no leading '/')"
    parts = entry.removesuffix("/").split("/")
    if ".." in parts:
        return "must stay inside the repository (no '..')"
    if any(part in {"", "."} for part in parts):
        return "must be a plain path (no empty or '.' components)"
    return None


def _property_id(value: str) -> str:
    if not _PROPERTY_ID.match(value):
        raise ValueError(f"{value!r} is not an identifier (letters, digits, _ . -)")
    return value


def _module_path(value: str) -> str:
    value = _repo_relative(value, "module")
    if not value.endswith(".py"):
        raise ValueError(f"module must be a Python test file (.py), got {value!r}")
    return value


MAX_PROPERTIES = 1000


class Property(BaseModel):
    """One entry of `properties:`: a property module, with its own pins and run options
    laid over the shared top-level ones."""

    model_config = _STRICT

    property_id: str = Field(description="A stable name for the property under the gate.")
    module: str = Field(description="Repository-relative path of the property test module.")
    pins: PinFields | SkipJsonSchema[None] = Field(
        None, description="Pins of this property only, laid over the top-level pins."
    )
    run: RunOptions | SkipJsonSchema[None] = Field(
        None, description="Run options of this property only, laid over the top-level run."
    )
    host_b_off: HostBOff | SkipJsonSchema[None] = Field(
        None,
        description="Variations of host B this property cannot run under (with the reason), "
        "laid over constraints.host_b_off.",
    )

    @field_validator("property_id")
    @classmethod
    def _id(cls, value: str) -> str:
        return _property_id(value)

    @field_validator("module")
    @classmethod
    def _module(cls, value: str) -> str:
        return _module_path(value)


class Manifest(BaseModel):
    """entropy.yaml, version 1, for one property (the seed's form; also each entry of a
    manifest that lists `properties`, with the shared pins and run options laid under it)."""

    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        frozen=True,
        title="entropy.yaml",
        json_schema_extra={"$schema": "https://json-schema.org/draft/2020-12/schema"},
    )

    version: Literal[1] = Field(description="Manifest format version; must be 1.")
    property_id: str = Field(description="A stable name for the property under the gate.")
    module: str = Field(description="Repository-relative path of the property test module.")
    pins: Pins
    constraints: Constraints = Field(default_factory=Constraints)
    run: RunOptions = Field(default_factory=RunOptions)

    @field_validator("property_id")
    @classmethod
    def _id(cls, value: str) -> str:
        return _property_id(value)

    @field_validator("module")
    @classmethod
    def _module(cls, value: str) -> str:
        return _module_path(value)


class ManifestList(BaseModel):
    """entropy.yaml, version 1, for many properties: `properties` over shared top-level
    pins, constraints and run options."""

    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        frozen=True,
        title="entropy.yaml (many properties)",
    )

    version: Literal[1] = Field(description="Manifest format version; must be 1.")
    pins: PinFields | SkipJsonSchema[None] = Field(
        None, description="Pins every property shares (each entry may add or override)."
    )
    properties: list[Property] = Field(
        min_length=1,
        max_length=MAX_PROPERTIES,
        description="The properties under the gate, each a property_id and a module.",
    )
    constraints: Constraints = Field(default_factory=Constraints)
    run: RunOptions = Field(default_factory=RunOptions)

    @field_validator("properties")
    @classmethod
    def _distinct(cls, value: list[Property]) -> list[Property]:
        for what in ("property_id", "module"):
            seen: dict[str, int] = {}
            for index, entry in enumerate(value):
                key = getattr(entry, what)
                if key in seen:
                    raise ValueError(
                        f"properties[{index}] repeats the {what} {key!r} of "
                        f"properties[{seen[key]}]; each property has its own"
                    )
                seen[key] = index
        return value


@dataclass(frozen=True)
class LoadedManifest:
    """A validated manifest and the bytes and line map it came from."""

    manifest: Manifest
    located: safe_yaml.Located
    raw: bytes
    warnings: tuple[str, ...] = ()
    entry: int | None = None  # its index in `properties:`; None in the one-property form

    @property
    def property_id(self) -> str:
        return self.manifest.property_id

    @property
    def name(self) -> str:
        return self.located.name

    @property
    def sha256(self) -> str:
        """The file's sha256; for one entry of `properties:`, the file's bytes and the
        entry's id (a host report or a cached base run of one property is never taken for
        another's)."""
        if self.entry is None:
            return hashlib.sha256(self.raw).hexdigest()
        return hashlib.sha256(self.raw + b"\0properties:" + self.property_id.encode()).hexdigest()

    def line_of(self, *path: str | int) -> int:
        return self.located.line_of(tuple(path))


@dataclass(frozen=True)
class LoadedFile:
    """A validated entropy.yaml as the properties it holds: one for the seed's form, one
    view per entry of `properties:` (each a one-property manifest, its lines the file's)."""

    located: safe_yaml.Located
    raw: bytes
    views: tuple[LoadedManifest, ...]
    many: bool  # the file lists `properties:` (even a list of one)
    warnings: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.located.name

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.raw).hexdigest()

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(view.property_id for view in self.views)

    def view(self, property_id: str) -> LoadedManifest | None:
        return next((v for v in self.views if v.property_id == property_id), None)

    def select(self, property_id: str | None) -> LoadedManifest:
        """The property named `property_id`; without one, the only property there is."""
        if property_id is None:
            if len(self.views) == 1:
                return self.views[0]
            raise GateError(
                f"{self.name}: lists {len(self.views)} properties "
                f"({', '.join(self.ids)}); name one with --property ID"
            )
        found = self.view(property_id)
        if found is None:
            raise GateError(
                f"{self.name}: no property {property_id!r} (it lists: {', '.join(self.ids)})"
            )
        return found


@dataclass
class _ViewLocated(safe_yaml.Located):
    """The lines of one entry of `properties:` seen as a one-property manifest: its own
    keys at their lines, the shared ones at theirs, anything else at the entry's line."""

    fallback: int = 1

    def line_of(self, path: safe_yaml.Path) -> int:
        for end in range(len(path), 0, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return line
        return self.fallback


def lists_properties(raw: bytes) -> bool:
    """Whether manifest bytes are in the many-properties form (a top-level `properties:`),
    as far as they can be read at all."""
    try:
        data = safe_yaml.load(raw, "manifest", keep_last_duplicate=True).data
    except safe_yaml.LocatedError:
        return False
    return isinstance(data, dict) and "properties" in data


def parse_file(raw: bytes, name: str, repo_root: Path | None = None) -> LoadedFile:
    """Validate a manifest in either form. With `repo_root`, also check the files it names."""
    located = safe_yaml.load(raw, name)
    if not (isinstance(located.data, dict) and "properties" in located.data):
        one = parse(raw, name, repo_root)
        return LoadedFile(
            located=one.located, raw=raw, views=(one,), many=False, warnings=one.warnings
        )
    refuse_unquoted(located)
    try:
        listed = ManifestList.model_validate(located.data)
    except ValidationError as exc:
        raise safe_yaml.LocatedError(located.name, problems(exc, located)) from None
    views, found = [], []
    for index, entry in enumerate(listed.properties):
        try:
            views.append(_view(listed, index, entry, located, raw))
        except safe_yaml.LocatedError as exc:
            found.extend(exc.problems)
    if found:
        raise safe_yaml.LocatedError(located.name, sorted(dict.fromkeys(found)))
    if repo_root is not None:
        for view in views:
            _check_files(view, repo_root)
    warnings = tuple(w for view in views for w in view.warnings)
    return LoadedFile(located, raw, tuple(views), True, tuple(dict.fromkeys(warnings)))


def _view(
    listed: ManifestList,
    index: int,
    entry: Property,
    located: safe_yaml.Located,
    raw: bytes,
) -> LoadedManifest:
    """Entry `index` as a one-property manifest: its pins over the shared pins (env merged
    name by name), its run options over the shared ones."""
    pins = listed.pins.set_values() if listed.pins is not None else {}
    own = entry.pins.set_values() if entry.pins is not None else {}
    env = {**pins.get("env", {}), **own.get("env", {})}
    pins.update(own)
    if env:
        pins["env"] = env
    run = listed.run
    if entry.run is not None:
        run = run.model_copy(update={k: getattr(entry.run, k) for k in entry.run.model_fields_set})
    constraints = listed.constraints
    if entry.host_b_off:
        off = {**constraints.host_b_off, **entry.host_b_off}
        constraints = constraints.model_copy(update={"host_b_off": off})
    data = {
        "version": listed.version,
        "property_id": entry.property_id,
        "module": entry.module,
        "pins": pins,
        "constraints": constraints,
        "run": run,
    }
    view_located = _located_view(located, index, data)
    label = f"property {entry.property_id!r}: properties[{index}]"
    try:
        manifest = Manifest.model_validate(data)
    except ValidationError as exc:
        raise safe_yaml.LocatedError(
            located.name,
            [(line, f"{label}.{text}") for line, text in problems(exc, view_located)],
        ) from None
    return LoadedManifest(
        manifest=manifest,
        located=view_located,
        raw=raw,
        warnings=_warnings(manifest, view_located),
        entry=index,
    )


def _located_view(located: safe_yaml.Located, index: int, data: Any) -> _ViewLocated:
    own = ("properties", index)
    lines: dict[safe_yaml.Path, int] = {}
    plain: set[safe_yaml.Path] = set()
    for path, line in located.lines.items():  # the shared keys first, the entry's over them
        if path[:1] != ("properties",) and path:
            lines[path] = line
    plain.update(path for path in located.plain if path[:1] != ("properties",))
    for path, line in located.lines.items():
        if path[:2] == own and len(path) > 2:
            lines[path[2:]] = line
            if path[2] == "host_b_off":  # the entry's own switch, read as its constraint
                key = ("constraints", *path[2:])
                lines[key] = line
    plain.update(path[2:] for path in located.plain if path[:2] == own and len(path) > 2)
    return _ViewLocated(
        data=data,
        name=located.name,
        lines=lines,
        plain=plain,
        duplicates=list(located.duplicates),
        fallback=located.line_of(own),
    )


def parse(raw: bytes, name: str, repo_root: Path | None = None) -> LoadedManifest:
    """Validate manifest bytes. With `repo_root`, also check that the files it names exist."""
    located = safe_yaml.load(raw, name)
    if not isinstance(located.data, dict):
        raise safe_yaml.problem(
            name, 1, "the manifest must be a mapping of keys (version, pins, ...)"
        )
    if "properties" in located.data:
        raise GateError(f"{name}: lists its properties (properties:); read it with parse_file")
    refuse_unquoted(located)
    try:
        manifest = Manifest.model_validate(located.data)
    except ValidationError as exc:
        raise safe_yaml.LocatedError(located.name, problems(exc, located)) from None
    loaded = LoadedManifest(
        manifest=manifest, located=located, raw=raw, warnings=_warnings(manifest, located)
    )
    if repo_root is not None:
        _check_files(loaded, repo_root)
    return loaded


def read(path: Path, name: str | None = None) -> bytes:
    """The bytes of the manifest at `path`, refusing more than 1 MiB."""
    display = name or str(path)
    try:
        size = path.stat().st_size
        if size > safe_yaml.MAX_BYTES:
            raise safe_yaml.problem(
                display, 1, f"file is {size} bytes; the limit is {safe_yaml.MAX_BYTES} (1 MiB)"
            )
        return path.read_bytes()
    except FileNotFoundError:
        raise GateError(
            f"{display}: no such file (write an entropy.yaml: entropy-gate init drafts one)"
        ) from None
    except IsADirectoryError:
        raise GateError(f"{display}: is a directory, not a manifest") from None
    except OSError as exc:
        raise GateError(f"{display}: cannot read: {exc.strerror}") from None


def load(path: Path, repo_root: Path | None = None, name: str | None = None) -> LoadedManifest:
    """Read and validate the manifest at `path`."""
    display = name or str(path)
    return parse(read(path, display), display, repo_root)


def _warnings(manifest: Manifest, located: safe_yaml.Located) -> tuple[str, ...]:
    digest = manifest.pins.cassette_sha256
    if digest is not None and len(digest) != 64:
        where = located.where(("pins", "cassette_sha256"))
        return (
            f"{where}: warning: pins.cassette_sha256 has {len(digest)} hex digits, a sha256 "
            "has 64; it is kept as an opaque pin and can match no cassette",
        )
    return ()


def refuse_unquoted(located: safe_yaml.Located) -> None:
    data = located.data
    places: list[tuple[safe_yaml.Path, Any]] = [(("pins",), data.get("pins"))]
    entries = data.get("properties")
    if isinstance(entries, list):
        places += [
            (("properties", i, "pins"), e.get("pins"))
            for i, e in enumerate(entries)
            if isinstance(e, dict)
        ]
    for where, pins in places:
        if isinstance(pins, dict) and isinstance(pins.get("umask"), int):
            line = located.line_of((*where, "umask"))
            raise safe_yaml.problem(
                located.name,
                line,
                f"{_entry_label(where, located)}{safe_yaml.dotted((*where, 'umask'))} must be a "
                'quoted string such as "0022": YAML reads an unquoted 0022 as the integer 18 '
                f"(here it read {pins['umask']})",
            )


def problems(exc: ValidationError, located: safe_yaml.Located) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for error in exc.errors():
        if error["type"] == "none_required":
            continue  # the `None` branch of an optional pin: None is refused before this
        path = without_union_tag(tuple(error["loc"]))
        found.append((located.line_of(path), _entry_label(path, located) + _message(error, path)))
    return sorted(dict.fromkeys(found), key=lambda item: item[0])


def _entry_label(path: tuple[str | int, ...], located: safe_yaml.Located) -> str:
    """`property 'ID': ` for a problem inside an entry of `properties:` that has an id."""
    if len(path) < 2 or path[0] != "properties" or not isinstance(path[1], int):
        return ""
    entries = located.data.get("properties") if isinstance(located.data, dict) else None
    entry = entries[path[1]] if isinstance(entries, list) and path[1] < len(entries) else None
    name = entry.get("property_id") if isinstance(entry, dict) else None
    return f"property {name!r}: " if isinstance(name, str) and path[2:] != ("property_id",) else ""


def without_union_tag(path: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """Drop pydantic's union branch ('int', 'dict[str,str]') from the location of a pin, and
    its '[key]' mark from a refused key of host_b_off."""
    if path[-1:] == ("[key]",):
        path = path[:-1]
    entry_off = path[:1] == ("properties",) and path[2:3] == ("host_b_off",)
    if entry_off and len(path) > 3 and str(path[3]).startswith("dict["):
        path = path[:3] + path[4:]  # the mapping branch of an entry's optional host_b_off
    if len(path) >= 3 and path[0] == "pins" and path[1] in Pins.model_fields:
        return path[:2] + path[3:]
    if len(path) >= 4 and path[0] == "properties" and path[3] in _MODEL_TAGS:
        path = path[:3] + path[4:]  # the model branch of an entry's optional pins or run
    entry_pin = len(path) >= 5 and path[0] == "properties" and path[2] == "pins"
    if entry_pin and path[3] in Pins.model_fields:
        return path[:4] + path[5:]
    return path


_MODEL_TAGS = frozenset({"PinFields", "RunOptions"})


def _message(error: Any, path: tuple[str | int, ...]) -> str:
    where = safe_yaml.dotted(path)
    kind = error["type"]
    if kind == "extra_forbidden":
        if path in (("property_id",), ("module",)):
            return (
                f"unknown key {where!r} (a manifest that lists properties names each one's "
                "under properties:)"
            )
        return f"unknown key {where!r}{_suggest(path)}"
    if kind == "missing":
        return f"missing required key {where!r}"
    if kind == "literal_error" and path == ("version",):
        return f"version: unsupported manifest version {error['input']!r}; this gate reads 1"
    message = str(error["msg"]).removeprefix("Value error, ")
    if kind == "string_type" and isinstance(error["input"], (int, float, bool)):
        message += f" (quote it: YAML read {error['input']!r} as {type(error['input']).__name__})"
    if kind in {"model_type", "dict_type"}:
        message = f"must be a mapping, got {type(error['input']).__name__}"
    if not where:
        return message
    return f"{where}: {message}"


def _suggest(path: tuple[str | int, ...]) -> str:
    model: type[BaseModel] = ManifestList if path[:1] == ("properties",) else Manifest
    for part in path[:-1]:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(str(part))
        nested = _model_of(field.annotation) if field else None
        if nested is None:
            return ""
        model = nested
    names = list(model.model_fields)
    if len(path) == 1:
        names += [name for name in ManifestList.model_fields if name not in names]
    close = difflib.get_close_matches(str(path[-1]), names, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The model an annotation holds: itself, a list's items, or an optional's value."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def check_temp_root(loaded: LoadedManifest, places: Mapping[str, Path]) -> None:
    """pins.temp_root may not be a symbolic link, the checkout or hold `places` (see temproot)."""
    value = loaded.manifest.pins.temp_root
    why = None if value is None else unsafe_temp_root(Path(value), places)
    if why:
        line = loaded.line_of("pins", "temp_root")
        raise safe_yaml.problem(loaded.name, line, f"pins.temp_root {value!r} {why}")


def _check_files(loaded: LoadedManifest, repo_root: Path) -> None:
    manifest = loaded.manifest
    root = repo_root.resolve()
    check_temp_root(loaded, {"checkout": root})
    for field, relative in (("module", manifest.module), ("cassette", manifest.pins.cassette)):
        if relative is None:
            continue
        path = ("pins", "cassette") if field == "cassette" else ("module",)
        line = loaded.located.line_of(path)
        target = (root / relative).resolve()
        named = "" if loaded.entry is None else f"property {loaded.property_id!r}: "
        if not target.is_relative_to(root):
            raise safe_yaml.problem(
                loaded.name, line, f"{named}{field} {relative!r} leads outside the repository"
            )
        if not target.is_file():
            raise safe_yaml.problem(
                loaded.name,
                line,
                f"{named}{field} {relative!r} does not exist in the repository",
            )


def unsafe_temp_root(target: Path, places: Mapping[str, Path]) -> str | None:
    """Why `target` may not be the temp root, which the gate empties before and after each run:
    a symbolic link, the checkout or inside it, or a folder that is or holds one of `places`."""
    if target.is_symlink():
        return "is a symbolic link; pin a real directory"
    resolved = target.resolve()
    for what, given in places.items():
        place = given.resolve()
        if resolved == place:
            reason = f"is the {what}"
        elif place.is_relative_to(resolved):
            reason = f"holds the {what}"
        elif what == "checkout" and resolved.is_relative_to(place):
            reason = "lies inside the checkout"
        else:
            continue
        return f"{reason}; the gate empties it before and after each run: pin a dedicated directory"
    return None
