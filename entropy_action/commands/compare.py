"""`entropy-gate compare`: two host reports in, a verdict out (text on stdout, JSON to a file)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from entropy_action.commands.options import MANIFEST_NAME
from entropy_action.errors import GateError

if TYPE_CHECKING:
    from entropy_action import compare
    from entropy_action.baseline import PinCheck
    from entropy_action.findings import Finding
    from entropy_action.manifest import LoadedManifest
    from entropy_action.pins import PinDiff
    from entropy_action.verdict import Verdict

NAME = "compare"
HELP = (
    "compare the reports of host A and host B (DIR/host.json + DIR/junit.xml), classify, "
    "write the verdict JSON; exit 0 merge candidate, 1 rejected, 2 invalid"
)
NO_SCAN = "no silencing scan ran (no --base-ref): findings were not looked for"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host-a", type=Path, required=True, metavar="DIR", help="host A's report")
    parser.add_argument(
        "--host-b",
        type=Path,
        metavar="DIR",
        help="host B's report (may be left out only when constraints.require_host_b is false)",
    )
    parser.add_argument(
        "--base-ref",
        metavar="REF",
        help="git ref of the PR's base: also run the pin check and the silencing scan",
    )
    parser.add_argument(
        "--manifest",
        type=Path,
        metavar="PATH",
        help=f"the pin file the hosts must have run (default: {MANIFEST_NAME} when it exists)",
    )
    parser.add_argument(
        "--json", type=Path, required=True, metavar="FILE", help="write the verdict JSON here"
    )
    parser.add_argument(
        "--base-host-a",
        type=Path,
        metavar="DIR",
        help="a run of the base ref's module on host A: tests that did not execute there, "
        "or failed there, are not counted against the patch",
    )
    parser.add_argument(
        "--base-host-b",
        type=Path,
        metavar="DIR",
        help="a run of the base ref's module on host B: failures that stood there do not count",
    )


@dataclass
class Judged:
    """What the checks around the reports contribute to the verdict."""

    loaded: LoadedManifest | None = None
    pin_diff: PinDiff | None = None
    findings: Sequence[Finding] = ()
    runtime: compare.RuntimeFindings | None = None
    strict_baseline: bool = False
    require_host_b: bool = True
    notes: list[str] = field(default_factory=list)
    forbid_live_entropy: bool = False


@dataclass(frozen=True)
class Inputs:
    """The report folders and the checks around them, as `compare` and `verdict` take them."""

    host_a: Path
    host_b: Path | None
    manifest: Path | None = None
    base_ref: str | None = None
    base_a: Path | None = None
    base_b: Path | None = None
    invalid: Sequence[str] = ()  # reasons the caller found why the reports cannot be judged


def run(args: argparse.Namespace) -> int:
    from entropy_action import summary  # noqa: PLC0415 (--help imports no model)
    from entropy_action.verdict import exit_code  # noqa: PLC0415

    verdict = judge_reports(
        Inputs(
            host_a=args.host_a,
            host_b=args.host_b,
            manifest=args.manifest,
            base_ref=args.base_ref,
            base_a=args.base_host_a,
            base_b=args.base_host_b,
        )
    )
    print(summary.render_text(verdict), end="")
    write_verdict(args.json, summary.render_json(verdict))
    return exit_code(verdict)


def judge_reports(inputs: Inputs) -> Verdict:
    """The verdict on two report folders; an unusable manifest or base ref makes it invalid."""
    from entropy_action import compare  # noqa: PLC0415 (--help imports no model)

    try:
        judged = _judge(inputs.manifest, inputs.base_ref, inputs.base_a)
    except GateError as exc:  # the manifest or the base ref: nothing can be judged
        return compare.invalid_verdict(exc.message)
    return compare.evaluate(
        inputs.host_a,
        inputs.host_b,
        loaded=judged.loaded,
        pin_diff=judged.pin_diff,
        findings=judged.findings,
        runtime_findings=judged.runtime,
        strict_baseline=judged.strict_baseline,
        require_host_b=judged.require_host_b,
        invalid=inputs.invalid,
        notes=judged.notes,
        base_a=inputs.base_a,
        base_b=inputs.base_b,
        forbid_live_entropy=judged.forbid_live_entropy,
    )


def _judge(manifest_path: Path | None, base_ref: str | None, base_a: Path | None) -> Judged:
    from entropy_action import baseline  # noqa: PLC0415

    if base_ref is None:
        return _without_base(manifest_path)
    check = baseline.check(manifest_path or Path(MANIFEST_NAME), base_ref, None)
    for note in check.notes:
        print(note, file=sys.stderr)
    constraints_from = check.base or check.head
    constraints = constraints_from.manifest.constraints if constraints_from else None
    findings, runtime, notes = _scan(check, base_a)
    return Judged(
        loaded=check.head,
        pin_diff=check.diff,
        findings=findings,
        runtime=runtime,
        strict_baseline=constraints.strict_baseline if constraints else False,
        require_host_b=constraints.require_host_b if constraints else True,
        notes=notes,
        forbid_live_entropy=constraints.forbid_live_entropy if constraints else False,
    )


def _without_base(manifest_path: Path | None) -> Judged:
    from entropy_action import manifest  # noqa: PLC0415

    notes = [NO_SCAN]
    path = manifest_path or Path(MANIFEST_NAME)
    if manifest_path is None and not path.exists():
        notes.append(
            f"no {MANIFEST_NAME} here and no --manifest: the hosts' manifest_sha256 were "
            "compared with each other only"
        )
        return Judged(notes=notes)
    loaded = manifest.load(path, name=str(path))
    constraints = loaded.manifest.constraints
    return Judged(
        loaded=loaded,
        strict_baseline=constraints.strict_baseline,
        require_host_b=constraints.require_host_b,
        notes=notes,
        forbid_live_entropy=constraints.forbid_live_entropy,
    )


def _scan(
    check: PinCheck, base_a: Path | None
) -> tuple[Sequence[Finding], compare.RuntimeFindings, list[str]]:
    """The silencing scan's static findings, and its runtime rule over the paired tests.

    Without a base run on host A (--base-host-a), a test that did not execute is attributed
    statically: a pre-existing finding that concerns it makes it pre-existing.
    """
    from entropy_action import compare, scan  # noqa: PLC0415

    scanned = scan.scan(check)
    notes = [f"silencing scan incomplete: {error}" for error in scanned.errors]
    cases = compare.base_cases(base_a) if base_a is not None else None
    if base_a is not None and cases is None:
        notes.append(f"--base-host-a {base_a}: unusable; skips are attributed statically")
    return scanned.findings, scan.runtime_rule(scanned, cases), [*notes, *scanned.notes]


def write_verdict(path: Path, text: str) -> None:
    """Write the verdict JSON, creating its folder."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise GateError(f"{path}: cannot write the verdict JSON: {exc.strerror}") from None
