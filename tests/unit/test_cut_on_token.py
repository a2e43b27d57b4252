"""Quoted source cut for a message (scan.names.cut_on_token): on a token, with an ellipsis."""

from __future__ import annotations

from entropy_action.scan.names import cut_on_token

REASON = "the clock is faked in this module, so the expected code cannot be computed from it"


def test_short_source_is_left_whole():
    assert cut_on_token("pytest.mark.skip('slow')", 90) == "pytest.mark.skip('slow')"


def test_a_long_string_keeps_its_words_and_its_closing_quote():
    cut = cut_on_token(f"unittest.skip({REASON!r})", 60)
    assert cut == "unittest.skip('the clock is faked in this module, so the …'"
    assert len(cut) <= 60


def test_a_name_is_never_cut_inside():
    source = "pytest.mark.skipif(sys.platform == 'win32' and running_under_emulation_layer)"
    cut = cut_on_token(source, 60)
    assert cut == "pytest.mark.skipif(sys.platform == 'win32' and…"


def test_without_a_token_boundary_the_limit_cuts_and_says_so():
    assert cut_on_token("x" * 100, 10) == "x" * 9 + "…"
