"""The action's `check` in GitHub Actions: check-pins and scan annotate the exact lines."""

from __future__ import annotations

import pytest

from tests.support.helpers import SEED_PROPERTY, Repo


@pytest.fixture
def in_actions(seed_repo: Repo) -> Repo:
    seed_repo.monkeypatch.setenv("GITHUB_ACTIONS", "true")
    return seed_repo


def test_a_pin_mutation_is_an_error_on_its_manifest_line(in_actions: Repo) -> None:
    base = in_actions.git("rev-parse", "HEAD")
    text = (in_actions.path / "entropy.yaml").read_text(encoding="utf-8")
    in_actions.write("entropy.yaml", text.replace("rng_seed: 9173", "rng_seed: 1"))
    result = in_actions.cli("check-pins", "--base-ref", base)
    assert result.code == 1
    annotations = [line for line in result.out.splitlines() if line.startswith("::")]
    assert annotations == [
        "::error file=entropy.yaml,line=7,endLine=7,title=entropy-gate%3A pin changed::"
        "pin rng_seed changed: 9173 → 1"
    ]


def test_a_new_skip_is_an_error_and_nothing_is_annotated_outside_actions(
    in_actions: Repo,
) -> None:
    base = in_actions.git("rev-parse", "HEAD")
    marked = SEED_PROPERTY.replace(
        "def test_invoice_total_idempotent",
        '@pytest.mark.skip(reason="flaky")\ndef test_invoice_total_idempotent',
    )
    in_actions.write("tests/properties/test_invoice_total.py", "import pytest\n" + marked)
    result = in_actions.cli("scan", "--base-ref", base)
    assert result.code == 1
    annotations = [line for line in result.out.splitlines() if line.startswith("::")]
    assert len(annotations) == 1
    assert annotations[0].startswith(
        "::error file=tests/properties/test_invoice_total.py,line=6,endLine=6,"
        "title=entropy-gate%3A skip_marker::"
    )
    in_actions.monkeypatch.delenv("GITHUB_ACTIONS")
    assert "::" not in in_actions.cli("scan", "--base-ref", base).out
