"""`entropy-gate scan`: find silenced entropy in the patch, statically, against the base ref."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from entropy_action.cli import options
from entropy_action.core.errors import ExitCode, GateError
from entropy_action.github import workflow

if TYPE_CHECKING:
    from entropy_action.core.findings import Finding
    from entropy_action.manifest import baseline
    from entropy_action.scan import ScanResult

NAME = "scan"
HELP = (
    "scan the property module, its conftests and pytest's config for silenced entropy; "
    "exit 1 when the patch introduced a finding"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_manifest(parser)
    parser.add_argument(
        "--base-ref",
        required=True,
        metavar="REF",
        help="git ref of the PR's base; findings that stood there are notices",
    )
    parser.add_argument(
        "--json", type=Path, metavar="FILE", help="also write the findings as a JSON list"
    )


def run(args: argparse.Namespace) -> int:
    from entropy_action.manifest import baseline  # noqa: PLC0415 (--help imports no model)

    repo = baseline.check_all(args.manifest, args.base_ref, None)
    for note in dict.fromkeys((*repo.notes, *(n for one in repo.checks for n in one.notes))):
        print(note, file=sys.stderr)
    findings: dict[str, Finding] = {}  # a file two properties share is scanned once a property
    counted_any = False
    for check in repo.checks:
        counted_any |= _scan_one(args, check, findings, many=repo.many)
    if args.json is not None:
        _write_json(args.json, list(findings.values()))
    return int(ExitCode.REJECTED if counted_any else ExitCode.OK)


def _scan_one(
    args: argparse.Namespace,
    check: baseline.PinCheck,
    seen: dict[str, Finding],
    *,
    many: bool,
) -> bool:
    """One property's scan, printed (its findings not already printed); whether any counts."""
    from entropy_action.scan import scan  # noqa: PLC0415 (--help imports no model)

    result = scan(check)
    source = check.base or check.head
    if source is None:
        raise GateError(f"{check.relative}: cannot be read at the head")
    constraints = source.manifest.constraints
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    if result.errors:
        for error in result.errors[1:]:
            print(error, file=sys.stderr)
        more = f" (and {len(result.errors) - 1} more above)" if len(result.errors) > 1 else ""
        raise GateError(f"{result.errors[0]}{more}; the scan cannot check the patch")
    module = check.head.manifest.module if check.head is not None else None
    fresh = [f for f in result.findings if f.model_dump_json() not in seen]
    seen.update((f.model_dump_json(), f) for f in fresh)
    if many:
        print(f"property {source.property_id} ({module}):")
    shown = dataclasses.replace(result, findings=tuple(fresh)) if many else result
    print(render(shown, module, strict=constraints.strict_baseline), end="")
    counted = [f for f in result.findings if f.introduced or constraints.strict_baseline]
    if args.environ.get("GITHUB_ACTIONS") == "true":
        print(workflow_annotations(fresh, counted), end="")
    return bool(counted)


def render(result: ScanResult, property_module: str | None, *, strict: bool) -> str:
    """One line per finding (pre-existing ones as notices), then a summary line."""
    lines = [render_finding(f, property_module, strict=strict) for f in result.findings]
    lines.append(summary(result.findings, strict=strict))
    return "\n".join(lines) + "\n"


def render_finding(finding: Finding, property_module: str | None, *, strict: bool) -> str:
    if finding.introduced:
        return finding.render()
    if strict:
        return (
            f"{finding.location()}: {finding.message} (pre-existing; "
            "constraints.strict_baseline counts it)"
        )
    hint = "from the property module" if finding.path == property_module else ""
    return (
        f"{finding.location()}: notice: pre-existing — {finding.message} "
        f"(consider removing it{' ' + hint if hint else ''})"
    )


def summary(findings: Sequence[Finding], *, strict: bool) -> str:
    introduced = sum(f.introduced for f in findings)
    pre = len(findings) - introduced
    if not findings:
        return "scan: no silenced entropy found"
    if strict and pre:
        return (
            f"scan: {len(findings)} finding(s) ({pre} pre-existing); "
            "constraints.strict_baseline rejects them all"
        )
    return f"scan: {introduced} finding(s) introduced by the patch, {pre} pre-existing (notices)"


def workflow_annotations(findings: Sequence[Finding], counted: Sequence[Finding]) -> str:
    """Each finding that counts as an error annotation on its line. One that stood at the
    base is on a line the patch did not touch: the log and the summary say it, no annotation."""
    lines = [
        workflow.annotation(
            "error",
            finding.message,
            file=finding.path,
            line=finding.line,
            title=f"entropy-gate: {finding.kind}",
        )
        for finding in findings
        if finding in counted
    ]
    return "".join(line + "\n" for line in lines)


def _write_json(path: Path, findings: Sequence[Finding]) -> None:
    from entropy_action.verdict import remediation  # noqa: PLC0415 (--help imports no model)

    advised = [f.model_copy(update={"remediation": remediation.for_finding(f)}) for f in findings]
    data = [f.model_dump(mode="json") for f in advised]
    try:
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise GateError(f"--json {path}: cannot write: {exc.strerror}") from None
