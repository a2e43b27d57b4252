"""verdict.pinswritten: which pins that did not take the patch's own tests explain (the
scan's real message, end to end: tests/integration/test_gate_pins_written.py)."""

from __future__ import annotations

from entropy_action.core.findings import Finding
from entropy_action.verdict import pinswritten

TZ = "tz: TZ pinned 'UTC', the test process saw 'CET-1CEST'"
LANG = "lang: LANG pinned 'C.UTF-8', the test process saw 'de_DE.UTF-8'"
UMASK = "umask: pinned 0022, the test process has 0077"
NOTHING = "the test process reported nothing (was the gate's plugin disabled?)"


def _finding(message: str, kind: str = "env_write") -> Finding:
    return Finding(kind=kind, path="tests/test_x.py", line=3, message=message)


def test_the_variables_are_read_from_the_scan_s_message() -> None:
    found = [
        _finding("TZ written in module-level code, reached from every property (it runs at "
                 "import): os.environ['TZ'] = 'CET' — the gate pins it; …"),
        _finding("LANG, LC_ALL written in test_x: os.environ.update(…) — the gate pins them; …"),
        _finding("TZ written in x", kind="entropy_patched"),  # another kind: not a write
    ]  # fmt: skip
    assert pinswritten.written(found) == {"TZ", "LANG", "LC_ALL"}


def test_clearing_the_environment_writes_every_pinned_variable() -> None:
    names = pinswritten.written([_finding("every pinned variable written in test_x: …")])
    assert {"TZ", "LANG", "PYTHONHASHSEED", "ENTROPY_RNG_SEED"} <= names


def test_a_message_of_another_shape_writes_nothing() -> None:
    assert pinswritten.written([_finding("os.environ written somewhere")]) == frozenset()


def test_only_a_mismatch_whose_pin_s_variable_is_written_is_explained() -> None:
    mismatch = [TZ, LANG, UMASK, NOTHING]
    assert pinswritten.unexplained(mismatch, frozenset({"TZ"})) == [LANG, UMASK, NOTHING]
    assert pinswritten.unexplained(mismatch, frozenset({"TZ", "LANG"})) == [UMASK, NOTHING]
    assert pinswritten.unexplained([TZ], frozenset()) == [TZ]
    assert pinswritten.unexplained([TZ, LANG], frozenset({"TZ", "LANG"})) == []


def test_the_reason_names_the_host_the_pins_and_the_variables() -> None:
    assert pinswritten.reason("B", [TZ, LANG], frozenset({"LANG", "TZ", "TMPDIR"})) == (
        "host B: the pins of tz, lang did not take because the patch's tests write LANG, TZ "
        "(env_write): judged with that finding, not as a run that cannot be judged"
    )
