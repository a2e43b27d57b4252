"""`entropy-gate init` against golden output on two sample repositories.

Regenerate the golden files in tests/data/init/ with
`ENTROPY_GATE_REGEN=1 .venv/bin/python -m pytest tests/integration/test_init.py`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from entropy_action.manifest import pinfile
from tests.support.helpers import Repo

GOLDEN = Path(__file__).parent.parent / "data" / "init"
REGEN = os.environ.get("ENTROPY_GATE_REGEN") == "1"

SAMPLES: dict[str, dict[str, str]] = {
    "billing": {
        "billing/__init__.py": "",
        "billing/fees.py": """\
import os
import random
import uuid
from datetime import datetime


def fee(amount):
    region = os.environ.get("BILLING_REGION", "eu")
    surcharge = 100 if region == "us" else 0
    if datetime.now().year > 2030:
        surcharge += 1
    return amount + surcharge + random.randint(0, 0)


def invoice_id():
    return uuid.uuid4().hex
""",
        "tests/properties/test_fees.py": """\
import os

from billing.fees import fee, invoice_id


def test_fee_is_at_least_the_amount():
    os.environ.get("ONLY_THE_TEST_READS_THIS")
    assert fee(1000) >= 1000


def test_invoice_ids_are_hex():
    int(invoice_id(), 16)
""",
    },
    "greetings": {
        "greetings.py": """\
import gettext
import os
from pathlib import Path


def greeting():
    found = gettext.translation("app", Path(__file__).parent / "locale", fallback=True)
    style = os.environ.get("GREETING_STYLE", "plain")
    return found.gettext("Hello") + ("!" if style == "loud" else "")
""",
        "tests/properties/test_greetings.py": """\
from greetings import greeting


def test_the_greeting_is_the_source_text():
    assert greeting() == "Hello"
""",
    },
    "reports": {
        "reports.py": """\
import socket
import tempfile
import time
from pathlib import Path


def write_report(lines):
    folder = Path(tempfile.mkdtemp())
    path = folder / f"report-{socket.gethostname()}-{int(time.time())}.txt"
    path.write_text("\\n".join(lines))
    return path
""",
        "tests/properties/test_reports.py": """\
from reports import write_report


def test_report_holds_its_lines():
    assert write_report(["a", "b"]).read_text() == "a\\nb"
""",
    },
}


def _sample(repo: Repo, name: str) -> None:
    for path, text in SAMPLES[name].items():
        repo.write(path, text)
    repo.commit("sample")


def _golden(name: str, suffix: str, actual: str) -> None:
    path = GOLDEN / f"{name}.{suffix}"
    if REGEN:
        path.write_text(actual, encoding="utf-8")
    assert actual == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", list(SAMPLES))
def test_init_drafts_the_pins_the_module_reads_and_lists_the_seams(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    for variable in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):  # gettext reads up to the first set
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
    _sample(repo, name)
    result = repo.cli("init", "--clock-unix", "1768003200")
    assert result.code == 0, result.err
    drafted = (repo.path / "entropy.yaml").read_text(encoding="utf-8")
    _golden(name, "entropy.yaml", drafted)
    _golden(name, "out", result.out)
    loaded = pinfile.load(repo.path / "entropy.yaml", repo_root=repo.path)  # the draft validates
    assert loaded.manifest.module.startswith("tests/properties/")


def test_init_never_overwrites_a_manifest_without_force(repo: Repo) -> None:
    _sample(repo, "reports")
    repo.write("entropy.yaml", "# mine\n")
    result = repo.cli("init")
    assert result.code == 2
    assert result.err.splitlines()[-1] == (
        "entropy.yaml: already exists; init never overwrites it without --force"
    )
    assert (repo.path / "entropy.yaml").read_text() == "# mine\n"
    forced = repo.cli("init", "--force", "--clock-unix", "1768003200")
    assert forced.code == 0, forced.err
    assert (repo.path / "entropy.yaml").read_text() == (GOLDEN / "reports.entropy.yaml").read_text()


def test_init_names_the_workflows_whose_edits_will_be_pin_mutation(repo: Repo) -> None:
    """A dependabot bump of an action in a workflow whose jobs may write check runs is
    `pin_mutation` once the gate is adopted: init says which workflows those are, and why."""
    _sample(repo, "reports")
    repo.write(
        ".github/workflows/tests.yml",
        "on: pull_request\njobs:\n  unit:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - uses: actions/checkout@v6\n",
    )
    repo.write(
        ".github/workflows/lint.yaml",
        "on: pull_request\npermissions:\n  contents: read\njobs:\n  lint:\n"
        "    runs-on: ubuntu-latest\n    steps:\n      - run: ruff check .\n",
    )
    repo.write(".github/workflows/entropy-gate.yml", "jobs: {gate: {uses: org/entropy-gate}}\n")
    result = repo.cli("init", "--clock-unix", "1768003200")
    assert result.code == 0, result.err
    assert result.out.endswith(
        "workflows whose edits will be pin_mutation (their jobs can post a check run; "
        "docs/ci.md, Which edits can change the check):\n"
        "  .github/workflows/tests.yml: its job 'unit' declares no `permissions:`, so its token "
        "has the repository's default, which may write check runs (declare `permissions: "
        "{contents: read}`)\n"
    )


def test_init_needs_the_module_named_when_there_is_not_exactly_one(repo: Repo) -> None:
    _sample(repo, "reports")
    repo.write("tests/properties/test_more.py", "def test_more():\n    pass\n")
    result = repo.cli("init")
    assert result.code == 2
    assert result.err.splitlines()[-1] == (
        "tests/properties: 2 test_*.py files; name the property module with --module"
    )
    named = repo.cli("init", "--module", "tests/properties/test_more.py", "--clock-unix", "0")
    assert named.code == 0, named.err
    drafted = (repo.path / "entropy.yaml").read_text()
    assert "  # no live read was seen; a manifest needs one pin\n  tz: UTC\n" in drafted
    assert "#   none\n" in drafted
