"""The gate's protected configuration: real git repositories, the base from git objects."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from entropy_action import scan
from entropy_action.gate import demo
from entropy_action.manifest import baseline
from entropy_action.manifest.pinfile import DEFAULT_PROTECTED_PATHS
from entropy_action.render import checkrun, markdown, summary
from entropy_action.scan import protected
from entropy_action.verdict.classify import Evidence, classify
from tests.support.helpers import Repo

CALLER = """\
name: entropy-gate
on: pull_request
jobs:
  gate:
    uses: example/entropy-gate/.github/workflows/entropy-gate.yml@0123456789abcdef
    with:
      install: pip install -e .
"""
CODEOWNERS = "* @maintainers\n"
PATCHES = {patch.name: patch for patch in demo.patches()}


def _base(repo: Repo, tmp_path: Path, files: dict[str, str]) -> str:
    """The demo's base commit, with `files` (the caller workflow, CODEOWNERS) on top."""
    demo.build_base(repo.path, clock_unix=int(time.time()) // 86400 * 86400, temp_root=tmp_path)
    for relative, text in files.items():
        repo.write(relative, text)
    return repo.commit("base: the gate's caller and owners")


def _check(repo: Repo, base: str) -> protected.Protected:
    return protected.check(baseline.check(repo.path / "entropy.yaml", base, None))


def _found(result: protected.Protected) -> list[tuple[str, int]]:
    assert all(f.kind == "gate_config_changed" and f.introduced for f in result.findings)
    return [(f.path, f.line) for f in result.findings]


@pytest.fixture
def guarded(repo: Repo, tmp_path: Path) -> tuple[Repo, str]:
    files = {".github/workflows/entropy-gate.yml": CALLER, ".github/CODEOWNERS": CODEOWNERS}
    return repo, _base(repo, tmp_path / "pins-tmp", files)


@pytest.mark.parametrize(
    ("diff", "line"),
    [
        (b"", 1),
        (b"Binary files a/x and b/x differ\n", 1),
        (b"diff --git a/x b/x\nold mode 100644\nnew mode 100755\n", 1),
        (b"@@ -7 +7 @@\n-a\n+b\n", 7),
        (b"@@ -3,0 +4,2 @@\n+a\n+b\n@@ -9 +11 @@\n-c\n+d\n", 4),
        (b"@@ -5,2 +4,0 @@\n-a\n-b\n", 4),  # a pure removal: the line before it
        (b"@@ -1 +0,0 @@\n-a\n", 1),  # the whole file emptied
    ],
)
def test_the_first_changed_head_line_is_read_from_the_first_hunk(diff: bytes, line: int) -> None:
    assert protected.first_head_line(diff) == line


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (".github/workflows/entropy-gate.yml", True),
        (".github/workflows/sub/x.yaml", True),
        (".github/workflowsx/x.yml", False),
        (".github/CODEOWNERS", True),
        ("CODEOWNERS", True),
        ("docs/CODEOWNERS", True),
        ("src/CODEOWNERS", False),
        ("CODEOWNERS.bak", False),
        ("codeowners", False),
    ],
)
def test_an_entry_is_an_exact_file_or_a_folder_ending_in_a_slash(path: str, expected: bool) -> None:
    assert protected.matches(path, DEFAULT_PROTECTED_PATHS) is expected


def test_an_edited_caller_input_is_found_at_its_line(guarded: tuple[Repo, str]) -> None:
    repo, base = guarded
    repo.write(".github/workflows/entropy-gate.yml", CALLER.replace("-e .", "-e . && exit 0"))
    result = _check(repo, base)
    assert _found(result) == [(".github/workflows/entropy-gate.yml", 7)]
    message = result.findings[0].message
    assert message.startswith(".github/workflows/entropy-gate.yml is the gate's own configuration")
    assert "constraints.protected_paths" in message
    assert "landed by a maintainer in a change of its own" in message


def test_codeowners_added_deleted_and_renamed_files_are_each_found(
    guarded: tuple[Repo, str],
) -> None:
    repo, base = guarded
    repo.write(".github/CODEOWNERS", CODEOWNERS + "entropy.yaml @someone-else\n")
    repo.write("CODEOWNERS", "* @me\n")  # added (untracked: the work tree is the head)
    os.rename(
        repo.path / ".github/workflows/entropy-gate.yml",
        repo.path / ".github/workflows/renamed.yml",
    )
    repo.write("README.md", "not protected\n")
    assert _found(_check(repo, base)) == [
        (".github/CODEOWNERS", 2),
        (".github/workflows/entropy-gate.yml", 1),  # gone: line 1
        (".github/workflows/renamed.yml", 1),
        ("CODEOWNERS", 1),
    ]


@pytest.mark.parametrize("staged", [False, True], ids=["committed", "staged"])
def test_a_protected_file_moved_out_of_its_folder_by_git_mv_is_found(
    guarded: tuple[Repo, str], staged: bool
) -> None:
    """git's rename detection names only where a moved file went (unprotected): the
    path it left is a change of the protected set too."""
    repo, base = guarded
    repo.git("mv", ".github/CODEOWNERS", "OWNERS.txt")
    if not staged:
        repo.commit("move the owners")
    (check,) = baseline.check_all(repo.path / "entropy.yaml", base, None, staged=staged).checks
    assert _found(protected.check(check)) == [(".github/CODEOWNERS", 1)]


def test_a_deleted_protected_file_is_found_at_line_1(guarded: tuple[Repo, str]) -> None:
    repo, base = guarded
    repo.remove(".github/CODEOWNERS")
    repo.commit("drop the owners")
    assert _found(_check(repo, base)) == [(".github/CODEOWNERS", 1)]


def test_a_symlink_a_folder_and_a_binary_file_are_found_without_a_crash(
    guarded: tuple[Repo, str],
) -> None:
    repo, base = guarded
    repo.remove(".github/CODEOWNERS")
    (repo.path / ".github/CODEOWNERS").symlink_to("../README.md")
    wf = repo.path / ".github/workflows/entropy-gate.yml"
    wf.unlink()
    wf.mkdir()
    (wf / "inner.yml").write_text("x: 1\n", encoding="utf-8")
    (repo.path / ".github/workflows/blob.yml").write_bytes(b"\x00\xff\xfe binary")
    found = _found(_check(repo, base))
    assert found == [
        (".github/CODEOWNERS", 1),
        (".github/workflows/blob.yml", 1),
        (".github/workflows/entropy-gate.yml", 1),
        (".github/workflows/entropy-gate.yml/inner.yml", 1),
    ]


def test_an_undecodable_file_name_is_found_at_line_1(guarded: tuple[Repo, str]) -> None:
    repo, base = guarded
    name = os.fsencode(repo.path / ".github/workflows") + b"/caf\xe9.yml"
    with open(name, "wb") as handle:
        handle.write(b"on: push\n")
    result = _check(repo, base)
    assert _found(result) == [(".github/workflows/caf\ufffd.yml", 1)]
    json.dumps([f.model_dump(mode="json") for f in result.findings])  # writable as JSON


def test_an_unchanged_configuration_gives_nothing(guarded: tuple[Repo, str]) -> None:
    repo, base = guarded
    demo.apply_patch(repo.path, PATCHES["honest-fix"])
    assert _check(repo, base) == protected.Protected()


def test_a_custom_protected_set_protects_that_file_and_only_that(
    repo: Repo, tmp_path: Path
) -> None:
    base = _base(repo, tmp_path, {"conftest.py": "", ".github/CODEOWNERS": CODEOWNERS})
    text = (repo.path / "entropy.yaml").read_text(encoding="utf-8")
    custom = '  require_host_b: true\n  protected_paths: ["conftest.py"]\n'
    repo.write("entropy.yaml", text.replace("  require_host_b: true\n", custom))
    base = repo.commit("protect conftest.py")
    repo.write("conftest.py", "collect_ignore = ['tests']\n")
    repo.write(".github/CODEOWNERS", "* @anyone\n")
    assert _found(_check(repo, base)) == [("conftest.py", 1)]


def test_introducing_the_gate_with_its_workflow_is_allowed(repo: Repo, tmp_path: Path) -> None:
    repo.write("README.md", "before the gate\n")
    base = repo.commit("no manifest yet")
    shutil.copytree(demo.DATA / "base", repo.path, dirs_exist_ok=True, ignore=demo.CACHES)
    text = (repo.path / "entropy.yaml").read_text(encoding="utf-8")
    filled = text.replace("{clock_unix}", "86400").replace("{temp_root}", str(tmp_path / "t"))
    repo.write("entropy.yaml", filled)
    repo.write(".github/workflows/entropy-gate.yml", CALLER)
    repo.write(".github/CODEOWNERS", CODEOWNERS)
    check = baseline.check(repo.path / "entropy.yaml", base, None)
    assert check.base is None
    assert protected.check(check) == protected.Protected()
    assert not [f for f in scan.scan(check).findings if f.kind == "gate_config_changed"]


def test_adding_the_first_caller_under_an_existing_manifest_is_allowed_with_a_note(
    repo: Repo, tmp_path: Path
) -> None:
    base = _base(repo, tmp_path, {".github/workflows/lint.yml": "jobs:\n  a:\n    uses: x/y@1\n"})
    repo.write(".github/workflows/entropy-gate.yml", CALLER)
    result = _check(repo, base)
    assert result.findings == ()
    assert result.notes == (
        ".github/workflows/entropy-gate.yml: added by the patch while no workflow at the base "
        "calls entropy-gate; introducing the gate's caller is allowed "
        "(constraints.protected_paths protects it from the next change on)",
    )
    scanned = scan.scan(baseline.check(repo.path / "entropy.yaml", base, None))
    assert result.notes[0] in scanned.notes


def test_a_second_caller_added_beside_the_first_is_found(guarded: tuple[Repo, str]) -> None:
    repo, base = guarded
    repo.write(".github/workflows/other.yml", CALLER)
    assert _found(_check(repo, base)) == [(".github/workflows/other.yml", 1)]


def test_the_scan_reports_them_as_introduced_findings(guarded: tuple[Repo, str]) -> None:
    repo, base = guarded
    demo.apply_patch(repo.path, PATCHES["honest-fix"])
    repo.write(".github/CODEOWNERS", "* @me\n")
    findings: list[Any] = list(
        scan.scan(baseline.check(repo.path / "entropy.yaml", base, None)).findings
    )
    assert [(f.kind, f.path, f.line, f.introduced) for f in findings] == [
        ("gate_config_changed", ".github/CODEOWNERS", 1, True)
    ]
    result = repo.cli("scan", "--base-ref", base)
    assert result.code == 1
    assert result.out.startswith(".github/CODEOWNERS:1: .github/CODEOWNERS is the gate's own")
    assert result.out.endswith(
        "scan: 1 finding(s) introduced by the patch, 0 pre-existing (notices)\n"
    )


def test_every_reporter_names_the_file_and_line(guarded: tuple[Repo, str]) -> None:
    repo, base = guarded
    repo.write(".github/workflows/entropy-gate.yml", CALLER.replace("-e .", "-e . && exit 0"))
    found = _check(repo, base).findings
    verdict = classify(Evidence(host_a="pass", host_b="pass", findings=found))
    [annotation] = checkrun.list_annotations(verdict, manifest_path="entropy.yaml")
    assert (annotation.path, annotation.line, annotation.level) == (
        ".github/workflows/entropy-gate.yml",
        7,
        "failure",
    )
    assert annotation.title == "entropy-gate: gate_config_changed"
    assert f".github/workflows/entropy-gate.yml:7: {found[0].message}" in summary.render_text(
        verdict
    )
    html = markdown.render(verdict)
    assert "**gate_config_changed**" in html
    assert "| pass | pass | yes (gate configuration **changed**) | none | `pin_mutation` |" in html


def test_the_scan_command_annotates_it_as_an_error_in_a_workflow(
    guarded: tuple[Repo, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, base = guarded
    repo.write(".github/workflows/entropy-gate.yml", CALLER.replace("-e .", "-e . && exit 0"))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = repo.cli("scan", "--base-ref", base)
    assert result.code == 1
    assert "::error file=.github/workflows/entropy-gate.yml,line=7," in result.out
