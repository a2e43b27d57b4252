"""A JUnit XML document, streamed: each testcase element handed over once, then dropped.

Reading a report costs about what parsing it costs: the document is never held as a whole
tree. The prolog (everything before the root element, where a document type, entities and
external references would be declared) is read by defusedxml's parser with DTDs forbidden;
from the root element on, no declaration can follow (XML allows a DTD only before the root,
and an entity that no DTD declared is an error), so the rest is read by the standard
library's C parser, in chunks, as `start`/`end` events. Each testcase is converted by the
caller when its element ends and then removed from its parent, so memory holds the
converted values and one testcase element at a time.

The testcases are those junitparser's model yields: the direct testcase children of each
testsuite under the root (`<testsuites>`, or a root `<testsuite>` itself), each suite's own
cases before those of the suites nested in it. Bad input raises GateError with one line
naming the document; its contents never reach the message.
"""

from __future__ import annotations

import contextlib
import xml.parsers.expat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from xml.etree.ElementTree import Element, ParseError, XMLPullParser

from entropy_action.core.errors import GateError

T = TypeVar("T")
Chunk = bytes | memoryview  # a piece of the document as read
MAX_SUITE_DEPTH = 256  # testsuites nested deeper are no pytest report
ROOTS = ("testsuites", "testsuite")
SUBTESTS = "entropy_subtests"  # plugin.SUBTESTS_PROPERTY: subtest reports of a testcase
COUNTED = {"failures": "failure", "errors": "error", "skipped": "skipped"}  # attribute: tag
MISPLACED = "a <testcase> nested in another element than a <testsuite>; not a report pytest wrote"
DTD_REFUSED = (
    "refused: it declares a document type (DTD); a JUnit report needs none, "
    "and entities and external references are never read"
)


class _RootReached(Exception):
    """Raised by the prolog check's target at the root element: the prolog is clean."""


class _Prolog:
    def start(self, tag: str, attrib: dict[str, str]) -> None:
        raise _RootReached

    def close(self) -> None:
        return None


@dataclass
class _Suite(Generic[T]):
    """An open testsuite: its own converted cases, then the output of its nested suites."""

    depth: int
    cases: list[T] = field(default_factory=list)
    nested: list[list[T]] = field(default_factory=list)
    # what its testcases show, against what the suite's attributes claim (see `check`)
    shown: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTED.values(), 0))
    unnamed: int = 0  # 1-based index of the first testcase without a name (0: none)
    subtests: int = 0  # reports of subtests the plugin noted, counted in `tests` (see `check`)
    reports: int = 0  # more <error> reports than testcases (one node id's, see `count`)

    def output(self) -> list[T]:
        return [*self.cases, *(case for suite in self.nested for case in suite)]

    def count(self, elem: Element) -> None:
        """Note what one of its testcases shows, before the testcase is converted."""
        if not self.unnamed and not elem.get("name"):
            self.unnamed = len(self.cases) + 1
        if len(elem):
            shown = self.shown
            errors = 0
            for child in elem:  # a testcase with failing subtests holds one <failure> each
                tag = child.tag
                if tag in shown:
                    shown[tag] += 1
                    errors += tag == "error"
                elif tag == "properties":
                    self.subtests += _subtests(child)
            # Two collection errors of one node id (a module that cannot import, collected
            # as a Module and again by --doctest-modules) are one testcase with two <error>s,
            # and pytest counts both in `tests`.
            self.reports += max(errors - 1, 0)

    def check(self, elem: Element) -> str | None:
        """What pytest never writes and a tampered report would: a testcase without a name,
        and counts that claim more tests, failures, errors or skips than the testcases show
        (testcases removed). pytest counts each subtest's report in `tests` but writes no
        element for a passing one: the plugin notes them in the property SUBTESTS."""
        if self.unnamed:
            return f"testcase #{self.unnamed} has no name attribute; not a report pytest wrote"
        tests = len(self.cases) + self.subtests + self.reports
        shown = {"tests": tests, **{a: self.shown[t] for a, t in COUNTED.items()}}
        for attribute, count in shown.items():
            claimed = elem.get(attribute)
            if claimed is None or not claimed.isdigit():
                continue
            value = int(claimed) if len(claimed) <= 9 else 10**9  # ints past 4300 digits raise
            if value > count:
                label = str(elem.get("name") or "").replace("\n", " ")[:60]
                return (
                    f"<testsuite name={label!r}> says {attribute}={value} but holds {count} "
                    "such testcases: testcases were removed; not a report pytest wrote"
                )
        return None


def _subtests(properties: Element) -> int:
    """The number of subtest reports a testcase's <properties> note (0 when none)."""
    for prop in properties:
        if prop.get("name") == SUBTESTS:
            value = prop.get("value") or ""
            return int(value) if value.isdigit() and len(value) <= 9 else 0
    return 0


def read_cases(chunks: Iterable[Chunk], name: str, convert: Callable[[Element], T]) -> list[T]:
    """`convert` of every testcase element of the document, in junitparser's order."""
    stream = iter(chunks)
    head = _check_prolog(stream, name)
    reader = _Reader(name, convert)
    parser: XMLPullParser[Element] = XMLPullParser(events=("start", "end"))
    with _xml_errors(name):
        for chunk in _chain(head, stream):
            parser.feed(chunk)
            reader.take(parser.read_events())
        parser.close()
        reader.take(parser.read_events())
    return reader.finish()


def _chain(head: list[Chunk], rest: Iterator[Chunk]) -> Iterator[Chunk]:
    yield from head
    yield from rest


def _check_prolog(stream: Iterator[Chunk], name: str) -> list[Chunk]:
    """Feed defusedxml's parser up to the root element; the chunks it read, to read again."""
    import defusedxml.ElementTree as safe_etree  # noqa: PLC0415 (the CLI starts without it)

    parser = safe_etree.DefusedXMLParser(target=_Prolog(), forbid_dtd=True)
    seen: list[Chunk] = []
    with _xml_errors(name):
        try:
            for chunk in stream:
                seen.append(chunk)
                parser.feed(chunk)
            parser.close()  # no root element: raises "no element found"
        except _RootReached:
            return seen
    raise GateError(f"{name}: not well-formed XML: no element found")  # pragma: no cover


@contextlib.contextmanager
def _xml_errors(name: str) -> Iterator[None]:
    """Turn the parsers' errors into one GateError line naming the document."""
    from defusedxml import DefusedXmlException, DTDForbidden  # noqa: PLC0415

    try:
        yield
    except DTDForbidden:
        raise GateError(f"{name}: {DTD_REFUSED}") from None
    except DefusedXmlException:
        raise GateError(f"{name}: refused: it declares entities or external references") from None
    except ParseError as exc:
        line, column = exc.position
        reason = xml.parsers.expat.ErrorString(exc.code) if exc.code else "cannot be parsed"
        where = f"{name}:{line}"
        raise GateError(f"{where}: not well-formed XML: {reason} (column {column})") from None
    except (ValueError, LookupError, RecursionError):
        raise GateError(f"{name}: not well-formed XML (bad encoding or nesting)") from None


class _Reader(Generic[T]):
    """The event loop: which elements are testcases of which suite, and their order.

    Problems found in the structure (a foreign root, suites nested too deeply) are kept
    and raised by `finish`, after the whole document parsed: a document that is not
    well-formed is reported as that first, whatever else is wrong with it.
    """

    def __init__(self, name: str, convert: Callable[[Element], T]) -> None:
        self.name = name
        self.convert = convert
        self.problem: str | None = None
        # one entry per open element: (element, its suite if it is a testsuite that counts)
        self.open: list[tuple[Element, _Suite[T] | None]] = []
        self.cases: list[T] = []

    def take(self, events: Iterable[Any]) -> None:
        # The hot loop runs twice per element of a report of 100,000 testcases: the common
        # events (any start but a suite's, a testcase's end inside a suite) are handled inline.
        # The end of an element inside a testcase (its properties, results) only closes it:
        # the testcase's conversion reads it.
        opened, convert = self.open, self.convert
        for event, elem in events:
            if event == "start":
                if opened and elem.tag != "testsuite":
                    opened.append((elem, None))
                else:
                    self._start(elem)
                continue
            tag = elem.tag
            if tag == "testcase" and len(opened) > 1 and opened[-2][1] is not None:
                opened.pop()
                parent_elem, parent = opened[-1]
                if len(elem) or not elem.get("name"):  # else `count` has nothing to note
                    parent.count(elem)  # type: ignore[union-attr]  # checked above
                parent.cases.append(convert(elem))  # type: ignore[union-attr]
                del parent_elem[:]  # nothing reads a suite's finished children again
            elif tag not in {"testcase", "testsuite"} and len(opened) > 2 and opened[-2][1] is None:
                opened.pop()  # what _end does for it: no suite to close, nothing to drop
            else:
                self._end(elem)

    def _start(self, elem: Element) -> None:
        if not self.open:
            self._root(elem)
            return
        parent = self.open[-1]
        suite: _Suite[T] | None = None
        if elem.tag == "testsuite" and self.problem is None:
            if parent[1] is not None:
                suite = _Suite(parent[1].depth + 1)
            elif len(self.open) == 1 and parent[0].tag == "testsuites":
                suite = _Suite(1)
            if suite is not None and suite.depth > MAX_SUITE_DEPTH:
                self.problem = "test suites nested too deeply; not a pytest report"
                suite = None
        self.open.append((elem, suite))

    def _root(self, elem: Element) -> None:
        if elem.tag not in ROOTS:
            tag = str(elem.tag).replace("\n", " ")[:60]
            self.problem = (
                f"not a JUnit report: the root element is <{tag}>, "
                "expected <testsuites> or <testsuite>"
            )
        self.open.append((elem, _Suite(1) if elem.tag == "testsuite" else None))

    def _end(self, elem: Element) -> None:
        _, suite = self.open.pop()
        if not self.open:  # the root
            if suite is not None:
                self._problem(suite.check(elem))
                self.cases.extend(suite.output())
            elem.clear()
            return
        parent_elem, parent = self.open[-1]
        at_top = len(self.open) == 1  # a child of the root
        if suite is not None:
            self._problem(suite.check(elem))
            if parent is None:
                self.cases.extend(suite.output())
            else:
                parent.nested.append(suite.output())
        elif parent is not None and elem.tag == "testcase":
            parent.count(elem)
            parent.cases.append(self.convert(elem))
        elif elem.tag == "testcase" and parent_elem.tag != "testsuite":
            self._problem(MISPLACED)
        if parent is not None or at_top:
            # Nothing reads a suite's finished children again: drop them, this one included.
            del parent_elem[:]

    def _problem(self, problem: str | None) -> None:
        if self.problem is None:
            self.problem = problem

    def finish(self) -> list[T]:
        if self.problem is not None:
            raise GateError(f"{self.name}: {self.problem}")
        return self.cases
