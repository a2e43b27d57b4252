"""`entropy-gate verdict`: the workflow's last job; two downloaded host folders in, a verdict out.

The host folders are artifacts that PR code produced on other runners: untrusted data, read
only through `compare` (size-capped, no DTDs, no symlinks, never executed or used as a path
outside its folder). The checkout is data too: the pin check and the scan read files, nothing
from the PR runs. A host folder that is missing or empty (the host job failed, was cancelled
or uploaded nothing) makes the verdict `invalid`, never a pass: the judge says so once per
host, and leads with the cause a host job left in its error.json (evidence.hosterror).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from entropy_action.cli import options
from entropy_action.cli.commands import compare as compare_command
from entropy_action.cli.options import MANIFEST_NAME
from entropy_action.core.errors import GateError
from entropy_action.github import workflow

if TYPE_CHECKING:
    from entropy_action.verdict.model import Verdict

NAME = "verdict"
HELP = (
    "judge the report folders that host A and host B uploaded (each may hold base/, the base "
    "ref's run on that host): verdict JSON, job summary, step outputs; exit 0 only for a "
    "merge candidate, 1 rejected, 2 invalid (a host that reported nothing is invalid)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host-a", type=Path, required=True, metavar="DIR", help="host A's folder")
    parser.add_argument("--host-b", type=Path, required=True, metavar="DIR", help="host B's folder")
    parser.add_argument(
        "--base-ref",
        metavar="REF",
        help="git ref of the PR's base: the pin check and the silencing scan run against it; "
        "without one (or empty) the verdict is invalid, never a pass",
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
    options.add_report(parser)
    parser.add_argument(
        "--matrix",
        metavar="JSON",
        help="the check job's matrix output (entropy-gate matrix): a property missing on a "
        "host is named with the leg that carried it",
    )
    parser.epilog = (
        "Under GitHub Actions it appends the summary to $GITHUB_STEP_SUMMARY and sets the step "
        "outputs classification, merge (true/false) and verdict-path via $GITHUB_OUTPUT.\n\n"
        + (parser.epilog or "")
    )


def run(args: argparse.Namespace) -> int:
    from entropy_action.evidence.junitcases import no_gc  # noqa: PLC0415 (--help imports no model)
    from entropy_action.manifest import legs  # noqa: PLC0415 (--help imports no model)
    from entropy_action.verdict.classify import exit_code  # noqa: PLC0415 (--help imports no model)

    carried = legs.carried(args.matrix) if args.matrix else {}
    inputs = compare_command.Inputs(
        host_a=args.host_a,
        host_b=args.host_b,
        manifest=args.manifest,
        base_ref=args.base_ref or None,
        require_base=True,
        legs=carried,
    )
    with no_gc():  # the reports' values live to the end: see no_gc
        verdict = compare_command.judge_reports(inputs)
        options.report(args, verdict)
        compare_command.write_verdict(args.json, verdict)
        publish_to_workflow(verdict, args.json, args.environ)
    return exit_code(verdict)


def publish_to_workflow(verdict: Verdict, json_path: Path, environ: Mapping[str, str]) -> None:
    """The job summary and the step outputs, when the runner asked for them."""
    from entropy_action.render import markdown  # noqa: PLC0415 (--help imports no model)

    outputs = {
        "classification": verdict.classification,
        "merge": "true" if verdict.classification == "merge_candidate" else "false",
        "verdict-path": str(json_path.resolve()),
    }
    try:
        summary = markdown.render(verdict, limit=workflow.SUMMARY_CHARS)
        workflow.append_summary(summary, environ)
        for name, value in outputs.items():
            workflow.set_output(name, value, environ)
    except OSError as exc:
        raise GateError(f"{exc.filename}: cannot append: {exc.strerror}") from None
