"""nsinit's command line and its result file (testproc/nsinit.py); its runs are the host runs'
own (tests/integration: left-over processes, the private temp root, loopback, hostname)."""

from __future__ import annotations

import json

import pytest

from entropy_action.testproc import nsinit


def test_every_option_parses_with_the_command_after_the_separator():
    argv = ["--loopback", "--hostname", "b-host", "--bind", "/p", "/t", "--result", "/r.json"]
    parsed = nsinit.parse([*argv, "--", "/usr/bin/python3", "-m", "pytest"])
    assert parsed == (
        {"loopback": True, "hostname": "b-host", "bind": ["/p", "/t"], "result": "/r.json"},
        ["/usr/bin/python3", "-m", "pytest"],
    )


def test_no_options_is_a_plain_exec():
    assert nsinit.parse(["--", "/bin/true"]) == ({}, ["/bin/true"])


def test_the_commands_own_options_are_not_nsinits():
    assert nsinit.parse(["--", "python", "--result", "x"]) == ({}, ["python", "--result", "x"])


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--"],
        ["--loopback"],
        [
            "--loopback",
            "--",
        ],
        ["--hostname", "--"],
        ["--bind", "/p", "--", "cmd"],
        ["--frobnicate", "--", "cmd"],
        ["SPEC", "--", "cmd"],
    ],
)
def test_a_command_line_that_does_not_parse_is_refused(argv):
    assert nsinit.parse(argv) is None


def test_a_refused_command_line_exits_125_with_the_usage(capsys):
    assert nsinit.main(["{}", "--", "cmd"]) == nsinit.FAILED == 125
    assert capsys.readouterr().err.startswith("entropy-gate nsinit: usage: entropy_gate_nsinit.py")


@pytest.mark.parametrize(
    "left",
    [
        [],
        ["pid 7 (sleep)"],
        ['pid 8 (a"b\\c)', "pid 9 (\x01\n\t)", "pid 10 (naïve ✓)", "pid 11 (\ud800)"],
    ],
)
@pytest.mark.parametrize("code", [0, 1, -9, 137])
def test_the_result_is_json_the_gate_reads_back(code, left):
    assert json.loads(nsinit.result_json(code, left)) == {"returncode": code, "left": left}
