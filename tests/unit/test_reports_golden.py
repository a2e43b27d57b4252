"""Golden files for the JUnit parser: tests/data/junit/NAME.xml -> NAME.results.json | .exception.

Regenerate after a deliberate change (and review the diff):
    .venv/bin/python -m tests.unit.test_reports_golden
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from entropy_action.core.errors import GateError
from entropy_action.evidence import ids, junitcases
from tests.unit.test_reports import host_info

GOLDEN = Path(__file__).parent.parent / "data" / "junit"
INPUTS = sorted(GOLDEN.glob("*.xml"))
SUFFIXES = (".results.json", ".exception")
NORMALIZE = ids.normalizer(
    ids.placeholders(host_info("a", "/home/dev/project", temp_root="/tmp/entropy-invoice"))
)
REGENERATE = "regenerate with: .venv/bin/python -m tests.unit.test_reports_golden"


def render(xml: Path) -> tuple[str, str]:
    """(suffix, text) of what the parser makes of one input."""
    try:
        tests, errors = junitcases.parse_junit(xml.read_bytes(), xml.name, NORMALIZE)
    except GateError as exc:
        return ".exception", exc.message + "\n"
    data = {"tests": [_case(t) for t in tests], "errors": list(errors)}
    return ".results.json", json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _case(test: junitcases.TestCase) -> dict[str, object]:
    """A case as JSON; the seeds and assertion counts only where the gate's plugin recorded
    them."""
    data = dataclasses.asdict(test)
    return {k: v for k, v in data.items() if v is not None or k not in PLUGIN_FIELDS}


PLUGIN_FIELDS = ("seed", "rng_seed", "assertions", "assertion_sites")


def golden(xml: Path, suffix: str) -> Path:
    return xml.with_name(xml.stem + suffix)


@pytest.mark.parametrize("xml", INPUTS, ids=[p.stem for p in INPUTS])
def test_the_parser_matches_its_golden_file(xml):
    suffix, text = render(xml)
    expected = golden(xml, suffix)
    assert expected.exists(), f"{expected.name} is missing; {REGENERATE}"
    assert text == expected.read_text(encoding="utf-8"), REGENERATE
    stale = [golden(xml, other).name for other in SUFFIXES if other != suffix]
    assert not [name for name in stale if (GOLDEN / name).exists()], REGENERATE


def test_there_are_goldens_for_good_and_hostile_input_and_none_without_input():
    kinds = {render(xml)[0] for xml in INPUTS}
    assert kinds == set(SUFFIXES)
    stems = {xml.stem for xml in INPUTS}
    outputs = [p for p in GOLDEN.iterdir() if p.name.endswith(SUFFIXES)]
    assert [p.name for p in outputs if p.name.split(".")[0] not in stems] == []


def regenerate() -> None:
    for xml in INPUTS:
        suffix, text = render(xml)
        for other in SUFFIXES:
            golden(xml, other).unlink(missing_ok=True)
        golden(xml, suffix).write_text(text, encoding="utf-8")
        print(f"{golden(xml, suffix).relative_to(GOLDEN.parent.parent.parent)}")


if __name__ == "__main__":
    regenerate()
