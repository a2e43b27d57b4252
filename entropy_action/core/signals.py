"""A host run that died of a signal, in words: which signal, and what killed it (core.hostinfo
holds its record, `crash` in host.json)."""

from __future__ import annotations

import signal

from entropy_action.core.hostinfo import Crash


def signal_name(returncode: int) -> str:
    """SIGSEGV for returncode -11; `signal 99` for a number Python does not name."""
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


_KILLERS = {
    "SIGKILL": "a timeout, the temp root's cap, or from outside",
    "SIGTERM": "from outside",
    "SIGINT": "interrupted",
    "SIGHUP": "from outside",
}


def killed_reason(returncode: int, crash: Crash | None) -> str:
    """Why a run that died of a signal is not trusted, naming the signal and, where
    faulthandler left one, the frame it died in."""
    name = crash.signal if crash is not None else signal_name(returncode)
    if crash is not None and (crash.frames or crash.fatal):
        how = f"died of {crash.words()}"
    else:
        how = f"was killed by {name}" + (f" ({_KILLERS[name]})" if name in _KILLERS else "")
    return f"pytest {how}; the run did not finish and its report is not trusted"
