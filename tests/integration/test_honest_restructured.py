"""Honest restructurings of tests that the precision set (docs/backtests.md) rejected on
structlog, rebuilt as scratch repositories of the same shape and gated end to end; the last
test of each shape is its trick, which still rejects.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tests.integration.test_honest_work import gate, kinds, manifest
from tests.support.helpers import Repo

# --- tests renamed into one class -----------------------------------------------------------
# structlog (github.com/hynek/structlog, bac52127fdbd "dev: add pad_level property"): the
# property classes of ConsoleRenderer (TestConsoleRendererLevelStylesProperty,
# ...ColorsProperty, ...ForceColorsProperty) merged into one TestConsoleRendererProperties,
# each test's body word for word, several renamed on the way; a test that stood at the base
# with `assert val is cr.colors` (a self comparison to the scan) and a `skipif` on the
# platform, both under their new names; a new property and its test added.

RENDERER = """\
    import sys

    _IS_WINDOWS = sys.platform == "win32"


    class Renderer:
        def __init__(self, colors=True):
            self._colors = colors
            self._styles = {"info": "I" if colors else "i"}

        @property
        def colors(self):
            return self._colors

        @colors.setter
        def colors(self, value):
            self._colors = value
            self._styles = {"info": "I" if value else "i"}

        @property
        def styles(self):
            return self._styles

        @styles.setter
        def styles(self, value):
            self._styles = value if value is not None else {"info": "I" if self._colors else "i"}
    """
PAD = """
        @property
        def pad(self):
            return getattr(self, "_pad", 0)

        @pad.setter
        def pad(self, value):
            self._pad = value
    """
STYLES_TESTS = """\
    class TestStylesProperty:
        def test_roundtrip(self):
            r = renderer.Renderer()
            custom = {"info": "X"}

            r.styles = custom

            assert r.styles is custom

        def test_none_resets(self):
            r = renderer.Renderer(colors=False)
            r.styles = {"info": "X"}

            r.styles = None

            assert {"info": "i"} == r.styles
    """
COLORS_TESTS = """\
    class TestColorsProperty:
        def test_reset(self):
            r = renderer.Renderer()
            val = r.colors
            r.styles = {"info": "X"}

            r.colors = r.colors

            assert val is r.colors
            assert {"info": "I"} == r.styles

        @pytest.mark.skipif(renderer._IS_WINDOWS, reason="no ANSI colors on Windows")
        def test_toggle(self):
            r = renderer.Renderer(colors=False)

            r.colors = True

            assert {"info": "I"} == r.styles
    """
HEADER = """\
    import pytest

    import renderer


    """


def _merged(styles: str = STYLES_TESTS, colors: str = COLORS_TESTS) -> str:
    """The head's module: both classes' tests in one class, renamed, and a test of `pad`."""
    body = (
        textwrap.dedent(styles).split("\n", 1)[1]
        + "\n"
        + textwrap.dedent(colors).split("\n", 1)[1]
        + "\n    def test_pad_roundtrip(self):\n"
        "        r = renderer.Renderer()\n\n        r.pad = 3\n\n        assert 3 == r.pad\n"
    )
    body = (
        body.replace("def test_roundtrip", "def test_styles_roundtrip")
        .replace("def test_none_resets", "def test_styles_none_resets")
        .replace("def test_reset", "def test_same_colors_value_resets_styles")
        .replace("def test_toggle", "def test_toggle_colors")
    )
    return textwrap.dedent(HEADER) + "class TestProperties:\n" + body


def _renderer_repo(repo: Repo, tmp_path: Path) -> str:
    repo.write("renderer.py", RENDERER)
    repo.write(
        "tests/test_renderer.py",
        textwrap.dedent(HEADER)
        + textwrap.dedent(STYLES_TESTS)
        + "\n\n"
        + textwrap.dedent(COLORS_TESTS),
    )
    repo.write("entropy.yaml", manifest("tests/test_renderer.py", tmp_path / "pins"))
    base = repo.commit("a renderer and its properties")
    repo.write(
        "renderer.py", textwrap.dedent(RENDERER) + textwrap.indent(textwrap.dedent(PAD), "    ")
    )
    return base


def test_tests_renamed_into_one_class_are_moved_not_removed(repo: Repo, tmp_path: Path) -> None:
    base = _renderer_repo(repo, tmp_path)
    repo.write("tests/test_renderer.py", _merged())
    repo.commit("renderer: a pad property; its properties' tests in one class")
    verdict = gate(repo, base)
    assert kinds(verdict) == [], verdict["reasons"]
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]
    renamed = [r for r in verdict["reasons"] if "moved, not removed" in r]
    assert len(renamed) == 4, verdict["reasons"]
    # what stood at the base in the renamed tests stands there still: notices
    standing = {
        f["kind"]: f["introduced"]
        for f in verdict["findings"]
        if f["kind"] in ("self_comparison", "skip_marker")
    }
    assert standing == {"self_comparison": False, "skip_marker": False}, verdict["findings"]


def test_a_renamed_test_moved_under_a_new_fixture_is_still_a_finding(
    repo: Repo, tmp_path: Path
) -> None:
    """The trick beside it: the bodies word for word, but the new class runs an autouse
    fixture around them (here a harmless one: a clock or an RNG pinned there would pass the
    same way) — the same name change, not the same test."""
    base = _renderer_repo(repo, tmp_path)
    head = _merged().replace(
        "class TestProperties:\n",
        "class TestProperties:\n"
        "    @pytest.fixture(autouse=True)\n"
        "    def _plain(self, monkeypatch):\n"
        "        monkeypatch.setattr(renderer, '_IS_WINDOWS', False)\n\n",
    )
    repo.write("tests/test_renderer.py", head)
    repo.commit("tests in one class")
    verdict = gate(repo, base)
    assert "test_removed" in kinds(verdict), verdict["reasons"]
    assert verdict["classification"] != "merge_candidate"


def test_a_rename_in_place_word_for_word_is_a_note(repo: Repo, tmp_path: Path) -> None:
    """A typo fixed in a test's name (loguru 940b7cfea0be: `test_unkown_retention`), the
    body and what runs around it the same, passing on both hosts: the same test, renamed."""
    base = _renderer_repo(repo, tmp_path)
    repo.write(
        "tests/test_renderer.py",
        (repo.path / "tests/test_renderer.py")
        .read_text(encoding="utf-8")
        .replace("def test_roundtrip", "def test_styles_roundtrip"),
    )
    repo.commit("rename a test")
    judged = {"gate": gate(repo, base)}
    out = repo.path.parent
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        ran = repo.cli("run", "--host", host, "--out", str(out / host), "--base-ref", base, *extra)
        assert ran.code == 0, ran.err
    folders = ("--host-a", str(out / "a"), "--host-b", str(out / "b"), "--base-ref", base)
    for command in ("verdict", "compare"):  # the workflow's path judges it alike
        repo.cli(command, *folders, "--json", str(out / f"{command}.json"))
        judged[command] = json.loads((out / f"{command}.json").read_text(encoding="utf-8"))
    for command, verdict in judged.items():
        assert kinds(verdict) == [], (command, verdict["reasons"])
        assert verdict["classification"] == "merge_candidate", (command, verdict["reasons"])
        renamed = [r for r in verdict["reasons"] if r.endswith("renamed, not removed")]
        assert renamed == [
            "scan: the base's TestStylesProperty::test_roundtrip is "
            "TestStylesProperty::test_styles_roundtrip at the head, renamed word for word with "
            "the same decorators, fixtures and setup, and it passed on both hosts: renamed, not "
            "removed"
        ], (command, verdict["reasons"])


def test_a_rename_in_place_that_changes_the_body_is_still_a_finding(
    repo: Repo, tmp_path: Path
) -> None:
    """Renamed and rewritten: no longer the same test, so the base's is gone."""
    base = _renderer_repo(repo, tmp_path)
    text = (repo.path / "tests/test_renderer.py").read_text(encoding="utf-8")
    head = text.replace("def test_roundtrip", "def test_styles_roundtrip")
    assert head.count("assert ") > 1
    repo.write("tests/test_renderer.py", head.replace("assert ", "assert True or ", 1))
    repo.commit("rename a test and weaken it")
    verdict = gate(repo, base)
    assert verdict["classification"] == "entropy_silenced", verdict["reasons"]
    assert not [r for r in verdict["reasons"] if "renamed word for word" in r]


def test_a_renamed_test_that_gains_a_skip_is_still_a_finding(repo: Repo, tmp_path: Path) -> None:
    """A skip the base's test did not carry is new under the new name too."""
    base = _renderer_repo(repo, tmp_path)
    head = _merged().replace(
        "    def test_styles_none_resets",
        '    @pytest.mark.skip(reason="later")\n    def test_styles_none_resets',
    )
    repo.write("tests/test_renderer.py", head)
    repo.commit("tests in one class")
    verdict = gate(repo, base)
    assert "skip_marker" in kinds(verdict), verdict["reasons"]
    assert "test_removed" in kinds(verdict), verdict["reasons"]
    assert verdict["classification"] == "entropy_silenced"


# --- a behaviour retired with its test ------------------------------------------------------
# structlog (abd263899e5e "dev: don't raise warning on rendered exceptions", #790): the
# renderer stops warning when an exception arrives already rendered; the test loses its
# `wrap` parametrization (the case that provoked the warning) and its check of the warning's
# text, the message the patch removed from production.

RENDER = """\
    import warnings


    def plain(exc):
        return exc


    def render(event, exception=None, formatter=plain):
        out = event
        if exception is not None:
            if formatter is not plain:
                warnings.warn(
                    "Remove `format_exc_info` from your processor chain "
                    "if you want pretty exceptions.",
                    stacklevel=2,
                )
            out += "\\n" + exception
        return out
    """
WARNED = """\
    import pytest

    import render


    @pytest.mark.parametrize("wrap", [True, False])
    def test_exception_rendered(recwarn, wrap):
        exc = "Traceback:\\nFakeError: yolo"
        formatter = (lambda e: render.plain(e)) if wrap else render.plain

        rv = render.render("test", exception=exc, formatter=formatter)

        assert "test\\n" + exc == rv
        if wrap:
            (w,) = recwarn.list
            assert (
                "Remove `format_exc_info` from your processor chain "
                "if you want pretty exceptions.",
            ) == w.message.args


    def test_no_exception():
        assert "test" == render.render("test")
    """
UNWARNED = """\
    import render


    def test_exception_rendered():
        exc = "Traceback:\\nFakeError: yolo"

        rv = render.render("test", exception=exc)

        assert "test\\n" + exc == rv


    def test_no_exception():
        assert "test" == render.render("test")
    """


def _render_repo(repo: Repo, tmp_path: Path) -> str:
    repo.write("render.py", RENDER)
    repo.write("tests/test_render.py", WARNED)
    repo.write("entropy.yaml", manifest("tests/test_render.py", tmp_path / "pins"))
    return repo.commit("render, warning on a rendered exception with a custom formatter")


def _without_warning() -> str:
    lines = textwrap.dedent(RENDER).splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if "if formatter is not plain" in line)
    end = next(i for i, line in enumerate(lines) if "stacklevel=2" in line) + 2
    return "".join(lines[:start] + lines[end:])


def test_a_warning_retired_with_its_check_is_no_weakening(repo: Repo, tmp_path: Path) -> None:
    base = _render_repo(repo, tmp_path)
    repo.write("render.py", _without_warning())
    repo.write("tests/test_render.py", UNWARNED)
    repo.commit("render: no warning on rendered exceptions (there are valid uses)")
    verdict = gate(repo, base)
    assert kinds(verdict) == [], verdict["reasons"]
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]
    retired = {
        f["kind"]
        for f in verdict["findings"]
        if f["level"] == "warning" and "removed from production" in f["message"]
    }
    assert retired == {"assertions_dropped", "not_executed"}, verdict["findings"]


def test_dropping_the_check_of_a_warning_production_still_gives_is_a_weakening(
    repo: Repo, tmp_path: Path
) -> None:
    """The trick beside it: the same test edit, production untouched — the warning is still
    given, nothing checks it any more."""
    base = _render_repo(repo, tmp_path)
    repo.write("tests/test_render.py", UNWARNED)
    repo.commit("tests: simpler")
    verdict = gate(repo, base)
    assert "assertions_dropped" in kinds(verdict), verdict["reasons"]
    assert verdict["classification"] == "entropy_silenced"


def test_retiring_a_message_does_not_excuse_another_dropped_check(
    repo: Repo, tmp_path: Path
) -> None:
    """The warning goes, and with its check the test drops one of the output's too."""
    base = _render_repo(repo, tmp_path)
    repo.write("render.py", _without_warning())
    repo.write(
        "tests/test_render.py",
        UNWARNED.replace('        assert "test\\n" + exc == rv\n', "        assert rv\n"),
    )
    repo.commit("render: no warning")
    verdict = gate(repo, base)
    assert "assertions_dropped" in kinds(verdict) or "not_executed" in kinds(verdict), verdict[
        "reasons"
    ]
    assert verdict["classification"] != "merge_candidate"


# --- repeated parametrize cases removed -----------------------------------------------------
# humanize (github.com/python-humanize/humanize, 0e027051034b "Update config (#262)"): the
# `naturaldelta` test listed eight of its cases twice; the commit drops the repeats, and
# fewer cases run than at the base, every distinct one still among them.

DELTA = """\
    def natural(seconds):
        if seconds < 60:
            return f"{seconds} seconds"
        return "a minute" if seconds < 120 else f"{seconds // 60} minutes"
    """
REPEATED = """\
    import pytest

    from delta import natural


    @pytest.mark.parametrize(
        ("seconds", "expected"),
        [
            (30, "30 seconds"),
            (90, "a minute"),
            (180, "3 minutes"),
            (90, "a minute"),
            (30, "30 seconds"),
        ],
    )
    def test_natural(seconds, expected):
        assert natural(seconds) == expected
    """


def _delta_repo(repo: Repo, tmp_path: Path) -> str:
    repo.write("delta.py", DELTA)
    repo.write("tests/test_delta.py", REPEATED)
    repo.write("entropy.yaml", manifest("tests/test_delta.py", tmp_path / "pins"))
    return repo.commit("natural deltas")


def test_repeated_cases_removed_are_no_cases_lost(repo: Repo, tmp_path: Path) -> None:
    base = _delta_repo(repo, tmp_path)
    lines = REPEATED.splitlines(keepends=True)
    repo.write("tests/test_delta.py", "".join(lines[:11] + lines[13:]))
    repo.commit("tests: drop the repeated cases")
    verdict = gate(repo, base)
    assert kinds(verdict) == [], verdict["reasons"]
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]


def test_a_distinct_case_dropped_beside_the_repeats_is_still_not_executed(
    repo: Repo, tmp_path: Path
) -> None:
    base = _delta_repo(repo, tmp_path)
    lines = REPEATED.splitlines(keepends=True)
    repo.write("tests/test_delta.py", "".join(lines[:10] + lines[13:]))
    repo.commit("tests: drop the repeated cases")
    verdict = gate(repo, base)
    assert "not_executed" in kinds(verdict), verdict["reasons"]
    assert verdict["classification"] == "entropy_silenced"
