"""Host B's own values for the unpinned sources, kept in host.json (`replay`) and applied
again by `entropy-gate replay` (gate.replay): the time zone, locale, umask and CPU count host
B picks depend on the machine and on the caller's environment, so a run on another machine
would pick others; the clock shift and the seeds are written down too, so a replay follows
the report, not this gate's defaults."""

from __future__ import annotations

from dataclasses import replace

from entropy_action.core.hostinfo import ReplayPlan
from entropy_action.hosts.isolate import ClockPlan, HostB
from entropy_action.manifest.pinfile import Pins


def of(hostb: HostB | None) -> ReplayPlan | None:
    """What host B started its test process with (None for host A)."""
    if hostb is None:
        return None
    return ReplayPlan(
        clock_shift_seconds=hostb.clock.plugin_shift or _faketime_shift(hostb.clock),
        tz=hostb.tz,
        lang=hostb.lang,
        umask=hostb.umask,
        hash_seed=hostb.hash_seed,
        rng_seed=hostb.rng_seed,
        test_order_seed=hostb.test_order_seed,
        file_order_seed=hostb.file_order_seed,
        cpu_count=hostb.cpu_count,
    )


def apply(hostb: HostB, plan: ReplayPlan, pins: Pins) -> HostB:
    """This run's host B made to start its tests as the reported one did: its values for
    every source this manifest leaves unpinned (a report never overrides a pin), and its
    clock shift by whichever means this machine has."""
    return replace(
        hostb,
        clock=_clock(hostb.clock, plan.clock_shift_seconds),
        tz=None if pins.tz else plan.tz,
        lang=None if pins.lang else plan.lang,
        umask=None if pins.umask else plan.umask,
        hash_seed=None if pins.hash_seed is not None else plan.hash_seed,
        rng_seed=None if pins.rng_seed is not None else plan.rng_seed,
        test_order_seed=plan.test_order_seed,
        file_order_seed=plan.file_order_seed,
        cpu_count=plan.cpu_count,
    )


def _faketime_shift(clock: ClockPlan) -> int | None:
    value = clock.environ.get("FAKETIME", "")
    return int(value[1:]) if value.startswith("+") and value[1:].isdigit() else None


def _clock(clock: ClockPlan, shift: int | None) -> ClockPlan:
    if shift is None:
        return ClockPlan(note="live clock not shifted: the reported host B did not shift it")
    if clock.plugin_shift is not None:
        return replace(clock, plugin_shift=shift)
    if clock.environ.get("FAKETIME"):
        return replace(clock, environ={**clock.environ, "FAKETIME": f"+{shift}"})
    return clock  # this machine cannot shift it: the plan's note says so
