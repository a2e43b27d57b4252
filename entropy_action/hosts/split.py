"""One pytest session over several properties' modules, split into each property's folder.

Properties whose effective pins and run options are equal (manifest.groups) run in one
session per host (hosts.sessions); this module turns that session's report folder into one
folder per property, each what a run of that property alone leaves (core.layout):

- junit.xml: the session's cases of the property's module (by the collecting module:
  classname, or the file of a collection error);
- outcomes.json: the gate's record of the same tests, its counts from the channel's counts
  per test file;
- host.json: the property's id, module and manifest sha256 (its view's), the returncode its
  own cases give, its own tests' audit records and replacements; what the session saw as a
  whole (fingerprint, pins, isolation, notes, imports, the hook inventory, provenance units)
  copied;
- pytest.log: the session's, with a last line that says so and gives the property's counts.

A case or count that belongs to no module of the session (a conftest that failed to import,
a package's collection error) goes to every property: each is judged with it. A session
report the gate cannot read (pytest killed, rewritten after the tests ran, no junit.xml) is
copied unsplit into each folder, whose read then fails as the session's does.
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from defusedxml import ElementTree as safe_etree

from entropy_action.core.errors import GateError
from entropy_action.core.hostinfo import Audit, HostInfo, Provenance
from entropy_action.core.layout import ERROR_JSON, HOST_JSON, JUNIT_XML, OUTCOMES_JSON, PYTEST_LOG
from entropy_action.evidence import hostreport, ids
from entropy_action.evidence.bounded import read_json_object
from entropy_action.evidence.outcomes import MAX_OUTCOMES_JSON
from entropy_action.hosts.channel import OTHER_FILES, file_of
from entropy_action.hosts.hostjson import prepare_out, write_host_json
from entropy_action.manifest.pinfile import LoadedManifest

_BAD = ("failure", "error")


def split(
    session: Path, info: HostInfo, views: Sequence[LoadedManifest], folders: Sequence[Path]
) -> list[HostInfo]:
    """Each view's folder from the session's report folder; the host.json written to each."""
    modules = [view.manifest.module for view in views]
    try:
        hostreport.read_host(session, modules)  # junit.xml, the channel and the summary agree
    except GateError:
        return [
            _unsplit(session, info, view, folder)
            for view, folder in zip(views, folders, strict=True)
        ]
    suites = _cases(session / JUNIT_XML, modules)
    every = [case for cases in suites.values() for case in cases]
    record = read_json_object(session / OUTCOMES_JSON, MAX_OUTCOMES_JSON, "the gate's record")
    written = []
    for view, folder in zip(views, folders, strict=True):
        module = view.manifest.module
        cases = suites.get(module, []) + suites.get("", [])
        part = _outcomes(record, module, modules)
        _prepare(folder)
        try:
            _write_junit(folder / JUNIT_XML, cases)
            (folder / OUTCOMES_JSON).write_text(
                json.dumps(part, separators=(",", ":")) + "\n", encoding="utf-8"
            )
            _write_log(session / PYTEST_LOG, folder / PYTEST_LOG, view, modules, part["counts"])
        except OSError as exc:  # a full disk, say
            raise GateError(
                f"{folder}: cannot write the property's report: {exc.strerror}"
            ) from None
        one = _info(info, view, modules, cases, part, _explained(every, record))
        write_host_json(folder / HOST_JSON, one)
        written.append(one)
    return written


def owner(nodeid_file: str, modules: Sequence[str]) -> str:
    """The module a test file belongs to ("" for none of them)."""
    return nodeid_file if nodeid_file in modules else ""


# --- junit.xml -------------------------------------------------------------------------------


def _cases(path: Path, modules: Sequence[str]) -> dict[str, list[ET.Element]]:
    """The session's testcase elements by module ("": no module's). read_host has read the
    file with its caps; this second read refuses a DTD too."""
    found: dict[str, list[ET.Element]] = {}
    for case in safe_etree.parse(path, forbid_dtd=True).getroot().iter("testcase"):
        found.setdefault(_module_of(case, modules), []).append(case)
    return found


def _module_of(case: ET.Element, modules: Sequence[str]) -> str:
    classname, name = case.get("classname", ""), case.get("name", "")
    for module in modules:
        raw = ids.node_id(case.get("file"), classname, name, module)
        if raw == module or raw.startswith(module + "::"):
            return module
    return ""


def _write_junit(path: Path, cases: list[ET.Element]) -> None:
    suite = ET.Element("testsuite", name="pytest")
    counts = {"errors": 0, "failures": 0, "skipped": 0}
    for case in cases:
        suite.append(case)
        for child, key in (("error", "errors"), ("failure", "failures"), ("skipped", "skipped")):
            counts[key] += case.find(child) is not None
    suite.attrib.update({key: str(value) for key, value in counts.items()})
    suite.set("tests", str(len(cases)))
    root = ET.Element("testsuites", name="pytest tests")
    root.append(suite)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


# --- outcomes.json ---------------------------------------------------------------------------


def _outcomes(record: dict[str, Any], module: str, modules: Sequence[str]) -> dict[str, Any]:
    """The record's tests, collection errors and counts of `module` and of no module."""

    def mine(raw: str) -> bool:
        return owner(file_of(raw), modules) in ("", module)

    counts: dict[str, int] = {}
    by_file = record.get("file_counts")
    for file, cats in (by_file if isinstance(by_file, dict) else {}).items():
        if file == OTHER_FILES or mine(file):
            for cat, number in cats.items():
                counts[cat] = counts.get(cat, 0) + int(number)
    tests = record.get("tests") or {}
    kept = {key: value for key, value in record.items() if key != "file_counts"}
    return {
        **kept,
        "tests": {raw: outcome for raw, outcome in tests.items() if mine(raw)},
        "collect_errors": [raw for raw in record.get("collect_errors") or [] if mine(raw)],
        "counts": counts,
    }


# --- host.json -------------------------------------------------------------------------------


def _info(
    info: HostInfo,
    view: LoadedManifest,
    modules: Sequence[str],
    cases: list[ET.Element],
    part: dict[str, Any],
    explained: bool,
) -> HostInfo:
    module = view.manifest.module

    def mine(test: str | None) -> bool:
        return test is None or owner(file_of(test), modules) in ("", module)

    audit = info.audit
    if audit is not None:
        audit = Audit(
            mechanism=audit.mechanism,
            unseen=audit.unseen,
            records=[record for record in audit.records if mine(record.test)],
            test_records=[record for record in audit.test_records if mine(record.test)],
            dropped=audit.dropped,
        )
    provenance = info.provenance
    if provenance is not None:
        provenance = Provenance(
            units=provenance.units,
            replaced=[entry for entry in provenance.replaced if mine(entry.test)],
            dropped=provenance.dropped,
        )
    data = info.test_data
    if data is not None:
        data = data.model_copy(update={"files": [f for f in data.files if mine(f.test)]})
    channel = info.channel
    if channel is not None:
        channel = channel.model_copy(update={"tests": len(part["tests"])})
    return info.model_copy(
        update={
            "property_id": view.manifest.property_id,
            "module": module,
            "manifest_sha256": view.sha256,
            "returncode": _returncode(info.returncode, cases, part, explained=explained),
            "audit": audit,
            "provenance": provenance,
            "test_data": data,
            "channel": channel,
        }
    )


def _explained(cases: list[ET.Element], record: dict[str, Any]) -> bool:
    """Whether the session's exit code 1 is its cases' (a failure, an error, a collection
    error), not something no case shows (a coverage threshold, a hook's exit status)."""
    if not _ran_all(record):
        return False  # stopped at a failure (-x in addopts): the unrun tests are no pass
    return bool(record.get("collect_errors")) or any(_bad(case) for case in cases)


def _ran_all(record: dict[str, Any]) -> bool:
    """Whether the channel heard a report of every test the session collected."""
    end = record.get("end")
    collected = end.get("collected") if isinstance(end, dict) else None
    if not isinstance(collected, int):
        return False
    heard = sum(1 for raw in record.get("tests") or {} if "::" in raw)
    return heard >= collected


def _returncode(
    session: int, cases: list[ET.Element], part: dict[str, Any], *, explained: bool
) -> int:
    """What pytest would have exited with for this property's part alone. The session runs
    with --continue-on-collection-errors, so a collection error exits 1 there and 2 alone.
    Any other code (interrupted, an internal error, none collected at all, a kill), or a 1
    that no case explains, is every property's: none of them passes on it."""
    if session not in (0, 1) or (session == 1 and not explained):
        return session
    if part["collect_errors"] or any(_collection_error(case) for case in cases):
        return 2
    if any(_bad(case) for case in cases):
        return 1
    return 0 if cases else 5


def _bad(case: ET.Element) -> bool:
    return any(case.find(bad) is not None for bad in _BAD)


def _collection_error(case: ET.Element) -> bool:
    return not case.get("classname") and case.find("error") is not None


# --- pytest.log and the unsplit copy ---------------------------------------------------------


def _write_log(
    source: Path, target: Path, view: LoadedManifest, modules: Sequence[str], counts: dict[str, int]
) -> None:
    """The session's log and a last line: the property's part, in pytest's summary form (the
    session's own summary has been checked against the gate's channel)."""
    shutil.copyfile(source, target)
    shown = ", ".join(f"{n} {cat}" for cat, n in sorted(counts.items()) if n and cat != "warnings")
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(
            f"\nentropy-gate: one session ran {len(modules)} property modules "
            f"({', '.join(modules)}); its summary above counts them all\n"
            f"= {shown or '0 passed'} in 0.00s "
            f"(property {view.manifest.property_id}, {view.manifest.module}, as the gate's "
            "channel heard it) =\n"
        )


def _unsplit(session: Path, info: HostInfo, view: LoadedManifest, folder: Path) -> HostInfo:
    """A session report the gate cannot read, copied whole: the property's read fails alike."""
    _prepare(folder)
    for name in (JUNIT_XML, OUTCOMES_JSON, PYTEST_LOG):
        try:
            if (session / name).is_file():
                shutil.copyfile(session / name, folder / name)
        except OSError as exc:
            raise GateError(
                f"{folder / name}: cannot copy the session's report: {exc.strerror}"
            ) from None
    one = info.model_copy(
        update={
            "property_id": view.manifest.property_id,
            "module": view.manifest.module,
            "manifest_sha256": view.sha256,
        }
    )
    write_host_json(folder / HOST_JSON, one)
    return one


def _prepare(folder: Path) -> None:
    prepare_out(folder)
    (folder / ERROR_JSON).unlink(missing_ok=True)
