"""Where mutants run: copies of the head's tree with the base's module beside the head's, one
per worker, and lean pytest processes under the pins that report through the probe.

A run is `python -m pytest HEAD_MODULE BASE_MODULE [node ids]` in one copy, with the pinned
environment (TZ, LANG, seed, clock, `env`, cassette, PYTHONHASHSEED) and the manifest's
`run.pytest_args`; a pinned `temp_root` becomes a fresh private directory per worker (two
runs never share one). Both modules run in one process, so a mutant costs one start-up.

The gate's own plugin (plugin.py) loads first, as on host A: it seeds each test from the
same per-test seed as the host runs (a base test under the id it has in the base run), and
its copy-first finder makes the test process import the code under test from the copy,
also when an editable install points at the checkout (a src layout). Its imports report is
read after every run: code imported from the checkout means the mutants were not what ran,
and the run says so (`Outcome.outside`) instead of counting them as survivors.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Literal

from entropy_action.core.errors import GateError
from entropy_action.hosts import environments, isolate, launch, pinsseen, temproot, testfiles
from entropy_action.manifest.pinfile import LoadedManifest
from entropy_action.strength import base_on_head
from entropy_action.testproc import protocol
from entropy_action.testproc.protocol import PROBE_ENV, PROBE_MODULE

MAX_REPORT = 8 << 20
MAX_MESSAGE = 300  # characters of a failure's first line (the probe cuts there too)
GRACE = 5.0  # seconds a session may take past its budget to stop and write what it has
DROPPED = frozenset({*launch.DROPPED_ON_A, *protocol.GATE_ENV})  # the gate's own, set here


@dataclass(frozen=True)
class Outcome:
    """What one run reported: outcome per node id and, when traced, functions per test."""

    outcomes: dict[str, str]
    reached: dict[str, list[tuple[str, int]]]
    timed_out: bool = False
    outside: Imports | None = None  # the code under test came from outside the copy
    durations: dict[str, float] = field(default_factory=dict)  # seconds per node id
    confirmed: bool = False  # the child also ran the spec's `confirm` tests
    whole: bool = False  # the run held the `whole` modules whole (they were small enough)
    messages: dict[str, str] = field(default_factory=dict)  # node id -> its failure's first line


@dataclass(frozen=True)
class Spec:
    """One mutant for a session: its code, the tests to run, and when to stop it."""

    id: str
    path: str
    function: str  # qualified name
    first: int  # the function's first line
    source: str  # the whole mutated file
    select: list[str]
    timeout: float
    until_killed: bool = False  # stop at the first test that does not pass
    confirm: tuple[str, ...] = ()  # run until killed where the two `sides` disagree
    sides: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    confirm_timeout: float = 0.0


@dataclass(frozen=True)
class Imports:
    """Files of the checkout a run imported instead of the copy's, and whether the plugin
    loaded too late to redirect them (`early`: their top-level names)."""

    files: tuple[str, ...]
    early: tuple[str, ...] = ()

    def reason(self) -> str:
        if self.early:
            return (
                f"{', '.join(self.early)} imported by pytest itself before the gate's plugin "
                f"loaded, from the checkout ({self.files[0]}): mutants of the copy cannot run; "
                "install the project non-editable (pip install .) in the interpreter host A uses"
            )
        more = len(self.files) - 3
        return (
            "the code under test was imported from the checkout, not the mutants' copy: "
            + ", ".join(self.files[:3])
            + (f" and {more} more" if more > 0 else "")
        )


@dataclass(frozen=True)
class Workspace:
    """One worker's copy of the tree, and how to start pytest in it."""

    tree: Path
    head_module: str
    base_module: str
    env: dict[str, str]
    options: tuple[str, ...]
    python: str
    scratch: Path

    def run(
        self,
        selection: Sequence[str],
        timeout: float,
        watch: Sequence[str] = (),
        only: Sequence[str] | None = None,
        whole: Sequence[str] = (),
        whole_max: int = 0,
    ) -> Outcome:
        """pytest on `selection` (node ids or the two modules), the probe watching `watch`;
        with `only`, the tests (bare ids) of the selection that run, and every test of the
        modules of `whole` when they hold at most `whole_max` tests."""
        report = self.scratch / protocol.PROBE_REPORT_FILE
        report.unlink(missing_ok=True)
        config = self.scratch / protocol.PROBE_CONFIG_FILE
        probe: dict[str, object] = {
            "report": str(report),
            "root": str(self.tree),
            "watch": list(watch),
        }
        if only is not None:
            probe["only"] = list(only)
            probe["whole"] = list(whole)
            probe["whole_max"] = whole_max
        config.write_text(json.dumps(probe), encoding="utf-8")
        tmp = self.scratch / "tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        argv = [self.python, "-m", "pytest", *selection, *self.options]
        env = {**self.env, PROBE_ENV: str(config)}
        env.update({k: str(tmp) for k in ("TMPDIR", "TEMP", "TMP") if k in self.env})
        self.imports.unlink(missing_ok=True)
        timed_out = _execute(argv, self.tree, env, timeout, self.scratch / "pytest.log")
        return replace(_read(report, timed_out), outside=self.outside())

    def trees(self) -> tuple[Path, ...]:
        """The copies a mutant is written into when it runs alone (paired.py: two)."""
        return (self.tree,)

    @property
    def imports(self) -> Path:
        return self.scratch / protocol.IMPORTS_FILE

    def outside(self) -> Imports | None:
        """What the last run imported from the checkout instead of this copy (the plugin's
        report, read as untrusted data), or None."""
        found = pinsseen.read_imports(self.imports)
        files = tuple(found["outside"])
        return Imports(files, tuple(found["early"])) if files else None

    def run_mutants(self, batch: Sequence[Spec], budget: float) -> dict[str, Outcome | None]:
        """Each mutant in a forked child of one session that stops at `budget` seconds; per
        id its outcome, None when it could not be applied (run it alone), absent when the
        budget ran out first. A mutant that stops at its first kill runs as one child per
        module: a kill in the head's module says nothing about the base's."""
        parts = {spec.id: per_module(spec) for spec in batch}
        return joined(parts, self._children([p for specs in parts.values() for p in specs], budget))

    def _children(self, batch: Sequence[Spec], budget: float) -> dict[str, Outcome | None]:
        results = self.scratch / "mutants"
        shutil.rmtree(results, ignore_errors=True)
        results.mkdir()
        config = self.scratch / protocol.PROBE_CONFIG_FILE
        spec = [
            {
                "id": m.id,
                "path": m.path,
                "function": m.function,
                "first": m.first,
                "source": m.source,
                "select": m.select,
                "timeout": m.timeout,
                "until_killed": m.until_killed,
                "confirm": list(m.confirm),
                "sides": [list(side) for side in m.sides],
                "confirm_timeout": m.confirm_timeout,
            }
            for m in batch
        ]
        config.write_text(
            json.dumps(
                {
                    "root": str(self.tree),
                    "mutants": spec,
                    "budget": budget,
                    "results_dir": str(results),
                }
            ),
            encoding="utf-8",
        )
        selection = list(dict.fromkeys(n for m in batch for n in (*m.select, *m.confirm)))
        argv = [self.python, "-m", "pytest", *selection, *self.options]
        env = {**self.env, PROBE_ENV: str(config)}
        tmp = self.scratch / "tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        env.update({k: str(tmp) for k in ("TMPDIR", "TEMP", "TMP") if k in self.env})
        self.imports.unlink(missing_ok=True)
        _execute(argv, self.tree, env, budget + GRACE, self.scratch / "pytest.log")
        outside = self.outside()
        found = {m.id: _mutant_result(results / f"{m.id}.json") for m in batch}
        return {
            i: result if result is None else replace(result, outside=outside)
            for i, result in found.items()
            if result is not False
        }


def per_module(spec: Spec) -> list[Spec]:
    """`spec` as one spec per module its selection holds where it stops at its first kill
    (ids `ID.0`, `ID.1`); else as it is."""
    modules = list(dict.fromkeys(n.split("::", 1)[0] for n in spec.select))
    if not spec.until_killed or spec.confirm or len(modules) < 2:
        return [spec]
    return [
        replace(
            spec, id=f"{spec.id}.{i}", select=[n for n in spec.select if n.startswith(f"{m}::")]
        )
        for i, m in enumerate(modules)
    ]


def joined(
    parts: Mapping[str, Sequence[Spec]], found: Mapping[str, Outcome | None]
) -> dict[str, Outcome | None]:
    """Each mutant's outcome from its parts' (`parts`: id -> the specs it ran as): absent where
    a part did not run (the budget ran out first), None where a part could not be applied."""
    out: dict[str, Outcome | None] = {}
    for mutant, specs in parts.items():
        got = [found.get(spec.id, False) if spec.select else Outcome({}, {}) for spec in specs]
        if any(part is False for part in got):
            continue
        outcomes = [part for part in got if isinstance(part, Outcome)]
        out[mutant] = merge(outcomes) if len(outcomes) == len(got) else None
    return out


def merge(found: Sequence[Outcome]) -> Outcome:
    """Runs' reports as one run's (their node ids differ by module path)."""
    if not found:
        return Outcome({}, {})
    if len(found) == 1:
        return found[0]
    return Outcome(
        outcomes={k: v for o in found for k, v in o.outcomes.items()},
        reached={k: v for o in found for k, v in o.reached.items()},
        timed_out=any(o.timed_out for o in found),
        outside=next((o.outside for o in found if o.outside is not None), None),
        durations={k: v for o in found for k, v in o.durations.items()},
        confirmed=all(o.confirmed for o in found),
        whole=found[0].whole,
        messages={k: v for o in found for k, v in o.messages.items()},
    )


def _mutant_result(path: Path) -> Outcome | Literal[False] | None:
    """The child's result; None: not applied; False: no result (not run)."""
    try:
        if path.stat().st_size > MAX_REPORT:
            return False
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return False
    if not isinstance(data, dict):
        return False
    if not data.get("applied"):
        return None
    raw = data.get("outcomes")
    outcomes = {
        str(k): v
        for k, v in (raw.items() if isinstance(raw, dict) else ())
        if v in ("passed", "failed", "error", "skipped")
    }
    return Outcome(
        outcomes, {}, bool(data.get("timed_out")), confirmed=data.get("confirmed") is True
    )


def base_path(head_module: str) -> str:
    """Where the base's module sits in a workspace: beside the head's, under another name."""
    pure = PurePosixPath(head_module)
    return str(pure.with_name(f"{pure.stem}_entropy_base{pure.suffix}"))


def workspace(
    root: Path,
    loaded: LoadedManifest,
    base_module: bytes,
    environ: Mapping[str, str],
    scratch: Path,
    exclude: tuple[Path, ...] = (),
    python: str | None = None,
    side: Sequence[tuple[str, bytes | None]] = (),
    links: frozenset[str] = frozenset(),
) -> Workspace:
    """Copy the head's tree into `scratch`, the base's module beside the head's (and `side`,
    the base's other files of the test side, in place of the head's: paired.py); pytest runs
    under `python` (host A's interpreter), the gate's plugin and the probe loaded."""
    manifest = loaded.manifest
    tree = scratch / "tree"
    isolate.copy_tree(root, tree, exclude=exclude)
    base_on_head.write_files(tree, side, links)
    base_module_path = base_path(manifest.module)
    (tree / base_module_path).write_bytes(base_module)
    probe_dir = testfiles.install(scratch, protocol.PROBE_FOLDER)  # probe, plugin, protocol
    pins = manifest.pins
    cassette = str(tree / pins.cassette) if pins.cassette else None
    temp = str(scratch / "tmp") if pins.temp_root else None
    env = {k: v for k, v in environ.items() if k not in DROPPED}
    pinsseen.set_pinned(env, pinsseen.pinned_environ(pins, temp, cassette))
    old = env.get(protocol.PATH_ENV)
    env[protocol.PATH_ENV] = os.pathsep.join([str(probe_dir), *([old] if old else [])])
    env[protocol.GATE_HOST_ENV] = "a"  # the user's seams plugin is active, as on host A
    plugin = _plugin_config(root, tree, scratch, pins.rng_seed, {base_module_path: manifest.module})
    env[protocol.PLUGIN_ENV] = str(plugin)
    options = (
        *manifest.run.pytest_args,
        *("-p", protocol.PLUGIN_MODULE, "-p", PROBE_MODULE, "-p", "no:cacheprovider"),
        *protocol.BLOCKED_PLUGINS,
        *("--rootdir=.", "-q", "-o", "console_output_style=classic"),
    )
    interpreter = launch.resolve_python(python)
    return Workspace(tree, manifest.module, base_module_path, env, options, interpreter, scratch)


def _plugin_config(
    root: Path, tree: Path, scratch: Path, pinned_seed: int | None, seed_ids: dict[str, str]
) -> Path:
    """The gate's plugin as on host A (its seed, a private hypothesis database), importing
    the code under test from `tree` where it would come from the checkout `root`."""
    config = {
        "host": "a",
        "report": str(scratch / "plugin-report.json"),
        "rng_seed": launch.rng_seed(pinned_seed, None),
        "hypothesis_dir": str(scratch / protocol.HYPOTHESIS_DIR),
        "tree": str(tree.absolute()),
        "checkouts": [str(path) for path in environments.checkouts(tree, root)],
        "environments": [str(path) for path in environments.environments(root)],
        "imports_report": str(scratch / protocol.IMPORTS_FILE),
        "seed_ids": seed_ids,
        "urandom_from_seed": True,  # both modules' tests draw the same bytes (plugin.py)
    }
    path = scratch / protocol.PLUGIN_CONFIG_FILE
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def scratch_dir(loaded: LoadedManifest) -> Path:
    parent = temproot.scratch_parent(loaded.manifest.pins.temp_root)
    return Path(tempfile.mkdtemp(prefix="entropy-gate-mutants-", dir=parent))


def _execute(argv: list[str], cwd: Path, env: dict[str, str], timeout: float, log: Path) -> bool:
    """Run to the end (False) or kill the process group at the timeout (True)."""
    with open(log, "wb") as out:
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            raise GateError(f"mutation run: cannot start {argv[0]}: {exc}") from None
        try:
            proc.wait(timeout=timeout)
            return False
        except subprocess.TimeoutExpired:
            return True
        finally:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _read(report: Path, timed_out: bool) -> Outcome:
    """The probe's report, as untrusted data: size-capped, every field type-checked."""
    try:
        if report.stat().st_size > MAX_REPORT:
            return Outcome({}, {}, timed_out)
        data = json.loads(report.read_bytes())
    except (OSError, ValueError):
        return Outcome({}, {}, timed_out)
    outcomes_raw = data.get("outcomes") if isinstance(data, dict) else None
    reached_raw = data.get("reached") if isinstance(data, dict) else None
    outcomes = {
        str(k): v
        for k, v in (outcomes_raw.items() if isinstance(outcomes_raw, dict) else ())
        if isinstance(v, str) and v in ("passed", "failed", "error", "skipped")
    }
    durations_raw = data.get("durations") if isinstance(data, dict) else None
    durations = {
        str(k): float(v)
        for k, v in (durations_raw.items() if isinstance(durations_raw, dict) else ())
        if isinstance(v, (int, float)) and v >= 0
    }
    reached: dict[str, list[tuple[str, int]]] = {}
    for test, found in (reached_raw or {}).items() if isinstance(reached_raw, dict) else ():
        if isinstance(found, list):
            reached[str(test)] = [
                (str(item[0]), item[1])
                for item in found
                if isinstance(item, list) and len(item) == 2 and isinstance(item[1], int)
            ]
    whole = isinstance(data, dict) and data.get("whole") is True
    messages_raw = data.get("messages") if isinstance(data, dict) else None
    messages = {
        str(k): v[:MAX_MESSAGE]
        for k, v in (messages_raw.items() if isinstance(messages_raw, dict) else ())
        if isinstance(v, str) and k in outcomes
    }
    return Outcome(
        outcomes, reached, timed_out, durations=durations, whole=whole, messages=messages
    )
