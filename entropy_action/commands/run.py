"""`entropy-gate run`: the property module under the pins on one host (B: `--isolate`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from entropy_action.commands import options
from entropy_action.errors import GateError

NAME = "run"
HELP = (
    "run the manifest's property module under the pins on one host; writes DIR/junit.xml, "
    "DIR/host.json and DIR/pytest.log; exit 0 passed, 1 failed or nothing collected, "
    "2 invalid (pins that did not take)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", choices=("a", "b"), required=True, help="the host's label")
    parser.add_argument(
        "--out", type=Path, required=True, metavar="DIR", help="where the reports go"
    )
    options.add_manifest(parser)
    parser.add_argument(
        "--isolate",
        action="store_true",
        help="the local host B: scrubbed env, fresh HOME, shifted live clock, no network, "
        "another hostname and a copy of the tree elsewhere",
    )
    parser.add_argument(
        "--python", metavar="PATH", help="the interpreter that runs pytest (default: this one)"
    )
    options.add_timeout(parser)
    parser.epilog = (
        f"{options.NO_NAMESPACES_ENV}=1 keeps the run out of Linux namespaces; the degraded "
        "isolation is noted in host.json.\n\n" + (parser.epilog or "")
    )


def run(args: argparse.Namespace) -> int:
    from entropy_action import manifest, runner  # noqa: PLC0415 (--help imports no model)

    path: Path = args.manifest
    root = repo_root(path)
    loaded = manifest.load(path, repo_root=root, name=str(path))
    for warning in loaded.warnings:
        print(warning, file=sys.stderr)
    settings = runner.RunSettings(
        host=args.host,
        out=args.out,
        root=root,
        loaded=loaded,
        environ=args.environ,
        isolate=args.isolate,
        python=args.python,
        progress=lambda message: print(message, file=sys.stderr, flush=True),
        namespaces=options.namespaces_allowed(args.environ),
        timeout=args.timeout,
    )
    info = runner.run_host(settings)
    _show_log(args.out / runner.PYTEST_LOG, fence=args.environ.get("GITHUB_ACTIONS") == "true")
    for line in info.isolation:
        print(f"isolation: {line}", file=sys.stderr)
    for note in info.notes:
        print(f"note: {note}", file=sys.stderr)
    code, message = runner.outcome(info)
    print(message, file=sys.stderr)
    return int(code)


def repo_root(path: Path) -> Path:
    """The git work tree holding the manifest, else the manifest's folder."""
    from entropy_action import git  # noqa: PLC0415

    folder = path.parent if path.parent.parts else Path.cwd()
    try:
        return git.toplevel(folder)
    except GateError:
        return folder.resolve()


def _show_log(path: Path, *, fence: bool) -> None:
    """Echo pytest's log. It is PR code's output: in GitHub Actions it is fenced with
    stop-commands so a line a test prints cannot act as a workflow command."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
    if fence and text:
        from entropy_action import workflow  # noqa: PLC0415 (--help imports no model)

        text = "\n".join(workflow.fenced_log(text))
    sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
    sys.stdout.flush()
