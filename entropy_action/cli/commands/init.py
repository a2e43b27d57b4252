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
    from entropy_action.core.hostinfo import HostInfo
    from entropy_action.manifest import selfset

NAME = "init"
HELP = (
    "run the property module once with the live-entropy audit and draft entropy.yaml with "
    "the pins it reads and the seams to fix"
)
PROPERTIES = "tests/properties"
DAY = 86_400
PROVISIONAL_TZ = "UTC"  # the zone the draft pins, and the audited run runs in
COVERAGE_FAIL = "FAIL Required test coverage of"  # pytest-cov's --cov-fail-under line


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
    modules = [*args.modules, *([args.module] if args.module else [])]
    if len(modules) > 1:
        return _run_many(path, root, modules, args)
    module = modules[0] if modules else _only_module(root)
    _exists(root, module)
    print(f"entropy-gate init: running {module} once with the live-entropy audit")
    info, coverage = _audit(root, module, args.environ)
    records = list(info.audit.records) if info.audit else []
    set_by_tests = _set_by_tests(root, module, info)
    failed = _failed(info, coverage)
    clock = args.clock_unix if args.clock_unix is not None else int(time.time()) // DAY * DAY
    temp_root = f"/tmp/entropy-{draft.property_id(module)}"  # noqa: S108 - the gate owns it
    result = draft.draft(module, records, clock, temp_root, set_by_tests, no_coverage=coverage)
    pinfile.parse(result.text.encode("utf-8"), str(path), root)  # the draft validates
    path.write_text(result.text, encoding="utf-8")
    if failed:
        print(f"note: {failed}; the draft lists what the tests read all the same")
    print(f"wrote {path}: {len(result.pins)} pin(s) ({', '.join(result.pins)})")
    for line in result.notes:
        print(f"  {line}")
    print("seams to fix:" if result.seams else "seams to fix: none seen")
    for seam in result.seams:
        print(f"  {seam}")
    return 0


def _run_many(path: Path, root: Path, modules: list[str], args: argparse.Namespace) -> int:
    """Several modules: each run once with the audit, one manifest listing them all."""
    from entropy_action.manifest import draft, pinfile  # noqa: PLC0415 (--help imports no model)

    draft.distinct(modules)
    for module in modules:
        _exists(root, module)
    clock = args.clock_unix if args.clock_unix is not None else int(time.time()) // DAY * DAY
    audited = []
    for module, name in zip(modules, draft.property_ids(modules), strict=True):
        print(f"entropy-gate init: running {module} once with the live-entropy audit")
        info, coverage = _audit(root, module, args.environ)
        failed = _failed(info, coverage)
        if failed:
            print(f"note: {module}: {failed}; the draft lists what the tests read all the same")
        records = list(info.audit.records) if info.audit else []
        temp_root = f"/tmp/entropy-{name}"  # noqa: S108 - the gate owns it
        set_by_tests = _set_by_tests(root, module, info)
        audited.append(draft.Audited(module, records, temp_root, set_by_tests, coverage))
    result = draft.draft_many(audited, clock)
    pinfile.parse_file(result.text.encode("utf-8"), str(path), root)  # the draft validates
    path.write_text(result.text, encoding="utf-8")
    count = len(result.properties)
    print(f"wrote {path}: {count} properties ({', '.join(result.properties)})")
    print(f"  {len(result.pins)} pin(s): {', '.join(result.pins)}")
    for line in result.notes:
        print(f"  {line}")
    print("seams to fix:" if result.seams else "seams to fix: none seen")
    for seam in result.seams:
        print(f"  {seam}")
    return 0


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


def _audit(root: Path, module: str, environ: Mapping[str, str]) -> tuple[HostInfo, bool]:
    """One host A run of `module` with the audit, under a provisional manifest that pins TZ
    as the draft would (so a module that sets TZ itself shows, in pins_applied); and whether
    pytest-cov failed the run on the project's coverage threshold (the module alone misses
    it: the gate must run without coverage)."""
    from entropy_action.core.layout import PYTEST_LOG  # noqa: PLC0415 (--help imports no model)
    from entropy_action.hosts import launch, runsettings  # noqa: PLC0415 (--help imports no model)
    from entropy_action.manifest import pinfile  # noqa: PLC0415 (--help imports no model)

    provisional = (
        f"version: 1\nproperty_id: init\nmodule: {module}\npins:\n  rng_seed: 0\n"
        f"  tz: {PROVISIONAL_TZ}\n"
    )
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
        log = Path(scratch, "out", PYTEST_LOG)
        coverage = log.is_file() and COVERAGE_FAIL in log.read_text("utf-8", "replace")
    if info.audit is None:
        raise GateError(f"{module}: the live-entropy audit did not report ({_failed(info)})")
    return info, coverage and info.returncode == 1


def _failed(info: HostInfo, coverage: bool = False) -> str:
    """Why the audited run did not pass, if it did not; a TZ the tests set is no failure, nor
    a coverage threshold the draft turns off."""
    from entropy_action.hosts import hostjson  # noqa: PLC0415 (--help imports no model)

    tz_only = [m for m in info.pins_mismatch if not m.startswith("tz: ")]
    update: dict[str, object] = {"pins_mismatch": tz_only}
    if coverage:
        update["returncode"] = 0
    code, why = hostjson.outcome(info.model_copy(update=update))
    return why if code else ""


def _set_by_tests(root: Path, module: str, info: HostInfo) -> dict[str, str]:
    """The variables the module or its conftests set at import: name -> where and how, found
    in their source (manifest.selfset); TZ also when the audited run saw another value than
    the provisional pin (set by something the tests import)."""
    from entropy_action.manifest import selfset  # noqa: PLC0415 (--help imports no model)

    found: dict[str, str] = {}
    for relative in _test_files(root, module):
        try:
            source = (root / relative).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        seen = selfset.import_writes(source, relative)
        for write in seen.writes:
            if write.name not in found:
                found[write.name] = _sets(write, seen.tzset_lines)
    tz = info.pins_applied.get("tz")
    if "TZ" not in found and tz is not None and tz != PROVISIONAL_TZ:
        found["TZ"] = (
            f"the test process saw TZ={tz!r}, not the {PROVISIONAL_TZ} init set: something "
            "the tests import sets it"
        )
    return found


def _sets(write: selfset.Write, tzset_lines: list[int]) -> str:
    then = next((n for n in tzset_lines if n >= write.line), None) if write.name == "TZ" else None
    applied = f", then `time.tzset()` at line {then}" if then else ""
    return f"{write.where()} sets {write.name} at import (`{write.code}`{applied})"


def _test_files(root: Path, module: str) -> list[str]:
    """The module and the conftests pytest loads for it: one in each folder from the
    repository's root down to the module's."""
    folders = Path(module).parent.parts
    conftests = [
        Path(*folders[:depth], "conftest.py").as_posix() for depth in range(len(folders) + 1)
    ]
    return [name for name in conftests if (root / name).is_file()] + [module]
