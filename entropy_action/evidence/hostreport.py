"""One host's report: DIR/host.json and DIR/junit.xml, read with limits, as a HostReport.

Everything in a report is untrusted data. Files are opened only at DIR/host.json and
DIR/junit.xml (never a path named inside a report, never through a symlink), size-capped,
and parsed without DTDs, entities or external references. A report that cannot be read
raises GateError with one line naming the file; the contents of the file never reach it,
but for pytest's own error line of a run pytest refused to start (pytest.log, one printable
line, capped: `usage_error`), which the reason quotes as data.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from entropy_action.core import layout
from entropy_action.core.errors import GateError
from entropy_action.core.hostinfo import HostInfo
from entropy_action.core.layout import (
    BASE_FOLDER,
    CRASH_FILES,
    EVIDENCE_FILES,
    HOST_JSON,
    JUNIT_XML,
    PYTEST_LOG,
    REPORT_FILES,
)
from entropy_action.core.signals import killed_reason
from entropy_action.evidence import outcomes
from entropy_action.evidence.bounded import (
    chunks_of,
    field_problem,
    one_line,
    open_capped,
    open_regular,
    printable,
    read_json_object,
)
from entropy_action.evidence.ids import normalizer, placeholders
from entropy_action.evidence.junitcases import RANK, CaseOutcome, TestCase, parse
from entropy_action.evidence.terminal import check_summary

MAX_HOST_JSON = 1 << 20  # 1 MiB
MAX_JUNIT_XML = 64 << 20  # 64 MiB
# What a host job's steps leave beside the report for the judge (evidence.py)
MAX_EXTRA_SHOWN = 3
MAX_EXTRA_LISTED = 10_000  # names listed (then sorted, so the message is stable) at most
PYTEST_USAGE_ERROR = 4  # pytest's exit code for a command line or configuration it refused
USAGE_ERROR = "pytest usage error (see pytest.log)"
ADDOPTS_HINT = (
    "an option in addopts may need a plugin this interpreter lacks: "
    'set run.pytest_args, e.g. ["-o", "addopts="]'
)
MAX_LOG_READ = 64 << 10  # of pytest.log, for its first error line
MAX_QUOTED = 300  # characters of that line a reason quotes


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


def read_host(dir: Path, modules: Sequence[str] = ()) -> HostReport:
    """Read DIR/host.json and DIR/junit.xml; GateError (one line, naming the file) if unusable.
    `modules`: every module a session over several properties collected (hosts.split), whose
    tests are named by the module that collected them, as the channel names them."""
    check_folder(dir)
    info = read_info(dir / HOST_JSON)
    if info.returncode < 0:
        raise GateError(f"{dir / HOST_JSON}: {killed_reason(info.returncode, info.crash)}")
    junit_path = dir / JUNIT_XML
    if info.returncode == PYTEST_USAGE_ERROR and not os.path.lexists(junit_path):
        raise GateError(usage_error(dir))
    with open_capped(junit_path, MAX_JUNIT_XML) as handle:
        chunks = chunks_of(handle, junit_path, MAX_JUNIT_XML)
        normalize = normalizer(placeholders(info))
        others = [module for module in modules if module != info.module]
        tests, errors = parse(chunks, str(junit_path), normalize, info.module, others)
    heard = _read_outcomes(dir, info)
    if heard is not None:
        tests, errors = _cross_check(dir, heard, tests, errors, normalize)
    return HostReport(dir=dir, info=info, tests=tests, errors=errors)


def usage_error(dir: Path) -> str:
    """Why a run pytest refused to start (exit 4, no junit.xml) is unusable, with pytest's own
    first error line from DIR/pytest.log: argparse's `error:` ("unrecognized arguments"),
    else a configuration pytest cannot read (`ERROR: …tox.ini:4: duplicate section …`),
    where the addopts hint would mislead."""
    detail = first_error(dir / PYTEST_LOG)
    said = USAGE_ERROR if detail.startswith("ERROR: ") else f"{USAGE_ERROR}; {ADDOPTS_HINT}"
    return said + (f" — {detail}" if detail else "")


def first_error(log: Path) -> str:
    """The first line of pytest's output (untrusted) that says `error:`, else the first that
    starts `ERROR: `, as one printable line of at most MAX_QUOTED characters ("": none)."""
    try:
        with open_regular(log) as handle:
            text = handle.read(MAX_LOG_READ).decode("utf-8", "replace")
    except GateError:
        return ""
    lines = [line.strip() for line in text.splitlines()]
    said = next((line for line in lines if "error:" in line), "")
    said = said or next((line for line in lines if line.startswith("ERROR: ")), "")
    return printable(said, MAX_QUOTED)


def _read_outcomes(dir: Path, info: HostInfo) -> outcomes.Outcomes | None:
    """The gate's record of the run (outcomes.json); None where an older gate wrote none.
    A host.json that says the channel was used makes a missing record unusable."""
    path = dir / layout.OUTCOMES_JSON
    if info.channel is None and not os.path.lexists(path):
        return None
    loaded = read_json_object(path, outcomes.MAX_OUTCOMES_JSON, "the gate's record of the run")
    return outcomes.parse_outcomes(path, loaded)


def _cross_check(
    dir: Path,
    heard: outcomes.Outcomes,
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
    check_summary(dir, heard)
    if len(written) == len(tests) and written == known:
        return _with_collect_errors(heard, tests, errors)  # the common case: they agree
    if len(written) != len(tests):  # an id twice (a failure, then an error in teardown)
        for test in tests:
            if RANK[test.outcome] > RANK[written[test.raw_id]]:
                written[test.raw_id] = test.outcome
    fixed = [_worst_of(test, known[test.raw_id], written[test.raw_id]) for test in tests]
    for raw, outcome in known.items():
        if raw not in written:
            fixed.append(_heard_only(raw, outcome, normalize))  # type: ignore[arg-type]
    return _with_collect_errors(heard, tuple(fixed), errors)


def _worst_of(test: TestCase, heard: str, written: CaseOutcome) -> TestCase:
    if RANK[heard] <= RANK[written]:
        return test
    message = f"the gate's channel saw this test {heard}; junit.xml says {written}"
    return dataclasses.replace(test, outcome=heard, message=message)  # type: ignore[arg-type]


def _heard_only(raw: str, outcome: CaseOutcome, normalize: Callable[[str], str]) -> TestCase:
    message = f"the gate's channel saw this test {outcome}; junit.xml does not hold it"
    bad = outcome in ("failed", "error")
    return TestCase(normalize(raw), raw, outcome, message if bad else None)


def _with_collect_errors(
    heard: outcomes.Outcomes, tests: tuple[TestCase, ...], errors: tuple[str, ...]
) -> tuple[tuple[TestCase, ...], tuple[str, ...]]:
    if errors or not heard.collect_errors:
        return tests, errors
    said = tuple(
        f"collection failed in {one_line(where)} (the gate's channel saw it; junit.xml does "
        "not say so)"
        for where in heard.collect_errors
    )
    return tests, said


def _forged(dir: Path, tests: tuple[TestCase, ...], known: dict[str, str]) -> None:
    unheard = sorted({test.raw_id for test in tests if test.raw_id not in known})
    shown = ", ".join(one_line(raw)[:120] for raw in unheard[:MAX_EXTRA_SHOWN])
    more = f" and {len(unheard) - MAX_EXTRA_SHOWN} more" if len(unheard) > MAX_EXTRA_SHOWN else ""
    raise GateError(
        f"{dir / JUNIT_XML}: junit.xml holds {len(unheard)} test(s) the gate's channel never "
        f"saw run ({shown}{more}): the report was rewritten after the tests ran"
    )


def check_folder(dir: Path) -> None:
    """A report folder holds what a host run writes and nothing else (a planted conftest.py,
    thousands of files, a folder): anything more means it is not a host run's report."""
    extra: list[str] = []
    try:
        with os.scandir(dir) as entries:
            for entry in entries:
                if entry.name in (*REPORT_FILES, *EVIDENCE_FILES, *CRASH_FILES):
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
        shown = ", ".join(one_line(name)[:80] for name in sorted(extra)[:MAX_EXTRA_SHOWN])
        more = " and more" if len(extra) > MAX_EXTRA_SHOWN else ""
        raise GateError(
            f"{dir}: holds {shown}{more} besides {', '.join(REPORT_FILES)}; "
            "a host run writes nothing else, so this is not its report folder"
        )


def read_info(path: Path) -> HostInfo:
    """host.json, validated; a missing or malformed field names the field."""
    loaded = read_json_object(path, MAX_HOST_JSON, "the host run's report")
    try:
        return HostInfo.model_validate(loaded)
    except ValidationError as exc:
        raise GateError(f"{path}: {field_problem(exc)}") from None
