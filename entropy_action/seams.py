"""Public name of `entropy_action.testproc.seams`: the Clock port and the `entropy_gate` plugin.

`from entropy_action.seams import Clock` and the pytest11 entry point (`entropy_gate =
"entropy_action.seams"`) keep working: this module *is* the one in `testproc/` (the same
module object in sys.modules), so pytest registers one plugin, whichever name loaded it.
"""

from __future__ import annotations

import sys

from entropy_action.testproc import seams as _seams
from entropy_action.testproc.seams import Clock, PinnedClock, Pins, SystemClock, test_seed

__all__ = ["Clock", "PinnedClock", "Pins", "SystemClock", "test_seed"]

sys.modules[__name__] = _seams
