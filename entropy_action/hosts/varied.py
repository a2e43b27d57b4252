"""host.json `variations`: host B's dimensions (core.variations), each varied or not and why.

Read from host B's plan (hosts.isolate.HostB), from what `pinsseen.effects` found took effect
(its `isolation` lines and notes) and from the test process's report. The report is data: a
key that is absent or of the wrong type means the dimension was not varied, and `why_not`
says so ("not reported by the test process"), so a variation that silently did not take
shows as held instead of passing for varied.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from entropy_action.core import variations
from entropy_action.core.variations import Variation
from entropy_action.hosts import isolate
from entropy_action.manifest.pinfile import PinFields

NOT_REPORTED = "not reported by the test process"
REVERTED = "left out by this attribution re-run"
OFF_PREFIX = variations.OFF_PREFIX  # + the reason (constraints.host_b_off)
PINNED_PREFIX = "pinned: "  # + pins.X = value: host B uses host A's value
MAX_TEXT = 1000  # report text copied into how/why_not is cut to this


@dataclass(frozen=True)
class Seen:
    """What one host B run knows when it writes host.json."""

    plan: isolate.HostB
    report: Mapping[str, Any] | None
    isolation: Sequence[str]  # pinsseen.effects' lines: what took effect
    notes: Sequence[str]  # and its notes: what did not
    pins: PinFields
    revert: frozenset[str]
    children: Sequence[Mapping[str, Any]] = ()  # children.jsonl lines

    def line(self, prefix: str) -> str | None:
        return next((line for line in self.isolation if line.startswith(prefix)), None)

    def note(self, *prefixes: str) -> str | None:
        return next((n for n in self.notes if n.startswith(prefixes)), None)

    def section(self, key: str) -> dict[str, Any] | None:
        value = self.report.get(key) if self.report is not None else None
        return value if isinstance(value, dict) else None


Outcome = tuple[bool, str, str | None]  # varied, how, why_not
_Rule = Callable[[Seen], Outcome]


def variations_of(seen: Seen) -> list[Variation]:
    """One Variation per core.variations.DIMENSIONS entry, in the table's order."""
    out = []
    for dimension in variations.DIMENSIONS:
        varied, how, why_not = _held(seen, dimension) or _RULES[dimension.name](seen)
        out.append(
            Variation(
                dimension=dimension.name,
                varied=varied,
                how=_cut(how),
                why_not=None if varied else _cut(why_not or "not varied"),
            )
        )
    return out


def _held(seen: Seen, dimension: variations.Dimension) -> Outcome | None:
    """Held at host A's value by the run's own settings: reverted, turned off, or pinned."""
    if dimension.name in seen.revert or (dimension.name == "tz" and "env" in seen.revert):
        return False, "host A's value", REVERTED
    if dimension.name in seen.plan.off:
        return False, "host A's value", OFF_PREFIX + seen.plan.off[dimension.name]
    value = seen.pins.flat().get(dimension.pin) if dimension.pin else None
    if value is not None:
        return (
            False,
            f"pins.{dimension.pin} on both hosts",
            f"{PINNED_PREFIX}pins.{dimension.pin} = {value}",
        )
    return None


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _clock(seen: Seen) -> Outcome:
    line = seen.line("live wall clock shifted")
    if line:
        return True, line, None
    why = seen.plan.clock.note or seen.note("live clock not shifted")
    return False, "the real wall clock", why or _unreported(seen)


def _env(seen: Seen) -> Outcome:
    line = seen.line("environment scrubbed")
    return (True, line, None) if line else (False, "the caller's environment", "not scrubbed")


def _network(seen: Seen) -> Outcome:
    line = seen.line("network:")
    if line:
        return True, line, None
    why = seen.note("network namespace not in effect", "no network/UTS namespace")
    spaces = seen.plan.namespaces
    if why is None and not spaces.usable:
        why = f"no network namespace on this machine ({spaces.reason or 'no unshare'})"
    return False, "the machine's network", why or _unreported(seen)


def _hostname(seen: Seen) -> Outcome:
    line = seen.line("hostname ")
    if line:  # the name is random per run: the verdict carries only how (isolation has it)
        how = "UTS namespace" if line.endswith("(UTS namespace)") else "in-process"
        return True, f"another host name ({how})", None
    return False, "the machine's host name", seen.note("hostname not changed") or _unreported(seen)


def _path(seen: Seen) -> Outcome:
    if seen.line("tree copied to") is None:
        return False, "host A's checkout", "the tree was not copied"
    # the copy's place is a fresh scratch folder per run: named in `isolation`, not here
    return True, f"the tree copied to another absolute path ({seen.plan.files_copied} files)", None


def _plan_value(how: str | None, why: str) -> Outcome:
    return (True, how, None) if how else (False, "host A's value", why)


def _tz(seen: Seen) -> Outcome:
    return _plan_value(seen.plan.tz and f"TZ={seen.plan.tz}", "no other time zone was chosen")


def _umask(seen: Seen) -> Outcome:
    umask = seen.plan.umask
    return _plan_value(None if umask is None else f"umask {umask:04o}", "no other umask was chosen")


def _temp_root(seen: Seen) -> Outcome:
    how = seen.plan.tmpdir and "TMPDIR is a fresh private directory (named in isolation)"
    return _plan_value(how, "the run's private temp_root stands in for host A's")


def _lang(seen: Seen) -> Outcome:
    lang = seen.plan.lang
    return _plan_value(lang and f"LANG=LC_ALL={lang}", "no other locale was chosen")


def _rng_seed(seen: Seen) -> Outcome:
    planned = seen.plan.rng_seed
    if planned is None:
        return False, "host A's seed", "no other seed was chosen"
    got = seen.report.get("rng_seed") if seen.report is not None else None
    if got != planned or isinstance(got, bool):
        return (
            False,
            f"seed {got!r}",
            _unreported(seen) if got is None else f"the test process used {got!r}, not {planned}",
        )
    how = f"random, numpy and hypothesis seeded from {planned} (host A: {isolate.HOST_A_RNG_SEED})"
    return True, how, None


def _hash_seed(seen: Seen) -> Outcome:
    planned = seen.plan.hash_seed
    if planned is None:
        return False, f"PYTHONHASHSEED={isolate.HOST_A_HASH_SEED}", "no other hash seed was chosen"
    got = seen.report.get("hash_seed") if seen.report is not None else None
    if not isinstance(got, str):
        return False, f"PYTHONHASHSEED={isolate.HOST_A_HASH_SEED} (planned {planned})", NOT_REPORTED
    if got != str(planned):
        return (
            False,
            f"PYTHONHASHSEED={got}",
            f"the test process started with PYTHONHASHSEED={got}, not {planned}",
        )
    return True, f"PYTHONHASHSEED={planned} (host A: {isolate.HOST_A_HASH_SEED})", None


def _python(seen: Seen) -> Outcome:
    other = seen.plan.interpreter
    if other:
        return True, f"interpreter {other}", None
    return False, "host A's interpreter", "no other interpreter was given for host B"


def _test_order(seen: Seen) -> Outcome:
    planned = seen.plan.test_order_seed
    if planned is None:
        return False, "collection order", "no shuffle was planned"
    order = seen.section("test_order")
    ran, collected = (order or {}).get("ran"), (order or {}).get("collected")
    if order is None or order.get("seed") != planned or not (_names(ran) and _names(collected)):
        return False, f"collection order (planned seed {planned})", _bad(order, "seed", planned)
    ran, collected = list(ran or ()), list(collected or ())
    if len(ran) < 2:
        return False, f"seed {planned}", f"{len(ran)} test(s) ran: there is no other order"
    if ran == collected:
        return False, f"seed {planned}", f"the shuffle left the {len(ran)} tests in host A's order"
    return True, f"tests shuffled with seed {planned} ({len(ran)} tests)", None


def _file_order(seen: Seen) -> Outcome:
    planned = seen.plan.file_order_seed
    if planned is None:
        return False, "the listing order of the file system", "no shuffle was planned"
    held = f"as the OS lists (planned seed {planned})"
    report = seen.section("file_order")
    failed = _unpatched(report, "seed", planned, held, "not shuffled")
    if failed is not None or report is None:
        return failed or (False, held, _unreported(seen))
    patched = report["patched"]
    how = f"directory listings shuffled with seed {planned} ({', '.join(map(str, patched))})"
    return True, how + _children(seen, "file_order", "shuffled"), None


def _unpatched(
    report: dict[str, Any] | None, field: str, planned: int, held: str, verb: str
) -> Outcome | None:
    """Why a patched dimension's report (file_order, cpu_count) does not confirm the plan:
    missing or malformed, another value than planned, an error, nothing patched; None: it
    does."""
    patched = (report or {}).get("patched")
    if report is None or report.get(field) != planned or not _names(patched):
        return False, held, _bad(report, field, planned)
    error = report.get("error")
    if isinstance(error, str) or not patched:
        return False, held, f"{verb}: {error or 'nothing patched'}"
    return None


def _cpu_count(seen: Seen) -> Outcome:
    planned = seen.plan.cpu_count
    if planned is None:
        return False, "the machine's CPU count", "no other count was planned"
    held = f"the machine's (planned {planned})"
    report = seen.section("cpu_count")
    failed = _unpatched(report, "seen", planned, held, "not changed")
    if failed is not None or report is None:
        return failed or (False, held, _unreported(seen))
    patched = report["patched"]
    real = report.get("real")
    machine = f"; the machine has {real}" if isinstance(real, int) else ""
    how = f"the tests see {planned} CPUs ({', '.join(map(str, patched))}{machine})"
    return True, how + _children(seen, "cpu_count", planned), None


def _names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _bad(section: Mapping[str, Any] | None, key: str, planned: int) -> str:
    if section is None:
        return NOT_REPORTED
    got = section.get(key)
    if got != planned:
        return f"the test process reported {key} {got!r}, not {planned}"
    return "the test process's report of it is malformed"


def _children(seen: Seen, key: str, want: object) -> str:
    if not seen.children:
        return ""
    reached = sum(child.get(key) == want for child in seen.children)
    return f"; in {reached} of {len(seen.children)} child Python processes"


def _unreported(seen: Seen) -> str:
    return "the test process reported nothing" if seen.report is None else "not seen to take effect"


_RULES: dict[str, _Rule] = {
    "clock": _clock,
    "env": _env,
    "network": _network,
    "hostname": _hostname,
    "path": _path,
    "tz": _tz,
    "umask": _umask,
    "temp_root": _temp_root,
    "lang": _lang,
    "rng_seed": _rng_seed,
    "hash_seed": _hash_seed,
    "python": _python,
    "test_order": _test_order,
    "file_order": _file_order,
    "cpu_count": _cpu_count,
}
