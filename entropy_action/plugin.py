"""Public name of `entropy_action.testproc.plugin`, for the replay the summary prints
(`python -m pytest -p entropy_action.plugin ...`): this module *is* the one in `testproc/`
(the same module object in sys.modules), so pytest registers its hooks once."""

from __future__ import annotations

import sys

from entropy_action.testproc import plugin as _plugin

sys.modules[__name__] = _plugin
