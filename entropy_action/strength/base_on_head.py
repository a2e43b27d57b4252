"""The base ref's test side against the head's code: tests the patch made pass by changing
the test instead of the code.

The head's tree is copied aside, the base's property module is written in place of the
head's and the rest of the base's closure (scan.closure: conftests, helpers, data files,
pytest's configuration) in place of the head's, and that copy runs on host A under the
head's pins. A test that fails there, by any
exception (an assertion, a ValueError, a setup error), and passes with the head's module on
the same code (host A's own run) was made to pass by the patch's change to the test: a
`test_changed_to_pass` finding naming the test and the failure. Two failures are not
(unmeasured.py): a TypeError from a production function whose parameters the patch changed
and whose calls the head's test changed with it (a note), and a name the base's test imports
or uses that the patch renamed or removed, or a module that no longer collects — the check
cannot measure those, and says so (`Judged.unmeasured`), which under the manifest's strength
constraints makes the verdict invalid. Nothing runs when the patch left the closure unchanged.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from entropy_action.core import git
from entropy_action.core.errors import GateError
from entropy_action.core.findings import Finding
from entropy_action.evidence import basecache, inputs, junitcases
from entropy_action.evidence.junitcases import TestCase
from entropy_action.hosts import environments, isolate, launch, runsettings
from entropy_action.manifest.baseline import PinCheck
from entropy_action.scan import closure
from entropy_action.scan.runtime import DefinedTest, Generated, bare_id
from entropy_action.strength import evidence, renames
from entropy_action.strength.unmeasured import Patched

OUT = "base-on-head"
NOTHING_PATCHED = Patched()
_WHERE = re.compile(r" \((?:/|[A-Za-z]:\\)[^()]*\)$")  # ImportError's "(/path/to/module.py)"
MAX_SHOWN = 160
REVIEWED = (
    "a property that really was wrong is changed in a reviewed change of its own, like a "
    "cassette rotation, not in the patch that needs it green"
)


@dataclass(frozen=True)
class Plan:
    """What the run needs: the head tree, the module path there, the base's module and the
    rest of the base's test side where it differs from the head's."""

    root: Path
    module: str  # repository-relative, at the head
    base_module: bytes  # as run: its imports of names the patch renamed point at the new ones
    head_module: bytes = b""
    renamed: tuple[renames.Rename, ...] = ()  # what `base_module` was rewritten for
    # the base's bytes of each other file of the closure the patch changed (None: absent at
    # the base, so removed from the copy)
    side: tuple[tuple[str, bytes | None], ...] = ()
    digest: str = ""  # the base's closure (scan.closure.Closure.digest)
    links: frozenset[str] = frozenset()  # side files that are symbolic links at the base

    @property
    def side_paths(self) -> tuple[str, ...]:
        return tuple(path for path, _ in self.side)


@dataclass(frozen=True)
class HostSettings:
    """How the host runs for this check (the caller's environment, namespaces, progress):
    host A (the strength step), or host B (`host="b"`: the same run under host B's
    variations, where a defect only host B shows can be hidden by a changed test)."""

    environ: Mapping[str, str]
    namespaces: bool = True
    progress: Callable[[str], None] | None = None
    python: str | None = None  # the host's interpreter (default: this one)
    cache_dir: Path | None = None  # the evidence cache (None: neither reuse nor keep runs)
    host: Literal["a", "b"] = "a"


def plan(check: PinCheck, data: Sequence[str] = ()) -> Plan | None:
    """The run to make, or None when there is nothing to compare (no base, or the patch
    left the property's closure as it was). `data`: the closure's data files host A's
    tests opened (scan.closure.data_files)."""
    if check.head is None or check.base is None or check.base_commit is None:
        return None
    module = check.head.manifest.module
    base_bytes = git.show(check.root, check.base_commit, check.base.manifest.module)
    try:
        head_bytes: bytes | None = (check.root / module).read_bytes()
    except OSError:
        head_bytes = None
    if base_bytes is None:
        return None
    found = closure.between(
        closure.Revisions(
            check.root,
            check.base_commit,
            check.base.manifest.module,
            module,
            check.staged,
            tuple(check.head.manifest.run.pytest_args),
        ),
        data,
    )
    if base_bytes == head_bytes and not found.side_changed:
        return None
    renamed = renames.find(check.root, check.base_commit, base_bytes, head_bytes or b"")
    side: list[tuple[str, bytes | None]] = []
    side_renamed: tuple[renames.Rename, ...] = ()
    for path in found.side_changed:  # the test side's other files, with the same rewrites
        text = found.base[path]
        if text is not None and path.endswith(".py") and path not in found.links:
            head_side = renames.read(check.root / path) or b""
            more = renames.find(check.root, check.base_commit, text, head_side, where=path)
            text, side_renamed = renames.apply(text, more), (*side_renamed, *more)
        side.append((path, text))
    return Plan(
        check.root,
        module,
        renames.apply(base_bytes, renamed),
        head_bytes or b"",
        (*renamed, *side_renamed),
        tuple(side),
        found.digest,
        found.links,
    )


def write_side(tree: Path, the_plan: Plan) -> None:
    """The base's test side into a copy of the head's tree: its module in place of the
    head's, each other changed file of its closure as the base had it (or removed)."""
    write_files(tree, ((the_plan.module, the_plan.base_module), *the_plan.side), the_plan.links)


def write_files(
    tree: Path, files: Iterable[tuple[str, bytes | None]], links: frozenset[str] = frozenset()
) -> None:
    """Each (repository-relative path, bytes) into the copy `tree`; None removes the file, a
    path in `links` becomes a symbolic link to its bytes. A path that leads out of the copy
    through a symbolic link is replaced, never followed."""
    for path, data in files:
        target = tree / path
        if target.is_symlink():
            target.unlink()
        if not target.parent.resolve().is_relative_to(tree.resolve()):
            continue  # a folder on the way is a link out of the copy: nothing is written
        if data is None:
            target.unlink(missing_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.unlink(missing_ok=True)
        if path in links:
            target.symlink_to(os.fsdecode(data))
        else:
            target.write_bytes(data)


def run(
    the_plan: Plan, check: PinCheck, host: HostSettings, out: Path, exclude: tuple[Path, ...] = ()
) -> Path:
    """Run the base's test side against a copy of the head's tree on the host; the report
    dir. The copy leaves out `out` and the `exclude`d folders (the gate's own output). A
    run of the same copy (the head's files with the base's test side written in, digested
    as it runs) under the same manifest and interpreter comes from the evidence cache."""
    assert check.head is not None
    folder = host.cache_dir
    cache = basecache.EvidenceCache(folder, entries=basecache.BASE_ON_HEAD) if folder else None
    key = _cache_key(the_plan, check, host, (out, *exclude)) if cache is not None else None
    if cache is not None and key is not None:
        hit, notes = cache.restore(key, out / OUT)
        for note in notes:
            _say(host, note)
        if hit:
            _say(host, f"the base's test side on the head's code: reused ({key.digest[:12]})")
            return out / OUT
    _run(the_plan, check, host, out, exclude)
    if cache is not None and key is not None:
        for note in cache.store(key, out / OUT):
            _say(host, note)
    return out / OUT


def _cache_key(
    the_plan: Plan, check: PinCheck, host: HostSettings, exclude: tuple[Path, ...]
) -> basecache.CacheKey | None:
    assert check.head is not None
    written = {the_plan.module: the_plan.base_module, **dict(the_plan.side)}
    left_out = (*exclude, *environments.environments(the_plan.root))  # as copy_tree does
    try:
        tree = inputs.tree_digest(the_plan.root, left_out, written)
        return basecache.base_on_head_key(
            tree=tree,
            closure=the_plan.digest,
            manifest_sha256=check.head.sha256,
            python=host.python,
            host=host.host,
        )
    except GateError as exc:
        _say(host, f"the base's test side is not cached: {exc.message}")
        return None


def _say(host: HostSettings, line: str) -> None:
    if host.progress is not None:
        host.progress(line)


def _run(
    the_plan: Plan, check: PinCheck, host: HostSettings, out: Path, exclude: tuple[Path, ...]
) -> None:
    assert check.head is not None
    with tempfile.TemporaryDirectory(prefix="entropy-gate-base-on-head-") as scratch:
        tree = Path(scratch) / "tree"
        isolate.copy_tree(the_plan.root, tree, exclude=(out, *exclude))
        write_side(tree, the_plan)
        launch.run_host(
            runsettings.RunSettings(
                host=host.host,
                out=out / OUT,
                root=tree,
                loaded=check.head,
                environ=host.environ,
                isolate=host.host == "b",
                namespaces=host.namespaces,
                progress=host.progress,
                python=host.python,
                count_assertions=False,  # only the outcomes are compared here
                checkout=the_plan.root,  # the copy's code, not the checkout's (editable install)
            )
        )


@dataclass(frozen=True)
class Judged:
    """What the run of the base's module on the head's code shows."""

    findings: tuple[Finding, ...] = ()
    notes: tuple[str, ...] = ()  # failures that say nothing (a changed signature, its calls)
    unmeasured: tuple[str, ...] = ()  # why tests of the base could not be measured at all


def judge(
    head: Iterable[TestCase],
    base_on_head: Iterable[TestCase],
    tests: Sequence[DefinedTest],
    errors: Sequence[str] = (),
    patched: Patched = NOTHING_PATCHED,
    side: Sequence[str] = (),
) -> Judged:
    """One finding per test that failed with the base's module and passed, or was skipped,
    with the head's, on the same code (pure): the cases of host A's run and of the run of
    the base's module, the tests the head's module defines, the run's collection `errors`,
    what the patch changed (unmeasured.patched) and the other files of the closure it
    changed (`side`: the base's ran there too). A skip counts as green: the base's test says
    the code is wrong, and the head's stopped asking."""
    generated = Generated(tests)  # a generated case pairs by what it is, not its index
    heads = list(junitcases.merge(head).values())
    outcomes = {
        key: case.outcome
        for (_, key), case in zip(generated.cases(c.id for c in heads), heads, strict=True)
    }
    defined = {f"{t.path}::{t.name}": t for t in tests}
    found: dict[str, Finding] = {}
    notes: dict[str, str] = {}
    lost = [collection_error(error, side) for error in errors]
    bases = list(junitcases.merge(base_on_head).values())
    for (name, key), case in zip(generated.cases(c.id for c in bases), bases, strict=True):
        if case.outcome not in evidence.FAILING or name in found:
            continue
        test = defined.get(name)
        shown = _first_line(case.message or "")
        label = test.name if test is not None else name.rpartition(".py::")[2] or name
        failure = evidence.decide(label, case.message or "", outcomes.get(key), patched)
        if failure.kind == "no_evidence":
            continue
        if failure.kind == "excused" and failure.double:
            notes[name] = (
                f"the base's {label} fails on the head's code ({shown}): the patch changed "
                f"only the parameters of the test double {failure.name}() for what production "
                f"now passes it, and left {label} as it was — not counted"
            )
            continue
        if failure.kind == "excused":
            notes[name] = (
                f"the base's {label} fails on the head's code ({shown}): the patch changed "
                f"the parameters of {failure.name}() and the head's {label} calls it "
                "differently, so the base's test cannot call it — not counted"
            )
            continue
        if failure.kind == "unmeasured":
            lost.append(
                f"the base's {label} cannot run on the head's code ({shown}): the patch "
                f"renamed or removed {failure.name}, which it uses"
            )
            continue
        what, changing = _changed_words(side)
        found[name] = Finding(
            kind="test_changed_to_pass",
            path=test.path if test is not None else (case.path or name.partition("::")[0]),
            line=test.line if test is not None else (case.line or 1),
            message=f"property {label} fails with the base's {what} on the head's code "
            f"({shown}) and {_green(outcomes[key])} with the head's{_named(side)}: the "
            f"patch made it {'pass' if outcomes[key] == 'passed' else 'go quiet'} by "
            f"changing {changing}, not the code — {REVIEWED}",
            test=label,
        )
    return Judged(tuple(found.values()), tuple(notes.values()), tuple(dict.fromkeys(lost)))


def passing(base_on_head: Iterable[TestCase]) -> frozenset[str]:
    """The base's tests (`Class::test`) every case of which passed on the head's code."""
    outcomes: dict[str, set[str]] = {}
    for case in junitcases.merge(base_on_head).values():
        name = bare_id(case.id).partition("::")[2]
        outcomes.setdefault(name, set()).add(case.outcome)
    return frozenset(name for name, seen in outcomes.items() if name and seen == {"passed"})


def collection_error(error: str, side: Sequence[str] = ()) -> str:
    """A collection error of the base's module (its test side, when the patch changed more
    of it: a conftest that cannot import fails the module too) on the head's code."""
    lines = [line.strip() for line in error.splitlines() if line.strip()]
    cause = next((line[1:].strip() for line in reversed(lines) if line.startswith("E ")), None)
    cause = _WHERE.sub("", cause) if cause else None  # the scratch copy's path, not the tree's
    shown = _first_line(cause or (lines[0] if lines else "collection failure"))
    return (
        f"the base's {_changed_words(side)[0]} cannot be collected against the head's code "
        f"({shown}): none of its tests could be measured"
    )


def _changed_words(side: Sequence[str]) -> tuple[str, str]:
    """How the finding names what ran: the base's module, or its whole test side."""
    return ("module", "the test") if not side else ("test side", "what the test reads")


def _named(side: Sequence[str]) -> str:
    if not side:
        return " module"
    shown = ", ".join(side[:3]) + (f" and {len(side) - 3} more" if len(side) > 3 else "")
    return f" (the patch changed {shown})"


def _green(outcome: str) -> str:
    return "passes" if outcome == "passed" else "is skipped"


def _first_line(message: str) -> str:
    line = message.strip().splitlines()[0] if message.strip() else "failed"
    return line if len(line) <= MAX_SHOWN else line[: MAX_SHOWN - 1] + "…"
