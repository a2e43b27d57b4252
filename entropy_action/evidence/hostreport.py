"""One host's report: DIR/host.json and DIR/junit.xml, read with limits, as a HostReport.

Everything in a report is untrusted data. Files are opened only at DIR/host.json and
DIR/junit.xml (never a path named inside a report, never through a symlink), size-capped,
and parsed without DTDs, entities or external references. A report that cannot be read
raises GateError with one line naming the file; the contents of the file never reach it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import json
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, ClassVar, Literal
from xml.etree.ElementTree import Element

import junitparser
from pydantic import ValidationError

from entropy_action.core.errors import GateError
from entropy_action.core.hostinfo import HOST_JSON, JUNIT_XML, HostInfo
from entropy_action.evidence import junitstream
from entropy_action.hosts import channel

MAX_HOST_JSON = 1 << 20  # 1 MiB
MAX_JUNIT_XML = 64 << 20  # 64 MiB
MAX_MESSAGE = 2000  # characters kept of a test's failure or skip message
MAX_ERROR = 4000  # characters kept of a collection error's text
MAX_ID = 2000  # characters kept of a test id (a longer one is cut, not trusted)
CHUNK = 1 << 16  # bytes of a report parsed at a time
PYTEST_LOG = "pytest.log"
REPORT_FILES = (HOST_JSON, JUNIT_XML, PYTEST_LOG, channel.OUTCOMES_JSON)  # all a host run writes
SUMMARY_TAIL = 4096  # bytes at the end of pytest.log searched for its summary line
# What a host job's steps leave beside the report for the judge (evidence.py)
EVIDENCE_FILES = ("strength.json", "attribution.json")
BASE_FOLDER = "base"  # commands.verdict.BASE_DIR
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
    junit_path = dir / JUNIT_XML
    with _open_capped(junit_path, MAX_JUNIT_XML) as handle:
        chunks = _chunks_of(handle, junit_path, MAX_JUNIT_XML)
        normalize = normalizer(placeholders(info))
        tests, errors = _parse(chunks, str(junit_path), normalize, info.module)
    heard = _read_outcomes(dir, info)
    if heard is not None:
        tests, errors = _cross_check(dir, heard, tests, errors, normalize)
    return HostReport(dir=dir, info=info, tests=tests, errors=errors)


def _read_outcomes(dir: Path, info: HostInfo) -> channel.Outcomes | None:
    """The gate's record of the run (outcomes.json); None where an older gate wrote none.
    A host.json that says the channel was used makes a missing record unusable."""
    path = dir / channel.OUTCOMES_JSON
    if info.channel is None and not os.path.lexists(path):
        return None
    loaded = read_json_object(path, channel.MAX_OUTCOMES_JSON, "the gate's record of the run")
    return channel.parse_outcomes(path, loaded)


def _cross_check(
    dir: Path,
    heard: channel.Outcomes,
    tests: tuple[TestCase, ...],
    errors: tuple[str, ...],
    normalize: Callable[[str], str],
) -> tuple[tuple[TestCase, ...], tuple[str, ...]]:
    """junit.xml against what the gate heard: each test judged by its worst evidence; a test
    the gate never heard run, or a terminal summary that disagrees, makes the report unusable."""
    known = heard.tests
    written: dict[str, CaseOutcome] = {test.raw_id: test.outcome for test in tests}
    if not written.keys() <= known.keys():
        _forged(dir, tests, known)
    _check_summary(dir, heard)
    if len(written) == len(tests) and written == known:
        return _with_collect_errors(heard, tests, errors)  # the common case: they agree
    if len(written) != len(tests):  # an id twice (a failure, then an error in teardown)
        for test in tests:
            if _RANK[test.outcome] > _RANK[written[test.raw_id]]:
                written[test.raw_id] = test.outcome
    fixed = [_worst_of(test, known[test.raw_id], written[test.raw_id]) for test in tests]
    for raw, outcome in known.items():
        if raw not in written:
            fixed.append(_heard_only(raw, outcome, normalize))  # type: ignore[arg-type]
    return _with_collect_errors(heard, tuple(fixed), errors)


def _worst_of(test: TestCase, heard: str, written: CaseOutcome) -> TestCase:
    if channel.RANK[heard] <= _RANK[written]:
        return test
    message = f"the gate's channel saw this test {heard}; junit.xml says {written}"
    return dataclasses.replace(test, outcome=heard, message=message)  # type: ignore[arg-type]


def _heard_only(raw: str, outcome: CaseOutcome, normalize: Callable[[str], str]) -> TestCase:
    message = f"the gate's channel saw this test {outcome}; junit.xml does not hold it"
    bad = outcome in ("failed", "error")
    return TestCase(normalize(raw), raw, outcome, message if bad else None)


def _with_collect_errors(
    heard: channel.Outcomes, tests: tuple[TestCase, ...], errors: tuple[str, ...]
) -> tuple[tuple[TestCase, ...], tuple[str, ...]]:
    if errors or not heard.collect_errors:
        return tests, errors
    said = tuple(
        f"collection failed in {_one_line(where)} (the gate's channel saw it; junit.xml does "
        "not say so)"
        for where in heard.collect_errors
    )
    return tests, said


def _forged(dir: Path, tests: tuple[TestCase, ...], known: dict[str, str]) -> None:
    unheard = sorted({test.raw_id for test in tests if test.raw_id not in known})
    shown = ", ".join(_one_line(raw)[:120] for raw in unheard[:MAX_EXTRA_SHOWN])
    more = f" and {len(unheard) - MAX_EXTRA_SHOWN} more" if len(unheard) > MAX_EXTRA_SHOWN else ""
    raise GateError(
        f"{dir / JUNIT_XML}: junit.xml holds {len(unheard)} test(s) the gate's channel never "
        f"saw run ({shown}{more}): the report was rewritten after the tests ran"
    )


def _check_summary(dir: Path, heard: channel.Outcomes) -> None:
    """pytest's terminal summary line, where pytest.log ends in one, against the channel."""
    path = dir / PYTEST_LOG
    if not heard.complete or not os.path.lexists(path):
        return
    with _open_regular(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        handle.seek(max(0, size - SUMMARY_TAIL))
        tail = handle.read(SUMMARY_TAIL).decode("utf-8", "replace")
    summary = channel.summary_counts(tail)
    why = None if summary is None else channel.summary_disagrees(summary, heard.counts)
    if why is not None:
        raise GateError(
            f"{path}: pytest's terminal summary disagrees with the gate's channel ({why}): "
            "the report was rewritten after the tests ran"
        )


def check_folder(dir: Path) -> None:
    """A report folder holds what a host run writes and nothing else (a planted conftest.py,
    thousands of files, a folder): anything more means it is not a host run's report."""
    extra: list[str] = []
    try:
        with os.scandir(dir) as entries:
            for entry in entries:
                if entry.name in REPORT_FILES or entry.name in EVIDENCE_FILES:
                    continue
                if entry.name == BASE_FOLDER and entry.is_dir(follow_symlinks=False):
                    continue  # `run --base-ref` leaves the base ref's run here: read on its own
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
    with _open_regular(path) as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise GateError(f"{path}: cannot read: {exc.strerror}") from None
    if len(data) > limit:
        raise _too_large(path, limit)
    return data


def _open_capped(path: Path, limit: int) -> BinaryIO:
    """A regular file at `path`, refused unread when it is larger than `limit`."""
    handle = _open_regular(path)
    if os.fstat(handle.fileno()).st_size > limit:
        handle.close()
        raise _too_large(path, limit)
    return handle


def _chunks_of(handle: BinaryIO, path: Path, limit: int) -> Iterator[bytes]:
    """The bytes of `handle` in chunks, read lazily; more than `limit` in all is refused."""
    total = 0
    while True:
        try:
            chunk = handle.read(CHUNK)
        except OSError as exc:
            raise GateError(f"{path}: cannot read: {exc.strerror}") from None
        if not chunk:
            return
        total += len(chunk)
        if total > limit:  # it grew while being read
            raise _too_large(path, limit)
        yield chunk


def _too_large(path: Path, limit: int) -> GateError:
    return GateError(f"{path}: larger than the limit of {limit} bytes; refusing to read it")


def _open_regular(path: Path) -> BinaryIO:
    """A regular file at `path`, opened for reading without following a symlink or blocking."""
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
    return os.fdopen(fd, "rb")


def read_json_object(path: Path, limit: int, what: str) -> dict[str, Any]:
    """A JSON object from an untrusted file, size-capped; one line naming the file if not."""
    data = read_capped(path, limit)
    try:
        loaded = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise GateError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise GateError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except (ValueError, RecursionError):
        raise GateError(f"{path}: not valid JSON (a number too long or nesting too deep)") from None
    if not isinstance(loaded, dict):
        raise GateError(f"{path}: must be a JSON object ({what})")
    return loaded


def read_info(path: Path) -> HostInfo:
    """host.json, validated; a missing or malformed field names the field."""
    loaded = read_json_object(path, MAX_HOST_JSON, "the host run's report")
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
    paths = tuple(names)

    def by_pattern(text: str) -> str:
        if not any(path in text for path in paths):  # most ids name no root: no regex
            return text
        return pattern.sub(lambda m: names[m.group(0)], text)

    if not _disjoint(paths):
        return by_pattern
    slashed = tuple((path + "/", name + "/") for path, name in pairs)

    def normalize(text: str) -> str:
        # Without a regex where that is exact: each root followed by "/" (a whole segment, as
        # the pattern's lookahead asks) is replaced; a root left over (followed by anything
        # else) sends the text to the pattern. Exact because no two occurrences of the roots
        # can overlap (`_disjoint`): both replace the same occurrences.
        out = text
        for path, name in slashed:
            out = out.replace(path, name)
        for path in paths:
            if path in out:
                return by_pattern(text)
        return out

    return normalize


def _disjoint(paths: tuple[str, ...]) -> bool:
    """Whether occurrences of these paths in any text are pairwise disjoint (no path holds
    another, no suffix of one begins one) and no placeholder can make a new one."""
    for path in paths:
        if "<" in path or ">" in path:
            return False
        for other in paths:
            if other != path and other in path:
                return False
            if any(other.startswith(path[cut:]) for cut in range(1, len(path))):
                return False
    return True


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """The cyclic garbage collector paused: building 100,000 acyclic values (tests, their
    pairs) otherwise triggers full collections that cost as much as the parse itself."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def parse_junit(
    data: bytes, name: str, normalize: Callable[[str], str] = str, module: str | None = None
) -> tuple[tuple[TestCase, ...], tuple[str, ...]]:
    """The test cases and collection errors of a pytest JUnit XML document.

    `module` is the property module the run collected: a test it inherits from a class defined
    in another file carries that file in `file`, but belongs to `module` (see `node_id`).
    """
    view = memoryview(data)
    chunks = (view[start : start + CHUNK] for start in range(0, len(view), CHUNK))
    return _parse(chunks, name, normalize, module)


def _parse(
    chunks: Iterable[junitstream.Chunk],
    name: str,
    normalize: Callable[[str], str],
    module: str | None,
) -> tuple[tuple[TestCase, ...], tuple[str, ...]]:
    dotted = _dotted(module) if module else None
    errors: list[str] = []
    convert = functools.partial(_case, normalize, module, dotted, {}, errors)
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


# (classname, file, line) as a report wrote them -> (the node id's part before the test's
# name, or None when there is no classname; the file; the line): a suite's tests share a few
# of these, so each is checked and converted once per report, not once per test
Where = tuple[str | None, str | None, int | None]


def _case(
    normalize: Callable[[str], str],
    module: str | None,
    dotted: str | None,  # the module's dotted name, as pytest writes it in classname
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
    if not (name.isprintable() and len(name) <= MAX_ID):  # _one_line, inlined
        name = _one_line(name)
    key = (get("classname"), get("file"), get("line"))
    where = known.get(key)
    if where is None:
        where = known[key] = _where(*key, module, dotted)
    prefix, file, line = where
    if len(elem):  # results or properties: the few cases that have any
        return _case_children(normalize, where, name, elem, errors)
    raw = prefix + name if prefix is not None else file or name
    return TestCase(normalize(raw), raw, "passed", None, file, line)


def _where(
    classname: str | None,
    file: str | None,
    line: str | None,
    module: str | None,
    dotted: str | None,
) -> Where:
    classname = _one_line(classname)
    shared = sys.intern(_one_line(file)) or None  # one str per file name, for all its tests
    if not classname:
        return None, shared, _line(line)
    if dotted is not None and classname == dotted:  # node_id's first case, the common one
        return f"{module}::", shared, _line(line)
    return node_id(shared, classname, "", module), shared, _line(line)  # the id ends in a name


def _case_children(
    normalize: Callable[[str], str], where: Where, name: str, elem: Element, errors: list[str]
) -> TestCase | str:
    """A testcase with results or properties (see `_case`)."""
    prefix, file, line = where
    seeds: dict[str, int] = {}
    has_result = False
    for child in elem:  # usually the seeds' <properties>, or one result
        if child.tag == "properties":
            _seeds(child, seeds)
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
    )


SEED_PROPERTIES = ("entropy_seed", "entropy_rng_seed")
ASSERTION_PROPERTIES = ("entropy_assertions", "entropy_assertion_sites")  # plugin.py's
_NUMERIC_PROPERTIES = frozenset((*SEED_PROPERTIES, *ASSERTION_PROPERTIES))
_RESULT_TAGS = frozenset({"failure", "error", "skipped"})  # what junitparser reads as results


def _seeds(properties: Element, found: dict[str, int]) -> None:
    """The seeds and assertion counts the gate's plugin recorded as testcase properties
    (non-negative integers of at most 10 digits; anything else is ignored)."""
    for prop in properties:  # the plugin's four on nearly every test of a gate's run
        name = prop.get("name")
        if name in _NUMERIC_PROPERTIES and name not in found and prop.tag == "property":
            value = prop.get("value") or ""
            if value.isascii() and value.isdigit() and len(value) <= 10:
                found[name] = int(value)


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


def junit_id(nodeid: str, module: str | None) -> str:
    """The raw id this reader gives the testcase pytest writes for `nodeid`: pytest's
    classname and name (junitxml's mangle_test_address), then `node_id`."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    if len(names) == 1:
        return _one_line(nodeid)  # a collection report: named by its file
    classname = ".".join([_dotted(names[0]), *names[1:-1]])
    return node_id(names[0], _one_line(classname), _one_line(names[-1] + bracket + params), module)


@functools.lru_cache(maxsize=256)
def _dotted(file: str) -> str:
    """The module part of pytest's classname for a test file: a/b/test_c.py -> a.b.test_c."""
    return file.removesuffix(".py").replace("/", ".")


def merge(tests: Iterable[TestCase]) -> dict[str, TestCase]:
    """Tests by normalized id; a test reported twice keeps its worse outcome."""
    tests = tuple(tests)
    unique = {test.id: test for test in tests}
    if len(unique) == len(tests):  # no id twice (the common case): nothing to rank
        return unique
    merged: dict[str, TestCase] = {}
    for test in tests:
        known = merged.get(test.id)
        if known is None or _RANK[test.outcome] > _RANK[known.outcome]:
            merged[test.id] = test
    return merged


def _line(value: str | None) -> int | None:
    # isascii: "²" is a digit to isdigit() but not to int()
    if value is None or not (value.isascii() and value.isdigit()) or len(value) > 9:
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
