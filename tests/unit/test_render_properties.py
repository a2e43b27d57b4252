"""What a reader sees of a verdict over many properties: the Markdown summary, the text
summary, the check run (title, summary, text, annotations) and GitHub's limits on them."""

from __future__ import annotations

import re
import textwrap

import pytest

from entropy_action.cli.commands.verdict import publish_to_workflow
from entropy_action.github import api, workflow
from entropy_action.github.api import ApiSettings, Secret
from entropy_action.manifest.pindiff import PinChange
from entropy_action.render import checkrun, markdown, properties, summary
from entropy_action.verdict.classify import Evidence, classify
from entropy_action.verdict.model import Verdict
from entropy_action.verdict.rollup import Judged, roll_up
from tests.support.github_api import GitHubAPI
from tests.support.verdict_samples import GREEN, SKIP, result, verdict_of

HEAD = "feedfacefeedfacefeedfacefeedfacefeedface"
DROPPED = PinChange(
    kind="missing",
    key="properties.old",
    old={"property_id": "old", "module": "tests/test_old.py"},
    new=None,
    path="entropy.yaml",
    line=7,
    message="property old (tests/test_old.py) is no longer listed",
    rejects=True,
)


TITLE = r"pin\_mutation in property old \[removed from the manifest\] \(1 of 4 properties\)"
GAMMA = (
    r"| gamma | tests\/test\_c\.py | `env_coupled` | pass | fail | 2, 1 differ or did not pass |"
)
TALLY = (
    "1 `pin_mutation`, 1 `entropy_silenced`, 1 `env_coupled`, 1 `merge_candidate`; "
    "the worst decides."
)


def four() -> Verdict:
    """alpha passes, beta is silenced, gamma env-coupled, old dropped from the manifest."""
    judged = [
        Judged("alpha", "tests/test_a.py", verdict_of("merge_candidate")),
        Judged("beta", "tests/test_b.py", verdict_of("entropy_silenced")),
        Judged("gamma", "tests/test_c.py", verdict_of("env_coupled")),
    ]
    return roll_up(judged, [DROPPED])


def coupled(index: int, message_chars: int = 1500) -> Verdict:
    """An env_coupled verdict whose failing test (its own id and line) carries a long message."""
    failing = result(
        f"test_p{index}",
        "passed",
        "failed",
        message_b=f"AssertionError {index}: " + "x" * message_chars,
        line=index + 1,
    )
    return classify(Evidence("pass", "fail", tests=(failing, GREEN)))


def many(count: int, *, silenced: int = 0, failing: bool = True) -> Verdict:
    """`count` properties: the first `silenced` entropy_silenced, the rest env_coupled (or
    passing with `failing=False`)."""
    judged = []
    for index in range(count):
        if index < silenced:
            finding = SKIP.model_copy(update={"line": index + 1, "message": f"skip {index}"})
            verdict = classify(Evidence("pass", "pass", findings=(finding,), tests=(GREEN,)))
        elif failing:
            verdict = coupled(index)
        else:
            verdict = verdict_of("merge_candidate")
        judged.append(Judged(f"p{index:03d}", f"tests/test_p{index:03d}.py", verdict))
    return roll_up(judged)


# -- the one-property form ------------------------------------------------------------------


@pytest.mark.parametrize("classification", ["merge_candidate", "entropy_silenced", "invalid"])
def test_a_one_property_verdict_renders_exactly_as_before(classification):
    verdict = verdict_of(classification)
    assert verdict.properties is None
    assert markdown.render(verdict) == markdown.join(markdown.sections(verdict))
    assert markdown.render(verdict, limit=10**9) == markdown.render(verdict)
    assert markdown.title(verdict) == markdown.TITLES[classification]
    plan = checkrun.plan(verdict, head_sha=HEAD)
    assert plan.text == ""
    assert "text" not in plan.create_body()["output"]
    assert all(a.title.startswith("entropy-gate: ") for a in plan.annotations)


# -- the Markdown summary -------------------------------------------------------------------


def test_the_title_names_the_deciding_property_and_how_many_of_how_many():
    verdict = many(20, silenced=1)
    assert verdict.classification == "entropy_silenced"
    assert markdown.title(verdict) == "entropy_silenced in property p000 (1 of 20 properties)"
    assert markdown.title(many(5, silenced=5)) == (
        "entropy_silenced in properties p000, p001, p002 and 2 more (5 of 5 properties)"
    )
    assert markdown.title(many(3, failing=False)) == "merge_candidate: all 3 properties pass"
    assert markdown.title(four()) == (
        "pin_mutation in property old [removed from the manifest] (1 of 4 properties)"
    )


def test_the_summary_leads_with_a_table_worst_first_then_a_section_per_property():
    text = markdown.render(four())
    head = text.split("\n\n### ", 1)[0]
    assert head == textwrap.dedent(
        """\
        ## ❌ entropy-gate: `pin_mutation` (do not merge)

        **Pin mutation: pins in entropy.yaml or the gate's configuration changed.**

        {title}: {tally}

        | property | module | classification | host A | host B | tests |
        |---|---|---|---|---|---|
        | old | *removed from the manifest* | `pin_mutation` | not run | not run | 0 |
        | beta | tests\\/test\\_b\\.py | `entropy_silenced` | pass | pass | 1 |
        {gamma}
        | alpha | tests\\/test\\_a\\.py | `merge_candidate` | pass | pass | 1 |"""
    ).format(title=TITLE, tally=TALLY, gamma=GAMMA)
    headings = [line for line in text.split("\n") if line.startswith("### ")]
    assert headings == [
        "### ❌ property `old` (removed from the manifest): `pin_mutation`",
        "### ❌ property `beta` — `tests/test_b.py`: `entropy_silenced`",
        "### ❌ property `gamma` — `tests/test_c.py`: `env_coupled`",
    ]
    assert "## ❌ entropy-gate" not in text.split("\n", 1)[1]  # one headline, the roll-up's


def test_each_section_is_the_propertys_own_render_with_headings_one_level_down():
    verdict = four()
    beta = next(p for p in verdict.properties or [] if p.property_id == "beta")
    own = markdown.render(beta.verdict)
    section = markdown.render(verdict).split("### ❌ property `beta`", 1)[1].split("\n### ")[0]
    for line in own.split("\n")[1:]:
        if line.startswith("### "):
            assert f"\n#{line}\n" in section
        elif "inputs digest" not in line:
            assert line in section


def test_a_passing_property_is_collapsed_into_details():
    text = markdown.render(four())
    block = text[text.index("<details>\n<summary>✅ property alpha") :]
    assert block.startswith(
        "<details>\n<summary>✅ property alpha — tests/test_a.py: merge_candidate</summary>\n\n"
    )
    assert "\n</details>\n" in block


def test_a_heading_inside_a_fence_is_not_demoted():
    failing = result("test_h", "passed", "failed", message_b="### not a heading\n## nor this")
    verdict = roll_up(
        [Judged("h", "tests/test_h.py", classify(Evidence("pass", "fail", tests=(failing,))))]
    )
    text = markdown.render(verdict)
    assert "\n### not a heading\n## nor this\n" in text
    assert "\n#### Tests that differ or did not pass (1 of 1)\n" in text


def test_hostile_module_paths_cannot_break_the_table_or_the_summary_tag():
    module = "tests/x|<b>y</b>`z.py"
    judged = [
        Judged("ok", module, verdict_of("merge_candidate")),
        Judged("bad", module, verdict_of("real_defect")),
    ]
    text = markdown.render(roll_up(judged))
    rows = [
        line for line in text.split("\n") if line.startswith("| ok ") or line.startswith("| bad ")
    ]
    assert all(line.count(" | ") == 5 and "\\|" in line for line in rows)
    assert (
        "<summary>✅ property ok — tests/x|&lt;b&gt;y&lt;/b&gt;`z.py: merge_candidate</summary>"
        in text
    )
    assert text.count("<b>") == text.count("``tests/x|<b>y</b>`z.py``")  # only in code spans


def test_the_text_summary_lists_every_property_then_each_failing_one():
    out = summary.render_text(four())
    assert out.startswith(
        textwrap.dedent(
            """\
            entropy-gate verdict: pin_mutation (do not merge)
              pin_mutation in property old [removed from the manifest] (1 of 4 properties)
            properties (worst first):
              pin_mutation        old    removed from the manifest
              entropy_silenced    beta   tests/test_b.py  host A pass, host B pass, 1 test
              env_coupled         gamma  tests/test_c.py  host A pass, host B fail, 2 tests, {more}
              merge_candidate     alpha  tests/test_a.py  host A pass, host B pass, 1 test

            property old [removed from the manifest]:
              entropy-gate verdict: pin_mutation (do not merge)
            """
        ).format(more="1 differ or did not pass")
    )
    assert "\nproperty beta:\n  entropy-gate verdict: entropy_silenced (do not merge)\n" in out
    assert "\nproperty gamma:\n" in out
    assert "\nproperty alpha:" not in out  # passing: its line in the list only


# -- GitHub's limits ------------------------------------------------------------------------


def test_a_summary_that_fits_is_not_shortened():
    verdict = many(12, silenced=2)
    fitted = properties.fit(verdict, checkrun.MAX_SUMMARY)
    assert fitted.summary == markdown.render(verdict)
    assert fitted.left_out == ()
    assert fitted.details == ""


def test_300_passing_properties_lose_their_collapsed_sections_first():
    verdict = many(300, failing=False)
    full = markdown.render(verdict)
    assert len(full) > checkrun.MAX_SUMMARY
    fitted = properties.fit(verdict, checkrun.MAX_SUMMARY)
    assert len(fitted.summary) <= checkrun.MAX_SUMMARY
    assert "<details>" not in fitted.summary
    assert fitted.summary.count("| `merge_candidate` |") == 300  # the table keeps every row
    assert "The sections of the 300 passing properties are left out for length" in fitted.summary
    assert len(fitted.left_out) == 300
    assert fitted.details.startswith(properties.DETAILS_HEADING)


def test_300_failing_properties_shorten_the_least_severe_sections_first():
    verdict = many(300, silenced=3)
    fitted = properties.fit(verdict, checkrun.MAX_SUMMARY)
    text = fitted.summary
    assert len(text) <= checkrun.MAX_SUMMARY
    assert "summary truncated" not in text  # fitted, not cut
    for index in range(3):  # the deciding ones stay whole
        assert f"skip {index}" in text
    assert "p299" in fitted.left_out
    assert "p000" not in fitted.left_out
    # least severe first: among the env_coupled ones, every full section precedes every
    # shortened one in the deciding order
    full = [i for i in range(3, 300) if f"AssertionError {i}:" in text]
    assert full == list(range(3, 3 + len(full)))
    assert "Left out for length" in text
    assert properties.WHERE in text
    assert set(fitted.left_out) == {f"p{i:03d}" for i in range(3 + len(full), 300)}


def test_when_even_the_headings_do_not_fit_they_are_named_in_one_line():
    verdict = many(300, silenced=1)
    fitted = properties.fit(verdict, 30_000)
    assert len(fitted.summary) <= 30_000
    assert "**Left out for length:** the sections of" in fitted.summary
    assert "\n… and 299 more properties, not listed: 299 `env_coupled`.\n" in fitted.summary
    assert "skip 0" in fitted.summary


def test_a_tiny_limit_is_still_kept_by_the_last_resort_cut():
    fitted = properties.fit(many(300, silenced=1), 2_000)
    assert len(fitted.summary) <= 2_000
    assert "summary truncated" in fitted.summary


def test_the_check_run_plan_of_300_properties_is_within_every_limit():
    verdict = many(300, silenced=3)
    plan = checkrun.plan(verdict, head_sha=HEAD)
    assert plan.title == "entropy_silenced in properties p000, p001, p002 (3 of 300 properties)"
    assert len(plan.summary) <= checkrun.MAX_SUMMARY
    assert 0 < len(plan.text) <= checkrun.MAX_TEXT
    assert plan.text.startswith(properties.DETAILS_HEADING)
    assert properties.WHERE_CHECK_RUN in plan.summary
    assert len(plan.annotations) == 3 + 297  # 3 findings, 297 failing tests, each once
    assert plan.annotations[0].title == "entropy-gate (p000): skip_marker"
    assert plan.annotations[-1].title == "entropy-gate (p299): property failed on host B"
    assert all(len(batch) <= checkrun.MAX_PER_REQUEST for batch in plan.batches())
    bodies = [plan.create_body(), *plan.update_bodies()]
    assert len(bodies) == 6
    assert all(b["output"]["text"] == plan.text for b in bodies)


def test_an_annotation_two_properties_share_is_sent_once():
    shared = verdict_of("entropy_silenced")
    verdict = roll_up([Judged("a", "tests/a.py", shared), Judged("b", "tests/b.py", shared)])
    titles = [a.title for a in checkrun.plan(verdict, head_sha=HEAD).annotations]
    assert titles == ["entropy-gate (a): skip_marker"]


def test_300_properties_go_over_http_and_the_api_accepts_every_request(github_api: GitHubAPI):
    plan = checkrun.plan(many(300, silenced=3), head_sha=HEAD)
    sent = api.send(plan, settings(github_api))
    assert github_api.violations == []
    assert [c[2] for c in github_api.calls()] == [201] + [200] * 5
    run = github_api.check_runs[sent.id]
    assert len(run.annotations) == 300
    output = run.fields["output"]
    assert output["summary"] == plan.summary
    assert output["text"] == plan.text
    assert len(output["summary"]) <= 65_535
    assert len(output["text"]) <= 65_535


def test_the_api_stand_in_refuses_an_overlong_text(github_api: GitHubAPI):
    plan = checkrun.plan(many(3, silenced=1), head_sha=HEAD)
    overlong = checkrun.CheckRunPlan(**{**plan.__dict__, "text": "x" * 65_536})
    with pytest.raises(api.PublishError):
        api.send(overlong, settings(github_api))
    assert any("text" in v for v in github_api.violations), github_api.violations


def settings(github_api: GitHubAPI) -> ApiSettings:
    return ApiSettings(
        api_url=github_api.url,
        repository="octo/widgets",
        token=Secret(github_api.token),
        timeout=5.0,
        attempts=1,
        sleep=lambda _: None,
        now=lambda: 1_000_000.0,
    )


def test_the_job_summary_of_300_properties_is_fitted_not_cut(tmp_path):
    target = tmp_path / "summary.md"
    verdict = many(300, silenced=3)
    publish_to_workflow(verdict, tmp_path / "v.json", {"GITHUB_STEP_SUMMARY": str(target)})
    written = target.read_text(encoding="utf-8")
    assert len(written.encode()) <= 1024 * 1024
    assert written == markdown.render(verdict, limit=workflow.SUMMARY_CHARS)
    assert "summary truncated" not in written
    assert written.count("### ❌ property") == 300  # 1 MiB holds every failing section


def test_an_empty_properties_list_renders_as_one_property_never_a_traceback():
    verdict = verdict_of("entropy_silenced").model_copy(update={"properties": []})
    one = verdict_of("entropy_silenced")
    assert markdown.render(verdict) == markdown.render(one)
    assert summary.render_text(verdict) == summary.render_text(one)
    assert checkrun.plan(verdict, head_sha=HEAD) == checkrun.plan(one, head_sha=HEAD)


def test_a_property_id_from_a_hand_edited_verdict_stays_literal():
    hostile = "x</summary></details><img src=y>\n## z"
    judged = [
        Judged(hostile, "tests/a.py", verdict_of("merge_candidate")),
        Judged(hostile + "2", "tests/b.py", verdict_of("real_defect")),
    ]
    text = markdown.render(roll_up(judged))
    outside = re.sub(r"(`+).+?\1", "", text)  # code spans render literally
    assert re.findall(r"(?<!\\)<img", outside) == []  # only escaped, \<img
    assert outside.count("</summary>") == outside.count("</details>") == 1  # our own
    assert "<summary>✅ property x&lt;/summary&gt;&lt;/details&gt;&lt;img src=y&gt; ## z" in text
    assert "\n## z" not in text


def test_30_failing_properties_keep_the_more_severe_sections_whole():
    verdict = many(30, silenced=1)
    assert len(markdown.render(verdict)) > checkrun.MAX_SUMMARY
    fitted = properties.fit(verdict, checkrun.MAX_SUMMARY)
    full = [i for i in range(1, 30) if f"AssertionError {i}:" in fitted.summary]
    assert 0 < len(full) < 29
    assert full == list(range(1, 1 + len(full)))  # shortened from the end of the order
    assert fitted.left_out == tuple(f"p{i:03d}" for i in range(1 + len(full), 30))
    stub = "### ❌ property `p029` — `tests/test_p029.py`: `env_coupled`\n\nLeft out for length:"
    assert stub in fitted.summary
    assert "\n### ❌ property `p029`" in fitted.details
