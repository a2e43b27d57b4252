"""`entropy-gate backtest`: what the gate would have said on the repository's own history."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from entropy_action.cli import options
from entropy_action.core.errors import ExitCode

NAME = "backtest"
HELP = (
    "replay the repository's own history as pull requests: each first-parent commit judged "
    "by the whole gate against its parent, in temporary worktrees; a table, a summary, --json"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "range",
        nargs="?",
        metavar="OLD..NEW",
        help="the first-parent commits after OLD up to NEW (git's A..B), oldest first",
    )
    which.add_argument(
        "--last",
        type=options.at_least_one("commits"),
        metavar="N",
        help="the last N first-parent commits of the current branch (HEAD)",
    )
    options.add_manifest(parser)
    parser.add_argument(
        "--module",
        metavar="PATH",
        help="where a commit's parent has no manifest, judge it against init's draft for this "
        "property module (drafted at the parent)",
    )
    parser.add_argument(
        "--json", type=Path, metavar="FILE", help="write every row, with its verdict, here"
    )
    parser.add_argument(
        "--python", metavar="PATH", help="host B's interpreter (as `gate --python`)"
    )
    options.add_timeout(parser)
    parser.add_argument(
        "--no-cache",
        dest="cache",
        action="store_false",
        help="neither reuse nor keep runs of the base's module in the user cache directory",
    )
    parser.add_argument(
        "--keep", type=Path, metavar="DIR", help="keep each commit's reports in DIR/SHA12"
    )
    parser.add_argument(
        "--verbose", action="store_true", help="show the gate's own progress for each commit"
    )


def run(args: argparse.Namespace) -> int:
    from entropy_action.core import git  # noqa: PLC0415 (--help imports no model)
    from entropy_action.gate import backtest  # noqa: PLC0415 (--help imports no model)
    from entropy_action.render import backtest as shown  # noqa: PLC0415 (--help imports no model)

    root = git.toplevel(Path.cwd())
    settings = backtest.Settings(
        root=root,
        manifest=git.repo_path(root, args.manifest),
        environ=args.environ,
        module=_module(root, args.module),
        python=args.python,
        timeout=args.timeout,
        namespaces=options.namespaces_allowed(args.environ),
        cache_dir=options.user_cache() if args.cache else None,
        progress=_progress,
        gate_progress=args.verbose,
        keep=args.keep.absolute() if args.keep is not None else None,
    )
    picked = backtest.commits(root, args.last, args.range)
    settings = backtest.check_inputs(settings, picked)
    rows = backtest.run(settings, picked)
    sys.stdout.write(shown.table(rows))
    if args.json is not None:
        about = {
            "repository": str(root),
            "manifest": settings.manifest,
            "module": settings.module,
            "range": args.range or f"--last {args.last}",
        }
        options.write_json(args.json, shown.document(rows, about))
    if any(row.internal for row in rows):
        return int(ExitCode.INTERNAL)
    merged = all(row.classification == "merge_candidate" for row in rows)
    return int(ExitCode.OK if merged else ExitCode.REJECTED)


def _module(root: Path, module: str | None) -> str | None:
    """--module as a repository-relative path (relative to the current folder, as typed)."""
    if module is None:
        return None
    from entropy_action.core import git  # noqa: PLC0415 (--help imports no model)

    return git.repo_path(root, Path(module))


def _progress(line: str) -> None:
    print(f"backtest: {line}", file=sys.stderr, flush=True)
