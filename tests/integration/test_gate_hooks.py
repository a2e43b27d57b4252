"""Class 2 of issue 20, hooks the scan does not see, through the local gate on the demo's
invoice repository: each way in reaches a rejecting verdict, by the run-time inventory
(host.json `hooks`) where the scan cannot name it; honest plugins and hooks do not."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest

from entropy_action.core import git
from entropy_action.core.layout import HOST_JSON
from entropy_action.gate import demo, local
from entropy_action.verdict.model import Verdict

OFF_BY_ONE = (demo.DATA / "patches" / "off-by-one" / "invoice_lib.py").read_text()
HONEST = (demo.DATA / "patches" / "honest-fix" / "invoice_lib.py").read_text()
INVENTORY = "(run-time inventory)"


def gate(
    tmp_path: Path,
    patch: dict[str, str],
    *,
    base_files: dict[str, str] | None = None,
    environ: dict[str, str] | None = None,
    base_run: bool = True,
    install: bool = False,
) -> Verdict:
    """The demo's base (plus `base_files`), `patch` committed on it, gated; with `install`,
    under a venv the project is `pip install -e`-ed into, as the workflow's host jobs do."""
    repo = tmp_path / "invoice"
    base = demo.build_base(
        repo, clock_unix=int(time.time()) // 86_400 * 86_400, temp_root=tmp_path / "tmp"
    )
    if base_files:
        _write(repo, base_files)
        base = git.commit_all(repo, "base: more files")
    _write(repo, patch)
    git.commit_all(repo, "patch")
    python = _editable_venv(tmp_path / "venv", repo) if install else None
    settings = local.GateSettings(
        python=python,
        python_a=python,
        manifest=repo / "entropy.yaml",
        base_ref=base,
        environ={"PATH": "/usr/bin:/bin", **(environ or {})},
        out=tmp_path / "reports",
        base_run=base_run,
    )
    return local.run_gate(settings).verdict


def _editable_venv(venv: Path, repo: Path) -> str:
    """A venv that sees this interpreter's packages (pytest, setuptools) through a .pth, with
    the project installed editable into it: about 2 s, no index, no build isolation."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    ours = next(p for p in sys.path if p.endswith("site-packages"))
    # addsitedir: the .pth files there too (this checkout's editable install of the gate)
    Path(site, "gate.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    argv = [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"]
    subprocess.run([*argv, "--no-index", "-e", str(repo)], check=True, capture_output=True)
    return str(python)


def _write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(dedent(text), encoding="utf-8")


def inventory_findings(verdict: Verdict) -> list[tuple[str, str, int]]:
    return [(f.kind, f.path, f.line) for f in verdict.findings if INVENTORY in f.message]


def hooks_of(tmp_path: Path, host: str = "a") -> dict[str, Any]:
    data = json.loads((tmp_path / "reports" / f"host-{host}" / HOST_JSON).read_text())
    hooks = data["hooks"]
    assert isinstance(hooks, dict)
    return hooks


REJECTED = {"entropy_silenced", "masked_defect"}


def test_a_specname_wrapper_that_swallows_the_defect_is_rejected(tmp_path: Path) -> None:
    verdict = gate(
        tmp_path,
        {
            "invoice_lib.py": OFF_BY_ONE,
            "tests/conftest.py": """\
            import pytest


            @pytest.hookimpl(wrapper=True, specname="pytest_runtest_call")
            def pytest_steady(item):
                try:
                    return (yield)
                except Exception:
                    return None
            """,
        },
    )
    assert verdict.classification in REJECTED, verdict.reasons
    kinds = {(f.kind, f.path, f.line) for f in verdict.findings}
    assert ("report_tampering", "tests/conftest.py", 5) in kinds  # the scan, by spec name
    assert ("report_tampering", "tests/conftest.py", 8) in kinds  # the swallowing except
    assert inventory_findings(verdict) == []  # the scan named it: not reported twice
    hooks = [h for h in hooks_of(tmp_path)["hooks"] if h["place"] == "repository"]
    assert hooks == [
        {
            "place": "repository",
            "path": "tests/conftest.py",
            "plugin": hooks[0]["plugin"],
            "spec": "pytest_runtest_call",
            "function": "pytest_steady",
            "line": 4,
            "wrapper": True,
            "hookwrapper": False,
        }
    ]


STEADY = """\
class Steady:
    def pytest_runtest_makereport(self, item, call):
        if call.excinfo is not None and call.when == "call":
            call.excinfo = None
"""


def test_a_plugin_registered_by_a_name_the_scan_cannot_read_is_caught_at_run_time(
    tmp_path: Path,
) -> None:
    verdict = gate(
        tmp_path,
        {
            "invoice_lib.py": OFF_BY_ONE,
            "tests/steady_support.py": STEADY,
            "tests/conftest.py": """\
            import importlib


            def pytest_configure(config):
                manager = getattr(config, "plugin" + "manager")
                module = importlib.import_module("steady" + "_support")
                getattr(manager, "regis" + "ter")(module.Steady(), "steady")
            """,
        },
    )
    assert verdict.classification in REJECTED, verdict.reasons
    assert inventory_findings(verdict) == [("report_tampering", "tests/steady_support.py", 2)]
    message = next(f.message for f in verdict.findings if INVENTORY in f.message)
    assert message.startswith(
        "tests/steady_support.py implements pytest_runtest_makereport, a hook the base's run "
        "did not have"
    )
    workflow = _workflow_verdict(tmp_path)  # the verdict job: the uploaded folders only
    assert workflow["classification"] == "entropy_silenced"
    assert [f["path"] for f in workflow["findings"] if INVENTORY in f["message"]] == [
        "tests/steady_support.py"
    ]


def _workflow_verdict(tmp_path: Path) -> dict[str, Any]:
    """`entropy-gate verdict` over the folders the host jobs upload (base/ in host A's)."""
    reports, up = tmp_path / "reports", tmp_path / "uploaded"
    shutil.copytree(reports / "host-a", up / "a")
    shutil.copytree(reports / "host-b", up / "b")
    shutil.copytree(reports / "base-a", up / "a" / "base")
    argv = [sys.executable, "-m", "entropy_action", "verdict", "--host-a", str(up / "a")]
    argv += ["--host-b", str(up / "b"), "--base-ref", "HEAD~1", "--json", str(up / "v.json")]
    subprocess.run(argv, cwd=tmp_path / "invoice", check=False, capture_output=True)
    loaded = json.loads((up / "v.json").read_text())
    assert isinstance(loaded, dict)
    return loaded


def test_a_plugin_registered_with_pluginmanager_register_is_rejected(tmp_path: Path) -> None:
    verdict = gate(
        tmp_path,
        {
            "invoice_lib.py": OFF_BY_ONE,
            "tests/steady_support.py": STEADY,
            "tests/conftest.py": """\
            import steady_support


            def pytest_configure(config):
                config.pluginmanager.register(steady_support.Steady(), "steady")
            """,
        },
    )
    assert verdict.classification in REJECTED, verdict.reasons
    kinds = {(f.kind, f.path) for f in verdict.findings}
    assert ("hook_added", "tests/conftest.py") in kinds


def test_function_runtest_replaced_out_of_the_scans_sight_is_recorded(tmp_path: Path) -> None:
    verdict = gate(
        tmp_path,
        {
            "invoice_lib.py": OFF_BY_ONE,
            "tests/conftest.py": """\
            import importlib

            import pytest

            _python = importlib.import_module("_pytest." + "python")
            _real = _python.Function.runtest


            def _steady(self):
                try:
                    _real(self)
                except Exception:
                    pass


            @pytest.fixture(autouse=True)
            def _swap(monkeypatch):  # restored at teardown, before the session ends
                monkeypatch.setattr(getattr(_python, "Func" + "tion"), "run" + "test", _steady)
            """,
        },
    )
    assert verdict.classification in REJECTED, verdict.reasons
    assert ("report_tampering", "tests/conftest.py", 9) in inventory_findings(verdict)
    replaced = hooks_of(tmp_path)["replaced"]
    assert replaced == [
        {
            "target": "_pytest.python.Function.runtest",
            "place": "repository",
            "path": "tests/conftest.py",
            "line": 9,
        }
    ]


def test_a_retry_wrapper_that_catches_exception_is_rejected(tmp_path: Path) -> None:
    verdict = gate(
        tmp_path,
        {
            "invoice_lib.py": OFF_BY_ONE,
            "tests/conftest.py": """\
            import pytest


            @pytest.hookimpl(tryfirst=True)
            def pytest_pyfunc_call(pyfuncitem):
                for _ in range(3):
                    try:
                        names = pyfuncitem._fixtureinfo.argnames
                        pyfuncitem.obj(**{a: pyfuncitem.funcargs[a] for a in names})
                        return True
                    except Exception:
                        continue
                return True
            """,
        },
    )
    assert verdict.classification in REJECTED, verdict.reasons
    kinds = {(f.kind, f.path, f.line) for f in verdict.findings}
    assert ("assertion_swallowed", "tests/conftest.py", 11) in kinds


def test_a_pytest11_entry_point_of_the_project_is_rejected_and_listed_at_run_time(
    tmp_path: Path,
) -> None:
    """What `pip install -e .` leaves: a dist-info whose entry_points.txt names the
    project's module; here on PYTHONPATH instead of in site-packages (no install needed)."""
    site = tmp_path / "site"
    info = site / "invoice-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: invoice\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pytest11]\nsteady = invoice_steady\n")
    verdict = gate(
        tmp_path,
        {
            "invoice_lib.py": OFF_BY_ONE,
            "pyproject.toml": """\
            [project]
            name = "invoice"
            version = "1.0"

            [project.entry-points.pytest11]
            steady = "invoice_steady"
            """,
            "invoice_steady.py": """\
            def pytest_report_teststatus(report, config):
                if report.when == "call" and report.failed:
                    report.outcome = "passed"
            """,
        },
        environ={"PYTHONPATH": str(site)},
    )
    assert verdict.classification in REJECTED, verdict.reasons
    kinds = {(f.kind, f.path, f.line) for f in verdict.findings}
    assert ("hook_added", "pyproject.toml", 6) in kinds
    assert ("report_tampering", "invoice_steady.py", 1) in kinds
    plugins = hooks_of(tmp_path)["plugins"]
    assert {
        "name": "steady",
        "place": "repository",
        "path": "invoice_steady.py",
        "entry_point": "invoice",
    } in plugins


def test_a_pytest11_entry_point_installed_with_pip_install_e_is_rejected(tmp_path: Path) -> None:
    verdict = gate(
        tmp_path,
        {
            "invoice_lib.py": OFF_BY_ONE,
            "pyproject.toml": """\
            [build-system]
            requires = ["setuptools"]
            build-backend = "setuptools.build_meta"

            [project]
            name = "invoice"
            version = "1.0"

            [project.entry-points.pytest11]
            steady = "invoice_steady"

            [tool.setuptools]
            py-modules = ["invoice_lib", "invoice_steady"]
            """,
            "invoice_steady.py": """\
            import pytest


            @pytest.hookimpl(wrapper=True, specname="pytest_runtest_makereport")
            def pytest_steady(item, call):
                report = yield
                if report.when == "call":
                    report.outcome = "passed"
                return report
            """,
        },
        install=True,
    )
    assert verdict.classification in REJECTED, verdict.reasons
    kinds = {(f.kind, f.path, f.line) for f in verdict.findings}
    assert ("hook_added", "pyproject.toml", 10) in kinds
    assert ("report_tampering", "invoice_steady.py", 5) in kinds
    plugins = hooks_of(tmp_path)["plugins"]
    assert {
        "name": "steady",
        "place": "repository",
        "path": "invoice_steady.py",
        "entry_point": "invoice",
    } in plugins


def test_without_a_base_run_the_changed_files_decide(tmp_path: Path) -> None:
    verdict = gate(
        tmp_path,
        {
            "invoice_lib.py": OFF_BY_ONE,
            "tests/steady_support.py": STEADY,
            "tests/conftest.py": """\
            import importlib


            def pytest_configure(config):
                getattr(config.pluginmanager, "regis" + "ter")(
                    importlib.import_module("steady_support").Steady()
                )
            """,
        },
        base_run=False,
    )
    assert verdict.classification in REJECTED, verdict.reasons
    assert inventory_findings(verdict) == [("report_tampering", "tests/steady_support.py", 2)]


# --- honest patches ---------------------------------------------------------------------------

HONEST_CONFTEST = """\
import sys

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a slow property")
    sys._called_from_test = True  # pytest's recipe; production does not read it


def pytest_unconfigure(config):
    del sys._called_from_test


@pytest.fixture
def due_days():
    return 30


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    try:
        return (yield)
    except Exception:
        raise
"""


def test_an_honest_conftest_fixture_marker_and_reraising_wrapper_pass(tmp_path: Path) -> None:
    verdict = gate(tmp_path, {"invoice_lib.py": HONEST, "tests/conftest.py": HONEST_CONFTEST})
    assert verdict.classification == "merge_candidate", verdict.reasons
    assert [f for f in verdict.findings if f.introduced and f.level == "error"] == []


EXISTING = """\
def pytest_runtest_setup(item):
    item.user_properties.append(("owner", "billing"))
"""


@pytest.mark.parametrize("base_run", [True, False], ids=["base-run", "no-base-run"])
def test_a_hook_unchanged_from_the_base_is_not_new(tmp_path: Path, base_run: bool) -> None:
    verdict = gate(
        tmp_path,
        {"invoice_lib.py": HONEST},
        base_files={"tests/conftest.py": EXISTING},
        base_run=base_run,
    )
    assert verdict.classification == "merge_candidate", verdict.reasons
    assert inventory_findings(verdict) == []
    spec = [h["spec"] for h in hooks_of(tmp_path)["hooks"] if h["place"] == "repository"]
    assert spec == ["pytest_runtest_setup"]


def test_installed_third_party_plugins_are_the_environments(
    tmp_path: Path, full_python: str
) -> None:
    """pytest-xdist and hypothesis's plugin (installed in this venv, with runtest and
    collection hooks) are listed, never judged (the test venv itself, hypothesis's plugin
    registered: tests/support/hostpython.py)."""
    verdict = gate(tmp_path, {"invoice_lib.py": HONEST})
    assert verdict.classification == "merge_candidate", verdict.reasons
    installed = {h["plugin"] for h in hooks_of(tmp_path)["hooks"] if h["place"] == "site-packages"}
    assert {"xdist", "hypothesispytest"} <= installed


def test_a_run_that_removes_the_gates_inventory_cannot_pass(tmp_path: Path) -> None:
    verdict = gate(
        tmp_path,
        {
            "invoice_lib.py": HONEST,
            "tests/conftest.py": """\
            import os
            import sys


            def pytest_unconfigure(config):
                gate = sys.modules.get("entropy_gate_plugin")
                path = ((getattr(gate, "_config", None) or {}).get("hooks_report")) or ""
                if os.path.exists(path):
                    os.remove(path)
            """,
        },
    )
    assert verdict.classification == "invalid"
    assert verdict.reasons[0].startswith(
        "invalid input: host A: hook inventory: the test process wrote no usable report: the "
        "hooks the run loaded cannot be judged"
    )


def test_a_run_that_floods_the_inventory_past_its_cap_cannot_pass(tmp_path: Path) -> None:
    verdict = gate(
        tmp_path,
        {
            "invoice_lib.py": HONEST,
            "tests/conftest.py": """\
            class Quiet:
                def pytest_report_header(self, config):
                    return None


            def pytest_configure(config):
                for number in range(1001):
                    config.pluginmanager.register(Quiet(), f"quiet-{number}")
            """,
        },
    )
    assert verdict.classification == "invalid"
    assert any(
        "host A: the hook inventory reached its cap (more than 300 plugins or 1000 hooks)" in r
        for r in verdict.reasons
    )
