"""Host B imports the code under test from its own copy, also through an editable install."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from entropy_action.core.hostinfo import HostInfo
from entropy_action.core.layout import JUNIT_XML
from entropy_action.gate import local
from entropy_action.hosts import hostjson, launch
from entropy_action.verdict import pairing
from tests.integration.test_run_host_a import MODULE, make_repo, manifest_yaml, settings

PACKAGE = {
    "pyproject.toml": """\
        [build-system]
        requires = ["setuptools>=64"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "gatepkg"
        version = "0.1"

        [tool.setuptools.packages.find]
        where = ["src"]
        """,
    ".gitignore": "src/gatepkg/_planted/\n*.egg-info/\n",
    # Only the original checkout has the planted package: git ignores the folder, so the copy
    # lacks it (an ignored *file* inside a package is what an install generates, _version.py:
    # every copy takes those, hosts.environments.generated).
    "src/gatepkg/_planted/__init__.py": 'WHERE = "original"\n',
    "src/gatepkg/__init__.py": """\
        try:
            from gatepkg._planted import WHERE
        except ImportError:
            WHERE = "copy"
        """,
    MODULE: """\
        import gatepkg


        def test_where(record_property):
            record_property("where", gatepkg.WHERE)
            record_property("file", gatepkg.__file__)
        """,
}


@pytest.fixture(scope="module")
def editable(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    tmp = tmp_path_factory.mktemp("editable")
    return install_editable(tmp, {**PACKAGE, "entropy.yaml": manifest_yaml(tmp / "entropy-tmp")})


def install_editable(tmp: Path, files: dict[str, str]) -> tuple[Path, str]:
    """A repository of `files` (a src-layout package), installed with a real `pip install -e`
    into a fresh venv that sees the gate's own dependencies (pytest, time-machine) through a
    .pth; the repository and the venv's interpreter."""
    root = make_repo(tmp / "repo", files)
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The gate's site-packages holds its pytest11 entry point (entropy_gate = entropy_action.seams)
    # and an editable finder that a .pth in an added directory does not run: name the checkout.
    gate_root = str(Path(__file__).resolve().parents[2])
    Path(purelib, "gate_deps.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n" + gate_root + "\n"
    )
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps",
         "--no-build-isolation", "--no-index", "-e", str(root)],
        check=True, capture_output=True,
    )  # fmt: skip
    return root, python


def props(junit: Path) -> dict[str, str]:
    case = next(ET.parse(junit).getroot().iter("testcase"))
    return {p.get("name", ""): p.get("value", "") for p in case.iter("property")}


def test_the_editable_install_points_at_the_original_checkout(editable, tmp_path):
    root, python = editable
    where = subprocess.run(
        [python, "-c", "import gatepkg; print(gatepkg.WHERE, gatepkg.__file__)"],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert where == ["original", str(root / "src" / "gatepkg" / "__init__.py")]


def test_host_b_imports_the_package_from_its_copy(editable, tmp_path):
    root, python = editable
    out_a, out_b = tmp_path / "a", tmp_path / "b"
    info_a = launch.run_host(settings(root, out_a, dict(os.environ), python=python))
    info_b = launch.run_host(settings(root, out_b, dict(os.environ), python=python, isolate=True))
    seen_a, seen_b = props(out_a / JUNIT_XML), props(out_b / JUNIT_XML)
    assert seen_a["where"] == "original"
    assert seen_b["where"] == "copy"  # the planted difference: host B ran the copy's files
    assert info_a.imported_from["gatepkg"] == str((root / "src" / "gatepkg").resolve())
    copy = Path(info_b.root)
    assert info_b.imported_from["gatepkg"] == str((copy / "src" / "gatepkg").resolve())
    assert seen_b["file"] == str(copy / "src" / "gatepkg" / "__init__.py")
    assert info_b.imported_outside == []
    assert hostjson.outcome(info_b)[0] == 0


def test_a_run_of_the_base_module_imports_the_base_code_not_the_heads(editable, tmp_path):
    """The gate runs the base ref's module in a worktree; an editable install points at the
    head checkout, so before `checkout` the base's tests ran the head's code (and the summary
    called the patch's own failures "failed at the base ref too"). A run in any worktree of
    the repository now finds the others itself (`git worktree list`), `checkout` or not: an
    editable install made in one of them is redirected to the run's own tree."""
    root, python = editable
    base = tmp_path / "base-tree"
    subprocess.run(["git", "worktree", "add", "-q", "--detach", str(base)], cwd=root, check=True)
    try:
        unaware = launch.run_host(settings(base, tmp_path / "unaware", python=python))
        assert props(tmp_path / "unaware" / JUNIT_XML)["where"] == "copy"
        assert unaware.imported_from["gatepkg"] == str((base / "src" / "gatepkg").resolve())
        for host, isolate in (("a", False), ("b", True)):
            out = tmp_path / f"base-{host}"
            info = launch.run_host(
                settings(base, out, python=python, isolate=isolate, checkout=root)
            )
            seen = props(out / JUNIT_XML)
            tree = Path(info.root) if isolate else base
            assert seen["where"] == "copy"
            assert seen["file"] == str(tree / "src" / "gatepkg" / "__init__.py")
            assert info.imported_from["gatepkg"] == str((tree / "src" / "gatepkg").resolve())
            assert info.imported_outside == []
            assert hostjson.outcome(info)[0] == 0
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=root, check=True)


def test_a_host_b_run_that_imported_from_the_original_tree_is_invalid(editable, tmp_path):
    root, python = editable
    planted = root / "src" / "gatepkg" / "_planted" / "__init__.py"
    (root / MODULE).write_text(
        "import importlib.util\n\n\n"
        "def test_loads_a_file_of_the_original_checkout():\n"
        f"    spec = importlib.util.spec_from_file_location('planted_mod', {str(planted)!r})\n"
        "    module = importlib.util.module_from_spec(spec)\n"
        "    import sys\n"
        "    sys.modules['planted_mod'] = module\n"
        "    spec.loader.exec_module(module)\n"
    )
    subprocess.run(["git", "commit", "-qam", "load by path"], cwd=root, check=True)
    out_a, out_b = tmp_path / "a", tmp_path / "b"
    launch.run_host(settings(root, out_a, dict(os.environ), python=python))
    info_b = launch.run_host(settings(root, out_b, dict(os.environ), python=python, isolate=True))
    assert info_b.imported_outside == [str(planted.resolve())]
    code, why = hostjson.outcome(info_b)
    assert (code, why) == (
        2,
        f"host b: the code under test was imported from outside its own tree: {planted.resolve()}",
    )
    verdict = pairing.evaluate(out_a, out_b, loaded=None, pin_diff=None)
    assert verdict.classification == "invalid"
    assert verdict.reasons[0] == (
        f"invalid input: host B: the code under test was imported from outside its own tree: "
        f"{planted.resolve()}"
    )
    assert "imported by pytest itself" not in " ".join(verdict.reasons)  # the test imported it


@pytest.fixture
def imported_at_startup(editable: tuple[Path, str]) -> Iterator[tuple[Path, str]]:
    """The venv imports gatepkg when the interpreter starts (a .pth line), before pytest loads
    the gate's plugin: the way pytest's own imports bring in pluggy or packaging."""
    root, python = editable
    (root / MODULE).write_text(textwrap.dedent(PACKAGE[MODULE]))  # another test may have changed it
    subprocess.run(
        ["git", "commit", "-qam", "the module as built", "--allow-empty"], cwd=root, check=True
    )
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    early = Path(purelib, "zz_early_gatepkg.pth")
    early.write_text("import gatepkg\n")
    try:
        yield root, python
    finally:
        early.unlink()


EARLY_REASON = (
    "host B: gatepkg was imported by pytest itself before the gate's plugin loaded, from the "
    "original checkout ({file}): host B cannot test its own copy of a package pytest depends "
    "on; install it non-editable in the interpreter host B uses (pip install .), or run host B "
    "on another machine (the Action's matrix)"
)


def test_code_imported_before_the_plugin_loaded_is_named_with_what_to_do(
    imported_at_startup, tmp_path
):
    root, python = imported_at_startup
    out_a, out_b = tmp_path / "a", tmp_path / "b"
    launch.run_host(settings(root, out_a, dict(os.environ), python=python))
    info_b = launch.run_host(settings(root, out_b, dict(os.environ), python=python, isolate=True))
    init = str((root / "src" / "gatepkg" / "__init__.py").resolve())
    assert init in info_b.imported_outside
    assert info_b.imported_before_plugin == ["gatepkg"]
    code, why = hostjson.outcome(info_b)
    assert code == 2
    assert why == EARLY_REASON.format(file=info_b.imported_outside[0]).replace("host B:", "host b:")
    verdict = pairing.evaluate(out_a, out_b, loaded=None, pin_diff=None)
    assert verdict.classification == "invalid"
    assert [r for r in verdict.reasons if r.startswith("invalid input")] == [
        "invalid input: " + EARLY_REASON.format(file=info_b.imported_outside[0])
    ]


def test_the_gate_gives_that_reason_once_and_skips_the_base_run(imported_at_startup, tmp_path):
    root, python = imported_at_startup
    (root / "NOTES.txt").write_text("a patch\n")  # not docs-only: the base run starts at once
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "patch"], cwd=root, check=True)
    lines: list[str] = []
    result = local.run_gate(
        local.GateSettings(
            manifest=root / "entropy.yaml",
            base_ref="HEAD~1",
            environ=dict(os.environ),
            out=tmp_path / "out",
            python=python,
            python_a=python,
            progress=lines.append,
        )
    )
    info_b = HostInfo.model_validate_json((tmp_path / "out" / "host-b" / "host.json").read_text())
    assert result.verdict.classification == "invalid"
    assert [r for r in result.verdict.reasons if r.startswith("invalid input")] == [
        "invalid input: " + EARLY_REASON.format(file=info_b.imported_outside[0])
    ]
    assert f"base run skipped: {local.SKIPPED_INVALID}" in result.notes
    assert not (tmp_path / "out" / "base-a" / JUNIT_XML).exists()  # not run, or killed
