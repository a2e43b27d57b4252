"""The local gate starts host B before it imports the scan, the judge and the host steps
(docs/benchmarks.md, Round 11): importing the gate must not bring them in."""

from __future__ import annotations

import subprocess
import sys

LATER = (
    "entropy_action.scan",
    "entropy_action.gate.judge",
    "entropy_action.gate.hoststeps",
    "entropy_action.gate.attribution",
    "entropy_action.strength.base_on_head",
)


def test_the_gate_imports_what_host_b_needs_and_nothing_it_can_import_later() -> None:
    code = (
        "import sys\n"
        "import entropy_action.cli.commands.gate, entropy_action.gate.local\n"
        f"print(sorted(m for m in {LATER!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"
