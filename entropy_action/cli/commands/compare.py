"""`entropy-gate compare`: two host reports in, a verdict out (text on stdout, JSON to a file)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from entropy_action.cli.options import MANIFEST_NAME
from entropy_action.core.errors import GateError

if TYPE_CHECKING:
    from entropy_action.gate import judge
    from entropy_action.manifest.pinfile import LoadedManifest
    from entropy_action.verdict.model import Verdict

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
    require_base: bool = False  # the workflow's verdict: no base ref is invalid, never a pass


def run(args: argparse.Namespace) -> int:
    from entropy_action.render import summary  # noqa: PLC0415 (--help imports no model)
    from entropy_action.verdict.classify import exit_code  # noqa: PLC0415 (--help imports no model)

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
    """The verdict on report folders, through the one judging pipeline (judge.py); an
    unusable manifest or base ref makes it invalid."""
    from entropy_action.gate import judge  # noqa: PLC0415 (--help imports no model)
    from entropy_action.verdict import pairing  # noqa: PLC0415 (--help imports no model)

    try:
        dossier = _gather(inputs)
    except GateError as exc:  # the manifest or the base ref: nothing can be judged
        return pairing.invalid_verdict(exc.message)
    return judge.judge(dossier)


def _gather(inputs: Inputs) -> judge.Dossier:
    """The pin check and the scan (from git objects and the tree, read as data) around the
    report folders; without a base ref, the manifest alone."""
    from entropy_action import scan  # noqa: PLC0415 (--help imports no model)
    from entropy_action.gate import judge  # noqa: PLC0415 (--help imports no model)
    from entropy_action.manifest import baseline  # noqa: PLC0415 (--help imports no model)

    folders = judge.Dossier(
        host_a=inputs.host_a,
        host_b=inputs.host_b,
        base_a=inputs.base_a,
        base_b=inputs.base_b,
        invalid=inputs.invalid,
        require_base=inputs.require_base,
    )
    if inputs.base_ref is None:
        loaded, notes = _without_base(inputs.manifest)
        return dataclasses.replace(folders, loaded=loaded, notes=notes)
    check = baseline.check(inputs.manifest or Path(MANIFEST_NAME), inputs.base_ref, None)
    for note in check.notes:
        print(note, file=sys.stderr)
    scanned = scan.scan(check) if check.head is not None else None
    notes = [*scanned.notes] if scanned is not None else []
    if inputs.base_a is not None and compare_base_cases(inputs.base_a) is None:
        notes.append(f"--base-host-a {inputs.base_a}: unusable; skips are attributed statically")
    return dataclasses.replace(folders, check=check, scanned=scanned, notes=notes)


def compare_base_cases(base_a: Path) -> dict[str, str] | None:
    from entropy_action.verdict import pairing  # noqa: PLC0415 (--help imports no model)

    return pairing.base_cases(base_a)


def _without_base(manifest_path: Path | None) -> tuple[LoadedManifest | None, list[str]]:
    from entropy_action.manifest import pinfile  # noqa: PLC0415 (--help imports no model)

    notes = [NO_SCAN]
    path = manifest_path or Path(MANIFEST_NAME)
    if manifest_path is None and not path.exists():
        notes.append(
            f"no {MANIFEST_NAME} here and no --manifest: the hosts' manifest_sha256 were "
            "compared with each other only"
        )
        return None, notes
    return pinfile.load(path, name=str(path)), notes


def write_verdict(path: Path, text: str) -> None:
    """Write the verdict JSON, creating its folder."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise GateError(f"{path}: cannot write the verdict JSON: {exc.strerror}") from None
