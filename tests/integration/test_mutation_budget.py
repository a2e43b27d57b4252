"""The mutation budget is pinned like the other constraints: lowering it is a pin mutation."""

from __future__ import annotations

import pytest

from tests.support.helpers import SEED_MANIFEST, SEED_PROPERTY, Repo

SEED = SEED_MANIFEST.read_text(encoding="utf-8")
BUDGET = SEED + '  mutation: "all"\n  max_mutants: 40\n  time_budget_seconds: 120\n'


def check(repo: Repo, head: str, base: str = BUDGET) -> tuple[int, list[str]]:
    repo.write("entropy.yaml", base)
    repo.write("tests/properties/test_invoice_total.py", SEED_PROPERTY)
    base_sha = repo.commit("base")
    repo.write("entropy.yaml", head)
    result = repo.cli("check-pins", "--base-ref", base_sha)
    lines = [line.strip() for line in result.out.splitlines() if "constraint" in line]
    return result.code, lines


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ('mutation: "all"', 'mutation: "changed"', 'mutation "all" → "changed"'),
        ('mutation: "all"', 'mutation: "off"', 'mutation "all" → "off"'),
        ("max_mutants: 40", "max_mutants: 39", "max_mutants 40 → 39"),
        ("time_budget_seconds: 120", "time_budget_seconds: 30", "time_budget_seconds 120 → 30"),
    ],
)
def test_a_lower_budget_is_a_weakened_constraint(
    repo: Repo, old: str, new: str, expected: str
) -> None:
    code, lines = check(repo, BUDGET.replace(old, new))
    assert code == 1
    assert any(line.endswith(f"constraint weakened: {expected}") for line in lines), lines


def test_dropping_the_budget_falls_back_to_lower_defaults_and_weakens(repo: Repo) -> None:
    code, lines = check(repo, SEED)
    assert code == 1
    assert [line.split(": ", 1)[1] for line in lines] == [
        'constraint weakened: mutation "all" → "changed"',
        "constraint tightened: time_budget_seconds 120 → 300",
    ]


def test_a_higher_budget_is_allowed(repo: Repo) -> None:
    head = BUDGET.replace("max_mutants: 40", "max_mutants: 80").replace('  mutation: "all"\n', "")
    code, lines = check(repo, head, BUDGET.replace('  mutation: "all"\n', ""))
    assert code == 0
    assert lines == ["entropy.yaml:17: constraint tightened: max_mutants 40 → 80"]
