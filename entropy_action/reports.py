"""One host's report: DIR/host.json and DIR/junit.xml, read with limits, as a HostReport.

Everything in a report is untrusted data. Files are opened only at DIR/host.json and
DIR/junit.xml (never a path named inside a report, never through a symlink), size-capped,
and parsed without DTDs, entities or external references. A report that cannot be read
raises GateError with one line naming the file; the contents of the file never reach it.
"""

from __future__ import annotations

import functools
import json
import os
import re
import stat
import xml.parsers.expat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal
from xml.etree.ElementTree import ParseError

import defusedxml.ElementTree as safe_etree
import junitparser
from defusedxml import DefusedXmlException, DTDForbidden
from pydantic import ValidationError

from entropy_action.errors import GateError
from entropy_action.host import HOST_JSON, JUNIT_XML, HostInfo

MAX_HOST_JSON = 1 << 20  # 1 MiB
MAX_JUNIT_XML = 64 << 20  # 64 MiB
MAX_MESSAGE = 2000  # characters kept of a test's failure or skip message
MAX_ERROR = 4000  # characters kept of a collection error's text
MAX_ID = 2000  # characters kept of a test id (a longer one is cut, not trusted)
REPORT_FILES = (HOST_JSON, JUNIT_XML, "pytest.log")  # all a host run writes
MAX_EXTRA_SHOWN = 3
MAX_EXTRA_LISTED = 10_000  # names listed (then sorted, so the message is stable) at most
ROOT_PLACEHOLDER = "<root>"
TMP_PLACEHOLDER = "<tmp>"

CaseOutcome = Literal["passed", "failed", "error", "skipped"]
# When one test id appears twice (a failure, then an error in teardown), the worse wins.
_RANK: dict[CaseOutcome, int] = {"passed": 0, "skipped": 1, "error": 2, "failed": 3}
# Control characters and bidi overrides would let a report rewrite the terminal.
# pytest writes a module-level skip as the text "('PATH', LINE, 'Skipped: REASON')".
_MODULE_SKIP = re.compile(r"^\(.*, \d+, '(?:Skipped: )?(.*)'\)$", re.DOTALL)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class TestCase:
    """One test as one host reported it."""

    __test__: ClassVar[bool] = False  # not a pytest test class

    id: str  # normalized node id: checkout and temp roots replaced by placeholders
    raw_id: str  # the node id as the host wrote it
    outcome: CaseOutcome
    message: str | None = None  # the failure, error or skip message (trimmed)
    path: str | None = None  # the test's file, as pytest wrote it (rootdir-relative)
    line: int | None = None  # 1-based


@dataclass(frozen=True)
class HostReport:
    """What one host reported: its host.json and the test cases of its junit.xml."""

    dir: Path
    info: HostInfo
    tests: tuple[TestCase, ...]
    errors: tuple[str, ...]  # collection and module-level errors, verbatim (trimmed)

    @property
    def outcome(self) -> Literal["pass", "fail"]:
        """fail: a test failed or errored, a collection error, no tests, or pytest exited != 0."""
        bad = any(test.outcome in ("failed", "error") for test in self.tests)
        if bad or self.errors or not self.tests or self.info.returncode != 0:
            return "fail"
        return "pass"

    def failure_notes(self) -> list[str]:
        """Why the host failed beyond its failing tests and collection errors, in words."""
        if not self.tests and not self.errors:
            return [f"no tests were collected from {self.info.module}"]
        bad = any(test.outcome in ("failed", "error") for test in self.tests)
        if self.info.returncode != 0 and not bad and not self.errors:
            return [
                f"pytest exited with code {self.info.returncode} although no test failed "
                "(an addopts threshold such as --cov-fail-under? see run.pytest_args)"
            ]
        return []


def read_host(dir: Path) -> HostReport:
    """Read DIR/host.json and DIR/junit.xml; GateError (one line, naming the file) if unusable."""
    check_folder(dir)
    info = read_info(dir / HOST_JSON)
    if info.returncode < 0:
        raise GateError(
            f"{dir / HOST_JSON}: returncode {info.returncode}: pytest was killed by a signal "
            "(a timeout, the temp root's cap, or from outside); the run did not finish and its "
            "report is not trusted"
        )
    junit = dir / JUNIT_XML
    data = read_capped(junit, MAX_JUNIT_XML)
    tests, errors = parse_junit(data, str(junit), normalizer(placeholders(info)), info.module)
    return HostReport(dir=dir, info=info, tests=tests, errors=errors)


def check_folder(dir: Path) -> None:
    """A report folder holds what a host run writes and nothing else (a planted conftest.py,
    thousands of files, a folder): anything more means it is not a host run's report."""
    extra: list[str] = []
    try:
        with os.scandir(dir) as entries:
            for entry in entries:
                if entry.name not in REPORT_FILES:
                    extra.append(entry.name)
                if len(extra) > MAX_EXTRA_LISTED:
                    break
    except FileNotFoundError:
        return  # said by the read of host.json, which names the file
    except OSError as exc:
        raise GateError(f"{dir}: cannot list the report folder: {exc.strerror}") from None
    if extra:
        shown = ", ".join(_one_line(name)[:80] for name in sorted(extra)[:MAX_EXTRA_SHOWN])
        more = " and more" if len(extra) > MAX_EXTRA_SHOWN else ""
        raise GateError(
            f"{dir}: holds {shown}{more} besides {', '.join(REPORT_FILES)}; "
            "a host run writes nothing else, so this is not its report folder"
        )


def read_capped(path: Path, limit: int) -> bytes:
    """The bytes of a regular file at `path` (not through a symlink), at most `limit`."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        if path.is_symlink():
            raise GateError(f"{path}: is a symbolic link; a report's files are never followed")
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise GateError(f"{path}: no such file (did the host run write its report here?)") from None
    except OSError as exc:
        raise GateError(f"{path}: cannot open: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise GateError(f"{path}: is not a regular file")
    with os.fdopen(fd, "rb") as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise GateError(f"{path}: cannot read: {exc.strerror}") from None
    if len(data) > limit:
        raise GateError(f"{path}: larger than the limit of {limit} bytes; refusing to read it")
    return data


def read_info(path: Path) -> HostInfo:
    """host.json, validated; a missing or malformed field names the field."""
    data = read_capped(path, MAX_HOST_JSON)
    try:
        loaded = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise GateError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise GateError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except (ValueError, RecursionError):
        raise GateError(f"{path}: not valid JSON (a number too long or nesting too deep)") from None
    if not isinstance(loaded, dict):
        raise GateError(f"{path}: must be a JSON object (the host run's report)")
    try:
        return HostInfo.model_validate(loaded)
    except ValidationError as exc:
        raise GateError(f"{path}: {_field_problem(exc)}") from None


def _field_problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    field = _one_line(".".join(str(part) for part in error["loc"]))[:80]
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    if error["type"] == "missing":
        return f"missing required field {field!r}{more}"
    if error["type"] == "extra_forbidden":
        return f"unknown field {field!r}{more}"
    return f"field {field!r}: {error['msg']}{more}"


def placeholders(info: HostInfo) -> list[tuple[str, str]]:
    """(absolute path, placeholder) pairs to normalize out of ids, longest path first."""
    pairs = [(info.root, ROOT_PLACEHOLDER)]
    if info.temp_root:
        pairs.append((info.temp_root, TMP_PLACEHOLDER))
    usable = [(p.rstrip("/\\"), name) for p, name in pairs if _is_dedicated(p)]
    return sorted(usable, key=lambda pair: len(pair[0]), reverse=True)


def _is_dedicated(path: str) -> bool:
    """An absolute path below the file system's root (replacing "/" would mangle every id)."""
    parts = [part for part in re.split(r"[\\/]", path) if part]
    if re.match(r"^[A-Za-z]:[\\/]", path):
        return len(parts) >= 2
    return path.startswith("/") and len(parts) >= 1


def normalizer(pairs: list[tuple[str, str]]) -> Callable[[str], str]:
    """A function replacing each absolute root in a text by its placeholder (whole segments)."""
    if not pairs:
        return lambda text: text
    names = dict(pairs)
    either = "|".join(re.escape(path) for path, _ in pairs)
    pattern = re.compile(f"(?:{either})" + r"(?![\w.\-])")
    return lambda text: pattern.sub(lambda m: names[m.group(0)], text)


def parse_junit(
    data: bytes, name: str, normalize: Callable[[str], str] = str, module: str | None = None
) -> tuple[tuple[TestCase, ...], tuple[str, ...]]:
    """The test cases and collection errors of a pytest JUnit XML document.

    `module` is the property module the run collected: a test it inherits from a class defined
    in another file carries that file in `file`, but belongs to `module` (see `node_id`).
    """
    root = _xml_root(data, name)
    check_structure(root, name)
    document = _JUnit.fromroot(root)
    tests: list[TestCase] = []
    errors: list[str] = []
    try:
        for case in _cases(document):
            _add_case(case, normalize, tests, errors, module)
    except RecursionError:
        raise GateError(f"{name}: test suites nested too deeply; not a pytest report") from None
    return tuple(tests), tuple(errors)


def _xml_root(data: bytes, name: str) -> Any:
    try:
        root = safe_etree.fromstring(data, forbid_dtd=True)
    except DTDForbidden:
        raise GateError(
            f"{name}: refused: it declares a document type (DTD); a JUnit report needs none, "
            "and entities and external references are never read"
        ) from None
    except DefusedXmlException:
        raise GateError(f"{name}: refused: it declares entities or external references") from None
    except ParseError as exc:
        line, column = exc.position
        reason = xml.parsers.expat.ErrorString(exc.code) if exc.code else "cannot be parsed"
        raise GateError(f"{name}:{line}: not well-formed XML: {reason} (column {column})") from None
    except (ValueError, LookupError, RecursionError):
        raise GateError(f"{name}: not well-formed XML (bad encoding or nesting)") from None
    if root.tag not in ("testsuites", "testsuite"):
        tag = _one_line(str(root.tag))[:60]
        raise GateError(
            f"{name}: not a JUnit report: the root element is <{tag}>, "
            "expected <testsuites> or <testsuite>"
        )
    return root


_COUNTED = {"failures": "failure", "errors": "error", "skipped": "skipped"}


def check_structure(root: Any, name: str) -> None:
    """Refuse what pytest never writes and a tampered report would: a <testcase> outside a
    <testsuite> or nested in another, one without a name, and suites whose counts claim more
    tests, failures, errors or skips than their testcases show (testcases removed)."""
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    placed = 0
    for suite in suites:
        cases = [child for child in suite if child.tag == "testcase"]
        placed += len(cases)
        for index, case in enumerate(cases, 1):
            if not case.get("name"):
                raise GateError(
                    f"{name}: testcase #{index} has no name attribute; not a report pytest wrote"
                )
        _check_counts(suite, cases, name)
    if sum(1 for _ in root.iter("testcase")) != placed:
        raise GateError(
            f"{name}: a <testcase> nested in another element than a <testsuite>; "
            "not a report pytest wrote"
        )


def _check_counts(suite: Any, cases: list[Any], name: str) -> None:
    shown = {"tests": len(cases)}
    for attribute, tag in _COUNTED.items():
        shown[attribute] = sum(any(child.tag == tag for child in case) for case in cases)
    for attribute, count in shown.items():
        claimed = suite.get(attribute)
        if claimed is None or not claimed.isdigit():
            continue
        value = int(claimed) if len(claimed) <= 9 else 10**9  # ints past 4300 digits raise
        if value > count:
            label = _one_line(suite.get("name"))[:60]
            raise GateError(
                f"{name}: <testsuite name={label!r}> says {attribute}={value} but holds "
                f"{count} such testcases: testcases were removed; not a report pytest wrote"
            )


class _Case(junitparser.TestCase):
    """A testcase with the attributes pytest writes under junit_family=xunit1."""

    __test__ = False
    file = junitparser.Attr()
    line = junitparser.Attr()


class _Suite(junitparser.TestSuite):
    __test__ = False
    testcase = _Case


class _JUnit(junitparser.JUnitXml):
    testsuite = _Suite


def _cases(document: Any) -> Iterator[Any]:
    for suite in document:
        yield from suite


def _add_case(
    case: Any,
    normalize: Callable[[str], str],
    tests: list[TestCase],
    errors: list[str],
    module: str | None,
) -> None:
    classname = _one_line(case.classname)
    file = _one_line(case.file) or None
    name = _one_line(case.name)
    outcome, message, text = _result(case.result)
    if not classname and outcome in ("failed", "error"):  # a module that failed to collect
        errors.append(_collection_error(file or name, message, text))
        return
    raw = node_id(file, classname, name, module)
    tests.append(
        TestCase(
            id=normalize(raw),
            raw_id=raw,
            outcome=outcome,
            message=message,
            path=file,
            line=_line(case.line),
        )
    )


_KINDS: dict[type[Any], CaseOutcome] = {
    junitparser.Failure: "failed",
    junitparser.Error: "error",
    junitparser.Skipped: "skipped",
}


def _result(results: Iterable[Any]) -> tuple[CaseOutcome, str | None, str | None]:
    """The worst result of one testcase element: outcome, message, text."""
    best: tuple[CaseOutcome, str | None, str | None] = ("passed", None, None)
    for result in results:
        outcome = _KINDS.get(type(result), "error")
        if _RANK[outcome] > _RANK[best[0]]:
            text = result.text or ""
            message = result.message or text.strip().split("\n", 1)[0]
            if result.type == "pytest.xfail":
                message = f"xfail: {message}"
            skipped_module = _MODULE_SKIP.match(text.strip())
            if message == "collection skipped" and skipped_module:
                message = f"module skipped: {skipped_module.group(1)}"
            best = (outcome, _printable(message, MAX_MESSAGE) or None, text)
    return best


def _collection_error(where: str, message: str | None, text: str | None) -> str:
    body = _printable((text or "").strip(), None)
    if len(body) > MAX_ERROR:
        body = "…" + body[-MAX_ERROR:]
    return f"{message or 'collection failure'} in {where}" + (f":\n{body}" if body else "")


def node_id(file: str | None, classname: str, name: str, module: str | None = None) -> str:
    """pytest's node id "<module path>::<Class>::<name>[params]" from xunit1 attributes.

    The collecting `module` is tried first: `file` names where the test function is defined,
    which for a test inherited from a base class in another file is not where it ran.
    """
    if not classname:
        return file or name
    for path in (module, file):
        if path:
            dotted = _dotted(path)
            if classname == dotted:
                return f"{path}::{name}"
            if classname.startswith(dotted + "."):
                return "::".join([path, *classname[len(dotted) + 1 :].split("."), name])
    return f"{classname}::{name}"


@functools.lru_cache(maxsize=256)
def _dotted(file: str) -> str:
    """The module part of pytest's classname for a test file: a/b/test_c.py -> a.b.test_c."""
    return file.removesuffix(".py").replace("/", ".")


def merge(tests: Iterable[TestCase]) -> dict[str, TestCase]:
    """Tests by normalized id; a test reported twice keeps its worse outcome."""
    merged: dict[str, TestCase] = {}
    for test in tests:
        known = merged.get(test.id)
        if known is None or _RANK[test.outcome] > _RANK[known.outcome]:
            merged[test.id] = test
    return merged


def _line(value: str | None) -> int | None:
    if value is None or not value.isdigit() or len(value) > 9:
        return None
    return int(value) + 1  # pytest writes the 0-based line of the test's definition


def _printable(text: str, limit: int | None) -> str:
    """`text` with control characters escaped (newlines and tabs kept), cut at `limit`."""
    cleaned = _CONTROL.sub(_escape, text)
    if limit is not None and len(cleaned) > limit:
        return cleaned[: limit - 1] + "…"
    return cleaned


def _one_line(text: str | None) -> str:
    """An attribute value as one printable line, cut at MAX_ID characters."""
    text = text or ""
    if text.isprintable() and len(text) <= MAX_ID:  # the common case, fast
        return text
    return _printable(text.replace("\n", "\\n").replace("\t", "\\t"), MAX_ID)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
