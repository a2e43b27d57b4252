"""The names of a host folder's files, defined once: what a host run writes, what its host
steps leave beside it, and where the base ref's run goes.

A host folder (`entropy-gate run --out DIR`, the host jobs' artifacts) holds:

    DIR/host.json       what the run saw (core.hostinfo.HostInfo)
    DIR/junit.xml       pytest's report
    DIR/pytest.log      the run's terminal output
    DIR/outcomes.json   the gate's own record of what its plugin said (evidence.outcomes)
    DIR/faulthandler.log  where pytest died of a fatal signal, when it did (hosts.crashlog)
    DIR/strength.json   host A's strength step (evidence.stepfiles)
    DIR/attribution.json  host B's attribution re-runs (evidence.stepfiles)
    DIR/base/           the base ref's module run on the same host (a host folder itself)

A manifest that lists its properties gives each one such a folder, DIR/properties/ID/.
"""

from __future__ import annotations

import shutil
from pathlib import Path

HOST_JSON = "host.json"
JUNIT_XML = "junit.xml"
PYTEST_LOG = "pytest.log"
OUTCOMES_JSON = "outcomes.json"
STRENGTH_JSON = "strength.json"
ATTRIBUTION_JSON = "attribution.json"
PROBES_JSON = "probes.json"  # host B's order probes (gate.orderdep.probe_orders)
BASE_FOLDER = "base"
# A manifest that lists its properties: each one's report folder inside a host's folder.
PROPERTIES_FOLDER = "properties"
ERROR_JSON = "error.json"
CRASH_LOG = "faulthandler.log"

REPORT_FILES = (HOST_JSON, JUNIT_XML, PYTEST_LOG, OUTCOMES_JSON)  # all a host run writes
# what its host steps leave beside it
EVIDENCE_FILES = (STRENGTH_JSON, ATTRIBUTION_JSON, PROBES_JSON)
CRASH_FILES = (CRASH_LOG,)  # what a run that died of a signal leaves too


def property_folder(host_folder: Path, property_id: str) -> Path:
    """Where property `property_id`'s report lies in a host's folder (a manifest that lists
    its properties); ids are identifiers (the manifest refuses '/' and leading dots)."""
    return host_folder / PROPERTIES_FOLDER / property_id


def as_uploaded(out: Path) -> None:
    """Rearrange a local gate's folder (`gate --out OUT`) into the layout the workflow's host
    jobs upload and `verdict` reads: OUT/host-a and OUT/host-b, each with the base ref's run
    on that host in base/ and, for a manifest that lists its properties, each property's
    report in properties/ID/ (its base run in properties/ID/base/). The gate writes OUT/base-a
    and OUT/properties/ID/host-a while it runs; a folder already in place is replaced."""
    _move_bases(out, out)
    listed = out / PROPERTIES_FOLDER
    if not listed.is_dir():
        return
    for folder in sorted(p for p in listed.iterdir() if p.is_dir()):
        _move_bases(folder, folder)
        for host in ("a", "b"):
            source = folder / f"host-{host}"
            if source.is_dir():
                _replace(source, property_folder(out / f"host-{host}", folder.name))
    shutil.rmtree(listed)


def _move_bases(out: Path, hosts: Path) -> None:
    for host in ("a", "b"):
        base = out / f"base-{host}"
        if base.is_dir():
            _replace(base, hosts / f"host-{host}" / BASE_FOLDER)


def _replace(source: Path, target: Path) -> None:
    if target.exists():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    source.rename(target)
