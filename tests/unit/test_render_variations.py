"""Host B's variations in the reporters (exact output): one line in the text summary; the
line and the full table, collapsed, in the Markdown summary; host.json text escaped."""

from __future__ import annotations

import textwrap

from entropy_action.core import variations
from entropy_action.core.variations import Variation
from entropy_action.render import markdown, properties, summary
from entropy_action.verdict import model, rollup
from entropy_action.verdict.classify import Evidence, classify

MODULE = "tests/test_sq.py"
HELD = {
    "tz": "pinned: pins.tz = UTC",
    "python": "no other interpreter was given for host B",
    "cpu_count": "turned off by the manifest: the pool is sized by the runner",
}


def listed() -> list[Variation]:
    return [
        Variation(dimension=name, varied=False, how="host A's value", why_not=HELD[name])
        if name in HELD
        else Variation(dimension=name, varied=True, how=f"{name} differs")
        for name in variations.NAMES
    ]


def verdict_with(found: list[Variation]) -> model.Verdict:
    test = model.TEST_RESULT.validate_python(
        {"id": f"{MODULE}::t", "raw_ids": [f"{MODULE}::t"], "host_a": "passed", "host_b": "passed"}
    )
    verdict = classify(Evidence(host_a="pass", host_b="pass", tests=(test,)))
    return verdict.model_copy(update={"host_b_variations": found})


LINE = (
    "host B varied: clock, env, network, hostname, path, umask, temp_root, lang, rng_seed, "
    "hash_seed, test_order, file_order; held: tz (pinned: pins.tz = UTC), python (no other "
    "interpreter was given for host B), cpu_count (turned off by the manifest: the pool is "
    "sized by the runner)"
)


def test_the_text_summary_has_one_line_of_variations() -> None:
    assert summary.render_text(verdict_with(listed())) == textwrap.dedent(
        f"""\
        entropy-gate verdict: merge_candidate (merge candidate)
          table row: pass | pass | pins intact | no silencing → merge candidate
          host A: pass, host B: pass, pins intact
        tests: 1; 1 passed on both hosts
        {LINE}
        reasons:
          - host A: pass
          - host B: pass
        """
    )


def test_without_variations_nothing_is_added() -> None:
    verdict = verdict_with([])
    assert "host B varied" not in summary.render_text(verdict)
    assert "variations" not in markdown.render(verdict)


def test_a_long_reason_is_cut_on_the_line_and_nothing_held_says_so() -> None:
    found = [Variation(dimension="cpu_count", varied=False, how="x", why_not="y" * 500)]
    line = summary.render_text(verdict_with(found)).split("\n")[4]
    assert line == f"host B varied: nothing; held: cpu_count ({'y' * 119}…)"


def test_the_markdown_summary_has_the_line_and_the_table_collapsed() -> None:
    text = markdown.render(verdict_with(listed()))
    start = text.index("### Host B's variations")
    section = text[start : text.index("### Reasons")]
    escaped = (
        "Host B varied: clock, env, network, hostname, path, umask, temp\\_root, lang, "
        "rng\\_seed, hash\\_seed, test\\_order, file\\_order; held: tz (pinned\\: pins\\.tz "
        "\\= UTC), python (no other interpreter was given for host B), cpu\\_count (turned "
        "off by the manifest\\: the pool is sized by the runner)"
    )
    rows = "\n".join(
        f"| {markdown.text(v.dimension)} | {'yes' if v.varied else 'no'} | "
        f"{markdown.text(v.how)} | {markdown.text(v.why_not or '')} |"
        for v in listed()
    )
    assert section == (
        f"### Host B's variations\n\n{escaped}.\n\n<details>\n"
        "<summary>every dimension host B has (15)</summary>\n\n"
        "| dimension | varied | how | why not |\n|---|---|---|---|\n"
        f"{rows}\n\n</details>\n\n"
    )
    assert "| cpu\\_count | no | host A\\'s value | turned off by the manifest\\: the pool" in text


def test_host_json_text_cannot_break_the_table_or_open_html() -> None:
    found = [
        Variation(dimension="clock", varied=True, how="a | b <script>x</script> " + "z" * 900),
    ]
    text = markdown.render(verdict_with(found))
    row = next(line for line in text.split("\n") if line.startswith("| clock"))
    assert "<script>" not in row
    assert row.count(" | ") == 3  # the four cells, no pipe from the data
    assert "…" in row  # cut to MAX_VARIATION_CELL
    assert len(row) < 2 * markdown.MAX_VARIATION_CELL + 40


def test_many_properties_show_host_bs_variations_once_or_per_property() -> None:
    """A passing property has no section of its own: the line goes under the list, once when
    every host B varied and held the same, else one per property."""
    same = [rollup.Judged(name, f"tests/test_{name}.py", verdict_with(listed())) for name in "ab"]
    text = summary.render_text(rollup.roll_up(same))
    assert text.split("\n")[3:7] == [
        "  merge_candidate     a  tests/test_a.py  host A pass, host B pass, 1 test",
        "  merge_candidate     b  tests/test_b.py  host A pass, host B pass, 1 test",
        f"  {LINE}",
        "",
    ]
    other = [*listed()[:-1], Variation(dimension="cpu_count", varied=True, how="3 CPUs")]
    differ = [same[0], rollup.Judged("b", "tests/test_b.py", verdict_with(other))]
    lines = summary.render_text(rollup.roll_up(differ)).split("\n")
    assert lines[5] == f"  a: {LINE}"
    assert lines[6].startswith("  b: host B varied: clock, ")
    assert lines[6].endswith("file_order, cpu_count; held: tz (pinned: pins.tz = UTC), python "
                             "(no other interpreter was given for host B)")  # fmt: skip
    older = [same[0], rollup.Judged("b", "tests/test_b.py", verdict_with([]))]
    lines = summary.render_text(rollup.roll_up(older)).split("\n")
    assert lines[5:7] == [f"  a: {LINE}", ""]  # b's host B (an older gate's) listed nothing


def test_many_properties_with_long_variations_fit_the_check_runs_limit() -> None:
    long = [
        Variation(dimension=name, varied=False, how="h" * 2000, why_not="w" * 2000)
        for name in variations.NAMES
    ]
    judged = [
        rollup.Judged(f"p{index:03d}", f"tests/test_p{index:03d}.py", verdict_with(long))
        for index in range(60)
    ]
    fitted = properties.fit(rollup.roll_up(judged), 65_535)
    assert len(fitted.summary) <= 65_535
    one = markdown.render(verdict_with(long))
    assert len(one) < 20_000  # 15 rows, each cell cut: one property stays well within it
