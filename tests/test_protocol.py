"""testproc.protocol: one table of what the gate sets in the test process, read by both sides.

The scan guards every name the gate sets for its own use and every pinned pin's variable
(a test writing ENTROPY_CASSETTE passed the scan while ENTROPY_CASSETTE_SHA256 was caught);
real host runs dump what reached their test process, which must be exactly the table.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from entropy_action.hosts import launch, testfiles
from entropy_action.manifest import pinfile
from entropy_action.strength.mutation import harness
from entropy_action.testproc import protocol
from tests.helpers import Repo
from tests.test_run_host_a import MODULE, make_repo, manifest_yaml, settings
from tests.test_scan_helpers import PROPERTY, base, scan, write

DIGEST = "a" * 64
EVERY_PIN = f"""\
version: 1
property_id: invoice_total
module: {PROPERTY}
pins:
  clock_unix: 1768003200
  rng_seed: 9173
  tz: UTC
  lang: C.UTF-8
  temp_root: /tmp/entropy-protocol-scan
  cassette: cassette.json
  cassette_sha256: {DIGEST}
"""
NO_PIN = f"""\
version: 1
property_id: invoice_total
module: {PROPERTY}
pins:
  umask: "0027"
"""
PIN_NAMES = sorted({name for names in protocol.PIN_ENV.values() for name in names})
WRITER = """\
import os

from invoice_lib import total_for


def test_total():
    os.environ[{name!r}] = "x"
    assert total_for([1]) == 1
"""


def _write_scanned(repo: Repo, manifest: str, name: str) -> Any:
    base(repo, manifest=manifest, cassette_dot_json="{}\n")
    write(repo, tests__properties__test_invoice_dot_py=WRITER.format(name=name))
    return scan(repo)


# --- the scan reads the table -------------------------------------------------------------


@pytest.mark.parametrize("name", [*PIN_NAMES, *sorted(protocol.GATE_ENV)])
def test_a_write_to_any_variable_the_gate_sets_is_caught_like_the_cassettes_digest(
    repo: Repo, name: str
) -> None:
    scanned = _write_scanned(repo, EVERY_PIN, name)
    assert scanned.code == 1
    assert scanned.introduced == [("env_write", PROPERTY, 7)]
    message = scanned.findings[0]["message"]
    assert message.startswith(
        f"{name} written in property test_total: os.environ[{name!r}] = 'x' — the gate "
    )


def test_the_cassettes_path_is_guarded_as_its_digest_is(repo: Repo) -> None:
    """The gap: ENTROPY_CASSETTE was missing from the scan's own table."""
    found = []
    for name in ("ENTROPY_CASSETTE", "ENTROPY_CASSETTE_SHA256"):
        scanned = _write_scanned(repo, EVERY_PIN, name)
        found.append((scanned.introduced, scanned.findings[0]["message"].split(" — ")[1]))
    assert (
        found[0]
        == found[1]
        == (
            [("env_write", PROPERTY, 7)],
            "the gate pins it; changing it inside the test process hides what the pin guards",
        )
    )


@pytest.mark.parametrize("name", sorted(protocol.GATE_ENV))
def test_the_gates_own_variables_are_guarded_whatever_the_pins(repo: Repo, name: str) -> None:
    scanned = _write_scanned(repo, NO_PIN, name)
    assert scanned.introduced == [("env_write", PROPERTY, 7)]
    assert scanned.findings[0]["message"].endswith(
        "the gate sets it to run its own plugins; changing it tampers with it"
    )


@pytest.mark.parametrize("name", [n for n in PIN_NAMES if n not in protocol.ALWAYS_PINNED])
def test_an_unpinned_pins_variable_is_the_tests_own(repo: Repo, name: str) -> None:
    scanned = _write_scanned(repo, NO_PIN, name)
    assert (scanned.code, scanned.findings) == (0, [])


@pytest.mark.parametrize("name", sorted(protocol.PROCESS_ENV))
def test_the_processs_own_variables_stay_ordinary_test_code(repo: Repo, name: str) -> None:
    """HOME, PYTHONPATH, ...: the gate sets them too, but a test may set its own."""
    scanned = _write_scanned(repo, EVERY_PIN, name)
    assert (scanned.code, scanned.findings) == (0, [])


# --- the table itself ---------------------------------------------------------------------


def test_the_table_is_the_union_of_its_parts_and_the_parts_do_not_overlap() -> None:
    pins = set(PIN_NAMES)
    assert pins | protocol.GATE_ENV | protocol.PROCESS_ENV == protocol.GATE_SET_ENV
    assert not pins & protocol.GATE_ENV
    assert not pins & protocol.PROCESS_ENV
    assert not protocol.GATE_ENV & protocol.PROCESS_ENV
    assert all(name.startswith("ENTROPY_GATE_") for name in protocol.GATE_ENV)
    # The manifest may not name one of them as an `env` pin.
    for name in protocol.GATE_SET_ENV - protocol.PROCESS_ENV - protocol.GATE_ENV:
        assert name in pinfile.RESERVED_ENV or name.startswith("ENTROPY_"), name


def test_every_pin_the_manifest_knows_has_its_variables_in_the_table() -> None:
    """pinned_environ fails on a pin without a row; a row without a pin is dead."""
    fields = set(pinfile.Pins.model_fields) - {"env", "umask"}
    assert set(protocol.PIN_ENV) == fields | {"hash_seed"}


def test_the_copy_list_names_real_files_and_every_folder_gets_the_protocol() -> None:
    for source, module, folders in protocol.COPIES:
        assert (testfiles.TESTPROC / source).is_file(), source
        assert folders
        assert module.startswith("entropy_gate_") or module == protocol.CHILDSITE_MODULE
    every = {folder for _, _, where in protocol.COPIES for folder in where}
    assert every == {protocol.PLUGIN_FOLDER, protocol.CHILDSITE_FOLDER, protocol.PROBE_FOLDER}
    for folder in every:
        assert ("protocol.py", protocol.PROTOCOL_MODULE) in protocol.copies(folder)


def test_a_testproc_module_that_imports_the_protocol_is_copied_beside_it() -> None:
    """A sibling import without the copy would fail only inside the test process."""
    for source, _, folders in protocol.COPIES:
        text = (testfiles.TESTPROC / source).read_text(encoding="utf-8")
        if f"import {protocol.PROTOCOL_MODULE}" in text:
            for folder in folders:
                assert ("protocol.py", protocol.PROTOCOL_MODULE) in protocol.copies(folder)


def test_the_protocol_imports_nothing() -> None:
    """Copied alone into folders where nothing of the gate is importable."""
    text = (testfiles.TESTPROC / "protocol.py").read_text(encoding="utf-8")
    imports = [line for line in text.splitlines() if line.startswith(("import ", "from "))]
    assert imports == ["from __future__ import annotations"]


# --- what a real run sets is the table -----------------------------------------------------

DUMP_PROPERTY = """\
import json
import os

CALLER = json.loads(open({caller!r}, encoding="utf-8").read())
PYTEST_OWN = {{"PYTEST_CURRENT_TEST", "PYTEST_VERSION"}}  # pytest's, not the gate's


def _initial():
    with open("/proc/self/environ", "rb") as handle:
        entries = handle.read().split(b"\\0")
    pairs = (entry.decode().split("=", 1) for entry in entries if b"=" in entry)
    return dict(pairs)


def test_dump_what_the_gate_set():
    seen = {{}}
    for environ in (_initial(), dict(os.environ)):  # the plugin and the audit pop theirs
        seen.update(environ)
    names = sorted(k for k, v in seen.items() if CALLER.get(k) != v and k not in PYTEST_OWN)
    with open({dump!r}, "w", encoding="utf-8") as handle:
        json.dump(names, handle)
"""


def _caller() -> dict[str, str]:
    """The test runner's environment without anything the gate may set: what the test
    process holds beyond it, the gate put there."""
    return {
        k: v
        for k, v in os.environ.items()
        if k not in protocol.GATE_SET_ENV and not k.startswith(("ENTROPY_", "PYTEST_"))
    }


def _dump_run(tmp: Path, **options: Any) -> set[str]:
    caller, dump = tmp / "caller.json", tmp / "dump.json"
    environ = _caller()
    caller.write_text(json.dumps(environ), encoding="utf-8")
    digest = hashlib.sha256(b"{}\n").hexdigest()
    manifest = manifest_yaml(
        tmp / "entropy-tmp",
        env={"API_URL": "http://127.0.0.1:9"},
        extra_pins=f"cassette: cassette.json\ncassette_sha256: {digest}",
    )
    root = make_repo(
        tmp / "repo",
        {
            "entropy.yaml": manifest,
            "cassette.json": "{}\n",
            MODULE: DUMP_PROPERTY.format(caller=str(caller), dump=str(dump)),
        },
    )
    info = launch.run_host(settings(root, tmp / "out", environ, **options))
    assert info.pins_mismatch == []
    names: list[str] = json.loads(dump.read_text(encoding="utf-8"))
    return set(names)


CONTROL_A = {
    protocol.PLUGIN_ENV,
    protocol.AUDIT_ENV,
    protocol.GATE_HOST_ENV,
    protocol.MARKER_ENV,
    protocol.PATH_ENV,
    protocol.HYPOTHESIS_DIR_ENV,
}
ENV_PIN = {"API_URL"}


@pytest.fixture(scope="module")
def seen_a(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    return _dump_run(tmp_path_factory.mktemp("protocol-a"))


@pytest.fixture(scope="module")
def seen_b(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    return _dump_run(tmp_path_factory.mktemp("protocol-b"), isolate=True)


def test_host_a_sets_exactly_the_tables_variables_for_its_configuration(seen_a: set[str]) -> None:
    assert seen_a - ENV_PIN <= protocol.GATE_SET_ENV, "set by the runner, missing from protocol"
    assert seen_a == set(PIN_NAMES) | CONTROL_A | ENV_PIN


def test_host_b_sets_exactly_the_tables_variables_for_its_configuration(seen_b: set[str]) -> None:
    assert seen_b - ENV_PIN <= protocol.GATE_SET_ENV, "set by the runner, missing from protocol"
    clock = {"LD_PRELOAD", "FAKETIME"} & seen_b  # libfaketime's, where it is installed
    extra = {protocol.CHILD_ENV, protocol.LOCK_ENV, protocol.HOME_ENV}
    assert seen_b - clock - {"FAKETIME_DONT_FAKE_MONOTONIC"} == (
        set(PIN_NAMES) | CONTROL_A | extra | ENV_PIN
    )


def test_every_name_in_the_table_is_set_by_some_run(seen_a: set[str], seen_b: set[str]) -> None:
    """A row no run sets is a name one side stopped using."""
    unseen = protocol.GATE_SET_ENV - seen_a - seen_b
    elsewhere = {
        protocol.PROBE_ENV,  # the mutation runs' (below)
        protocol.PROFILE_ENV,  # host B on Windows
        *protocol.FAKETIME_ENV,  # host B where libfaketime is installed
    }
    assert unseen <= elsewhere


def test_the_mutation_runs_set_only_the_tables_variables(tmp_path: Path) -> None:
    root = make_repo(
        tmp_path / "repo",
        {"entropy.yaml": manifest_yaml(None), MODULE: "def test_one():\n    pass\n"},
    )
    loaded = pinfile.load(root / "entropy.yaml", repo_root=root)
    environ = _caller()
    space = harness.workspace(root, loaded, b"", environ, tmp_path / "scratch")
    added = {k for k, v in space.env.items() if environ.get(k) != v} | {protocol.PROBE_ENV}
    assert added <= protocol.GATE_SET_ENV
    assert {protocol.PLUGIN_ENV, protocol.GATE_HOST_ENV, protocol.PATH_ENV} <= added
    copied = {path.name for path in (tmp_path / "scratch" / protocol.PROBE_FOLDER).glob("*.py")}
    assert copied == {f"{module}.py" for _, module in protocol.copies(protocol.PROBE_FOLDER)}


STALE_PROPERTY = """\
import os

NAMES = {names!r}


def test_no_stale_value_reached_the_test_process():
    assert [name for name in NAMES if os.environ.get(name) == "stale"] == []
"""


def test_a_callers_stale_gate_variables_never_reach_host_a(tmp_path: Path) -> None:
    """What the gate sets is the gate's to set: a caller's left-over values are dropped
    (ENTROPY_GATE_CHILD and ENTROPY_GATE_PROBE used to pass through to host A)."""
    names = sorted(protocol.GATE_ENV)
    root = make_repo(
        tmp_path / "repo",
        {"entropy.yaml": manifest_yaml(None), MODULE: STALE_PROPERTY.format(names=names)},
    )
    environ = {**_caller(), **dict.fromkeys(names, "stale")}
    info = launch.run_host(settings(root, tmp_path / "out", environ))
    assert (info.returncode, info.pins_mismatch) == (0, [])
