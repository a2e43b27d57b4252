"""The pages a PR author sees for each case (#36 part 7), compared exactly with the committed
golden Markdown (tests/golden/pages; `python -m tests.support.golden_pages` rewrites them
after a reviewed change of wording), and what each must say."""

from __future__ import annotations

import pytest

from tests.support import golden_pages
from tests.unit.test_markdown import GFM


@pytest.mark.parametrize("name", sorted(golden_pages.CASES))
def test_the_page_is_the_golden_one(name: str) -> None:
    golden = (golden_pages.PAGES / f"{name}.md").read_text(encoding="utf-8")
    assert golden_pages.page(name) == golden, f"python -m tests.support.golden_pages {name}"


@pytest.mark.parametrize("name", sorted(golden_pages.CASES))
def test_what_to_do_comes_before_the_table_and_the_findings(name: str) -> None:
    page = golden_pages.page(name)
    assert page.index("What to do") < page.index("| host A | host B | pins intact |")
    assert "Table row" not in page
    assert "full report in element text" not in page


def test_the_skip_page_has_the_headline_and_at_most_three_findings() -> None:
    page = golden_pages.page("skip")
    assert "**The base's test fails on your change:**" in page
    findings = page[page.index("### Findings") : page.index("### Reasons")]
    assert 1 <= findings.count("\n- ") <= 3


def test_the_env_coupled_pages_name_the_tests_own_read_and_the_variable() -> None:
    clock = golden_pages.page("env_coupled-clock")
    assert "`test.py:250`" in clock
    assert "pin it (clock_unix)" not in clock.replace("\\", "")  # it is pinned already
    assert "— `test.py:262`" in golden_pages.page("env_coupled-variable")
    assert "HOME" in golden_pages.page("env_coupled-variable").split("### What to do")[1][:80]


def test_the_invalid_page_leads_with_its_cause_and_folds_the_table() -> None:
    html = GFM.render(golden_pages.page("invalid"))
    assert html.index("signal 11") < html.index("<details>") < html.index("<th>test</th>")
