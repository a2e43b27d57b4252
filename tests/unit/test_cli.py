"""The last line of defence: every command's --help, and cli.main's error paths."""

from __future__ import annotations

import argparse
import re

import pytest

from entropy_action import __version__
from entropy_action.cli import main
from entropy_action.cli.commands import validate

NAMES = [command.NAME for command in main.COMMANDS]


@pytest.mark.parametrize("name", NAMES)
def test_every_command_has_working_help(name, capsys):
    assert main.main([name, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: entropy-gate {name}")
    assert "exit codes:" in out


def test_the_top_level_help_lists_every_command(capsys):
    assert main.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in NAMES)


def crash(args: argparse.Namespace) -> int:
    raise RuntimeError("boom ghp_secretvalue123 at\n::error::injected")


@pytest.fixture
def crashing(monkeypatch: pytest.MonkeyPatch) -> None:
    """`validate` raises an unexpected exception (a stand-in for any bug)."""
    monkeypatch.setattr(validate, "run", crash)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secretvalue123")


def test_an_internal_error_is_one_line_and_exit_3(crashing, monkeypatch, capsys):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    assert main.main(["validate"]) == 3
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "entropy-gate: internal error: RuntimeError: boom *** at\n::error::injected "
        "(a bug in entropy-gate; --debug shows the traceback)\n"
    )


def test_debug_shows_the_traceback(crashing, monkeypatch, capsys):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    assert main.main(["--debug", "validate"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert 'raise RuntimeError("boom' in err


def test_in_github_actions_an_internal_error_reports_itself(crashing, monkeypatch, capsys):
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert main.main(["validate"]) == 3
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == f"::group::entropy-gate {__version__}: internal error (traceback)"
    token = re.fullmatch(r"::stop-commands::([0-9a-f]{32})", lines[1])
    assert token is not None
    assert lines[2] == "Traceback (most recent call last):"
    assert "::error::injected" in lines  # inside the fence: shown, not executed
    assert lines.index("::error::injected") < lines.index(f"::{token.group(1)}::")
    assert lines[-2] == "::endgroup::"
    assert lines[-1] == (
        f"::error title=entropy-gate internal error::entropy-gate {__version__} internal error: "
        "RuntimeError: boom *** at%0A::error::injected - please report it"
    )
    assert "ghp_secretvalue123" not in out + err


def test_keyboard_interrupt_is_exit_130(monkeypatch, capsys):
    def interrupted(args: argparse.Namespace) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(validate, "run", interrupted)
    assert main.main(["validate"]) == 130
    assert capsys.readouterr().err == "entropy-gate: interrupted\n"


def test_a_usage_error_is_exit_2(capsys):
    assert main.main(["publish"]) == 2
    assert "the following arguments are required: --verdict" in capsys.readouterr().err
