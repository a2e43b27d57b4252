"""host.json as a host run writes it: what the run saw, its outcome, its channel and its
audit records."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from entropy_action import __version__
from entropy_action.core import git, layout, treestate
from entropy_action.core.errors import ExitCode, GateError
from entropy_action.core.hostinfo import (
    HOOKS_UNUSABLE,
    Audit,
    ChannelInfo,
    HookInventory,
    HostInfo,
    Provenance,
    TestData,
    TestOrder,
    TreeState,
    outside_reason,
)
from entropy_action.core.layout import EVIDENCE_FILES, HOST_JSON, JUNIT_XML, PYTEST_LOG
from entropy_action.core.signals import killed_reason
from entropy_action.core.variations import Variation
from entropy_action.evidence import ids
from entropy_action.evidence.hostreport import ADDOPTS_HINT, PYTEST_USAGE_ERROR, USAGE_ERROR
from entropy_action.hosts import channel, pinsseen, replayplan, varied
from entropy_action.hosts.runsettings import Launch, RunSettings
from entropy_action.testproc.protocol import CHILDREN_FILE, IMPORTS_FILE

CONFTEST_NOTE = "a conftest failed to import: recorded as an error in junit.xml (see pytest.log)"


_CONFTEST_FAILED = "ImportError while loading conftest"


def write_host_json(path: Path, info: HostInfo) -> None:
    try:
        path.write_text(info.model_dump_json(indent=2) + "\n", encoding="utf-8")
    except OSError as exc:  # a full disk, say
        raise GateError(f"{path}: cannot write the host report: {exc.strerror}") from None


def outcome(info: HostInfo) -> tuple[ExitCode, str]:
    """The exit code of `run` for a finished host, and a one-line reason."""
    host = f"host {info.host}"
    if info.pins_mismatch:
        return ExitCode.INVALID, f"{host}: pins did not take: {'; '.join(info.pins_mismatch)}"
    if info.imported_outside:
        return ExitCode.INVALID, f"{host}: {outside_reason(info)}"
    code = info.returncode
    if code < 0:
        return ExitCode.INVALID, f"{host}: {killed_reason(info.returncode, info.crash)}"
    if code == PYTEST_USAGE_ERROR and CONFTEST_NOTE in info.notes:
        return ExitCode.REJECTED, f"{host}: {CONFTEST_NOTE}"
    known = {
        0: (ExitCode.OK, "properties passed"),
        1: (ExitCode.REJECTED, "a property failed"),
        2: (ExitCode.REJECTED, "collection failed or the run was interrupted (see junit.xml)"),
        3: (ExitCode.REJECTED, "pytest stopped with an internal error (see pytest.log)"),
        4: (ExitCode.INVALID, f"{USAGE_ERROR}; {ADDOPTS_HINT}"),
        5: (ExitCode.REJECTED, "no tests were collected from the property module"),
    }
    status, words = known.get(code, (ExitCode.REJECTED, f"pytest exited {code}"))
    return status, f"{host}: {words}"


def with_channel(info: HostInfo, heard: channel.Heard, out: Path, module: str) -> HostInfo:
    """outcomes.json, the gate's own record of what its plugin said, and host.json's note."""
    data = channel.record(heard, lambda nodeid: ids.junit_id(nodeid, module))
    channel.write(out / layout.OUTCOMES_JSON, data)
    complete = heard.begin is not None and heard.end is not None and not heard.truncated
    used = ChannelInfo(
        tests=len(data["tests"]),
        complete=complete,
        lines=heard.lines,
        malformed=heard.malformed,
        truncated=heard.truncated,
    )
    notes = list(info.notes)
    if heard.malformed:
        notes.append(f"the gate's channel: {heard.malformed} line(s) not the plugin's, ignored")
    if heard.truncated:
        notes.append("the gate's channel: more than its cap arrived; the rest was discarded")
    return info.model_copy(update={"channel": used, "notes": notes})


def with_audit(info: HostInfo, settings: RunSettings, path: Path) -> HostInfo:
    """host.json with the audit's records; a report the test process spoiled is a note."""
    if not settings.audit:
        return info
    data = pinsseen.read_report(path)
    if data is None:
        note = "live-entropy audit: the test process wrote no usable report"
        return info.model_copy(update={"notes": [*info.notes, note]})
    try:
        return info.model_copy(update={"audit": Audit.model_validate(data)})
    except ValidationError as exc:
        where = ".".join(str(part) for part in exc.errors()[0]["loc"])[:80]
        note = f"live-entropy audit: report refused (field {where!r}: {exc.errors()[0]['msg']})"
        return info.model_copy(update={"notes": [*info.notes, note]})


def with_provenance(info: HostInfo, path: Path) -> HostInfo:
    """host.json with where the units under test came from (provenance.py's report, read
    with the report's size cap); a report the test process spoiled is a note."""
    data = pinsseen.read_report(path)
    if data is None:
        if not path.exists():
            return info  # no property test was called, or the plugin did not load
        note = "provenance: the test process wrote no usable report"
        return info.model_copy(update={"notes": [*info.notes, note]})
    try:
        return info.model_copy(update={"provenance": Provenance.model_validate(data)})
    except ValidationError as exc:
        where = ".".join(str(part) for part in exc.errors()[0]["loc"])[:80]
        note = f"provenance: report refused (field {where!r}: {exc.errors()[0]['msg'][:200]})"
        return info.model_copy(update={"notes": [*info.notes, note]})


def with_test_data(info: HostInfo, path: Path) -> HostInfo:
    """host.json with the data files the tests opened (datafiles.py's report, read with the
    report's size cap); a report the test process spoiled is a note, and no record."""
    data = pinsseen.read_report(path)
    if data is None:
        if not path.exists():
            return info  # not asked for (host B), or the plugin did not load
        note = "test data: the test process wrote no usable report"
        return info.model_copy(update={"notes": [*info.notes, note]})
    try:
        return info.model_copy(update={"test_data": TestData.model_validate(data)})
    except ValidationError as exc:
        where = ".".join(str(part) for part in exc.errors()[0]["loc"])[:80]
        note = f"test data: report refused (field {where!r}: {exc.errors()[0]['msg'][:200]})"
        return info.model_copy(update={"notes": [*info.notes, note]})


def with_hooks(info: HostInfo, path: Path) -> HostInfo:
    """host.json with the test process's hook and plugin inventory (hooks.json); one it did
    not write, or spoiled, is a note (the static scan still reads the hooks)."""
    data = pinsseen.read_report(path)
    if data is None:
        note = f"{HOOKS_UNUSABLE}the test process wrote no usable report"
        return info.model_copy(update={"notes": [*info.notes, note]})
    try:
        return info.model_copy(update={"hooks": HookInventory.model_validate(data)})
    except ValidationError as exc:
        where = ".".join(str(part) for part in exc.errors()[0]["loc"])[:80]
        note = f"{HOOKS_UNUSABLE}report refused (field {where!r}: {exc.errors()[0]['msg']})"
        return info.model_copy(update={"notes": [*info.notes, note]})


def record_conftest_failure(out: Path) -> bool:
    """A conftest that fails to import stops pytest (exit 4) before it writes JUnit XML: write
    one error case, so the host counts as failed like a module that fails at import."""
    log, junit = out / PYTEST_LOG, out / JUNIT_XML
    try:
        text = log.read_bytes()[-16384:].decode("utf-8", "replace")
    except OSError:
        return False
    start = text.find(_CONFTEST_FAILED)
    if start < 0 or junit.exists():
        return False
    first = text[start:].splitlines()[0]
    suite = ET.Element("testsuite", name="pytest", errors="1", failures="0", skipped="0", tests="1")
    case = ET.SubElement(suite, "testcase", classname="", name="conftest", time="0")
    ET.SubElement(case, "error", message=first).text = text[start:]
    root = ET.Element("testsuites")
    root.append(suite)
    ET.ElementTree(root).write(junit, encoding="utf-8", xml_declaration=True)
    return True


def last_line(path: Path, limit: int = 65536) -> str:
    """The last non-empty line of a log, for one-line messages."""
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, path.stat().st_size - limit))
            lines = handle.read().decode("utf-8", "replace").strip().splitlines()
    except OSError:
        return "no output"
    return lines[-1].strip() if lines else "no output"


def host_info(
    settings: RunSettings,
    launch: Launch,
    python: str,
    report: dict[str, Any] | None,
    returncode: int,
    started: tuple[str, float],
) -> HostInfo:
    manifest = settings.loaded.manifest
    claim = launch.temp_root
    applied, mismatch = pinsseen.verify_pins(
        manifest.pins, launch.expected, report, None if claim is None else claim.target
    )
    if report is None and returncode not in (0, 1, 2, 5):
        mismatch = []  # pytest did not get far enough to report: `outcome` says why
    isolation: list[str] = []
    notes = list(launch.notes) + pinsseen.in_process(report)
    dimensions: list[Variation] = []  # host A lists none
    if launch.hostb is not None:
        isolation, more = pinsseen.effects(launch.hostb, report, started[1])
        notes += more
        children = pinsseen.read_children(launch.scratch / CHILDREN_FILE)
        isolation += pinsseen.child_effects(launch.hostb, children, notes)
        seen = varied.Seen(
            launch.hostb, report, isolation, notes, manifest.pins, settings.revert, children
        )
        dimensions = varied.variations_of(seen)
    temp_root = report.get("gettempdir") if report else None
    imports = pinsseen.read_imports(launch.scratch / IMPORTS_FILE)
    commit = git.head_commit(settings.root)
    tree = _tree(settings, notes) if commit is not None else None
    return HostInfo(
        host=settings.host,
        gate_version=__version__,
        property_id=manifest.property_id,
        module=manifest.module,
        manifest_sha256=settings.loaded.sha256,
        returncode=returncode,
        fingerprint=pinsseen.fingerprint(report, settings.environ, isolated=settings.isolate),
        pins_applied=applied,
        pins_mismatch=mismatch,
        started_at=started[0],
        finished_at=utc_now(),
        isolated=settings.isolate,
        isolation=isolation,
        notes=notes,
        root=str(report["cwd"])
        if report and isinstance(report.get("cwd"), str)
        else str(launch.cwd),
        temp_root=str(temp_root) if temp_root else (str(claim.target) if claim else None),
        pytest_args=launch.pytest_args,
        python=python,
        distributions_sha256=_text(report, "distributions_sha256"),
        imported_from=imports.get("code", {}),
        imported_outside=imports.get("outside", []),
        imported_before_plugin=imports.get("early", []),
        rng_seed=report.get("rng_seed")
        if report and isinstance(report.get("rng_seed"), int)
        else None,
        test_order_seed=_order_seed(report),
        test_order=_test_order(report) if _order_seed(report) is not None else None,
        commit=commit,
        variations=dimensions,
        tree=tree,
        replay=replayplan.of(launch.hostb),
    )


def _tree(settings: RunSettings, notes: list[str]) -> TreeState | None:
    """The checkout against its commit at the end of the run (treestate); a tree git cannot
    read is a note (the judge then finds no `tree`: the run cannot be checked)."""
    try:
        return treestate.capture(settings.root, exclude=(settings.out,))
    except GateError as exc:
        notes.append(f"the working tree's state could not be taken: {exc.message}")
        return None


def _test_order(report: dict[str, Any] | None) -> TestOrder | None:
    """report.json's collection and run order (untrusted: strings, capped, or none at all)."""
    found = report.get("test_order") if report else None
    if not isinstance(found, dict) or found.get("truncated") is not False:
        return None
    lists = [found.get(k) for k in ("collected", "ran")]
    if not all(isinstance(v, list) and all(isinstance(n, str) for n in v) for v in lists):
        return None
    try:
        return TestOrder(collected=lists[0], ran=lists[1])
    except ValueError:  # more tests than host.json lists, or an id too long
        return None


def _order_seed(report: dict[str, Any] | None) -> int | None:
    """The seed of the shuffle the tests ran in (report.json's test_order; untrusted data)."""
    found = report.get("test_order") if report else None
    seed = found.get("seed") if isinstance(found, dict) else None
    valid = isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed <= 0xFFFFFFFF
    return seed if valid else None


def _text(report: dict[str, Any] | None, key: str) -> str | None:
    value = report.get(key) if report else None
    return value if isinstance(value, str) and len(value) <= 128 else None


def prepare_out(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
        # what an earlier run left here (its host steps' evidence included) is never read
        for name in (JUNIT_XML, HOST_JSON, PYTEST_LOG, layout.OUTCOMES_JSON, *EVIDENCE_FILES,
                     *layout.CRASH_FILES):  # fmt: skip
            (out / name).unlink(missing_ok=True)
    except OSError as exc:
        raise GateError(f"--out {out}: cannot write there: {exc.strerror}") from None


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
