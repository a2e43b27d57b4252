"""`entropy-gate init`: run the property module once with the audit, draft entropy.yaml."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from entropy_action.cli import options
from entropy_action.core.errors import GateError

if TYPE_CHECKING:
    from entropy_action.manifest import draft

NAME = "init"
HELP = (
    "run the property module once with the live-entropy audit and draft entropy.yaml with "
    "the pins it reads and the seams to fix"
)
PROPERTIES = "tests/properties"
DAY = 86_400


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_manifest(parser)
    parser.add_argument(
        "modules",
        nargs="*",
        metavar="MODULE",
        help="the property test modules; several draft a manifest that lists them (one "
        "property each, the pins they share at the top)",
    )
    parser.add_argument(
        "--module",
        metavar="PATH",
        action="append",
        default=[],
        help=f"a property test module, as MODULE (repeatable; default: the only "
        f"{PROPERTIES}/test_*.py)",
    )
    parser.add_argument("--force", action="store_true", help="overwrite an existing manifest")
    parser.add_argument(
        "--clock-unix",
        type=int,
        metavar="N",
        help="the clock pin to draft (default: today's midnight, UTC)",
    )


def run(args: argparse.Namespace) -> int:
    from entropy_action.gate import drafting  # noqa: PLC0415 (--help imports no model)
    from entropy_action.manifest import baseline  # noqa: PLC0415 (--help imports no model)

    path: Path = args.manifest
    if path.exists() and not args.force:
        raise GateError(f"{path}: already exists; init never overwrites it without --force")
    root = baseline.repo_root(path)
    modules = [*args.modules, *args.module]
    if len(modules) > 1:
        return _run_many(path, root, modules, args)
    module = modules[0] if modules else _only_module(root)
    _exists(root, module)
    print(f"entropy-gate init: running {module} once with the live-entropy audit")
    clock = args.clock_unix if args.clock_unix is not None else int(time.time()) // DAY * DAY
    result, failed = drafting.draft_one(root, module, args.environ, clock, _progress)
    path.write_text(result.text, encoding="utf-8")
    if failed:
        print(f"note: {failed}; the draft lists what the tests read all the same")
    print(f"wrote {path}: {len(result.pins)} pin(s) ({', '.join(result.pins)})")
    _tell(result)
    _workflows(root)
    return 0


def _run_many(path: Path, root: Path, modules: list[str], args: argparse.Namespace) -> int:
    """Several modules: each run once with the audit, one manifest listing them all."""
    from entropy_action.gate import drafting  # noqa: PLC0415 (--help imports no model)
    from entropy_action.manifest import draft, pinfile  # noqa: PLC0415 (--help imports no model)

    draft.distinct(modules)
    for module in modules:
        _exists(root, module)
    clock = args.clock_unix if args.clock_unix is not None else int(time.time()) // DAY * DAY
    audited = []
    for module, name in zip(modules, draft.property_ids(modules), strict=True):
        print(f"entropy-gate init: running {module} once with the live-entropy audit")
        temp_root = f"/tmp/entropy-{name}"  # noqa: S108 - the gate owns it
        seen = drafting.audit(root, module, args.environ, temp_root, _progress)
        if seen.failed:
            failed = f"{module}: {seen.failed}"
            print(f"note: {failed}; the draft lists what the tests read all the same")
        audited.append(seen.audited)
    result = draft.draft_many(audited, clock)
    pinfile.parse_file(result.text.encode("utf-8"), str(path), root)  # the draft validates
    path.write_text(result.text, encoding="utf-8")
    count = len(result.properties)
    print(f"wrote {path}: {count} properties ({', '.join(result.properties)})")
    print(f"  {len(result.pins)} pin(s): {', '.join(result.pins)}")
    _tell(result)
    _workflows(root)
    return 0


def _tell(result: draft.Draft) -> None:
    for line in result.notes:
        print(f"  {line}")
    print("seams to fix:" if result.seams else "seams to fix: none seen")
    for seam in result.seams:
        print(f"  {seam}")


def _workflows(root: Path) -> None:
    """The repository's workflows (other than entropy-gate's own) whose jobs can post a check
    run: a pull request's edit of one, a dependabot bump of an action included, is
    `pin_mutation` (scan.workflows). Said now, while `permissions:` is an easy fix: on toolz,
    9 of its last 30 merges were such edits; on arrow, 2 of 6."""
    from entropy_action.scan import workflows  # noqa: PLC0415 (--help imports no model)

    folder = root / ".github" / "workflows"
    found = []
    for path in sorted([*folder.glob("*.yml"), *folder.glob("*.yaml")]):
        try:
            text = path.read_bytes()
        except OSError:
            continue
        if b"entropy-gate" in text.lower():
            continue  # the gate's own workflow: protected, whatever its permissions
        if (why := workflows.reach(text).why) is not None:
            found.append(f"  {path.relative_to(root).as_posix()}: {why}")
    if found:
        print(
            "workflows whose edits will be pin_mutation (their jobs can post a check run; "
            "docs/ci.md, Which edits can change the check):"
        )
        print("\n".join(found))


def _progress(line: str) -> None:
    print(f"  {line}", file=sys.stderr)


def _exists(root: Path, module: str) -> None:
    """A module init can run: a file inside the repository."""
    if not (root / module).is_file():
        raise GateError(
            f"{module}: no such file; name each property module by its path from the "
            "repository root"
        )


def _only_module(root: Path) -> str:
    found = sorted((root / PROPERTIES).glob("test_*.py"))
    if len(found) != 1:
        raise GateError(
            f"{PROPERTIES}: {len(found)} test_*.py files; name the property module with --module"
        )
    return found[0].relative_to(root).as_posix()
