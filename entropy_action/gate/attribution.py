"""Which of host B's perturbations an env_coupled outcome follows.

When the hosts disagree, only the disagreeing tests run again on host B, each time with one
perturbation left out (isolate.REVERTIBLE): the one whose reversal gives host A's outcomes,
and gives them again in the same re-run repeated (orderdep.steady), is the source. When the
environment is, its variables are bisected by halves to name one. Bounded: one re-run per
perturbation, one more for each that gives host A's outcomes, plus about log2(variables) for
the bisection.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from entropy_action.core import variations
from entropy_action.core.errors import GateError
from entropy_action.core.findings import Finding
from entropy_action.core.hostinfo import Audit
from entropy_action.evidence import hostreport, ids, junitcases
from entropy_action.gate import orderdep
from entropy_action.gate.orderdep import Rerun, Trial
from entropy_action.hosts import isolate, launch, runsettings
from entropy_action.verdict import coupled as coupled_reads
from entropy_action.verdict.model import CoupledRead, OrderPair, Verdict

COUPLED = ("env_coupled", "env_coupled_reverse")  # the verdicts a failure's source decides
_DECIDED = frozenset({"passed", "failed", "error"})
_READS = {
    "clock": ("time.", "datetime.", "date."),
    "network": ("socket.",),
    "env": ("os.environ",),
}


# Rerun: (trial) -> test id -> outcome on host B in that re-run (orderdep.Trial, .Rerun)
__all__ = ["Rerun", "Trial"]


@dataclass(frozen=True)
class Audits:
    """The live-entropy audits the reads behind a failure come from (verdict.coupled)."""

    head: tuple[Audit | None, Audit | None]  # host A's, host B's
    base: tuple[Audit | None, ...] = ()  # the base's runs'


@dataclass(frozen=True)
class Orders:
    """Host A's order (host B's collection order) and host B's run order; empty: not varied."""

    a: tuple[str, ...] = ()
    b: tuple[str, ...] = ()


def disagreeing(verdict: Verdict) -> dict[str, str]:
    """Test id -> host A's outcome, for the tests both hosts ran and judged differently (and
    whose id names no checkout path, so pytest can select it in another tree)."""
    return {
        t.id: t.host_a
        for t in verdict.tests
        if t.host_a != t.host_b and t.host_a in _DECIDED and t.host_b in _DECIDED
        if ids.ROOT_PLACEHOLDER not in t.id and ids.TMP_PLACEHOLDER not in t.id
    }


def attributable(verdict: Verdict) -> bool:
    """Whether the verdict has tests the hosts judged differently that a re-run can attribute:
    whatever it was classified (issue 35: a host-B failure follows its source also when the
    patch is rejected for silencing, when another test fails on both hosts, or when the test
    failed at the base ref too — "failed at the base ref too" explains, it does not replace
    the attribution); not an invalid one, whose runs cannot be trusted."""
    return verdict.classification != "invalid" and bool(disagreeing(verdict))


def attribute(
    verdict: Verdict,
    rerun: Rerun,
    scrubbed: Sequence[str],
    dimensions: Sequence[str],
    orders: Orders | None = None,
) -> list[str]:
    """The perturbations (and variables) whose reversal on host B gives host A's outcomes
    (test_order: the order trials of `order_dependence` gave them).

    `scrubbed` are the caller's variables host B's scrub removed (the bisection's candidates).
    An order-dependent test (it passed alone, or in host A's order) is left out of the other
    dimensions' trials and conclusion: alone, a polluter's victim would seem to follow each of
    them, and a state-setter's would fail in every one (its setter does not run there).
    """
    want = disagreeing(verdict)
    if not attributable(verdict):
        return []
    order = _explore(rerun, want, dimensions, orders)
    want = {t: o for t, o in want.items() if t not in order.victims}

    def flips(trial: Trial) -> bool:  # and again, the same: `orderdep.steady`
        return bool(want) and orderdep.steady(rerun, trial, want) >= set(want)

    def keeps(names: list[str]) -> bool:  # the bisection's probes, once each (as `record`)
        got = rerun(Trial(keep_env=tuple(names)))
        return bool(want) and all(_same(got.get(test), o) for test, o in want.items())

    found = [d for d in _others(dimensions) if flips(Trial(revert=frozenset({d})))]
    if order.victims and order.alone <= order.in_a_order:
        found.append(orderdep.ORDER)
    if "env" in found and scrubbed:
        name = _bisect(list(scrubbed), keeps)
        if name is not None:
            found[found.index("env")] = f"env:{name}"
    return found


def order_dependence(
    verdict: Verdict, rerun: Rerun, dimensions: Sequence[str], orders: Orders | None
) -> orderdep.Found:
    """What the order trials found: the victims and the test each depends on."""
    want = disagreeing(verdict)
    if not attributable(verdict):
        return orderdep.Found()
    return _explore(rerun, want, dimensions, orders)


def _others(dimensions: Sequence[str]) -> list[str]:
    """The dimensions one selected re-run each tells (test order has its own trials)."""
    return [d for d in dimensions if d != orderdep.ORDER]


def _explore(
    rerun: Rerun, want: Mapping[str, str], dimensions: Sequence[str], orders: Orders | None
) -> orderdep.Found:
    if orderdep.ORDER not in dimensions or orders is None or not orders.b:
        return orderdep.Found()
    return orderdep.explore(rerun, want, orders.a, orders.b)


def _same(got: str | None, want: str) -> bool:
    return got is not None and (got == want or {got, want} <= {"failed", "error"})


def _bisect(names: list[str], flips: Callable[[list[str]], bool]) -> str | None:
    """The one variable that alone flips the outcome, halving the candidates each run."""
    while len(names) > 1:
        half = names[: len(names) // 2]
        names = half if flips(half) else names[len(half) :]
    return names[0] if names and flips(names) else None


def explain(
    coupled: Sequence[str],
    findings: Sequence[Finding],
    reads: Sequence[CoupledRead] = (),
    pinned: Collection[str] = (),
) -> str:
    """The reason line: the source, and the read it follows (verdict.coupled: made during
    the failing test, test code included, with what it saw on each host); without an audited
    read, the source's seam and a production line that reads it."""
    if not coupled:
        return (
            "no single perturbation of host B explains the difference (clock, environment, "
            "network, checkout path, interpreter each reverted alone)"
        )
    parts = []
    for source in coupled:
        dimension, _, name = source.partition(":")
        known = variations.BY_NAME[dimension]
        what, seam = known.what, known.advice
        if name:
            what, seam = f"the variable {name}", f"pin it (pins.env.{name}) or pass it in"
        read = coupled_reads.for_source(source, reads)
        if read is not None:
            parts.append(f"the failure follows {what}; {coupled_reads.evidence(read)}")
            continue
        if dimension == "clock" and "clock_unix" in pinned:
            seam = "pass it through a Clock port (clock_unix is pinned already)"
        found = _read_for(dimension, name, findings)
        parts.append(f"the failure follows {what}: {seam}" + (f"; {found}" if found else ""))
    return "; ".join(parts)


def _read_for(dimension: str, name: str, findings: Sequence[Finding]) -> str | None:
    prefixes = _READS.get(dimension, ())
    for finding in findings:
        if finding.kind != "live_entropy":
            continue
        call = finding.message.split("`")[1] if "`" in finding.message else ""
        if call.startswith(prefixes) and (not name or repr(name) in call):
            return f"`{finding.location()}` reads `{call}`"
    return None


def with_attribution(
    verdict: Verdict,
    coupled: list[str],
    order: orderdep.Found | None = None,
    audits: Audits | None = None,
    pinned: Collection[str] = (),
    unsteady: Mapping[str, tuple[str, str]] | None = None,
) -> Verdict:
    """The verdict with what its failure follows, the reads behind it (`audits`: host A's
    and host B's, then the base's runs'), and the reason line (for a verdict not classified
    env-coupled, only when something was found: its own reasons say why it was rejected);
    `unsteady`: the tests a re-run and its repeat judged differently (orderdep.unsteady)."""
    pairs: list[OrderPair] = list(order.pairs) if order else []
    update: dict[str, object] = {"coupled_to": coupled, "order_dependence": pairs}
    reads = read_behind(verdict.model_copy(update=update), audits)
    said = verdict.classification in COUPLED or coupled
    reasons = [explain(coupled, verdict.findings, reads, pinned)] if said else []
    reasons += orderdep.explain_unsteady(unsteady or {})
    reasons += orderdep.explain(pairs, order.capped if order else 0)
    update.update({"reasons": [*verdict.reasons, *reasons], "coupled_reads": reads})
    return verdict.model_copy(update=update)


def read_behind(verdict: Verdict, audits: Audits | None) -> list[CoupledRead]:
    """verdict.coupled.reads over `audits` (none without them, or for another verdict)."""
    if audits is None or not attributable(verdict):
        return []
    return coupled_reads.reads(verdict, audits.head, audits.base)


# --- the re-runs, on this machine ------------------------------------------------------------


def rerun_host_b(base: runsettings.RunSettings, out: Path, tests: Sequence[str]) -> Rerun:
    """Re-runs of host B selecting `tests`, each into its own folder under `out`."""
    count = 0

    def run(trial: Trial) -> Mapping[str, str]:
        nonlocal count
        count += 1
        folder = out / f"attribution-{count}"
        python = None if "python" in trial.revert else base.python
        whole = bool(trial.order) or orderdep.ORDER in trial.revert  # host A's order: all
        settings = _replace(base, folder, python, trial, () if whole else tuple(tests))
        try:
            launch.run_host(settings)
            report = hostreport.read_host(folder)
        except GateError:
            return {}
        return {case.id: case.outcome for case in junitcases.merge(report.tests).values()}

    return run


def _replace(
    base: runsettings.RunSettings,
    out: Path,
    python: str | None,
    trial: Trial,
    tests: tuple[str, ...],
) -> runsettings.RunSettings:
    from dataclasses import replace  # noqa: PLC0415 - a local helper's only need

    return replace(
        base,
        out=out,
        python=python,
        revert=trial.revert,
        keep_env=trial.keep_env,
        count_assertions=False,  # only the outcomes are compared here
        select=tests,
        order=trial.order,
        audit=False,
        progress=None,
    )


def dimensions(python: str | None) -> list[str]:
    """The perturbations worth reverting: the interpreter only when host B has its own."""
    return [d for d in isolate.REVERTIBLE if d != "python" or python is not None]


def scrubbed_names(environ: Mapping[str, str], pinned: Sequence[str]) -> list[str]:
    """The caller's variables that host B's scrub removed or replaced (HOME: a fresh empty
    one), in a stable order: the bisection's candidates."""
    kept = set(isolate.ALLOWED_ENV) | {"VIRTUAL_ENV", *pinned}
    return sorted(name for name in environ if name not in kept)


# --- attribution as evidence: recorded where host B runs, replayed by the judge --------------


def record(
    rerun: Rerun,
    want: Mapping[str, str],
    scrubbed: Sequence[str],
    dims: Sequence[str],
    orders: Orders | None = None,
) -> list[tuple[Trial, Mapping[str, str]]]:
    """The re-runs `attribute` will replay in the judge, made where host B runs (its job, or
    the local gate's host B phase): one trial per perturbation over the tests of `want` (test
    id -> the outcome that would explain the difference: "passed" for a test host B failed),
    then, when leaving the environment out gave some of them that outcome, the bisection of
    the scrubbed variables over those; first, when host B shuffled its tests, the order
    trials (orderdep.explore). Every trial made, with its outcomes."""
    made: list[tuple[Trial, Mapping[str, str]]] = []

    def run(trial: Trial) -> Mapping[str, str]:
        got = rerun(trial)
        made.append((trial, got))
        return got

    victims = _explore(run, want, dims, orders).victims
    want = {t: o for t, o in want.items() if t not in victims}
    env_flipped: dict[str, str] = {}
    for dimension in _others(dims) if want else ():
        hit = orderdep.steady(run, Trial(revert=frozenset({dimension})), want)
        if dimension == "env":
            env_flipped = {t: o for t, o in want.items() if t in hit}
    if env_flipped and scrubbed:
        _bisect(
            list(scrubbed),
            lambda names: all(
                _same(run(Trial(keep_env=tuple(names))).get(t), o) for t, o in env_flipped.items()
            ),
        )
    return made


def replay(trials: Sequence[tuple[Trial, Mapping[str, str]]]) -> Rerun:
    """A Rerun that answers from recorded trials; a trial nobody made changed nothing."""
    known = {(t.revert, t.keep_env, t.order, t.repeat): outcomes for t, outcomes in trials}
    return lambda t: known.get((t.revert, t.keep_env, t.order, t.repeat), {})


def failing_ids(report: hostreport.HostReport) -> list[str]:
    """The tests a host failed that another tree can select (no checkout path in the id)."""
    return [
        case.id
        for case in junitcases.merge(report.tests).values()
        if case.outcome in ("failed", "error")
        and ids.ROOT_PLACEHOLDER not in case.id
        and ids.TMP_PLACEHOLDER not in case.id
    ]
