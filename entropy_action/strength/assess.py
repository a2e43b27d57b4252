"""Property strength: what the property can still detect, at the base and at the head.

Syntax rules trail the next trick; this measures the thing itself, on the head's code:

1. the base's test side against the head's code (base_on_head.py): a test the patch made
   pass by changing the test, or what it reads, is a `test_changed_to_pass` finding;
2. mutation strength (mutation/): mutants of the code the property exercises, run under
   the base's and the head's module (each under its own test side: mutation/paired.py); a
   mutant the base kills and the head lets survive is a `weakened_property` finding, and
   both scores go into the verdict.

Both need a changed test side (scan.closure: the module, its conftests, helpers, data and
configuration): when the patch left it as it was, the base's and the head's are one and the
same and detect the same things. Findings here reject like
the scan's (`entropy_silenced`, or `masked_defect` when both hosts fail). What the checks
cannot measure (the base's module does not collect against the head's code, a name its
tests use was renamed, the head's tests reach none of the production code the base's
reached) is `unmeasured`: never clean — under the manifest's strength constraints
(`constraints.mutation` other than `off`) the verdict is invalid (gate/judge.py), else a note.
"""

from __future__ import annotations

import ast
import shutil
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from entropy_action import scan
from entropy_action.core import git, pyast
from entropy_action.core.errors import GateError
from entropy_action.core.findings import Finding
from entropy_action.core.score import MutationScore, Survivor
from entropy_action.evidence import hostreport
from entropy_action.hosts import launch, runsettings
from entropy_action.manifest import baseline
from entropy_action.manifest.baseline import PinCheck
from entropy_action.scan import ScanResult, closure
from entropy_action.scan.runtime import DefinedTest
from entropy_action.strength import base_on_head, evidence, unmeasured
from entropy_action.strength.mutation import harness, measure, operators, paired
from entropy_action.verdict.model import Verdict


@dataclass(frozen=True)
class Strength:
    """What the strength checks found, and what they could not do."""

    findings: tuple[Finding, ...] = ()
    notes: tuple[str, ...] = ()
    score: MutationScore | None = None
    unmeasured: tuple[str, ...] = ()  # what the checks could not measure, and why
    moved: tuple[str, ...] = ()  # base tests gone at the head whose cases it still runs

    def annotate(self, verdict: Verdict) -> Verdict:
        """The verdict with the mutation score (findings went in through the evidence)."""
        return (
            verdict if self.score is None else verdict.model_copy(update={"mutation": self.score})
        )


def measure_strength(
    check: PinCheck,
    plan: base_on_head.Plan,
    scanned: ScanResult,
    host: base_on_head.HostSettings,
    where: tuple[Path, Path],
    *,
    cross_run: bool = True,
) -> Strength:
    """The strength checks of the working tree against the base ref, as `plan` says, after
    host A ran into `where[0]`; their own runs go to `where[1]`. The two parts run side by
    side."""
    head_dir, work = where
    exclude = (work, head_dir)
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="strength") as pool:
        crossing = (
            pool.submit(run_base_on_head, check, plan, scanned, host, where) if cross_run else None
        )
        alone = (lambda: crossing.result()[1]) if crossing is not None else None
        mutated, lost_by = _mutation(check, plan, scanned, host, exclude, alone)
        cross, passed = crossing.result() if crossing is not None else (Strength(), frozenset())
    moved = evidence.moved(scanned.removed, passed, lost_by)
    return Strength(
        (*cross.findings, *mutated.findings),
        (*_renamed(plan), *_side(plan), *cross.notes, *mutated.notes),
        mutated.score,
        (*cross.unmeasured, *mutated.unmeasured),
        tuple(sorted(moved)),
    )


def _renamed(plan: base_on_head.Plan) -> tuple[str, ...]:
    """A note naming the renames the base's module was measured with (strength/renames.py)."""
    if not plan.renamed:
        return ()
    names = ", ".join(rename.render() for rename in plan.renamed)
    return (f"strength: the base's module was measured with the patch's renames: {names}",)


def _side(plan: base_on_head.Plan) -> tuple[str, ...]:
    """A note naming the files of the property's test side the base's ran with."""
    if not plan.side:
        return ()
    shown = ", ".join(plan.side_paths[:5])
    more = f" and {len(plan.side) - 5} more" if len(plan.side) > 5 else ""
    return (
        f"strength: the patch changed the property's test side ({shown}{more}): the base's "
        "whole test side was measured on the head's code",
    )


def run_base_on_head(
    check: PinCheck,
    plan: base_on_head.Plan,
    scanned: ScanResult,
    host: base_on_head.HostSettings,
    where: tuple[Path, Path],
) -> tuple[Strength, frozenset[str]]:
    """The base's module on the head's code, judged against the head's run in `where[0]`
    (on host.host); and the base's tests every case of which passed there (names as the
    scan spells them: `Class::test`)."""
    head_dir, work = where
    try:
        head = hostreport.read_host(head_dir)
    except GateError:
        why = f"host {host.host.upper()} left no readable report"
        return Strength(
            notes=(f"the base's module was not run on the head's code: {why}",)
        ), frozenset()
    if host.progress is not None:
        what = "test side" if plan.side else "property module"
        host.progress(f"running the base's {what} against the head's code…")
    try:
        base_report = hostreport.read_host(
            base_on_head.run(plan, check, host, work, exclude=(work, head_dir))
        )
    except GateError as exc:
        line = exc.message.splitlines()[0]
        why = f"the base's module could not run on the head's code ({line})"
        return Strength(unmeasured=(why,)), frozenset()
    assert check.base_commit is not None
    patched = unmeasured.patched(check.root, check.base_commit, plan.base_module, plan.head_module)
    judged = base_on_head.judge(
        head.tests, base_report.tests, scanned.tests, base_report.errors, patched, plan.side_paths
    )
    strength = Strength(judged.findings, judged.notes, unmeasured=judged.unmeasured)
    return strength, base_on_head.passing(base_report.tests)


def _mutation(
    check: PinCheck,
    plan: base_on_head.Plan,
    scanned: ScanResult,
    host: base_on_head.HostSettings,
    exclude: tuple[Path, ...],
    passed_alone: Callable[[], frozenset[str]] | None = None,
) -> tuple[Strength, frozenset[str] | None]:
    """The mutation step, judged; and the base's tests that kill a mutant the head's module
    lets survive (None: no mutant ran, so nothing is known of what a test killed).
    `passed_alone`: the cross run's passing base tests, waited for when measure asks."""
    assert check.head is not None
    constraints = (check.base or check.head).manifest.constraints
    if constraints.mutation == "off" or check.base_commit is None:
        return Strength(), None
    inputs = measure.Inputs(
        root=check.root,
        base_module=plan.base_module,
        head_module=plan.head_module,
        touched=touched_functions(check.root, check.base_commit),
        seed=check.head.manifest.pins.rng_seed or 0,
        budget=measure.Budget(
            constraints.mutation, constraints.max_mutants, constraints.time_budget_seconds
        ),
        cache=cache_dir(host.environ),
        patched=unmeasured.patched(
            check.root, check.base_commit, plan.base_module, plan.head_module
        ),
        side=plan.digest if plan.side else "",
        passed_alone=passed_alone,
    )
    scratch = harness.scratch_dir(check.head)
    head = check.head

    def workspace(index: Path) -> harness.Workspace:
        def copy(folder: Path, side: Sequence[tuple[str, bytes | None]] = ()) -> harness.Workspace:
            return harness.workspace(
                check.root,
                head,
                plan.base_module,
                host.environ,
                folder,
                exclude=exclude,
                python=host.python,
                side=side,
                links=plan.links,
            )

        if not plan.side:
            return copy(scratch / index)
        return paired.pair(copy(scratch / index), copy(scratch / f"{index}-base", plan.side))

    def apart(index: Path) -> harness.Workspace:  # the same side, each module in its own copy
        return paired.pair(workspace(index), workspace(Path(f"{index}-base")))

    try:
        progress = host.progress or (lambda line: None)
        measured = measure.measure(inputs, workspace, progress, apart)
    except GateError as exc:
        line = exc.message.splitlines()[0]
        return Strength(unmeasured=(f"mutation: could not run ({line})",)), None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    score = score_of(measured, constraints.mutation) if measured.results else None
    found = Strength(
        judge(measured.results, scanned.tests, head.manifest.module, plan.side_paths),
        measured.notes,
        score,
        measured.unmeasured,
    )
    return found, measure.lost_by(measured.results) if score is not None else None


def judge(
    results: Sequence[measure.Result],
    tests: Sequence[DefinedTest],
    module: str,
    side: Sequence[str] = (),
) -> tuple[Finding, ...]:
    """One `weakened_property` per mutant the base's module kills and the head's lets
    survive (pure); `side`: the other files of the test side the patch changed."""
    lines = {t.name: t.line for t in tests}
    head = "module" if not side else f"test side (the patch changed {', '.join(side[:3])})"
    found: list[Finding] = []
    for result in results:
        if not result.weakened:
            continue
        killer = result.base_killers[0]
        found.append(
            Finding(
                kind="weakened_property",
                path=module,
                line=lines.get(killer, 1),
                message=f"mutant {result.mutant.describe()} is killed by the base's {killer} "
                f"and survives the head's {head}: the patch made the property weaker — a "
                "defect like it would now pass",
                test=killer,
            )
        )
    return tuple(found)


def score_of(measured: measure.Measured, mode: str) -> MutationScore:
    counted, base, head = measure.killed_counts(measured.results)
    weakened = [_survivor(r.mutant, r.base_killers[0]) for r in measured.results if r.weakened]
    stronger = [
        _survivor(r.mutant, r.head_killers[0])
        for r in measured.results
        if r.counted and r.head_killers and not r.base_killers
    ]
    not_counted = measured.skipped + sum(not r.counted for r in measured.results)
    return MutationScore(
        mode=mode,
        mutants=counted,
        base_killed=base,
        head_killed=head,
        weakened=weakened,
        strengthened=stronger,
        not_counted=not_counted,
    )


def _survivor(mutant: operators.Mutant, test: str) -> Survivor:
    return Survivor(mutant=mutant.describe(), path=mutant.path, line=mutant.line, test=test)


def touched_functions(root: Path, commit: str) -> frozenset[tuple[str, str]]:
    """(path, qualified name) of production functions the patch added or changed."""
    found: set[tuple[str, str]] = set()
    for path in git.changed_files(root, commit):
        if not path.endswith(".py") or measure.is_support(path):
            continue
        try:
            head = (root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        base = (git.show(root, commit, path) or b"").decode("utf-8", "replace")
        old = _dumps(base)
        found.update((path, name) for name, dump in _dumps(head).items() if old.get(name) != dump)
    return frozenset(found)


def _dumps(text: str) -> dict[str, str]:
    try:
        tree = pyast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    spans = {line: name for line, _, _, name in operators.functions(text)}
    return {
        spans[node.lineno]: ast.dump(node)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno in spans
    }


def cache_dir(environ: Mapping[str, str]) -> Path | None:
    """`$XDG_CACHE_HOME/entropy-gate/mutants` (else `~/.cache/...`); None without a home."""
    base = environ.get("XDG_CACHE_HOME") or (
        str(Path(environ["HOME"]) / ".cache") if environ.get("HOME") else None
    )
    return Path(base) / "entropy-gate" / "mutants" if base else None


@dataclass(frozen=True)
class StrengthSettings:
    """`entropy-gate strength`: this part alone, parsed once by the CLI."""

    manifest: Path
    base_ref: str
    environ: Mapping[str, str]
    out: Path
    namespaces: bool = True
    progress: Callable[[str], None] = field(default=lambda line: None)
    python: str | None = None  # host A's interpreter (default: this one)
    property_id: str | None = None  # a manifest that lists properties: which one


def run_strength(settings: StrengthSettings) -> tuple[Strength, tuple[str, ...]]:
    """Pin check (for the manifests), scan (for the tests' lines), host A, then strength."""
    check = baseline.check(settings.manifest, settings.base_ref, None, settings.property_id)
    if check.head is None:
        raise GateError(f"{check.relative}: cannot be read at the head")
    if check.base is None or check.base_commit is None:
        return Strength(notes=("no manifest at the base ref: nothing to compare with",)), ()
    scanned = scan.scan(check)
    host = base_on_head.HostSettings(
        settings.environ, settings.namespaces, settings.progress, settings.python
    )
    info = launch.run_host(
        runsettings.RunSettings(
            host="a",
            out=settings.out / "host-a",
            root=check.root,
            loaded=check.head,
            environ=settings.environ,
            namespaces=settings.namespaces,
            progress=settings.progress,
            python=settings.python,
        )
    )
    plan = base_on_head.plan(check, closure.data_files(info.test_data))
    if plan is None:
        unchanged = "the property's test side is as at the base: both detect the same mutants"
        return Strength(notes=(unchanged,)), check.notes
    strong = measure_strength(check, plan, scanned, host, (settings.out / "host-a", settings.out))
    if check.base.manifest.constraints.mutation == "off":  # no strength constraint: notes
        lost = tuple(f"strength: cannot measure: {why}" for why in strong.unmeasured)
        strong = Strength(strong.findings, (*strong.notes, *lost), strong.score)
    return strong, check.notes + scanned.notes
