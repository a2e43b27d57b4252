"""Start-up stays light: building the parser (`--help`) imports no model or parser library.

The commands import what they need when they run; bench/bench_startup.py measures the
time, this checks the imports (a number of modules, not a duration).
"""

from __future__ import annotations

import pytest

from entropy_action.cli import main, options
from entropy_action.manifest import pinfile

HEAVY = ("pydantic", "yaml", "junitparser", "defusedxml", "platformdirs")
PROBE = """\
import sys
from entropy_action.cli import main
main.build_parser()
print(" ".join(sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[1:]))))
"""


def test_the_manifest_name_spelled_for_the_parser_is_the_manifests():
    assert options.MANIFEST_NAME == pinfile.MANIFEST_NAME


@pytest.mark.parametrize("command", [c.NAME for c in main.COMMANDS])
def test_each_commands_help_prints_and_exits_zero(command, capsys):
    assert main.main([command, "--help"]) == 0
    assert f"usage: entropy-gate {command}" in capsys.readouterr().out
