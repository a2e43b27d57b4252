"""Workflow commands, outputs and the step summary, escaped by GitHub's rules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from entropy_action.github import workflow


def test_data_escapes_percent_cr_and_lf_in_that_order():
    assert workflow.escape_data("100%\r\n::x") == "100%25%0D%0A::x"
    assert workflow.escape_data("%0A") == "%250A"  # an encoded newline stays text


def test_properties_also_escape_colon_and_comma():
    assert workflow.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_an_annotation_with_every_property():
    line = workflow.annotation(
        "error", "boom\n::warning::x", file="tests/a,b.py", line=3, title="gate: skip"
    )
    assert line == (
        "::error file=tests/a%2Cb.py,line=3,endLine=3,title=gate%3A skip::boom%0A::warning::x"
    )


def test_an_annotation_without_properties():
    assert workflow.annotation("notice", "hello") == "::notice::hello"
    assert workflow.annotation("warning", "w", end_line=5) == "::warning::w"


def test_a_message_can_not_start_another_command():
    line = workflow.annotation("notice", "x\n::error file=a.py,line=1::pwned")
    assert "\n" not in line
    assert line.count("::") == 4  # its own two, and the two of the (inert) message text


def test_group_wraps_lines():
    assert workflow.group("pytest: host a", ["one", "two"]) == [
        "::group::pytest: host a",
        "one",
        "two",
        "::endgroup::",
    ]


def test_fenced_log_stops_commands_with_a_random_token():
    lines = workflow.fenced_log("ok\n::error::from a test\n", token="t0k")
    assert lines == ["::stop-commands::t0k", "ok", "::error::from a test", "::t0k::"]
    one, two = workflow.fenced_log("x")[0], workflow.fenced_log("x")[0]
    assert one != two
    assert re.fullmatch(r"::stop-commands::[0-9a-f]{32}", one)


def test_fenced_log_refuses_text_that_holds_its_token():
    with pytest.raises(ValueError, match="token"):
        workflow.fenced_log("::t0k::", token="t0k")


def test_set_output_appends_a_heredoc_with_a_random_delimiter(tmp_path: Path):
    target = tmp_path / "output"
    environ = {"GITHUB_OUTPUT": str(target)}
    assert workflow.set_output("classification", "env_coupled", environ)
    assert workflow.set_output("reasons", "a\nb\nEOF", environ)
    text = target.read_text(encoding="utf-8")
    match = re.fullmatch(
        r"classification<<(ghadelimiter_\w+)\nenv_coupled\n\1\n"
        r"reasons<<(ghadelimiter_\w+)\na\nb\nEOF\n\2\n",
        text,
    )
    assert match is not None, text
    assert match.group(1) != match.group(2)


def test_an_output_holding_its_delimiter_is_refused():
    with pytest.raises(ValueError, match="delimiter"):
        workflow.output_record("x", "a\nD\nb", delimiter="D")
    with pytest.raises(ValueError, match="delimiter"):
        workflow.output_record("x\ny", "v")


def test_outputs_and_summary_are_skipped_outside_actions():
    assert workflow.set_output("a", "b", {}) is False
    assert workflow.append_summary("# hi", {}) is False


def test_the_step_summary_is_appended_and_capped_at_1_mib(tmp_path: Path):
    target = tmp_path / "summary.md"
    environ = {"GITHUB_STEP_SUMMARY": str(target)}
    workflow.append_summary("# first", environ)
    workflow.append_summary("é" * 700_000, environ)  # 1.4 MB in UTF-8
    data = target.read_bytes()
    assert len(data) <= workflow.MAX_STEP_SUMMARY
    text = data.decode("utf-8")
    assert text.startswith("# first\n")
    assert "summary truncated at 1,048,568 bytes" in text  # the budget left after "# first\n"
    assert text.count("é") > 500_000  # the long line was cut, not dropped
    workflow.append_summary("x" * 100, environ)  # nothing fits any more: nothing is written
    assert target.read_bytes() == data
