# ruff: noqa: E501 (exact Markdown lines are longer than code lines)
"""The Markdown summary: exact output, its structure as GitHub renders it, and hostile data."""

from __future__ import annotations

import dataclasses
import textwrap

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from entropy_action.core.findings import Finding
from entropy_action.render import markdown
from entropy_action.verdict.classify import Evidence, classify
from tests.support.verdict_samples import EVIDENCE, FAILING_B, GREEN, MODULE, result, verdict_of

# GitHub-flavoured enough: tables and strikethrough on, raw HTML allowed (GitHub passes it
# through its sanitizer), so HTML that escaped the renderer would show up as html tokens.
GFM = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
HOSTILE_ID = "tests/t.py::test_x[<script>alert(1)</script>|`a`|**b**|[l](javascript:x)]"
HOSTILE_MESSAGE = "AssertionError\n```\n<img src=x onerror=alert(1)>\n| a | b |\n````\n# heading"


def tokens(text: str) -> list[Token]:
    flat: list[Token] = []
    for token in GFM.parse(text):
        flat.append(token)
        flat.extend(token.children or [])
    return flat


def table_rows(text: str) -> list[list[str]]:
    """The rendered text of each cell of each table row, header rows included."""
    rows: list[list[str]] = []
    in_row = False
    for token in GFM.parse(text):
        if token.type in ("tr_open", "tr_close"):
            in_row = token.type == "tr_open"
            rows += [[]] if in_row else []
        elif token.type == "inline" and in_row:
            rows[-1].append("".join(c.content for c in token.children or []))
    return rows


def test_env_coupled_renders_exactly():
    test_id = r"tests\/properties\/test\_invoice\_total\.py\:\:test\_total"
    assert markdown.render(verdict_of("env_coupled")) == textwrap.dedent(
        f"""\
        ## ❌ entropy-gate: `env_coupled` (do not merge)

        **Environment-coupled: passes on host A, fails on host B.**

        ### What to do

        1. **Make test\\_total independent of what differs on host B\\: read what it reads from a pinned source or a parameter\\.** — `tests/properties/test_invoice_total.py:20`\\
           fails on host B only\\: AssertionError\\: 2026 \\!\\= 2031

        | host A | host B | pins intact | silencing | classification |
        |---|---|---|---|---|
        | pass | fail | yes | none | `env_coupled` |

        ### Tests that differ or did not pass (1 of 2)

        | test | host A | host B | note |
        |---|---|---|---|
        | {test_id} | passed | **failed** |  |

        {test_id} on host B:

        ```text
        AssertionError: 2026 != 2031
        ```

        ### Reasons

        - host A\\: pass
        - host B\\: fail \\(1 failed\\)
        - {LEAKED}
        """
    )


LEAKED = (
    r"host A passed and host B failed\: the property depends on a source that differs on "
    r"host B and that the pins do not fix"
)


def test_a_merge_candidate_is_a_verdict_line_and_the_row_only():
    text = markdown.render(verdict_of("merge_candidate"))
    assert text.splitlines()[0] == "## ✅ entropy-gate: `merge_candidate` (merge candidate)"
    assert [t.content for t in tokens(text) if t.type == "inline" and t.map][:2] == [
        "✅ entropy-gate: `merge_candidate` (merge candidate)",
        "**Merge candidate: both hosts pass under intact pins, nothing silenced.**",
    ]
    headings = [t.tag for t in tokens(text) if t.type == "heading_open"]
    assert headings == ["h2", "h3"]  # the verdict line and the reasons: nothing differs


@pytest.mark.parametrize("classification", sorted(EVIDENCE))
def test_every_summary_has_the_verdict_heading_and_the_table_row(classification):
    verdict = verdict_of(classification)
    text = markdown.render(verdict)
    rows = table_rows(text)
    assert rows[0] == ["host A", "host B", "pins intact", "silencing", "classification"]
    pins = "yes" if verdict.pins_intact else "no"
    assert rows[1][:3] == [verdict.host_a, verdict.host_b, pins]
    assert rows[1][4] == classification
    first = tokens(text)[0]
    assert (first.type, first.tag) == ("heading_open", "h2")


def test_the_structure_as_github_renders_it():
    verdict = verdict_of("entropy_silenced")
    html = GFM.render(markdown.render(verdict))
    assert html.count("<table>") == 1
    assert "<td>introduced</td>" in html
    assert "<h3>Findings</h3>" in html
    assert "<details>\n<summary>1 notice that stood at the base ref" in html
    assert html.count("<li>") == 1 + 1 + 1 + len(verdict.reasons)  # finding, what to do, notice
    assert "<code>tests/properties/test_invoice_total.py:14</code>" in html
    assert "skip marker 'flaky' on property test_total (forbid_skip_markers lists it)" in html


def test_failed_at_the_base_too_is_said_in_the_tests_table():
    old = result("test_old", "failed", "failed", base_a="failed", base_b="failed")
    text = markdown.render(classify(Evidence("pass", "fail", tests=(FAILING_B, old, GREEN))))
    rows = table_rows(text)
    assert rows[2] == ["test", "host A", "host B", "note"]
    assert rows[3][1:] == ["passed", "failed", ""]
    assert rows[4][1:] == [
        "failed",
        "failed",
        "failed at the base ref too on host A and B: the patch did not cause it, "
        "and it does not fix it",
    ]


def test_hostile_test_ids_and_messages_stay_text():
    hostile = dataclasses.replace(
        result("x", "passed", "failed", message_b=HOSTILE_MESSAGE), id=HOSTILE_ID
    )
    finding = Finding(
        kind="skip_call",
        path="tests/t.py",
        line=1,
        message="<b>bold</b> @someone [click](http://evil) ![img](x) | cell",
        test="te`st",
    )
    evidence = Evidence(
        "pass", "fail", tests=(hostile,), findings=(finding,), errors=(HOSTILE_MESSAGE,)
    )
    text = markdown.render(classify(evidence))
    kinds = {t.type for t in tokens(text)}
    assert not kinds & {"html_inline", "html_block", "link_open", "image"}
    rows = table_rows(text)
    assert [len(row) for row in rows] == [5, 5, 4, 4]  # no pipe broke out of a cell
    assert rows[3][0] == HOSTILE_ID  # shown literally
    fences = [t.content for t in tokens(text) if t.type == "fence"]
    assert fences == [HOSTILE_MESSAGE + "\n", HOSTILE_MESSAGE + "\n"]  # message, host error
    headings = [t for t in tokens(text) if t.type == "heading_open"]
    assert [h.tag for h in headings] == ["h2", "h3", "h3", "h3", "h3"]  # no injected heading
    html = GFM.render(text)
    assert "&lt;b&gt;bold&lt;/b&gt; @someone [click](http://evil) ![img](x) | cell" in html


def test_code_spans_outlast_backticks_inside():
    assert markdown.code("a`b") == "``a`b``"
    assert markdown.code("`x`") == "`` `x` ``"
    rendered = GFM.render(markdown.code("a``b`"))
    assert "<code>a``b`</code>" in rendered


def test_long_messages_are_cut():
    message = "\n".join(f"line {n}" for n in range(100))
    text = markdown.render(
        classify(
            Evidence("pass", "fail", tests=(result("t", "passed", "failed", message_b=message),))
        )
    )
    assert "line 19\n… 80 more lines\n```" in text
    assert "line 20" not in text


def test_truncation_closes_an_open_fence_and_notes_it():
    body = "## head\n\n```text\n" + "x\n" * 1000 + "```\n"
    cut = markdown.truncate(body, 500)
    assert len(cut) <= 500
    assert "**… summary truncated at 500 characters.**" in cut
    fences = [t for t in tokens(cut) if t.type == "fence"]
    assert len(fences) == 1
    assert "truncated" not in fences[0].content  # the note is outside the fence
    assert markdown.truncate("short", 500) == "short"


def test_no_tests_reported_is_said():
    text = markdown.render(classify(Evidence("missing", "missing")))
    assert "### Tests\n\nNo test was reported." in text
    assert MODULE not in text
