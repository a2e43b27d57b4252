"""The Markdown summary's sections for the verdict's newer fields: exactly, as GitHub renders
them, and with hostile data in every one of them."""

from __future__ import annotations

import dataclasses
import textwrap

from entropy_action.core.findings import Finding
from entropy_action.core.score import MutationScore, Survivor
from entropy_action.render import markdown, summary
from entropy_action.verdict.classify import Evidence, classify
from entropy_action.verdict.model import OrderPair, TestResult, TestSeed, Verdict
from tests.support.verdict_samples import GREEN, MODULE, result
from tests.unit.test_markdown import GFM, HOSTILE_ID, table_rows, tokens

SEED = TestSeed(rng_seed=9173, seed=12)
FAILING = result("test_total", "passed", "failed", seed_a=SEED, seed_b=SEED)
LIVE = Finding(
    kind="live_entropy",
    path="billing/fees.py",
    line=12,
    message="reads `time.time()`, the live clock: pin clock_unix and take a Clock",
    test="test_total",
    level="warning",
)
WEAKER = Survivor(
    mutant="billing/fees.py:27: amount > limit → amount >= limit",
    path="billing/fees.py",
    line=27,
    test="test_limit",
)
STRONGER = Survivor(
    mutant="billing/fees.py:30: 10 → 11", path="billing/fees.py", line=30, test="test_tenth"
)
DIGEST = "ab" * 32


def score(**fields: object) -> MutationScore:
    base = {"mode": "changed", "mutants": 16, "base_killed": 14, "head_killed": 9}
    return MutationScore.model_validate({**base, **fields})


def coupled(*tests: TestResult, **update: object) -> Verdict:
    """An env_coupled verdict with a live read, attributed to the clock, plus `update`."""
    verdict = classify(Evidence("pass", "fail", tests=(*tests, GREEN), findings=(LIVE,)))
    assert verdict.classification == "env_coupled"  # a warning never rejects
    return verdict.model_copy(update={"coupled_to": ["clock"], **update})


def section(text: str, heading: str) -> str:
    """The lines from `### heading` to the next heading (or the end)."""
    after = text.split(f"### {heading}\n", 1)[1]
    return f"### {heading}\n" + after.split("\n### ", 1)[0].rstrip("\n") + "\n"


def test_what_the_failure_follows_is_right_under_the_verdict_line():
    text = markdown.render(coupled(FAILING))
    assert text.startswith(
        textwrap.dedent(
            """\
            ## ❌ entropy-gate: `env_coupled` (do not merge)

            **Environment-coupled: passes on host A, fails on host B.**

            The failure follows: `clock`.

            | host A |"""
        )
    )
    text_summary = summary.render_text(coupled(FAILING)).splitlines()
    assert text_summary[:2] == [
        "entropy-gate verdict: env_coupled (do not merge)",
        "  the failure follows: clock",
    ]


def test_no_attribution_no_line():
    text = markdown.render(coupled(FAILING, coupled_to=[]))
    assert "follows" not in text.split("| host A |")[0]


def test_a_failing_test_gets_its_replay_command_in_a_code_block():
    assert section(markdown.render(coupled(FAILING)), "Replay") == textwrap.dedent(
        f"""\
        ### Replay

        {markdown.REPLAY_INTRO}

        ```sh
        entropy-gate replay --report host-b {MODULE}::test_total
        ```
        """
    )


def test_a_test_failing_on_both_hosts_is_replayed_as_host_a_ran_it():
    other = result(
        "test_other",
        "failed",
        "failed",
        seed_a=TestSeed(rng_seed=1, seed=2),
        seed_b=TestSeed(rng_seed=1843, seed=3),
    )
    text = markdown.render(classify(Evidence("fail", "fail", tests=(other,))))
    fences = [t for t in tokens(text) if t.type == "fence"]
    assert [(f.info, f.content) for f in fences] == [
        ("sh", f"entropy-gate replay --report host-a {MODULE}::test_other\n")
    ]


def test_an_order_pair_is_replayed_with_its_other_test_first():
    pair = OrderPair(
        victim=f"{MODULE}::test_total",
        other=f"{MODULE}::test_warm",
        kind="polluter",
        replay=f"entropy-gate replay --report host-b --after {MODULE}::test_warm "
        f"{MODULE}::test_total",
    )
    verdict = coupled(FAILING).model_copy(update={"order_dependence": [pair]})
    block = section(markdown.render(verdict), "Replay")
    assert f"# order: {MODULE}::test_total fails after {MODULE}::test_warm (polluter)\n" in block
    assert f"--after {MODULE}::test_warm {MODULE}::test_total\n" in block


def test_no_failing_test_no_replay():
    text = markdown.render(classify(Evidence("pass", "pass", tests=(result("test_total"),))))
    assert "### Replay" not in text


def test_live_reads_are_warnings_not_findings():
    text = markdown.render(coupled(FAILING))
    assert section(text, "Warnings") == (
        "### Warnings\n\n"
        "- `billing/fees.py:12` **live_entropy** (test `test_total`): reads `time.time()`"
        "\\, the live clock\\: pin clock\\_unix and take a Clock\n"
    )
    assert "### Findings" not in text
    assert table_rows(text)[1][3] == "none"  # the silencing column counts no warning


def test_a_pre_existing_warning_is_a_collapsed_notice_shown_once():
    old = LIVE.model_copy(update={"introduced": False})
    verdict = classify(Evidence("pass", "fail", tests=(FAILING,), findings=(old,)))
    text = markdown.render(verdict)
    assert "### Warnings" not in text
    notices = text[text.index("<details>") : text.index("</details>")]
    assert "1 notice that stood at the base ref" in notices
    assert "(test `test_total`): reads" in notices
    assert text.count("reads `") == 1  # not again under Reasons


def test_a_weaker_property_shows_both_scores_and_counts_the_survivors_its_findings_name():
    text = markdown.render(coupled(FAILING, mutation=score(weakened=[WEAKER], not_counted=2)))
    assert section(text, "Property strength") == (
        "### Property strength\n\n"
        "Base kills 14/16 mutants, head kills 9/16 (constraints.mutation: changed); "
        "2 not counted.\n\n"
        "- weaker: 1 mutant(s) the base's module killed survive the head's (each a "
        "`weakened_property` finding)\n"
    )


def test_a_stronger_property_says_so():
    stronger = score(base_killed=9, head_killed=10, strengthened=[STRONGER])
    text = markdown.render(coupled(FAILING, mutation=stronger))
    assert section(text, "Property strength").endswith(
        "- stronger: `billing/fees.py:30: 10 → 11` (the head's `test_tenth` kills it)\n\n"
        "**The property is stronger at the head.**\n"
    )


def test_the_inputs_digest_is_the_last_line():
    text = markdown.render(coupled(FAILING, inputs_sha256=DIGEST))
    assert text.endswith(f"\n\nInputs digest `{DIGEST}`.\n")  # docs/summary.md says what of
    assert summary.render_text(coupled(FAILING, inputs_sha256=DIGEST)).endswith(
        f"\ninputs digest {DIGEST}\n"
    )
    assert "digest" not in markdown.render(coupled(FAILING))


def test_every_section_as_github_renders_it():
    verdict = coupled(
        FAILING,
        mutation=score(weakened=[WEAKER], strengthened=[STRONGER]),
        inputs_sha256=DIGEST,
    )
    flat = tokens(markdown.render(verdict))
    headings = [flat[i + 1].content for i, t in enumerate(flat) if t.type == "heading_open"]
    assert headings == [
        "✅ entropy-gate: `env_coupled` (do not merge)".replace("✅", "❌"),
        "Tests that differ or did not pass (1 of 2)",
        "Replay",
        "Warnings",
        "Property strength",
        "Reasons",
    ]
    paragraphs = [flat[i + 1] for i, t in enumerate(flat) if t.type == "paragraph_open"]
    assert paragraphs[1].content == "The failure follows: `clock`."
    assert paragraphs[-1].content.startswith(f"Inputs digest `{DIGEST}`")
    html = GFM.render(markdown.render(verdict))
    assert "<code>billing/fees.py:30: 10 → 11</code>" in html
    assert "(each a <code>weakened_property</code> finding)" in html
    assert html.count("<table>") == 2  # the seed's row and the tests


HOSTILE = "x`` <img src=x onerror=alert(1)> | [l](javascript:x) @team\n### injected"


def test_hostile_data_in_every_new_field_stays_text():
    hostile_id = HOSTILE_ID + "```\n```"  # the replay quotes the id: a fence inside its fence
    hostile_test = dataclasses.replace(FAILING, id=hostile_id, raw_ids=[hostile_id])
    survivor = Survivor(mutant=HOSTILE, path="billing/fees.py", line=1, test=HOSTILE)
    live = LIVE.model_copy(update={"message": HOSTILE, "test": HOSTILE})
    verdict = classify(Evidence("pass", "fail", tests=(hostile_test,), findings=(live,)))
    verdict = verdict.model_copy(
        update={
            "coupled_to": [HOSTILE, "env:TZ"],
            "mutation": score(mode=HOSTILE, weakened=[survivor], strengthened=[survivor]),
            "inputs_sha256": HOSTILE,
        }
    )
    text = markdown.render(verdict)
    kinds = {t.type for t in tokens(text)}
    assert not kinds & {"html_inline", "html_block", "link_open", "image"}
    headings = [flat.tag for flat in tokens(text) if flat.type == "heading_open"]
    assert headings == ["h2", "h3", "h3", "h3", "h3", "h3"]  # none injected
    (fence,) = [t for t in tokens(text) if t.type == "fence"]
    assert fence.content.endswith("'\n")  # the quoted id, its backticks inside the fence
    assert "```" in fence.content
    html = GFM.render(text)
    assert "[l](javascript:x) @team ### injected" in html  # the coupled source, literally
    assert [len(row) for row in table_rows(text)] == [5, 5, 4, 4]
