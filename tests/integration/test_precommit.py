"""`entropy-gate pre-commit`: the staged change against HEAD, read from git's index.

Real git repositories; the CLI in-process (`Repo.cli`) and, at the end, as a real
`.git/hooks/pre-commit` that `git commit` runs. The hook under the real `pre-commit`
framework is tests/integration/test_precommit_hook.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.integration.test_scan_helpers import CLEAN, INVOICE_LIB, MANIFEST, PROPERTY
from tests.support.helpers import Repo

SKIPPED = CLEAN.replace("def test_total", '@pytest.mark.skip(reason="flaky")\ndef test_total')
SKIPPED = "import pytest\n" + SKIPPED
SKIP_LINE = SKIPPED.splitlines().index("def test_total():")  # 1-based line of the marker
SKIP_FINDING = (
    f"{PROPERTY}:{SKIP_LINE}: skip marker 'skip' on property test_total: "
    "pytest.mark.skip(reason='flaky') — it skips the property unconditionally"
)
SUMMARY = (
    "entropy-gate pre-commit: {n} finding(s) in the staged change; "
    "`entropy-gate gate --base-ref HEAD` runs the whole gate\n"
)


def adopted(repo: Repo) -> None:
    repo.write("entropy.yaml", MANIFEST)
    repo.write(PROPERTY, CLEAN)
    repo.write("invoice_lib.py", INVOICE_LIB)
    repo.write("README.md", "# Invoices\n")
    repo.commit("base")


def stage(repo: Repo, relative: str, text: str) -> None:
    repo.write(relative, text)
    repo.git("add", relative)


def test_a_staged_skip_marker_fails_naming_its_line(repo: Repo) -> None:
    adopted(repo)
    stage(repo, PROPERTY, SKIPPED)
    got = repo.cli("pre-commit")
    assert (got.code, got.out) == (1, SKIP_FINDING + "\n")
    assert got.err == SUMMARY.format(n=1)


def test_a_staged_docs_change_passes_silently(repo: Repo) -> None:
    adopted(repo)
    stage(repo, "README.md", "# Invoices\n\nMore docs.\n")
    got = repo.cli("pre-commit")
    assert (got.code, got.out, got.err) == (0, "", "")


def test_a_skip_marker_in_the_work_tree_only_is_not_in_the_commit(repo: Repo) -> None:
    adopted(repo)
    repo.write(PROPERTY, SKIPPED)  # edited, never staged
    repo.write("tests/properties/conftest.py", "import pytest\n")  # untracked
    assert repo.cli("pre-commit").code == 0


def test_the_index_is_read_even_when_the_work_tree_undoes_the_staged_marker(repo: Repo) -> None:
    adopted(repo)
    stage(repo, PROPERTY, SKIPPED)
    repo.write(PROPERTY, CLEAN)  # the work tree looks clean; the commit would not be
    got = repo.cli("pre-commit")
    assert (got.code, got.out) == (1, SKIP_FINDING + "\n")


def test_a_marker_that_stood_at_head_is_not_a_finding_of_the_staged_change(repo: Repo) -> None:
    adopted(repo)
    stage(repo, PROPERTY, SKIPPED)
    repo.commit("the marker, committed without the hook")
    stage(repo, "README.md", "# Invoices\n\nMore docs.\n")
    assert repo.cli("pre-commit").code == 0


def test_a_staged_manifest_that_drops_a_pin_fails_on_its_line(repo: Repo) -> None:
    adopted(repo)
    stage(repo, "entropy.yaml", MANIFEST.replace("  rng_seed: 9173\n", ""))
    got = repo.cli("pre-commit")
    assert got.code == 1
    assert got.out == "entropy.yaml:4: pin rng_seed removed (was 9173 at line 5 of the baseline)\n"


def test_a_manifest_removed_from_the_index_fails_though_it_is_still_on_disk(repo: Repo) -> None:
    adopted(repo)
    repo.git("rm", "-q", "--cached", "entropy.yaml")
    got = repo.cli("pre-commit")
    assert got.code == 1
    assert got.out == (
        "entropy.yaml:1: deleted or renamed by the patch; it exists at HEAD:entropy.yaml "
        "(the patch broke the pin file)\n"
    )


CALLER = """\
on: pull_request
jobs:
  entropy-gate:
    uses: entropy-gate/entropy-gate/.github/workflows/entropy-gate.yml@v1
"""


def test_a_staged_edit_of_the_gates_caller_is_the_gates_own_configuration(repo: Repo) -> None:
    repo.write(".github/workflows/entropy-gate.yml", CALLER)
    adopted(repo)
    stage(repo, ".github/workflows/entropy-gate.yml", CALLER.replace("pull_request", "push"))
    got = repo.cli("pre-commit")
    assert got.code == 1
    assert got.out.startswith(
        ".github/workflows/entropy-gate.yml:1: .github/workflows/entropy-gate.yml is the gate's "
        "own configuration (constraints.protected_paths) and the patch changes it"
    )


def test_a_staged_property_module_that_does_not_parse_is_an_error(repo: Repo) -> None:
    adopted(repo)
    stage(repo, PROPERTY, "def test_total(:\n")
    got = repo.cli("pre-commit")
    assert (got.code, got.out) == (2, "")
    assert got.err == (
        f"{PROPERTY}:1: cannot parse: invalid syntax; the scan cannot check the staged change\n"
    )


def test_without_a_manifest_anywhere_the_hook_says_how_to_get_one(repo: Repo) -> None:
    repo.write("README.md", "# x\n")
    repo.commit("base")
    got = repo.cli("pre-commit")
    assert (got.code, got.out) == (2, "")
    assert got.err == (
        "entropy.yaml: not in git's index (stage it, or write one: entropy-gate init drafts one)\n"
    )


def test_the_first_commit_has_nothing_to_compare_with(repo: Repo) -> None:
    repo.write("entropy.yaml", MANIFEST)
    repo.write(PROPERTY, SKIPPED)
    repo.git("add", "-A")
    got = repo.cli("pre-commit")
    assert (got.code, got.out) == (0, "")
    assert got.err == (
        "entropy-gate pre-commit: no commit yet, so nothing to compare the staged change "
        "with (the first commit brings the baseline)\n"
    )


def test_outside_git_the_hook_says_so(tmp_path: Path, repo: Repo) -> None:
    got = repo.cli("pre-commit", "--manifest", str(tmp_path / "elsewhere/entropy.yaml"))
    assert got.code == 2
    assert "not inside a git work tree" in got.err


def test_git_commit_runs_it_as_a_hook_and_refuses_the_marker(repo: Repo) -> None:
    """A plain `.git/hooks/pre-commit` (no framework): `git commit` stops on the finding,
    and `git commit -a` (git's temporary index, GIT_INDEX_FILE) is read as well."""
    adopted(repo)
    hook = repo.path / ".git/hooks/pre-commit"
    hook.write_text(f"#!/bin/sh\nexec {sys.executable} -m entropy_action pre-commit\n")
    hook.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}

    def commit(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", "commit", "-q", "-m", "change", *args],
            cwd=repo.path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )

    stage(repo, PROPERTY, SKIPPED)
    refused = commit()  # git sends a hook's output to its stderr
    assert refused.returncode == 1
    assert refused.stderr == SKIP_FINDING + "\n" + SUMMARY.format(n=1)
    repo.git("reset", "-q")
    refused_all = commit("-a")  # the marker is only in the work tree: -a stages it
    assert (refused_all.returncode, refused_all.stderr) == (1, refused.stderr)
    repo.write(PROPERTY, CLEAN.replace("amounts)", "amounts)  # the sum"))
    assert commit("-a").returncode == 0


def test_the_index_tree_reads_regular_files_only_and_at_stage_zero(repo: Repo) -> None:
    """What `IndexTree` lists: regular and executable files as staged; not a symbolic link,
    a submodule, or a path with an unresolved conflict (no stage-0 entry)."""
    from entropy_action.scan.source import IndexTree  # noqa: PLC0415

    repo.write("a.py", "A = 1\n")
    repo.write("tools/run.sh", "#!/bin/sh\n")
    (repo.path / "tools/run.sh").chmod(0o755)
    (repo.path / "link.py").symlink_to("a.py")
    repo.git("add", "-A")
    blob = repo.git("hash-object", "-w", "a.py")  # a blob for the conflict's three stages
    head = repo.commit("base")
    entries = [f"160000 {head} 0\tvendor/sub"]
    entries += [f"100644 {blob} {stage}\tconflicted.py" for stage in (1, 2, 3)]
    subprocess.run(
        ["git", "update-index", "--index-info"],
        cwd=repo.path,
        input="\n".join(entries) + "\n",
        text=True,
        check=True,
    )
    repo.write("a.py", "A = 2\n")  # the work tree differs; the index does not
    tree = IndexTree(repo.path)
    assert sorted(tree.files) == ["a.py", "tools/run.sh"]
    assert tree.read("a.py") == b"A = 1\n"
    assert (tree.read("link.py"), tree.read("conflicted.py"), tree.read("vendor/sub")) == (
        None,
    ) * 3
    assert tree.is_dir("tools")
    assert not tree.is_dir("vendor")
