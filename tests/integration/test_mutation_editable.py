"""Mutants of a src-layout package installed with `pip install -e`: the test process imports
the mutated copy (the gate's copy-first finder, as on host B), and a run that imported the
checkout's code instead says it cannot measure rather than reporting no weakening."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from entropy_action.strength import assess
from tests.integration.test_run_editable import install_editable
from tests.integration.test_run_host_a import GIT_ENV, MODULE, manifest_yaml

PACKAGE = {
    "pyproject.toml": """\
        [build-system]
        requires = ["setuptools>=64"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "feepkg"
        version = "0.1"

        [tool.setuptools.packages.find]
        where = ["src"]
        """,
    ".gitignore": "*.egg-info/\n",
    "src/feepkg/__init__.py": """\
        def late_fee(amount, days_late):
            if days_late > 30:
                return amount // 10
            return 0
        """,
    MODULE: """\
        from feepkg import late_fee


        def test_no_fee_on_the_due_day():
            fee = late_fee(1000, 30)
            assert fee == 0


        def test_fee_after_the_due_day():
            assert late_fee(1000, 31) == 100
        """,
}
TAUTOLOGY = ("assert fee == 0", "assert len(str(fee)) == len(str(fee))")


@pytest.fixture
def installed(tmp_path: Path) -> tuple[Path, str]:
    """The package at the base, installed editable; the head makes a test a tautology."""
    files = {**PACKAGE, "entropy.yaml": manifest_yaml(tmp_path / "entropy-tmp")}
    root, python = install_editable(tmp_path, files)
    prop = root / MODULE
    prop.write_text(prop.read_text().replace(*TAUTOLOGY))
    subprocess.run(
        ["git", "commit", "-qam", "tautology"],
        cwd=root,
        env={**os.environ, **GIT_ENV},
        check=True,
    )
    return root, python


def measure(root: Path, python: str, out: Path) -> assess.Strength:
    settings = assess.StrengthSettings(
        manifest=root / "entropy.yaml",
        base_ref="HEAD~1",
        environ=dict(os.environ),
        out=out,
        python=python,
    )
    return assess.run_strength(settings)[0]


def test_the_mutants_of_an_editable_src_layout_run_from_the_copy(installed, tmp_path):
    root, python = installed
    result = measure(root, python, tmp_path / "out")
    assert {(f.kind, f.test) for f in result.findings} == {
        ("weakened_property", "test_no_fee_on_the_due_day")
    }
    shown = " ".join(f.message for f in result.findings)
    assert "mutant src/feepkg/__init__.py:2: days_late > 30 → days_late >= 30" in shown
    assert result.score is not None
    assert result.score.base_killed > result.score.head_killed
    assert not [n for n in result.notes if n.startswith("mutation:")]


def test_a_package_imported_before_the_plugin_cannot_be_measured_and_says_so(installed, tmp_path):
    root, python = installed
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    Path(purelib, "zz_early_feepkg.pth").write_text("import feepkg\n")
    result = measure(root, python, tmp_path / "out")
    init = (root / "src" / "feepkg" / "__init__.py").resolve()
    assert result.findings == ()
    assert result.score is None  # no "base kills 0/0, head kills 0/0": no score at all
    assert [n for n in result.notes if n.startswith("mutation:")] == [
        "mutation: cannot measure, no score: feepkg imported by pytest itself before the "
        f"gate's plugin loaded, from the checkout ({init}): mutants of the copy cannot run; "
        "install the project non-editable (pip install .) in the interpreter host A uses"
    ]
