"""Rule 6: runtime evidence — every property the module defines must have executed on both
hosts. Skipped, xfailed, xpassed, deselected or absent is a finding, whatever hid it."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from entropy_action.core.findings import Finding
from entropy_action.verdict.model import TestResult

EXECUTED = frozenset({"passed", "failed", "error"})
# Static findings that can keep a test from running; a pre-existing one explains a skip.
RUN_AFFECTING = frozenset(
    {
        "skip_marker",
        "skip_call",
        "collection_tampering",
        "report_tampering",
        "config_selection",
    }
)


@dataclass(frozen=True)
class DefinedTest:
    """A property test the module defines (statically)."""

    name: str  # "test_total" or "TestInvoice::test_total" (class-qualified, no params)
    path: str  # repository-relative module path, POSIX
    line: int  # 1-based line of the def
    # Whom a generator makes its cases under other names: "function" (`parameterized.expand`:
    # `test_x_0_rest`), "class" (`parameterized_class`: `Test_0_rest::test_x`), or "".
    generated: str = ""


def bare_id(test_id: str) -> str:
    """A pytest node id without its parametrization: `path::Class::name`."""
    if test_id.endswith("]") and "[" in test_id:
        return test_id[: test_id.index("[")]
    return test_id


_INDEX = r"_\d+(?:_({rest}))?"


class Generated:
    """The defined tests that a generator turns into tests of other names at import time
    (`DefinedTest.generated`): a bare id such as `m.py::T::test_x_052_in_2_hours` is a case
    of `m.py::T::test_x`, named without its index, which inserting a case renumbers. Only a
    test the scan saw so decorated is a generator: a `test_fee_0` beside a plain `test_fee`
    is a test of its own, and a name the module defines is always its own."""

    def __init__(self, defined: Iterable[DefinedTest]) -> None:
        tests = list(defined)
        self.own = {f"{t.path}::{t.name}" for t in tests}
        self.patterns: list[tuple[str, re.Pattern[str], str]] = []
        for test in tests:
            if not test.generated:
                continue
            key = f"{test.path}::{test.name}"
            owner, _, method = key.rpartition("::")
            if test.generated == "function":
                pattern = re.escape(key) + _INDEX.format(rest=".*") + "$"
                self.patterns.append((key, re.compile(pattern), key + "_"))
            elif "::" in owner:  # a class's method: `Class_0_rest::method`
                tail = "::" + re.escape(method) + "$"
                pattern = re.escape(owner) + _INDEX.format(rest="[^:]*") + tail
                self.patterns.append((key, re.compile(pattern), owner + "_"))

    def cases(self, test_ids: Iterable[str]) -> list[tuple[str, str]]:
        """(function, case) for each id, in order: its bare id and itself, but for a name a
        generator made the generator's key and a case id without the index, numbered where
        two share one (`key[~rest]`, `key[~rest#2]`): compared by count, as the rules do."""
        seen: dict[str, int] = {}
        out: list[tuple[str, str]] = []
        for test_id in test_ids:
            bare = bare_id(test_id)
            made = self._maker(bare) if self.patterns and bare not in self.own else None
            if made is None:
                out.append((bare, test_id))
                continue
            key, rest = made
            case = f"{key}[~{rest}{test_id[len(bare) :]}]"
            seen[case] = seen.get(case, 0) + 1
            out.append((key, case if seen[case] == 1 else f"{case[:-1]}#{seen[case]}]"))
        return out

    def function(self, test_id: str) -> str:
        """The defined test a case id belongs to (its bare id where no generator made it)."""
        bare = bare_id(test_id)
        made = self._maker(bare) if self.patterns and bare not in self.own else None
        return bare if made is None else made[0]

    def _maker(self, bare: str) -> tuple[str, str] | None:
        for key, pattern, prefix in self.patterns:
            if bare.startswith(prefix) and (match := pattern.match(bare)):
                return key, match.group(1) or ""
        return None


def not_executed(
    defined: Sequence[DefinedTest],
    results: Sequence[TestResult],
    executed_at_base: set[str] | None,
    static: Sequence[Finding] = (),
    *,
    existed_at_base: Collection[str] | None = None,
    broken_hosts: Collection[str] = (),
) -> list[Finding]:
    """One `not_executed` finding per defined property that ran on neither or one host.

    `introduced`: with `executed_at_base` (names that executed in a run of the base's module
    on host A), a test counts against the patch when it executed at the base or did not
    exist there (`existed_at_base`: names the base's module defined; when not given, every
    name is taken to have existed). With None, a pre-existing static finding that concerns
    the test makes it pre-existing. `broken_hosts` ("A", "B") failed to collect the module
    at all: a test absent there is explained by that failure (the host fails anyway), so it
    is not a finding. A test a generator makes under other names (`Generated`) ran where
    one of them did.
    """
    generated = Generated(defined)
    outcomes: dict[str, dict[str, list[str]]] = {}
    for result in results:
        per_host = outcomes.setdefault(generated.function(result.id), {"A": [], "B": []})
        per_host["A"].append(result.host_a)
        per_host["B"].append(result.host_b)
    found: list[Finding] = []
    for test in defined:
        seen = outcomes.get(f"{test.path}::{test.name}", {"A": [], "B": []})
        missed = {
            host: _why(states)
            for host, states in seen.items()
            if not EXECUTED & set(states) and not (host in broken_hosts and not states)
        }
        if not missed:
            continue
        introduced = _introduced(test, executed_at_base, existed_at_base, static)
        found.append(
            Finding(
                kind="not_executed",
                path=test.path,
                line=test.line,
                message=f"property {test.name} did not execute on {_hosts(missed)} — a "
                "property that does not run proves nothing",
                introduced=introduced,
                test=test.name,
            )
        )
    return found


def _why(states: list[str]) -> str:
    return "skipped" if "skipped" in states else "absent"


def _hosts(missed: dict[str, str]) -> str:
    parts = [f"host {host} ({why})" for host, why in sorted(missed.items())]
    return " and ".join(parts)


def _introduced(
    test: DefinedTest,
    executed_at_base: set[str] | None,
    existed_at_base: Collection[str] | None,
    static: Sequence[Finding],
) -> bool:
    if executed_at_base is not None:
        existed = existed_at_base is None or test.name in existed_at_base
        return test.name in executed_at_base or not existed
    return not any(not f.introduced and concerns(f, test.name) for f in static)


def concerns(finding: Finding, name: str) -> bool:
    """Whether a static finding bears on the test `name` (module-wide ones bear on all)."""
    if finding.kind not in RUN_AFFECTING:
        return False
    if finding.test is None:
        return True
    return finding.test == name or name.startswith(finding.test + "::")


def executed_names(base_cases: Mapping[str, str], defined: Iterable[DefinedTest] = ()) -> set[str]:
    """`Class::test` names of the tests that executed, from case ids and their outcomes (a
    generated name counts for the test that made it: `Generated`)."""
    generated = Generated(defined)
    names: set[str] = set()
    for test_id, outcome in base_cases.items():
        bare = generated.function(test_id)
        if outcome in EXECUTED and "::" in bare:
            names.add(bare.split("::", 1)[1])
    return names


def cases_not_executed(
    defined: Sequence[DefinedTest],
    results: Sequence[TestResult],
    base_cases: Mapping[str, str],
    broken_hosts: Collection[str] = (),
    static: Sequence[Finding] = (),
    retired: Collection[str] = (),
    repeats: Mapping[str, int] | None = None,
    base_defined: Sequence[DefinedTest] = (),
) -> list[Finding]:
    """Cases that executed in the base's run on host A, and fewer of them at the head.

    The function-level rule misses a single parametrized case skipped or dropped, and tests a
    class inherits from another file; this compares, per test function, how many cases ran
    at the base and at the head on each host (by count, so ids that merely changed do not
    count) and names the missing ones. For a test in `retired` (its dropped checks name a
    message the patch removed from production: scan.weakening.retired) that still ran cases
    on each host, the missing cases are those of the retired behaviour: a notice. A test in
    `repeats` (name -> its base's distinct cases: the base listed a case twice, the head
    still lists each: scan.weakening.deduplicated) that ran as many cases as that is short
    of nothing but repeats. Cases a generator made (`Generated`, from the head's tests and
    `base_defined`, the base's) are its test's, counted without their index.
    """
    generated = Generated([*defined, *base_defined])
    before = _executed_by_function(generated, base_cases.items())
    now = {
        "A": _executed_by_function(generated, ((r.id, r.host_a) for r in results)),
        "B": _executed_by_function(generated, ((r.id, r.host_b) for r in results)),
    }
    defs = {f"{test.path}::{test.name}": test for test in defined}
    sites = {generated.function(r.id): r for r in results}
    removed = {f.test for f in static if f.kind == "test_removed"}
    found = []
    for function, cases in before.items():
        if function not in sites and function.split("::", 1)[-1] in removed:
            continue  # gone from the head altogether: the static test_removed says where
        need = (repeats or {}).get(function.split("::", 1)[-1], len(cases))
        if (
            function in defs
            and need < len(cases)
            and _ran_at_least(now, broken_hosts, function, need)
        ):
            continue  # every distinct case ran on each host: the ones gone were repeats
        short = {
            host: (sorted(cases - ran.get(function, set())), len(ran.get(function, set())))
            for host, ran in now.items()
            if host not in broken_hosts
            and len(ran.get(function, set())) < len(cases)
            and (ran.get(function) or function not in defs)  # none ran: the rule above says so
        }
        if short:
            finding = _case_finding(function, len(cases), short, defs, sites)
            if finding.test in retired and function in defs:
                message = finding.message + RETIRED_CASES
                finding = finding.model_copy(update={"level": "warning", "message": message})
            found.append(finding)
    return found


RETIRED_CASES = (
    " — but the checks the test dropped name a message the patch removed from production, "
    "and its other cases ran: the cases of a retired behaviour"
)


def _ran_at_least(
    now: Mapping[str, Mapping[str, set[str]]], broken: Collection[str], function: str, need: int
) -> bool:
    return all(len(ran.get(function, set())) >= need for h, ran in now.items() if h not in broken)


def _executed_by_function(
    generated: Generated, cases: Iterable[tuple[str, str]]
) -> dict[str, set[str]]:
    pairs = [(test_id, outcome) for test_id, outcome in cases if outcome in EXECUTED]
    grouped: dict[str, set[str]] = {}
    for function, case in generated.cases(test_id for test_id, _ in pairs):
        grouped.setdefault(function, set()).add(case)
    return grouped


def _case_finding(
    function: str,
    total: int,
    short: dict[str, tuple[list[str], int]],
    defs: Mapping[str, DefinedTest],
    sites: Mapping[str, TestResult],
) -> Finding:
    """`short`: host -> (the base's case ids it did not run, how many cases it ran). Ids
    that changed (a fixture's scope renumbers them) ran as other cases: counted, not missed."""
    name = function.split("::", 1)[-1]
    where = defs.get(function)
    site = sites.get(function)
    path = (
        where.path if where else (site.path if site and site.path else function.split("::", 1)[0])
    )
    line = where.line if where else (site.line if site and site.line else 1)
    parts = []
    for host, (missing, ran) in sorted(short.items()):
        shown = ", ".join(case[len(function) :] or case for case in missing[:3])
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        renamed = ran - (total - len(missing))  # cases it ran under ids the base did not have
        if renamed > 0:
            shown = f"{renamed} ran under new ids in place of the base's {shown}{more}"
            more = ""
        parts.append(f"host {host} ({total - ran} of {total}: {shown}{more})")
    return Finding(
        kind="not_executed",
        path=path,
        line=line,
        message=f"property {name}: cases that executed at the base did not execute on "
        f"{' and '.join(parts)} — a case that does not run proves nothing",
        test=name,
    )


GUARDED_KINDS = frozenset({"skip_call", "skip_marker"})
NEVER_FIRED = (
    " — it never fired: every test it guards ran on both hosts{base}, so what it guards (an "
    "import, an interpreter feature) was there (a notice; a guard on an entropy source stays a "
    "finding)"
)


def never_fired(
    findings: Sequence[Finding],
    guards: Collection[tuple[str, int, tuple[str, ...] | None]],
    defined: Sequence[DefinedTest],
    hosts: Sequence[Mapping[str, set[str]]],
    base: tuple[Mapping[str, set[str]], Collection[str]] | None = None,
) -> tuple[Finding, ...]:
    """The findings, with each introduced `skip_call` or `skip_marker` of a guard on an
    import or an interpreter feature (`guards`: path, line, the tests it guards or None for
    every one) turned into a notice (level warning)
    where every case of every test it guards executed on each host (`hosts`: bare id ->
    outcomes) and, with a base run (`base`: its outcomes, and the names the base defined),
    at the base for each of them the base had."""
    where = {(path, line): tests for path, line, tests in guards}
    out: list[Finding] = []
    for finding in findings:
        guarded = where.get((finding.path, finding.line), ...)
        if finding.kind not in GUARDED_KINDS or not finding.introduced or guarded is ...:
            out.append(finding)
            continue
        names = guarded if guarded is not None else tuple(t.name for t in defined)
        if not names or not all(_ran(hosts, base, defined, name) for name in names):
            out.append(finding)
            continue
        said = " and at the base" if base is not None else ""
        message = finding.message + NEVER_FIRED.format(base=said)
        out.append(finding.model_copy(update={"level": "warning", "message": message}))
    return tuple(out)


def _ran(
    hosts: Sequence[Mapping[str, set[str]]],
    base: tuple[Mapping[str, set[str]], Collection[str]] | None,
    defined: Sequence[DefinedTest],
    name: str,
) -> bool:
    path = next((t.path for t in defined if t.name == name), None)
    if path is None:
        return False
    key = f"{path}::{name}"
    runs = [*hosts]
    if base is not None and name in base[1]:
        runs.append(base[0])
    return all(bool(run.get(key)) and run[key] <= EXECUTED for run in runs)


def outcomes_by_test(
    ids_outcomes: Iterable[tuple[str, str]], defined: Iterable[DefinedTest] = ()
) -> dict[str, set[str]]:
    """Bare test id (a generated name's: its maker's, `Generated`) -> its cases' outcomes."""
    generated = Generated(defined)
    grouped: dict[str, set[str]] = {}
    for test_id, outcome in ids_outcomes:
        grouped.setdefault(generated.function(test_id), set()).add(outcome)
    return grouped
