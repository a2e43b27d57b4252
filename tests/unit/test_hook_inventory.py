"""The hook inventory in host.json (`hooks`): read with limits, judged against the base's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _pytest import hookspec
from pydantic import ValidationError

from entropy_action.core.findings import Finding
from entropy_action.core.hostinfo import HookEntry, HookInventory, HostInfo, ReplacedInternal
from entropy_action.hosts import hostjson
from entropy_action.verdict import hook_inventory


def entry(spec: str = "pytest_runtest_call", **over: Any) -> HookEntry:
    fields: dict[str, Any] = {
        "plugin": "tests/conftest.py",
        "spec": spec,
        "function": spec,
        "place": "repository",
        "path": "tests/conftest.py",
        "line": 4,
    }
    return HookEntry(**{**fields, **over})


def inventory(*hooks: HookEntry, replaced: tuple[ReplacedInternal, ...] = ()) -> HookInventory:
    return HookInventory(hooks=list(hooks), replaced=list(replaced))


RUNTEST = ReplacedInternal(
    target="_pytest.python.Function.runtest", place="repository", path="tests/conftest.py", line=9
)


def test_a_hook_the_base_run_lacked_is_a_finding() -> None:
    found = hook_inventory.findings([inventory(entry())], [inventory()], changed=None)
    assert [(f.kind, f.location()) for f in found] == [("report_tampering", "tests/conftest.py:4")]
    assert found[0].message == (
        "tests/conftest.py implements pytest_runtest_call, a hook the base's run did not have "
        "(run-time inventory): a runtest hook: it can run a test differently or swallow its "
        "failure"
    )


def test_the_same_spec_in_the_same_file_at_the_base_is_not_new_even_if_lines_moved() -> None:
    base = inventory(entry(line=40))
    assert hook_inventory.findings([inventory(entry())], [base], changed=None) == []


@pytest.mark.parametrize(
    ("spec", "kind"),
    [
        ("pytest_runtest_setup", "report_tampering"),
        ("pytest_runtestloop", "report_tampering"),
        ("pytest_pyfunc_call", "report_tampering"),
        ("pytest_report_teststatus", "report_tampering"),
        ("pytest_terminal_summary", "report_tampering"),
        ("pytest_collection_modifyitems", "collection_tampering"),
        ("pytest_collect_file", "collection_tampering"),
        ("pytest_ignore_collect", "collection_tampering"),
        ("pytest_itemcollected", "collection_tampering"),
        ("pytest_deselected", "collection_tampering"),
        ("pytest_sessionfinish", "report_tampering"),
        ("pytest_unconfigure", "report_tampering"),
        # pytest's hook reference: bootstrapping and initialization hooks that run before
        # collection and can change which tests run; the names skipif/xfail strings see
        ("pytest_configure", "collection_tampering"),
        ("pytest_sessionstart", "collection_tampering"),
        ("pytest_load_initial_conftests", "collection_tampering"),
        ("pytest_cmdline_main", "collection_tampering"),
        ("pytest_cmdline_parse", "collection_tampering"),
        ("pytest_cmdline_preparse", "collection_tampering"),
        ("pytest_plugin_registered", "collection_tampering"),
        ("pytest_markeval_namespace", "collection_tampering"),
        ("pytest_pycollect_makeitem", "collection_tampering"),
        ("pytest_pycollect_makemodule", "collection_tampering"),
        ("pytest_generate_tests", "collection_tampering"),
        ("pytest_collect_directory", "collection_tampering"),
        ("pytest_make_collect_report", "collection_tampering"),
        ("pytest_runtest_makereport", "report_tampering"),
        ("pytest_runtest_logreport", "report_tampering"),
        ("pytest_runtest_protocol", "report_tampering"),
        ("pytest_report_to_serializable", "report_tampering"),
        ("pytest_report_from_serializable", "report_tampering"),
    ],
)
def test_every_watched_spec_has_its_kind(spec: str, kind: str) -> None:
    found = hook_inventory.findings([inventory(entry(spec))], [inventory()], changed=None)
    assert [f.kind for f in found] == [kind]


@pytest.mark.parametrize(
    "spec",
    [
        "pytest_addoption",
        "pytest_addhooks",
        "pytest_report_header",
        "pytest_report_collectionfinish",
        "pytest_fixture_setup",
        "pytest_fixture_post_finalizer",
        "pytest_assertrepr_compare",
        "pytest_assertion_pass",
        "pytest_warning_recorded",
        "pytest_enter_pdb",
        "pytest_leave_pdb",
        "pytest_keyboard_interrupt",
    ],
)
def test_hooks_that_cannot_change_an_outcome_are_not_findings(spec: str) -> None:
    assert hook_inventory.findings([inventory(entry(spec))], [inventory()], changed=None) == []


@pytest.mark.parametrize("place", ["site-packages", "pytest", "gate", "unknown"])
def test_installed_plugins_and_pytests_own_are_never_the_patchs(place: str) -> None:
    hooks = inventory(entry(place=place, path="/venv/site-packages/xdist/plugin.py"))
    assert hook_inventory.findings([hooks], [], changed=None) == []
    assert hook_inventory.findings([hooks], [inventory()], changed=None) == []


def test_without_a_base_inventory_the_changed_files_decide() -> None:
    head = [inventory(entry())]
    assert hook_inventory.findings(head, [None], changed={"invoice_lib.py"}) == []
    assert len(hook_inventory.findings(head, [None], changed={"tests/conftest.py"})) == 1
    assert len(hook_inventory.findings(head, [None], changed=None)) == 1  # not known: counts


def test_without_a_base_inventory_a_hook_the_scan_found_unchanged_stood_there() -> None:
    standing = Finding(
        kind="report_tampering", path="tests/conftest.py", line=5, message="m", introduced=False
    )
    found = hook_inventory.findings(
        [inventory(entry())], [None], changed={"tests/conftest.py"}, static=[standing]
    )
    assert found == []


def test_a_hook_the_scan_already_reported_is_not_reported_twice() -> None:
    static = Finding(kind="report_tampering", path="tests/conftest.py", line=5, message="m")
    assert (
        hook_inventory.findings([inventory(entry())], [inventory()], changed=None, static=[static])
        == []
    )


def test_one_finding_for_a_hook_both_hosts_list() -> None:
    found = hook_inventory.findings([inventory(entry()), inventory(entry())], [], changed=None)
    assert len(found) == 1


def test_a_replaced_internal_is_new_unless_the_base_replaced_it_too() -> None:
    head = [inventory(replaced=(RUNTEST,))]
    found = hook_inventory.findings(head, [inventory()], changed=None)
    assert [(f.kind, f.location()) for f in found] == [("report_tampering", "tests/conftest.py:9")]
    assert "pytest's _pytest.python.Function.runtest was replaced at run time" in found[0].message
    assert hook_inventory.findings(head, [inventory(replaced=(RUNTEST,))], changed=None) == []
    outside = RUNTEST.model_copy(update={"place": "site-packages", "path": "/venv/x.py"})
    assert hook_inventory.findings([inventory(replaced=(outside,))], [None], changed=None) == []


# --- host.json's field is untrusted data ----------------------------------------------------


@pytest.mark.parametrize("path", ["../outside.py", "/abs/conftest.py", "", "a\\b.py"])
def test_a_repository_path_must_be_relative_and_inside(path: str) -> None:
    with pytest.raises(ValidationError, match="not a repository-relative path"):
        entry(path=path)


def test_an_outside_path_may_be_absolute_but_printable_and_capped() -> None:
    assert entry(place="site-packages", path="/venv/plugin.py").path == "/venv/plugin.py"
    with pytest.raises(ValidationError):
        entry(place="other", path="/x\x1b[31m.py")
    with pytest.raises(ValidationError):
        entry(place="other", path="/" + "x" * 1000)


def test_the_lists_are_capped_and_the_spec_is_a_hook_name() -> None:
    with pytest.raises(ValidationError):
        HookInventory(hooks=[entry()] * 1001)
    with pytest.raises(ValidationError):
        entry(spec="__import__('os')")
    with pytest.raises(ValidationError):
        ReplacedInternal(target="os.system", place="repository", path="a.py", line=1)
    with pytest.raises(ValidationError):
        HookInventory.model_validate({"hooks": [], "surprise": 1})


def _info() -> HostInfo:
    return HostInfo.model_validate(
        {
            "host": "a",
            "gate_version": "0",
            "property_id": "p",
            "module": "tests/test_p.py",
            "manifest_sha256": "0" * 64,
            "returncode": 0,
            "fingerprint": {
                "python_version": "3.11",
                "python_implementation": "CPython",
                "platform": "linux",
                "hostname_sha256": "0" * 64,
                "locale": "C",
                "tz": "UTC",
                "uid": 0,
                "isolated": False,
            },
            "pins_applied": {},
            "started_at": "2026-01-01T00:00:00Z",
            "finished_at": "2026-01-01T00:00:01Z",
            "isolated": False,
            "root": "/repo",
            "python": "/usr/bin/python3",
        }
    )


def test_a_spoiled_inventory_is_a_note_never_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    path.write_text(json.dumps({"hooks": [{**entry().model_dump(), "path": "../../etc"}]}))
    info = hostjson.with_hooks(_info(), path)
    assert info.hooks is None
    assert info.notes == [
        "hook inventory: report refused (field 'hooks.0': Value error, not a "
        "repository-relative path: '../../etc')"
    ]
    path.write_text("[1, 2")
    assert hostjson.with_hooks(_info(), path).notes == [
        "hook inventory: the test process wrote no usable report"
    ]
    path.unlink()
    assert hostjson.with_hooks(_info(), path).hooks is None


def test_a_sound_inventory_reaches_host_json(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    path.write_text(json.dumps(inventory(entry(), replaced=(RUNTEST,)).model_dump()))
    info = hostjson.with_hooks(_info(), path)
    assert info.hooks == inventory(entry(), replaced=(RUNTEST,))
    assert HostInfo.model_validate_json(info.model_dump_json()) == info  # host.json round trip


def test_every_hook_of_the_installed_pytest_is_decided() -> None:
    """Each spec in pytest's hook reference (the installed `_pytest.hookspec`) is either in
    the table or listed here as unable to change what runs or what an outcome says: a hook
    pytest adds fails this test until it is decided."""
    specs = {name for name in dir(hookspec) if name.startswith("pytest_")}
    inert = {
        "pytest_addoption", "pytest_addhooks", "pytest_report_header",
        "pytest_report_collectionfinish", "pytest_fixture_setup", "pytest_fixture_post_finalizer",
        "pytest_assertrepr_compare", "pytest_assertion_pass", "pytest_warning_recorded",
        "pytest_enter_pdb", "pytest_leave_pdb", "pytest_keyboard_interrupt",
        "pytest_exception_interact", "pytest_internalerror",
    }  # fmt: skip
    undecided = {s for s in specs - inert if hook_inventory.category(s) is None}
    assert undecided == set()


def test_a_configure_hook_the_scan_found_only_registering_markers_is_not_a_finding() -> None:
    found = hook_inventory.findings(
        [inventory(entry("pytest_configure"))],
        [None],
        changed=None,
        quiet=[("tests/conftest.py", 4)],
    )
    assert found == []
    elsewhere = [("tests/other.py", 4)]
    found = hook_inventory.findings(
        [inventory(entry("pytest_configure"))], [None], changed=None, quiet=elsewhere
    )
    assert [f.kind for f in found] == ["collection_tampering"]
