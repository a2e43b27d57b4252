"""The test cases of one junit.xml, parsed (streamed, capped) into TestCase values."""

from __future__ import annotations

import contextlib
import functools
import gc
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal
from xml.etree.ElementTree import Element

import junitparser

from entropy_action.evidence import junitstream
from entropy_action.evidence.bounded import (
    CHUNK,
    MAX_ID,
    one_line,
    printable,
)
from entropy_action.evidence.ids import dotted_module, node_id

CaseOutcome = Literal["passed", "failed", "error", "skipped"]
# Worst last ("error" is a setup or teardown failure, as junit.xml writes it): when one test
# id appears twice (a failure, then an error in teardown), or the channel and junit.xml
# disagree, the worse wins. The one ranking of outcomes (hosts.channel uses it too).
RANK: dict[str, int] = {"passed": 0, "skipped": 1, "error": 2, "failed": 3}

# (classname, file, line) as a report wrote them -> (the node id's part before the test's
# name, or None when there is no classname; the file; the line): a suite's tests share a few
# of these, so each is checked and converted once per report, not once per test
Where = tuple[str | None, str | None, int | None]

KINDS: dict[type[Any], CaseOutcome] = {
    junitparser.Failure: "failed",
    junitparser.Error: "error",
    junitparser.Skipped: "skipped",
}


MAX_MESSAGE = 2000  # characters kept of a test's failure or skip message


MAX_ERROR = 4000  # characters kept of a collection error's text


# Control characters and bidi overrides would let a report rewrite the terminal.
# pytest writes a module-level skip as the text "('PATH', LINE, 'Skipped: REASON')".
# pytest's note where it cut a message attribute (_pytest.junitxml.shorten_message): jargon
# to a reader, and the first lines are what the gate shows anyway
_PYTEST_CUT = re.compile(r"\n\[(?:\+\d+ more lines?|truncated); full report in element text\]$")
_MODULE_SKIP = re.compile(r"^\(.*, \d+, '(?:Skipped: )?(.*)'\)$", re.DOTALL)


# slots: a report may hold 100,000 of them; not frozen: a frozen dataclass's __init__ costs
# 3x, and one is built per test. A value all the same: nothing sets a field after reading.
@dataclass(slots=True)
class TestCase:
    """One test as one host reported it."""

    __test__: ClassVar[bool] = False  # not a pytest test class

    id: str  # normalized node id: checkout and temp roots replaced by placeholders
    raw_id: str  # the node id as the host wrote it
    outcome: CaseOutcome
    message: str | None = None  # the failure, error or skip message (trimmed)
    path: str | None = None  # the test's file, as pytest wrote it (rootdir-relative)
    line: int | None = None  # 1-based
    seed: int | None = None  # the per-test seed the gate's plugin recorded (entropy_seed)
    rng_seed: int | None = None  # the base seed it was derived from (entropy_rng_seed)
    assertions: int | None = None  # assertions it executed (entropy_assertions)
    assertion_sites: int | None = None  # distinct assert statements (entropy_assertion_sites)
    case: str | None = None  # a parametrized case by its place (entropy_case: pairing's fallback)


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """The cyclic garbage collector paused: building 100,000 acyclic values (tests, their
    pairs) otherwise triggers full collections that cost as much as the parse itself. The
    commands that judge reports (compare, verdict) run paused from reading to writing: the
    values live to the end, and each collection after a pause would walk them all again."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def parse_junit(
    data: bytes,
    name: str,
    normalize: Callable[[str], str] = str,
    module: str | None = None,
    others: Sequence[str] = (),
) -> tuple[tuple[TestCase, ...], tuple[str, ...]]:
    """The test cases and collection errors of a pytest JUnit XML document.

    `module` is the property module the run collected: a test it inherits from a class defined
    in another file carries that file in `file`, but belongs to `module` (see `node_id`);
    `others`, the other modules of a session over several properties.
    """
    view = memoryview(data)
    chunks = (view[start : start + CHUNK] for start in range(0, len(view), CHUNK))
    return parse(chunks, name, normalize, module, others)


def parse(
    chunks: Iterable[junitstream.Chunk],
    name: str,
    normalize: Callable[[str], str],
    module: str | None,
    others: Sequence[str] = (),
) -> tuple[tuple[TestCase, ...], tuple[str, ...]]:
    dotted = dotted_module(module) if module else None
    errors: list[str] = []
    where = functools.partial(_where, module=module, dotted=dotted, others=tuple(others))
    convert = functools.partial(_case, normalize, where, {}, errors)
    with no_gc():
        items = junitstream.read_cases(chunks, name, convert)
    if not errors:  # the common case: every item is a test
        return tuple(items), ()  # type: ignore[arg-type]  # no str among them
    tests = tuple(item for item in items if not isinstance(item, str))
    return tests, tuple(item for item in items if isinstance(item, str))


class _Case(junitparser.TestCase):
    """A testcase with the attributes pytest writes under junit_family=xunit1."""

    __test__ = False
    file = junitparser.Attr()
    line = junitparser.Attr()


def _case(
    normalize: Callable[[str], str],
    locate: Callable[[str | None, str | None, str | None], Where],  # `_where`, bound
    known: dict[tuple[str | None, str | None, str | None], Where],
    errors: list[str],  # the collection errors returned so far
    elem: Element,
) -> TestCase | str:
    """One testcase element as a TestCase, or as the text of a collection error.

    The hot path: one call per test of a report that may hold 100,000. It reads the
    element's attributes directly rather than through a junitparser TestCase, which would
    be a second object per testcase for the same `get`s; junitparser's model reads the
    results (failure, error, skipped) of the few cases that have any.
    """
    get = elem.get
    name = get("name") or ""
    if not (name.isprintable() and len(name) <= MAX_ID):  # one_line, inlined
        name = one_line(name)
    key = (get("classname"), get("file"), get("line"))
    where = known.get(key)
    if where is None:
        where = known[key] = locate(*key)
    prefix, file, line = where
    if len(elem):  # results or properties: the few cases that have any
        return _case_children(normalize, where, name, elem, errors)
    raw = prefix + name if prefix is not None else file or name
    return TestCase(normalize(raw), raw, "passed", None, file, line)


def _where(
    classname: str | None,
    file: str | None,
    line: str | None,
    *,
    module: str | None,
    dotted: str | None,  # the module's dotted name, as pytest writes it in classname
    others: tuple[str, ...],
) -> Where:
    classname = one_line(classname)
    shared = sys.intern(one_line(file)) or None  # one str per file name, for all its tests
    if not classname:
        return None, shared, _line(line)
    if dotted is not None and classname == dotted:  # node_id's first case, the common one
        return f"{module}::", shared, _line(line)
    return node_id(shared, classname, "", module, others), shared, _line(line)  # ends in a name


def _case_children(
    normalize: Callable[[str], str], where: Where, name: str, elem: Element, errors: list[str]
) -> TestCase | str:
    """A testcase with results or properties (see `_case`)."""
    prefix, file, line = where
    seeds: dict[str, int] = {}
    places: list[str] = []
    has_result = False
    for child in elem:  # usually the seeds' <properties>, or one result
        if child.tag == "properties":
            _seeds(child, seeds, places)
        elif child.tag in _RESULT_TAGS:
            has_result = True
    if has_result:
        outcome, message, text = _result(_Case.fromelem(elem).result)  # type: ignore[no-untyped-call]
    else:
        outcome, message, text = "passed", None, None
    if prefix is None and outcome in ("failed", "error"):  # a module that failed to collect
        errors.append(_collection_error(file or name, message, text))
        return errors[-1]
    raw = prefix + name if prefix is not None else file or name
    return TestCase(
        normalize(raw),
        raw,
        outcome,
        message,
        file,
        line,
        seeds.get("entropy_seed"),
        seeds.get("entropy_rng_seed"),
        seeds.get("entropy_assertions"),
        seeds.get("entropy_assertion_sites"),
        places[0] if places else None,
    )


SEED_PROPERTIES = ("entropy_seed", "entropy_rng_seed")


ASSERTION_PROPERTIES = ("entropy_assertions", "entropy_assertion_sites")  # plugin.py's


_NUMERIC_PROPERTIES = frozenset((*SEED_PROPERTIES, *ASSERTION_PROPERTIES))


_RESULT_TAGS = frozenset({"failure", "error", "skipped"})  # what junitparser reads as results


CASE_PROPERTY = "entropy_case"  # testproc.plugin's: `path::test[arg:0,...]`
MAX_CASE = 1000


def _seeds(properties: Element, found: dict[str, int], places: list[str]) -> None:
    """The seeds and assertion counts the gate's plugin recorded as testcase properties
    (non-negative integers of at most 10 digits; anything else is ignored), and a
    parametrized case's place (printable, capped; the first one)."""
    for prop in properties:  # the plugin's four on nearly every test of a gate's run
        name = prop.get("name")
        if name in _NUMERIC_PROPERTIES and name not in found and prop.tag == "property":
            value = prop.get("value") or ""
            if value.isascii() and value.isdigit() and len(value) <= 10:
                found[name] = int(value)
        elif name == CASE_PROPERTY and not places and prop.tag == "property":
            value = prop.get("value") or ""
            if value.isprintable() and 0 < len(value) <= MAX_CASE:
                places.append(value)


def _result(results: Iterable[Any]) -> tuple[CaseOutcome, str | None, str | None]:
    """The worst result of one testcase element: outcome, message, text."""
    best: tuple[CaseOutcome, str | None, str | None] = ("passed", None, None)
    for result in results:
        outcome = KINDS.get(type(result), "error")
        if RANK[outcome] > RANK[best[0]]:
            text = result.text or ""
            message = _PYTEST_CUT.sub("", result.message or "") or text.strip().split("\n", 1)[0]
            if result.type == "pytest.xfail":
                message = f"xfail: {message}"
            skipped_module = _MODULE_SKIP.match(text.strip())
            if message == "collection skipped" and skipped_module:
                message = f"module skipped: {skipped_module.group(1)}"
            best = (outcome, printable(message, MAX_MESSAGE) or None, text)
    return best


def _collection_error(where: str, message: str | None, text: str | None) -> str:
    body = printable((text or "").strip(), None)
    if len(body) > MAX_ERROR:
        body = "…" + body[-MAX_ERROR:]
    return f"{message or 'collection failure'} in {where}" + (f":\n{body}" if body else "")


def merge(tests: Iterable[TestCase]) -> dict[str, TestCase]:
    """Tests by normalized id; a test reported twice keeps its worse outcome."""
    tests = tuple(tests)
    unique = {test.id: test for test in tests}
    if len(unique) == len(tests):  # no id twice (the common case): nothing to rank
        return unique
    merged: dict[str, TestCase] = {}
    for test in tests:
        known = merged.get(test.id)
        if known is None or RANK[test.outcome] > RANK[known.outcome]:
            merged[test.id] = test
    return merged


def _line(value: str | None) -> int | None:
    # isascii: "²" is a digit to isdigit() but not to int()
    if value is None or not (value.isascii() and value.isdigit()) or len(value) > 9:
        return None
    return int(value) + 1  # pytest writes the 0-based line of the test's definition
