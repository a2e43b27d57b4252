"""`entropy-gate compare`: two host reports in, a verdict out (text on stdout, JSON to a file)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from entropy_action.cli import options
from entropy_action.cli.options import MANIFEST_NAME
from entropy_action.core.errors import GateError

if TYPE_CHECKING:
    from entropy_action.gate import judge
    from entropy_action.manifest.pindiff import PinChange
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
    options.add_property(parser)
    options.add_report(parser)
    parser.add_argument(
        "--base-host-a",
        type=Path,
        metavar="DIR",
        help="a run of the base ref's module on host A: tests that did not execute there, "
        "or failed there, are not counted against the patch (default: the host A folder's "
        "base/, where `run --base-ref` wrote one)",
    )
    parser.add_argument(
        "--base-host-b",
        type=Path,
        metavar="DIR",
        help="a run of the base ref's module on host B: failures that stood there do not count "
        "(default: the host B folder's base/, where `run --base-ref` wrote one)",
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
    properties: tuple[str, ...] = ()  # judge only these (--property); default: every one
    legs: Mapping[str, int] = dataclasses.field(default_factory=dict)  # property -> its leg


def run(args: argparse.Namespace) -> int:
    from entropy_action.evidence.junitcases import no_gc  # noqa: PLC0415 (--help imports no model)
    from entropy_action.verdict.classify import exit_code  # noqa: PLC0415 (--help imports no model)

    inputs = Inputs(
        host_a=args.host_a,
        host_b=args.host_b,
        manifest=args.manifest,
        base_ref=args.base_ref,
        base_a=args.base_host_a,
        base_b=args.base_host_b,
        properties=tuple(args.properties),
    )
    with no_gc():  # the reports' values live to the end: see no_gc
        verdict = judge_reports(inputs)
        options.report(args, verdict)
        write_verdict(args.json, verdict)
    return exit_code(verdict)


def judge_reports(inputs: Inputs) -> Verdict:
    """The verdict on report folders, through the one judging pipeline (judge.py); an
    unusable manifest or base ref makes it invalid. A manifest that lists its properties
    is judged property by property, each from its folder DIR/properties/ID of each host,
    and rolled up (a property whose folder is missing on a host is invalid, never a pass)."""
    from entropy_action.core import git  # noqa: PLC0415 (--help imports no model)
    from entropy_action.gate import judge  # noqa: PLC0415 (--help imports no model)
    from entropy_action.verdict import pairing  # noqa: PLC0415 (--help imports no model)

    with git.memo():  # each property asks git the same questions: one answer each
        try:
            dossiers, dropped, many = _gather(inputs)
        except GateError as exc:  # the manifest or the base ref: nothing can be judged
            return pairing.invalid_verdict(exc.message)
        hosts = (inputs.host_a, inputs.host_b)
        return judge.judge_all(dossiers, dropped, many=many, hosts=hosts)


def _gather(
    inputs: Inputs,
) -> tuple[list[judge.PropertyDossier], tuple[PinChange, ...], bool]:
    """Each property's pin check and scan (from git objects and the tree, read as data)
    around its report folders; without a base ref, the manifest alone."""
    from entropy_action.gate import judge  # noqa: PLC0415 (--help imports no model)

    if inputs.base_ref is None:
        views, notes, many = _without_base(inputs.manifest)
        if views is None:  # no manifest at all: the hosts' reports alone
            bare = dataclasses.replace(_folders(inputs, None), notes=notes)
            return [judge.PropertyDossier("?", None, bare)], (), False
        if inputs.properties:
            views = [_pick(views, pid) for pid in dict.fromkeys(inputs.properties)]
        return (
            [
                judge.PropertyDossier(
                    view.property_id,
                    view.manifest.module,
                    dataclasses.replace(
                        _folders(inputs, view.property_id if many else None),
                        loaded=view,
                        notes=notes,
                    ),
                )
                for view in views
            ],
            (),
            many,
        )
    from entropy_action import scan  # noqa: PLC0415 (only with a base ref: see judge.py)
    from entropy_action.manifest import baseline  # noqa: PLC0415 (--help imports no model)

    repo = baseline.check_all(inputs.manifest or Path(MANIFEST_NAME), inputs.base_ref, None)
    repo = repo.only(inputs.properties)
    for note in repo.notes:
        print(note, file=sys.stderr)
    dossiers = []
    for check in repo.checks:
        named = check.head or check.base
        pid = named.property_id if named is not None else "?"
        scanned = scan.scan(check) if check.head is not None else None
        notes = [*scanned.notes] if scanned is not None else []
        folders = _folders(inputs, pid if repo.many else None)
        if isinstance(folders.base_a, Path) and compare_base_cases(folders.base_a) is None:
            notes.append(
                f"--base-host-a {folders.base_a}: unusable; skips are attributed statically"
            )
        module = named.manifest.module if named is not None else None  # the base's, if unread
        dossiers.append(
            judge.PropertyDossier(
                pid,
                module,
                dataclasses.replace(folders, check=check, scanned=scanned, notes=notes),
            )
        )
    return dossiers, repo.dropped, repo.many


def _folders(inputs: Inputs, property_id: str | None) -> judge.Dossier:
    """The report folders of one property: the hosts' own (one-property form) or their
    properties/ID."""
    from entropy_action.core import layout  # noqa: PLC0415 (--help imports no model)
    from entropy_action.gate import judge  # noqa: PLC0415 (--help imports no model)

    def inside(folder: Path | None) -> Path | None:
        if folder is None or property_id is None:
            return folder
        own = layout.property_folder(folder, property_id)
        if not own.exists() and (folder / layout.ERROR_JSON).is_file():
            return folder  # the host's error report, for a run that stopped before any property
        return own

    host_a, host_b = inside(inputs.host_a), inside(inputs.host_b)
    assert host_a is not None
    # the base's runs: given, or each host folder's base/ (as `verdict` reads them): the same
    # folders give the same verdict through either command
    base_a = inside(inputs.base_a) or base_beside(host_a)
    base_b = inside(inputs.base_b) or (base_beside(host_b) if host_b is not None else None)
    lost = lost_legs(inputs.legs.get(property_id or ""), property_id, host_a, host_b)
    return judge.Dossier(
        host_a=host_a,
        host_b=host_b,
        base_a=base_a,
        base_b=base_b,
        invalid=(*inputs.invalid, *lost),
        require_base=inputs.require_base,
    )


def lost_legs(
    leg: int | None, property_id: str | None, host_a: Path, host_b: Path | None
) -> list[str]:
    """For a property whose leg is known (verdict --matrix): a host where its folder holds no
    report names the leg that should have brought it (the judge then says it once)."""
    from entropy_action.evidence import hosterror  # noqa: PLC0415 (--help imports no model)

    if leg is None or property_id is None:
        return []
    lost = []
    for label, folder in (("a", host_a), ("b", host_b)):
        why = hosterror.unreported(folder) if folder is not None else None
        if why is not None:
            lost.append(
                f"host {label.upper()}: {why}: leg {leg} of host {label} carried property "
                f"{property_id} and uploaded no report for it (the leg failed before its "
                "upload, was cancelled or was skipped)"
            )
    return lost


def base_beside(folder: Path) -> Path | None:
    """FOLDER/base when it is a real folder inside FOLDER (never through a symlink)."""
    from entropy_action.core.layout import BASE_FOLDER  # noqa: PLC0415 (--help imports no model)

    candidate = folder / BASE_FOLDER
    if folder.is_symlink() or candidate.is_symlink() or not candidate.is_dir():
        return None
    return candidate


def _pick(views: list[LoadedManifest], property_id: str) -> LoadedManifest:
    for view in views:
        if view.property_id == property_id:
            return view
    raise GateError(
        f"no property {property_id!r} (the manifest lists: "
        f"{', '.join(v.property_id for v in views)})"
    )


def compare_base_cases(base_a: Path) -> dict[str, str] | None:
    from entropy_action.verdict import pairing  # noqa: PLC0415 (--help imports no model)

    return pairing.base_cases(base_a)


def _without_base(
    manifest_path: Path | None,
) -> tuple[list[LoadedManifest] | None, list[str], bool]:
    from entropy_action.manifest import pinfile  # noqa: PLC0415 (--help imports no model)

    notes = [NO_SCAN]
    path = manifest_path or Path(MANIFEST_NAME)
    if manifest_path is None and not path.exists():
        notes.append(
            f"no {MANIFEST_NAME} here and no --manifest: the hosts' manifest_sha256 were "
            "compared with each other only"
        )
        return None, notes, False
    loaded = pinfile.parse_file(pinfile.read(path, str(path)), str(path))
    return list(loaded.views), notes, loaded.many


def write_verdict(path: Path, verdict: Verdict) -> None:
    """Write the verdict JSON (summary.render_json's bytes, in pieces), creating its folder."""
    from entropy_action.render import verdictjson  # noqa: PLC0415 (--help imports no model)

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as handle:
            handle.writelines(verdictjson.chunks(verdict))
    except OSError as exc:
        raise GateError(f"{path}: cannot write the verdict JSON: {exc.strerror}") from None
