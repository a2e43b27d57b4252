"""The tests of tests/unit/test_startup.py that start a process (pytest runs, git)."""

from __future__ import annotations

import subprocess
import sys

from tests.unit.test_startup import HEAVY, PROBE


def test_building_the_parser_imports_no_heavy_library():
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *HEAVY], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == []
