"""`entropy-gate gate` on patches that replace the unit under test outside the property module
(issue 20, class 1), and on honest patches that must not look like one: real git repositories
built like the demo, real host runs (each case is one full gate run, ~8 s)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from entropy_action.gate import demo
from tests.support.helpers import Repo

BASE = (demo.DATA / "base" / "invoice_lib.py").read_text(encoding="utf-8")
BROKEN = BASE.replace("for amount in amounts:", "for amount in amounts[1:]:")  # off by one
FIXED = """
def total_for(amounts, as_of, due=None):
    total = sum(amounts)
    if due is not None and as_of > due:
        total += 500
    return total
"""
HONEST = BASE.replace(
    "    total = 0\n    for amount in amounts:\n        total += amount\n",
    "    total = sum(amounts)\n",
)

SYS_MODULES_CONFTEST = '''"""Load the invoice module once for every property."""

import importlib.util
import pathlib
import sys

_spec = importlib.util.spec_from_file_location(
    "invoice_lib", pathlib.Path(__file__).with_name("invoice_fixed.py")
)
fixed_copy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fixed_copy)
sys.modules["invoice_lib"] = fixed_copy
'''
EXEC_CONFTEST = f'''"""A module with no file of its own, put in sys.modules."""

import sys
import types

fixed_copy = types.ModuleType("invoice_lib")
fixed_copy.LATE_FEE_CENTS = 500
exec({FIXED!r}, fixed_copy.__dict__)
sys.modules["invoice_lib"] = fixed_copy
'''
PACKAGE_INIT = f'''"""The test package."""

import invoice_lib
{FIXED}

invoice_lib.total_for = total_for
'''
REQUEST_MODULE = f'''"""Shared fixtures for the invoice properties."""

import pytest
{FIXED}

@pytest.fixture(autouse=True)
def _stable_totals(request, monkeypatch):
    monkeypatch.setattr(request.module, "total_for", total_for)
'''
MOCK_CONFTEST = '''"""A stand-in for the unit under test."""

from unittest import mock

import invoice_lib
import pytest


@pytest.fixture(autouse=True)
def _stand_in(monkeypatch):
    monkeypatch.setattr(invoice_lib, "total_for", mock.Mock(return_value=0))
'''
PROPERTY = "tests/properties/test_invoice_total.py"


def _gate(
    repo: Repo,
    tmp_path: Path,
    files: dict[str, str],
    gone: tuple[str, ...] = (),
    base_files: dict[str, str] | None = None,
) -> Any:
    base = demo.build_base(
        repo.path, clock_unix=int(time.time()) // 86400 * 86400, temp_root=tmp_path / "pins-tmp"
    )
    if base_files:
        for relative, text in base_files.items():
            (repo.path / relative).write_text(text, encoding="utf-8")
        base = repo.commit("the base, with its own files")
    for relative, text in files.items():
        target = repo.path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    for relative in gone:
        repo.remove(relative)
    repo.commit("the patch")
    out = tmp_path / "verdict.json"
    result = repo.cli("gate", "--base-ref", base, "--json", str(out))
    assert out.exists(), f"exit {result.code}: {result.err}"
    verdict = json.loads(out.read_text(encoding="utf-8"))
    assert result.code == (0 if verdict["merge"] else 1), result.err
    return verdict


def _replaced(verdict: Any) -> list[tuple[str, int, bool]]:
    found = [f for f in verdict["findings"] if f["kind"] == "unit_replaced"]
    return [(f["path"], f["line"], f["introduced"]) for f in found]


def _messages(verdict: Any) -> str:
    return "\n".join(f["message"] for f in verdict["findings"] if f["kind"] == "unit_replaced")


# --- the four replacements of class 1: each rejects ------------------------------------------


def test_a_verbatim_copy_next_to_the_tests_is_a_replaced_unit(repo: Repo, tmp_path: Path) -> None:
    copy = "tests/properties/invoice_lib.py"
    verdict = _gate(repo, tmp_path, {"invoice_lib.py": BROKEN, copy: BASE})
    assert verdict["classification"] == "entropy_silenced"
    assert _replaced(verdict) == [(PROPERTY, 9, True), (copy, 1, True)]  # static, run time
    assert "a verbatim copy of the base's invoice_lib.py" in _messages(verdict)
    assert "not the production code in invoice_lib.py" in _messages(verdict)


def test_a_sys_modules_substitution_in_a_conftest_is_a_replaced_unit(
    repo: Repo, tmp_path: Path
) -> None:
    files = {
        "invoice_lib.py": BROKEN,
        "tests/properties/invoice_fixed.py": BASE,
        "tests/properties/conftest.py": SYS_MODULES_CONFTEST,
    }
    verdict = _gate(repo, tmp_path, files)
    assert verdict["classification"] == "entropy_silenced"
    assert ("tests/properties/invoice_fixed.py", 1, True) in _replaced(verdict)
    assert (
        "sys.modules['invoice_lib'] holds 'invoice_lib' from tests/properties/invoice_fixed.py"
        in (_messages(verdict))
    )
    statics = [f for f in verdict["findings"] if f["path"] == "tests/properties/conftest.py"]
    assert [(f["kind"], f["line"]) for f in statics] == [("unit_replaced", 12)]


def test_a_module_with_no_file_in_sys_modules_is_a_replaced_unit(
    repo: Repo, tmp_path: Path
) -> None:
    files = {"invoice_lib.py": BROKEN, "tests/properties/conftest.py": EXEC_CONFTEST}
    verdict = _gate(repo, tmp_path, files)
    assert verdict["classification"] == "entropy_silenced"
    assert ("invoice_lib.py", 1, True) in _replaced(verdict)
    assert "code with no file of its own" in _messages(verdict)


def test_a_package_init_reassigning_the_unit_is_a_replaced_unit(repo: Repo, tmp_path: Path) -> None:
    files = {
        "invoice_lib.py": BROKEN,
        "tests/__init__.py": PACKAGE_INIT,
        "tests/properties/__init__.py": "",
    }
    verdict = _gate(repo, tmp_path, files)
    assert verdict["classification"] == "entropy_silenced"
    assert _replaced(verdict) == [("tests/__init__.py", 5, True)]
    assert "invoice_lib.total_for: test code replaced it" in _messages(verdict)
    patched = [(f["path"], f["line"]) for f in verdict["findings"] if f["kind"] == "unit_patched"]
    assert patched == [("tests/__init__.py", 12)]  # the package's __init__.py is in scope


def test_an_autouse_fixture_patching_through_request_module_is_a_replaced_unit(
    repo: Repo, tmp_path: Path
) -> None:
    files = {"invoice_lib.py": BROKEN, "tests/properties/conftest.py": REQUEST_MODULE}
    verdict = _gate(repo, tmp_path, files)
    assert verdict["classification"] == "entropy_silenced"
    assert _replaced(verdict) == [("tests/properties/conftest.py", 5, True)]
    assert f"{PROPERTY}'s total_for is tests/properties/conftest.py" in _messages(verdict)


def test_a_mock_standing_in_for_the_unit_is_a_replaced_unit(repo: Repo, tmp_path: Path) -> None:
    """The property module imports the function by name before the fixture patches the
    module, so the tests still call the real one: the mock is seen on the module's own
    attribute only when the property module reads it through the module."""
    prop = (demo.DATA / "base" / PROPERTY).read_text(encoding="utf-8")
    prop = prop.replace("from invoice_lib import LATE_FEE_CENTS, total_for", "import invoice_lib")
    prop = prop.replace("LATE_FEE_CENTS", "invoice_lib.LATE_FEE_CENTS").replace(
        "total_for(", "invoice_lib.total_for("
    )
    files = {PROPERTY: prop, "tests/properties/conftest.py": MOCK_CONFTEST}
    verdict = _gate(repo, tmp_path, files)
    assert verdict["merge"] is False
    assert ("invoice_lib.py", 1, True) in _replaced(verdict)
    assert "invoice_lib.total_for is a mock" in _messages(verdict)


# --- honest patches: none of them is a replaced unit -------------------------------------------


HELPERS = '''"""Invoice lines for the properties."""

import os
import random


def invoice_lines() -> list[int]:
    rng = random.Random(int(os.environ["ENTROPY_RNG_SEED"]))
    return [rng.randint(1, 10_000) for _ in range(32)]
'''
LINES_FIXTURE = '''"""Fixtures of the invoice properties."""

import os
import random

import pytest


@pytest.fixture
def lines() -> list[int]:
    rng = random.Random(int(os.environ["ENTROPY_RNG_SEED"]))
    return [rng.randint(1, 10_000) for _ in range(32)]


def total_of(lines):
    return sum(lines)
'''


LAZY = """

import sys as _sys
import types as _types


class _Lazy(_types.ModuleType):
    def __getattr__(self, name: str) -> object:
        raise AttributeError(name)


_lazy = _Lazy(__name__)
_lazy.__dict__.update({k: v for k, v in globals().items() if not k.startswith("__")})
_sys.modules[__name__] = _lazy
"""
NOTIFYING = (
    HONEST.replace("    return total\n", "    notify(total)\n    return total\n")
    + """

def notify(total: int) -> None:
    \"\"\"Where a total goes (a seam the tests replace).\"\"\"
"""
)
NOTIFIED = """

def test_the_total_is_notified_once(monkeypatch) -> None:
    from unittest import mock

    monkeypatch.setattr(invoice_lib, "notify", mock.Mock())
    invoice_lib.total_for(invoice_lines(), as_of=frozen_now())
    invoice_lib.notify.assert_called_once()
"""


def _property(replace: dict[str, str]) -> str:
    text = (demo.DATA / "base" / PROPERTY).read_text(encoding="utf-8")
    for old, new in replace.items():
        assert old in text
        text = text.replace(old, new)
    return text


@pytest.mark.parametrize(
    ("files", "gone"),
    [
        pytest.param(
            {
                "invoice_lib.py": HONEST,
                "tests/properties/helpers.py": HELPERS,
                PROPERTY: _property(
                    {
                        "from invoice_lib import": "from helpers import invoice_lines\n"
                        "from invoice_lib import",
                        HELPERS.split("\n\n\n", 1)[1]: "",
                    }
                ),
            },
            (),
            id="a-test-helper-module",
        ),
        pytest.param(
            {
                "invoice_lib.py": NOTIFYING,
                PROPERTY: _property(
                    {"from invoice_lib import": "import invoice_lib\nfrom invoice_lib import"}
                )
                + NOTIFIED,
            },
            (),
            id="a-mocked-dependency-the-test-inspects",
        ),
        pytest.param(
            {"invoice_lib.py": HONEST + LAZY},
            (),
            id="a-lazy-module-production-puts-in-sys-modules",
        ),
        pytest.param(
            {"invoice_lib.py": HONEST, "tests/properties/conftest.py": LINES_FIXTURE},
            (),
            id="a-conftest-fixture",
        ),
        pytest.param(
            {
                "src/invoice_lib.py": HONEST,
                "pytest.ini": "[pytest]\npythonpath = src\n",
            },
            ("invoice_lib.py",),
            id="a-src-layout",
        ),
        pytest.param(
            {
                "invoice/billing.py": HONEST,
                "invoice_lib.py": '"""Re-exported."""\n\n'
                "from invoice.billing import LATE_FEE_CENTS, total_for\n\n"
                '__all__ = ["LATE_FEE_CENTS", "total_for"]\n',
            },
            (),
            id="a-namespace-package",
        ),
    ],
)
def test_an_honest_patch_is_no_replaced_unit(
    repo: Repo, tmp_path: Path, files: dict[str, str], gone: tuple[str, ...]
) -> None:
    verdict = _gate(repo, tmp_path, files, gone)
    assert _replaced(verdict) == []
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]


# --- on a real suite: a test that asserts on its own copy of the function under test ---------


def test_a_property_asserting_on_its_own_copy_of_the_unit_is_unit_patched(
    repo: Repo, tmp_path: Path
) -> None:
    prop = _property(
        {"from invoice_lib import LATE_FEE_CENTS, total_for": "LATE_FEE_CENTS = 500\n" + FIXED}
    )
    verdict = _gate(repo, tmp_path, {"invoice_lib.py": BROKEN, PROPERTY: prop})
    assert verdict["merge"] is False
    own = [(f["path"], f["line"]) for f in verdict["findings"] if f["kind"] == "unit_patched"]
    assert own == [(PROPERTY, 11)]
    message = next(f["message"] for f in verdict["findings"] if f["kind"] == "unit_patched")
    assert "the base's properties called the production total_for of invoice_lib.py" in message


def test_a_copy_imported_from_a_test_helper_is_unit_patched(repo: Repo, tmp_path: Path) -> None:
    helper = "tests/properties/reference.py"
    prop = _property(
        {
            "from invoice_lib import LATE_FEE_CENTS, total_for": (
                "from invoice_lib import LATE_FEE_CENTS\nfrom reference import total_for"
            )
        }
    )
    files = {"invoice_lib.py": BROKEN, helper: FIXED, PROPERTY: prop}
    verdict = _gate(repo, tmp_path, files)
    assert verdict["merge"] is False
    own = [(f["path"], f["line"]) for f in verdict["findings"] if f["kind"] == "unit_patched"]
    assert own == [(PROPERTY, 10)]


def test_the_record_travels_in_host_json_so_compare_judges_it_alike(
    repo: Repo, tmp_path: Path
) -> None:
    """The workflow's verdict job reads the uploaded folders as data: `compare` over the
    folders the gate left (host.json's `provenance`) finds the same replacement, without a
    scan (no --base-ref) and without the base's run."""
    files = {"invoice_lib.py": BROKEN, "tests/properties/conftest.py": REQUEST_MODULE}
    base = demo.build_base(
        repo.path, clock_unix=int(time.time()) // 86400 * 86400, temp_root=tmp_path / "pins-tmp"
    )
    for relative, text in files.items():
        (repo.path / relative).write_text(text, encoding="utf-8")
    repo.commit("the patch")
    reports = tmp_path / "reports"
    first = repo.cli(
        "gate", "--base-ref", base, "--json", str(tmp_path / "v.json"), "--out", str(reports)
    )
    assert first.code == 1
    hosts = json.loads((reports / "host-a" / "host.json").read_text(encoding="utf-8"))
    assert [r["how"] for r in hosts["provenance"]["replaced"]] == ["reassigned"]
    out = tmp_path / "compared.json"
    result = repo.cli(
        "compare", "--host-a", str(reports / "host-a"), "--host-b", str(reports / "host-b"),
        "--json", str(out),
    )  # fmt: skip
    verdict = json.loads(out.read_text(encoding="utf-8"))
    assert result.code == 1
    assert verdict["classification"] == "entropy_silenced"
    assert _replaced(verdict) == [("tests/properties/conftest.py", 5, True)]
    forged = json.loads((reports / "host-b" / "host.json").read_text(encoding="utf-8"))
    forged["provenance"]["replaced"][0]["path"] = "/etc/passwd"
    (reports / "host-b" / "host.json").write_text(json.dumps(forged), encoding="utf-8")
    again = repo.cli(
        "compare", "--host-a", str(reports / "host-a"), "--host-b", str(reports / "host-b"),
        "--json", str(out),
    )  # fmt: skip
    refused = json.loads(out.read_text(encoding="utf-8"))
    assert again.code == 2
    assert refused["classification"] == "invalid"
    [reason] = [r for r in refused["reasons"] if "provenance" in r]
    assert "host.json" in reason
    assert "not a repository-relative path" in reason


def test_a_copy_that_stood_at_the_base_is_a_notice(repo: Repo, tmp_path: Path) -> None:
    """The base's run saw the same shadow: the patch did not bring it, so it does not reject
    (an honest fix of the production file the tests never reached)."""
    copy = "tests/properties/invoice_lib.py"
    verdict = _gate(repo, tmp_path, {"invoice_lib.py": HONEST}, base_files={copy: BASE})
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]
    assert _replaced(verdict) == [(copy, 1, False)]


VENDOR_CONFTEST = '''"""Vendored code first."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "vendor"))
'''


def test_a_copy_a_conftest_puts_first_on_sys_path_is_a_replaced_unit(
    repo: Repo, tmp_path: Path
) -> None:
    """vendor/ is no test folder, so only the base's run tells: it loaded invoice_lib.py,
    which the head still has while its tests load vendor/invoice_lib.py."""
    files = {
        "invoice_lib.py": BROKEN,
        "vendor/invoice_lib.py": BASE,
        "tests/properties/conftest.py": VENDOR_CONFTEST,
    }
    verdict = _gate(repo, tmp_path, files)
    assert verdict["classification"] == "entropy_silenced"
    assert _replaced(verdict) == [("vendor/invoice_lib.py", 1, True)]
    assert "while invoice_lib.py is still there" in _messages(verdict)
