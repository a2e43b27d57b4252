"""The list manifest docs/manifest.md shows validates as the gate reads it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from entropy_action.core.errors import GateError
from entropy_action.manifest import pinfile

DOC = Path(__file__).resolve().parents[2] / "docs" / "manifest.md"
HEADING = "## Many properties in one entropy.yaml"


def example() -> str:
    section = DOC.read_text(encoding="utf-8").split(HEADING, 1)[1]
    found = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert found, f"{DOC}: no yaml block under {HEADING!r}"
    return found.group(1)


def test_the_documented_list_manifest_validates_with_its_modules(tmp_path: Path) -> None:
    text = example()
    for module in re.findall(r"module: (\S+)", text):
        (tmp_path / module).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / module).write_text("def test_x():\n    pass\n", encoding="utf-8")
    loaded = pinfile.parse_file(text.encode(), "entropy.yaml", tmp_path)
    assert loaded.ids == ("invoice_total", "schedule", "reports")
    schedule = loaded.view("schedule")
    assert schedule is not None
    assert schedule.manifest.pins.tz == "Europe/Berlin"  # the entry's pin over the shared one
    assert schedule.manifest.pins.clock_unix == 1768003200
    assert schedule.manifest.run.pytest_args == ["--no-cov"]
    assert schedule.manifest.run.timeout_seconds == 900
    reports = loaded.view("reports")
    assert reports is not None
    assert reports.manifest.pins.tz == "UTC"


def test_without_its_modules_the_documented_manifest_names_the_missing_one(tmp_path: Path):
    with pytest.raises(GateError, match=r"test_invoice_total\.py"):
        pinfile.parse_file(example().encode(), "entropy.yaml", tmp_path)
