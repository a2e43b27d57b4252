"""`init`'s run: the property module once on host A with the live-entropy audit, then the
draft of entropy.yaml from what it read (manifest.draft). `entropy-gate init` writes it;
`entropy-gate backtest --module` drafts one at each parent commit that had none.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from entropy_action.core.errors import GateError
from entropy_action.core.hostinfo import HostInfo
from entropy_action.core.layout import PYTEST_LOG
from entropy_action.hosts import hostjson, launch, runsettings
from entropy_action.manifest import draft, pinfile, selfset

PROVISIONAL_TZ = "UTC"  # the zone the draft pins, and the audited run runs in
COVERAGE_FAIL = "FAIL Required test coverage of"  # pytest-cov's --cov-fail-under line


@dataclass(frozen=True)
class Audit:
    """One module's audited run: what the draft reads, and why the run failed (if it did)."""

    audited: draft.Audited
    failed: str  # "" when the run passed


def audit(
    root: Path,
    module: str,
    environ: Mapping[str, str],
    temp_root: str,
    progress: Callable[[str], None] | None = None,
) -> Audit:
    """`module` run once on host A with the audit, as `init` runs it."""
    if not (root / module).is_file():
        raise GateError(
            f"{module}: no such file; name each property module by its path from the "
            "repository root"
        )
    info, coverage = _run(root, module, environ, progress)
    records = list(info.audit.records) if info.audit else []
    audited = draft.Audited(module, records, temp_root, _set_by_tests(root, module, info), coverage)
    return Audit(audited, failed(info, coverage))


def draft_one(
    root: Path,
    module: str,
    environ: Mapping[str, str],
    clock: int,
    progress: Callable[[str], None] | None = None,
) -> tuple[draft.Draft, str]:
    """The draft for one module (validated against `root`) and why its run failed ("")."""
    temp_root = f"/tmp/entropy-{draft.property_id(module)}"  # noqa: S108 - the gate owns it
    seen = audit(root, module, environ, temp_root, progress)
    one = seen.audited
    result = draft.draft(
        module, one.records, clock, temp_root, one.set_by_tests, no_coverage=one.no_coverage
    )
    pinfile.parse(result.text.encode("utf-8"), "the draft", root)  # the draft validates
    return result, seen.failed


def _run(
    root: Path, module: str, environ: Mapping[str, str], progress: Callable[[str], None] | None
) -> tuple[HostInfo, bool]:
    """One host A run of `module` with the audit, under a provisional manifest that pins TZ
    as the draft would (so a module that sets TZ itself shows, in pins_applied); and whether
    pytest-cov failed the run on the project's coverage threshold (the module alone misses
    it: the gate must run without coverage)."""
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
                progress=progress,
            )
        )
        log = Path(scratch, "out", PYTEST_LOG)
        coverage = log.is_file() and COVERAGE_FAIL in log.read_text("utf-8", "replace")
    if info.audit is None:
        raise GateError(f"{module}: the live-entropy audit did not report ({failed(info)})")
    return info, coverage and info.returncode == 1


def failed(info: HostInfo, coverage: bool = False) -> str:
    """Why the audited run did not pass, if it did not; a TZ the tests set is no failure, nor
    a coverage threshold the draft turns off."""
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
