"""The demo: the seed's invoice example in a scratch git repo, one patch per row of the table."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from entropy_action.core import git
from entropy_action.core.errors import GateError
from entropy_action.gate import local
from entropy_action.render import phrases
from entropy_action.verdict.model import Verdict

DATA = Path(__file__).parent / "demo_data"
# Bytecode and tool caches a run beside the data may have left in it: never copied into a demo
# repository (a committed `__pycache__/` would be a tracked file the next run deletes).
CACHES = shutil.ignore_patterns(*git.CACHE_DIRS, ".hypothesis")
DAY = 86_400


@dataclass(frozen=True)
class Patch:
    name: str
    expected: str
    story: str
    environ: Mapping[str, str]  # what the developer's shell exports while the gate runs


@dataclass(frozen=True)
class Row:
    patch: Patch
    verdict: Verdict

    @property
    def matches(self) -> bool:
        return self.verdict.classification == self.patch.expected


def patches() -> list[Patch]:
    raw = json.loads((DATA / "patches.json").read_text(encoding="utf-8"))
    return [Patch(p["name"], p["expected"], p["story"], dict(p.get("environ", {}))) for p in raw]


def run_demo(
    workdir: Path,
    environ: Mapping[str, str],
    clock_unix: int,
    only: str | None = None,
    progress: Callable[[str], None] = lambda line: None,
    on_patch: Callable[[Patch], None] = lambda patch: None,
    on_row: Callable[[Row], None] = lambda row: None,
) -> list[Row]:
    """Build one scratch repo per patch under `workdir`, gate it, and return the rows."""
    if shutil.which("git") is None:
        raise GateError("demo: git is not on PATH; the demo builds a scratch git repository")
    chosen = [p for p in patches() if only in (None, p.name)]
    if not chosen:
        names = ", ".join(p.name for p in patches())
        raise GateError(f"demo: no patch named {only!r} (one of: {names})")
    rows = []
    for patch in chosen:
        on_patch(patch)
        repo = workdir / patch.name
        base = build_base(repo, clock_unix=clock_unix // DAY * DAY, temp_root=workdir / "tmp")
        apply_patch(repo, patch)
        settings = local.GateSettings(
            manifest=repo / "entropy.yaml",
            base_ref=base,
            environ={**environ, **patch.environ},
            out=workdir / f"{patch.name}-reports",
            progress=_prefixed(progress, patch.name),
        )
        rows.append(Row(patch, local.run_gate(settings).verdict))
        on_row(rows[-1])
    return rows


def _prefixed(progress: Callable[[str], None], name: str) -> Callable[[str], None]:
    return lambda line: progress(f"{name}: {line}")


WIDTH = 16  # the longest patch name (detects-pytest) and two spaces


def render_header() -> str:
    return f"{'patch':<{WIDTH}}{'expected':<22}{'got':<22}".rstrip() + "\n"


def render_row(row: Row) -> str:
    got = row.verdict.classification
    mark = "ok" if row.matches else "MISMATCH"
    return f"{row.patch.name:<{WIDTH}}{row.patch.expected:<22}{got:<22}{mark}\n" + _source(row)


# The exits an agent takes past the classic rules (issue 20): the row names the one it took.
EXITS = frozenset(
    {"unit_replaced", "report_tampering", "hook_added", "gate_pin_read", "live_read_removed",
     "live_read_constant", "assertion_broadened", "test_detection"}
)  # fmt: skip
# What only the strength check sees (issue 35's test side): named when nothing else rejects.
STRENGTH = frozenset({"test_changed_to_pass", "weakened_property"})


def _source(row: Row) -> str:
    """Under the row: the first live read the audit found, the exit the patch took, what
    the failure follows, and the pair of an order-dependent failure."""
    live = [f for f in row.verdict.findings if f.kind == "live_entropy"]
    exits = [f for f in row.verdict.findings if f.kind in EXITS and f.level == "error"]
    rejecting = [f for f in row.verdict.findings if f.level == "error" and f.introduced]
    if not exits and rejecting and all(f.kind in STRENGTH for f in rejecting):
        exits = [f for f in rejecting if f.kind == "test_changed_to_pass"]
    lines = [f"{'':<{WIDTH}}↳ {finding.render()}" for finding in (*live[:1], *exits[:1])]
    if row.verdict.coupled_to:
        lines.append(f"{'':<{WIDTH}}↳ coupled to: {', '.join(row.verdict.coupled_to)}")
    lines += [f"{'':<{WIDTH}}↳ {phrases.order_pair(pair)}" for pair in row.verdict.order_dependence]
    return "".join(line + "\n" for line in lines)


def render_total(rows: list[Row]) -> str:
    matched = sum(row.matches for row in rows)
    return f"{matched} of {len(rows)} rows match\n"


def render(rows: list[Row]) -> str:
    """The table: patch, expected, got."""
    return render_header() + "".join(render_row(r) for r in rows) + render_total(rows)


def build_base(repo: Path, *, clock_unix: int, temp_root: Path) -> str:
    """The invoice example as the base commit; the clock pin is today's midnight (UTC)."""
    if repo.exists():
        shutil.rmtree(repo)
    shutil.copytree(DATA / "base", repo, ignore=CACHES)
    _fill_manifest(repo / "entropy.yaml", clock_unix, temp_root / repo.name)
    git.init(repo)
    return git.commit_all(repo, "invoice example with its pins")


def apply_patch(repo: Path, patch: Patch) -> str:
    shutil.copytree(DATA / "patches" / patch.name, repo, dirs_exist_ok=True, ignore=CACHES)
    manifest = repo / "entropy.yaml"
    text = manifest.read_text(encoding="utf-8")
    if "{clock_unix}" in text:  # the patch brought its own manifest: same clock and temp root
        base = (git.show(repo, "HEAD", "entropy.yaml") or b"").decode("utf-8")
        clock = _field(base, "clock_unix")
        manifest.write_text(
            text.replace("{clock_unix}", clock).replace("{temp_root}", _field(base, "temp_root")),
            encoding="utf-8",
        )
    return git.commit_all(repo, f"patch: {patch.name} — {patch.story}")


def _fill_manifest(path: Path, clock_unix: int, temp_root: Path) -> None:
    text = path.read_text(encoding="utf-8")
    text = text.replace("{clock_unix}", str(clock_unix)).replace("{temp_root}", str(temp_root))
    path.write_text(text, encoding="utf-8")


def _field(manifest_text: str, key: str) -> str:
    for line in manifest_text.splitlines():
        name, _, value = line.strip().partition(":")
        if name == key:
            return value.strip()
    raise GateError(f"demo: the base manifest has no {key}")
