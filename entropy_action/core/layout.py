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

from pathlib import Path

HOST_JSON = "host.json"
JUNIT_XML = "junit.xml"
PYTEST_LOG = "pytest.log"
OUTCOMES_JSON = "outcomes.json"
STRENGTH_JSON = "strength.json"
ATTRIBUTION_JSON = "attribution.json"
BASE_FOLDER = "base"
# A manifest that lists its properties: each one's report folder inside a host's folder.
PROPERTIES_FOLDER = "properties"
ERROR_JSON = "error.json"
CRASH_LOG = "faulthandler.log"

REPORT_FILES = (HOST_JSON, JUNIT_XML, PYTEST_LOG, OUTCOMES_JSON)  # all a host run writes
EVIDENCE_FILES = (STRENGTH_JSON, ATTRIBUTION_JSON)  # what its host steps leave beside it
CRASH_FILES = (CRASH_LOG,)  # what a run that died of a signal leaves too


def property_folder(host_folder: Path, property_id: str) -> Path:
    """Where property `property_id`'s report lies in a host's folder (a manifest that lists
    its properties); ids are identifiers (the manifest refuses '/' and leading dots)."""
    return host_folder / PROPERTIES_FOLDER / property_id
