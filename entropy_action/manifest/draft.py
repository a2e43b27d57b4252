"""A first entropy.yaml, drafted from what one audited run of the property module read
(`draft`), or of each of several modules: a manifest that lists them (`draft_many`), the
pins every module drafts alike shared at the top, the others in the module's own entry.

Pure: the audit's records in, the manifest's text and the seams to fix out. Only the pins the
module actually reads are drafted ("empty pins are noise"), each with a one-line comment saying
why; what no pin can fix (os.urandom, secrets, uuid, the network) is listed as a seam only.
Never drafted, each said in `notes` and as a comment: a pin of a variable the tests set
themselves at import (it would not take: the run is invalid), and an environment variable's
value (init knows none, and an empty one breaks code that reads it, such as pytz's
PYTZ_TZDATADIR): the variables read are listed, commented out, for the reviewer to fill in.
The locale's variables (LANG, LANGUAGE, LC_*) are the exception: the `lang` pin covers them,
drafted as C.UTF-8, the locale CI runners have.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from entropy_action.core.errors import GateError
from entropy_action.core.hostinfo import AuditRecord

NO_COVERAGE = (
    '["--no-cov"]: the module alone fails the coverage threshold in addopts '
    "(pytest-cov's --cov-fail-under), and a run that exits 1 is no pass"
)
_LOCAL_TIME = ("time.localtime()", "datetime.now()", "datetime.today()", "date.today()")
# The locale's variables: the lang pin sets LANG and LC_ALL (which overrides every LC_*) and
# unsets LANGUAGE, so one pin covers a read of any of them. C.UTF-8 is what CI runners have.
_LOCALE_ENV = frozenset(
    {"LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_TIME", "LC_NUMERIC",
     "LC_MONETARY", "LC_MESSAGES"}
)  # fmt: skip
LANG = "C.UTF-8"


@dataclass(frozen=True)
class Draft:
    text: str  # entropy.yaml
    pins: list[str]  # the pin keys drafted
    seams: list[str] = field(default_factory=list)  # "path:line: reads `call`" to fix
    notes: list[str] = field(default_factory=list)  # "key: not pinned: why", ...: init says them
    properties: list[str] = field(default_factory=list)  # the list form's property ids


def property_id(module: str) -> str:
    """tests/properties/test_invoice_total.py -> invoice_total."""
    stem = module.rsplit("/", 1)[-1].removesuffix(".py").removeprefix("test_")
    return re.sub(r"[^A-Za-z0-9_.-]", "_", stem) or "property"


@dataclass(frozen=True)
class Audited:
    """One module's audited run, as `init` saw it: what `draft` and `draft_many` take."""

    module: str
    records: Sequence[AuditRecord]
    temp_root: str
    set_by_tests: Mapping[str, str] = field(default_factory=dict)
    no_coverage: bool = False


@dataclass(frozen=True)
class _Drafted:
    """One module's pins (key, value, why), notes, the variables it reads, its reads."""

    audited: Audited
    pins: list[tuple[str, str, str]]
    notes: list[str]
    env: list[str]
    reads: list[AuditRecord]

    def seams(self) -> list[str]:
        return [f"{r.path}:{r.line}: reads `{r.call()}`" for r in self.reads]


def draft(
    module: str,
    records: Sequence[AuditRecord],
    clock_unix: int,
    temp_root: str,
    set_by_tests: Mapping[str, str] | None = None,
    *,
    no_coverage: bool = False,
) -> Draft:
    """The draft; `set_by_tests` names the variables the module or its conftests set
    themselves at import (variable -> where and how, e.g. "test_x.py:29 sets TZ at import
    (`os.environ['TZ'] = …`)"): a pin of one would not take, so none is drafted.
    `no_coverage`: the module alone failed the project's coverage threshold (pytest-cov's
    --cov-fail-under in addopts), so the draft runs it with `--no-cov`."""
    audited = Audited(module, records, temp_root, set_by_tests or {}, no_coverage)
    one = _pins(audited, clock_unix)
    notes = list(one.notes)
    lines = _header(module) + _pin_lines(one.pins, notes, one.env, one.reads)
    if no_coverage:
        notes.append(f"run.pytest_args: {NO_COVERAGE}")
        lines += ["run:", f"  # {NO_COVERAGE}", '  pytest_args: ["--no-cov"]']
    seams = one.seams()
    lines += ["", "# Seams to fix (each a live read in code under test):"]
    lines += [f"#   {seam}" for seam in seams] or ["#   none"]
    keys = [key for key, _, _ in one.pins]
    return Draft("\n".join(lines) + "\n", keys, seams, notes)


def _pins(audited: Audited, clock_unix: int) -> _Drafted:
    """The pins one module's reads call for, and what is not pinned and why."""
    module, set_by_tests = audited.module, audited.set_by_tests
    reads = _first_reads(audited.records)
    pins: list[tuple[str, str, str]] = []  # (key, value, why)
    notes: list[str] = []
    clock = [r for r in reads if r.api.startswith(("time.", "datetime.", "date."))]
    if clock:
        pins.append(("clock_unix", str(clock_unix), _why(clock[0], "the clock; take a Clock")))
    local = [r for r in reads if r.api in _LOCAL_TIME]
    if local and "TZ" in set_by_tests:
        notes.append(f"tz: not pinned: {set_by_tests['TZ']}; a pin would not take")
    elif local:
        pins.append(("tz", "UTC", _why(local[0], "it may read local time, which follows TZ")))
    locale = _locale_reads(reads)
    taken = sorted(_LOCALE_ENV.intersection(set_by_tests) - {"LANGUAGE"})  # what the pin sets
    if locale and taken:
        notes.append(f"lang: not pinned: {set_by_tests[taken[0]]}; a pin would not take")
    elif locale:
        pins.append(("lang", LANG, _why(locale[0], "the locale (gettext, locale, strftime)")))
    rng = [r for r in reads if r.api.startswith("random.")]
    if rng:
        seed = zlib.crc32(module.encode("utf-8")) % 10_000
        pins.append(("rng_seed", str(seed), _why(rng[0], "the global RNG; take a Random")))
    temp = [r for r in reads if r.api.startswith("tempfile.")]
    if temp:
        pins.append(("temp_root", audited.temp_root, _why(temp[0], "a temp dir")))
    covered = _LOCALE_ENV if any(key == "lang" for key, _, _ in pins) else frozenset()
    env = sorted({r.name for r in reads if r.api == "os.environ" and r.name} - covered)
    for name in env:
        notes.append(f"env.{name}: not pinned: " + _env_why(name, set_by_tests))
    if not pins:
        pins.append(_fallback(set_by_tests, module))
    return _Drafted(audited, pins, notes, env, reads)


def _locale_reads(reads: Sequence[AuditRecord]) -> list[AuditRecord]:
    """Reads of the locale's variables at a line that reads no other variable: gettext's and
    locale's lookups. A line that walks the whole environment (python-dotenv's, environs')
    reads LANG too and is no locale read: its variables stay listed, as any others."""
    sites: dict[tuple[str, int], set[str | None]] = {}
    for record in reads:
        if record.api == "os.environ":
            sites.setdefault((record.path, record.line), set()).add(record.name)
    return [
        r
        for r in reads
        if r.api == "os.environ" and r.name in _LOCALE_ENV and sites[r.path, r.line] <= _LOCALE_ENV
    ]


def _env_why(name: str, set_by_tests: Mapping[str, str]) -> str:
    if name in set_by_tests:
        return set_by_tests[name]
    return "init knows no value for it and never drafts an empty one; pin the value it needs"


def _fallback(set_by_tests: Mapping[str, str], module: str) -> tuple[str, str, str]:
    """The one pin a manifest needs when no read called for any: tz, unless the tests set TZ."""
    why = "no live read was seen; a manifest needs one pin"
    if "TZ" in set_by_tests:
        return ("rng_seed", str(zlib.crc32(module.encode("utf-8")) % 10_000), why)
    return ("tz", "UTC", why)


def _first_reads(records: Sequence[AuditRecord]) -> list[AuditRecord]:
    """One record per (api, name, path, line), in path and line order."""
    seen: dict[tuple[str, str | None, str, int], AuditRecord] = {}
    for record in records:
        seen.setdefault((record.api, record.name, record.path, record.line), record)
    return sorted(seen.values(), key=lambda r: (r.path, r.line, r.api, r.name or ""))


def _why(record: AuditRecord, what: str) -> str:
    return f"{record.path}:{record.line} reads `{record.call()}`: {what}"


def _header(module: str) -> list[str]:
    return [
        "# entropy.yaml — drafted by `entropy-gate init` from one audited run of the module.",
        "# Review every pin, then commit it; the gate compares later patches against it.",
        "version: 1",
        f"property_id: {property_id(module)}",
        f"module: {module}",
        "pins:",
    ]


def _pin_lines(
    pins: list[tuple[str, str, str]],
    notes: list[str],
    env: list[str],
    reads: Sequence[AuditRecord],
) -> list[str]:
    lines = []
    for key, value, why in pins:
        shown = json.dumps(value) if key == "temp_root" else value
        lines += [f"  # {why}", f"  {key}: {shown}"]
    lines += [f"  # {line}" for line in notes if not line.startswith("env.")]
    if env:
        lines.append(
            "  # Read by the code under test, not pinned (an empty value is never drafted):"
        )
        lines.append("  # env:")
        for name in env:
            first = next(r for r in reads if r.api == "os.environ" and r.name == name)
            lines.append(f"  #   # {first.path}:{first.line} reads `{first.call()}`")
            lines.append(f"  #   {name}: <the value the property needs>")
    return lines


def distinct(modules: Sequence[str]) -> None:
    """Refuse a module named twice (each module is one property of the list)."""
    for index, module in enumerate(modules):
        if module in modules[:index]:
            raise GateError(f"init: {module} is named twice; each module drafts one property")


def property_ids(modules: Sequence[str]) -> list[str]:
    """One id per module: its stem (`property_id`); where two stems agree, the path's."""
    ids = [property_id(module) for module in modules]
    out = []
    for module, stem in zip(modules, ids, strict=True):
        if ids.count(stem) == 1:
            out.append(stem)
        else:
            out.append(re.sub(r"[^A-Za-z0-9_.-]", "_", module.removesuffix(".py")))
    return [name if out.count(name) == 1 else f"{name}_{i + 1}" for i, name in enumerate(out)]


def draft_many(audited: Sequence[Audited], clock_unix: int) -> Draft:
    """A manifest listing one property per module, in the order given: a pin every module
    drafts with the same value goes in the shared top-level `pins:` (its comment says why
    for the first module), the rest in the module's own entry, with its notes and its
    `run:` (`--no-cov`)."""
    modules = [a.module for a in audited]
    distinct(modules)
    drafted = [_pins(a, clock_unix) for a in audited]
    ids = property_ids(modules)
    owned = [{(key, value) for key, value, _ in d.pins} for d in drafted]
    shared = [pin for pin in drafted[0].pins if all((pin[0], pin[1]) in o for o in owned)]
    shared_keys = {key for key, _, _ in shared}
    lines = [
        "# entropy.yaml — drafted by `entropy-gate init` from one audited run of each module.",
        "# Review every pin, then commit it; the gate compares later patches against it.",
        "version: 1",
    ]
    if shared:
        lines += ["# The pins every property shares (each module's run called for them):"]
        lines += ["pins:", *_pin_lines(shared, [], [], [])]
    lines.append("properties:")
    notes: list[str] = []
    pins = [key for key, _, _ in shared]
    for name, one in zip(ids, drafted, strict=True):
        own = [pin for pin in one.pins if pin[0] not in shared_keys]
        lines += _entry(name, one, own)
        notes += [f"{name}: {note}" for note in one.notes]
        notes += [f"{name}: run.pytest_args: {NO_COVERAGE}"] if one.audited.no_coverage else []
        pins += [f"{name}: {key}" for key, _, _ in own]
    seams = list(dict.fromkeys(seam for one in drafted for seam in one.seams()))
    lines += ["", "# Seams to fix (each a live read in code under test):"]
    lines += [f"#   {seam}" for seam in seams] or ["#   none"]
    return Draft("\n".join(lines) + "\n", pins, seams, notes, ids)


def _entry(name: str, one: _Drafted, own: list[tuple[str, str, str]]) -> list[str]:
    """One item of `properties:`: its id, module, own pins (or the comments alone), run."""
    module = one.audited.module
    shown = module if re.fullmatch(r"[A-Za-z0-9_./-]+", module) else json.dumps(module)
    lines = [f"  - property_id: {name}", f"    module: {shown}"]
    body = [f"    {line}" for line in _pin_lines(own, list(one.notes), one.env, one.reads)]
    lines += ["    pins:", *body] if own else body
    if one.audited.no_coverage:
        lines += ["    run:", f"      # {NO_COVERAGE}", '      pytest_args: ["--no-cov"]']
    return lines
