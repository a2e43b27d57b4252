"""`entropy-gate init`: run the property module once with the audit, draft entropy.yaml."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from entropy_action.cli import options
from entropy_action.core.errors import GateError

if TYPE_CHECKING:
    from entropy_action.core.hostinfo import AuditRecord

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
        "--module",
        metavar="PATH",
        help=f"the property test module (default: the only {PROPERTIES}/test_*.py)",
    )
    parser.add_argument("--force", action="store_true", help="overwrite an existing manifest")
    parser.add_argument(
        "--clock-unix",
        type=int,
        metavar="N",
        help="the clock pin to draft (default: today's midnight, UTC)",
    )


def run(args: argparse.Namespace) -> int:
    from entropy_action.manifest import baseline, draft, pinfile  # noqa: PLC0415 (--help imports no model)

    path: Path = args.manifest
    if path.exists() and not args.force:
        raise GateError(f"{path}: already exists; init never overwrites it without --force")
    root = baseline.repo_root(path)
    module = args.module or _only_module(root)
    print(f"entropy-gate init: running {module} once with the live-entropy audit")
    records, failed = _audit(root, module, args.environ)
    clock = args.clock_unix if args.clock_unix is not None else int(time.time()) // DAY * DAY
    temp_root = f"/tmp/entropy-{draft.property_id(module)}"  # noqa: S108 - the gate owns it
    result = draft.draft(module, records, clock, temp_root)
    pinfile.parse(result.text.encode("utf-8"), str(path), root)  # the draft validates
    path.write_text(result.text, encoding="utf-8")
    if failed:
        print(f"note: {failed}; the draft lists what the tests read all the same")
    print(f"wrote {path}: {len(result.pins)} pin(s) ({', '.join(result.pins)})")
    print("seams to fix:" if result.seams else "seams to fix: none seen")
    for seam in result.seams:
        print(f"  {seam}")
    return 0


def _only_module(root: Path) -> str:
    found = sorted((root / PROPERTIES).glob("test_*.py"))
    if len(found) != 1:
        raise GateError(
            f"{PROPERTIES}: {len(found)} test_*.py files; name the property module with --module"
        )
    return found[0].relative_to(root).as_posix()


def _audit(root: Path, module: str, environ: Mapping[str, str]) -> tuple[list[AuditRecord], str]:
    """The audit's records from one host A run of `module` under a provisional manifest."""
    from entropy_action.hosts import hostjson, launch, runsettings  # noqa: PLC0415 (--help imports no model)
    from entropy_action.manifest import pinfile  # noqa: PLC0415 (--help imports no model)

    provisional = f"version: 1\nproperty_id: init\nmodule: {module}\npins:\n  rng_seed: 0\n"
    loaded = pinfile.parse(provisional.encode("utf-8"), "the provisional manifest", root)
    with tempfile.TemporaryDirectory(prefix="entropy-gate-init-") as scratch:
        info = launch.run_host(
            runsettings.RunSettings(
                host="a",
                out=Path(scratch) / "out",
                root=root,
                loaded=loaded,
                environ=environ,
                progress=lambda line: print(f"  {line}", file=sys.stderr),
            )
        )
    code, why = hostjson.outcome(info)
    if info.audit is None:
        raise GateError(f"{module}: the live-entropy audit did not report ({why})")
    return list(info.audit.records), (why if code else "")
