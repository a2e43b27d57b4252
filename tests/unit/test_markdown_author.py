# ruff: noqa: E501 (exact Markdown lines are longer than code lines)
"""The page a PR author reads in five seconds: each finding on one line naming its test once,
what to do per kind of finding, the base's test on the head's code as the evidence of a
silencing verdict, base notices collapsed and never annotated, and quoted code that renders
as code (GitHub-flavoured, through markdown-it)."""

from __future__ import annotations

import textwrap

from entropy_action.core.findings import Finding
from entropy_action.render import checkrun, markdown
from entropy_action.verdict import remediation
from entropy_action.verdict.classify import Evidence, classify
from entropy_action.verdict.model import Verdict
from tests.support.verdict_samples import GREEN, MODULE
from tests.unit.test_markdown import GFM
from tests.unit.test_markdown_sections import section

SKIP = Finding(
    kind="skip_marker",
    path=MODULE,
    line=14,
    message="skip marker 'skipif' on property test_ago: pytest.mark.skipif(True) — it skips "
    "the property",
    test="test_ago",
)
CHANGED = Finding(
    kind="test_changed_to_pass",
    path=MODULE,
    line=20,
    message="property test_ago fails with the base's module on the head's code (assert "
    "'just now' == '0 seconds ago') and passes with the head's module: the patch made it pass "
    "by changing the test, not the code — a property that really was wrong is changed in a "
    "reviewed change of its own",
    test="test_ago",
)
PATCHED = Finding(
    kind="entropy_patched",
    path=MODULE,
    line=30,
    message="patches `datetime.now()` inside the test",
    test="test_late",
)
HOOK = Finding(
    kind="collection_tampering",
    path="conftest.py",
    line=3,
    message="hook `pytest_ignore_collect` can drop tests from collection",
    introduced=False,
)


def _silenced(*findings: Finding) -> Verdict:
    verdict = remediation.advise(
        classify(Evidence("pass", "pass", tests=(GREEN,), findings=findings))
    )
    assert verdict.classification == "entropy_silenced"
    return verdict


def test_each_finding_is_one_line_naming_its_test_once():
    text = markdown.render(_silenced(SKIP, PATCHED, CHANGED))
    assert section(text, "Findings") == textwrap.dedent(
        f"""\
        ### Findings

        - `{MODULE}:14` **skip_marker**: skip marker \\'skipif\\' on property test\\_ago\\: pytest\\.mark\\.skipif\\(True\\) — it skips the property
        - `{MODULE}:30` **entropy_patched** (test `test_late`): patches `datetime.now()` inside the test
        - `{MODULE}:20` **test_changed_to_pass**: {markdown.text(CHANGED.message)}
        """
    )
    found = section(text, "Findings")
    assert found.count("test\\_ago") + found.count("test_ago") == 2  # once per finding line


def test_what_to_do_comes_first_one_step_per_finding_with_where_and_evidence():
    text = markdown.render(_silenced(SKIP, PATCHED, CHANGED))
    steps = section(text, "What to do").partition("\n| host A |")[0]
    assert steps == textwrap.dedent(
        f"""\
        ### What to do

        1. **Remove the marker\\: a property that fails under the pins is fixed in the code\\, not skipped\\.** — `{MODULE}:14`\\
           skip marker \\'skipif\\' on property test\\_ago\\: pytest\\.mark\\.skipif\\(True\\) — it skips the property
        2. **Let the gate pin the source \\(entropy\\.yaml\\) instead of patching it inside the test\\, or take the source as a parameter of the code \\(a clock\\, an RNG\\)\\.** — `{MODULE}:30`\\
           patches `datetime.now()` inside the test
        3. **Fix the code so the base\\'s test passes\\; change the property in a reviewed change of its own\\.** — `{MODULE}:20`\\
           the base\\'s test\\_ago on the head\\'s code\\: assert \\'just now\\' \\=\\= \\'0 seconds ago\\'
        """
    )
    assert text.index("### What to do") < text.index("| host A |") < text.index("### Findings")
    html = GFM.render(text)
    assert html.count("<ol>") == 1
    assert html.count("<br />") == 3  # each step, then its evidence


def test_a_silencing_verdict_leads_with_the_base_test_failing_on_the_change():
    text = markdown.render(_silenced(SKIP, CHANGED))
    assert text.startswith(
        textwrap.dedent(
            """\
            ## ❌ entropy-gate: `entropy_silenced` (do not merge)

            **Entropy silenced: the patch silences nondeterminism in the tests.**

            - **The base's test fails on your change:** `test_ago`: `assert 'just now' == '0 seconds ago'`

            ### What to do
"""
        )
    )
    html = GFM.render(text)
    assert (
        "<li><strong>The base's test fails on your change:</strong> <code>test_ago</code>: "
        "<code>assert 'just now' == '0 seconds ago'</code></li>"
    ) in html


def test_no_evidence_line_without_the_base_on_head_finding_or_on_another_verdict():
    assert "fails on your change" not in markdown.render(_silenced(SKIP))
    merge = classify(Evidence("pass", "pass", tests=(GREEN,), findings=(HOOK,)))
    assert "fails on your change" not in markdown.render(merge)
    odd = CHANGED.model_copy(update={"message": "worded otherwise"})
    assert "fails on your change" not in markdown.render(_silenced(odd))


def test_base_notices_are_one_collapsed_block_and_never_annotated():
    verdict = _silenced(PATCHED, HOOK)
    text = markdown.render(verdict)
    block = text[text.index("<details>") : text.index("</details>") + len("</details>")]
    assert block == textwrap.dedent(
        """\
        <details>
        <summary>1 notice that stood at the base ref (not counted against the patch)</summary>

        - `conftest.py:3` **collection_tampering**: hook `pytest_ignore_collect` can drop tests from collection

        </details>"""
    )
    html = GFM.render(text)
    assert "<li><code>conftest.py:3</code> <strong>collection_tampering</strong>" in html
    plan = checkrun.plan(verdict, head_sha="0" * 40)
    assert [(a.path, a.line) for a in plan.annotations] == [(MODULE, 30)]


def test_quoted_code_renders_as_code_and_no_backslash_shows():
    html = GFM.render(markdown.render(_silenced(PATCHED, HOOK)))
    assert "patches <code>datetime.now()</code> inside the test" in html
    assert "\\`" not in html
    assert "\\" not in html.replace("\\\\", "")  # no escape is left visible


def test_hostile_backticks_stay_inert():
    hostile = PATCHED.model_copy(
        update={"message": "a `<img src=x onerror=alert(1)>` b `[l](javascript:x)` c ` odd"}
    )
    html = GFM.render(markdown.render(_silenced(hostile)))
    assert "<img" not in html
    assert "<a " not in html
    even = PATCHED.model_copy(update={"message": "x `<b>bold</b>` y"})
    html = GFM.render(markdown.render(_silenced(even)))
    assert "<code>&lt;b&gt;bold&lt;/b&gt;</code>" in html


def test_the_check_jobs_scan_annotates_only_what_counts():
    from entropy_action.cli.commands import scan as scan_command  # noqa: PLC0415

    lines = scan_command.workflow_annotations([HOOK, PATCHED], [PATCHED]).splitlines()
    assert lines == [
        f"::error file={MODULE},line=30,endLine=30,title=entropy-gate%3A entropy_patched::"
        "patches `datetime.now()` inside the test"
    ]


def test_the_skip_page_has_the_headline_too():
    skipped = CHANGED.model_copy(
        update={
            "message": CHANGED.message.replace(
                "and passes with the head's module: the patch made it pass",
                "and is skipped with the head's module: the patch made it go quiet",
            )
        }
    )
    assert "is skipped with the head's module" in skipped.message
    text = markdown.render(_silenced(SKIP, skipped))
    assert (
        "- **The base's test fails on your change:** `test_ago`: "
        "`assert 'just now' == '0 seconds ago'`\n"
    ) in text
