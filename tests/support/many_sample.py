"""A pull request on a repository whose entropy.yaml lists 20 properties (issue 21's legs).

Tiny modules over one library (`calc.py`), in three session groups: p01-p12 under the shared
pins, p13-p16 with their own time zone, p17-p20 with their own RNG seed. The base commit is
on main; the head (`fix`) adds a skip to one test of p03's module, which the gate must reject
and name. A second manifest, lostleg.yaml, lists the same modules as q01-q20 (a second
caller in the same act run needs artifact names of its own). Used by the act end-to-end
test (tests/e2e/test_e2e_legs.py) and by bench/bench_workflow.py --properties.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.support import e2e_kit

IDS = tuple(f"p{i:02d}" for i in range(1, 21))
SKIPPED = "p03"  # the property whose module the head skips a test of
PARIS = IDS[12:16]  # their own tz
SEEDED = IDS[16:]  # their own rng_seed


SINGLE = """\
version: 1
property_id: p01
module: tests/test_p01.py
pins:
  clock_unix: 1700000000
  rng_seed: 11
  tz: UTC
run:
  pytest_args: ["-o", "addopts=", "-q", "-p", "no:cacheprovider"]
"""  # one of the properties in the one-property form (bench/bench_workflow.py --properties)


def manifest(prefix: str = "p") -> str:
    lines = [
        "version: 1",
        "pins:",
        "  clock_unix: 1700000000",
        "  rng_seed: 11",
        "  tz: UTC",
        "run:",
        '  pytest_args: ["-o", "addopts=", "-q", "-p", "no:cacheprovider"]',
        "properties:",
    ]
    for pid in IDS:
        lines += [f"  - property_id: {prefix}{pid[1:]}", f"    module: tests/test_{pid}.py"]
        if pid in PARIS:
            lines += ["    pins:", "      tz: Europe/Paris"]
        if pid in SEEDED:
            lines += ["    pins:", "      rng_seed: 42"]
    return "\n".join(lines) + "\n"


def module(pid: str, *, skipped: bool = False) -> str:
    """Two tests (three for every third property, so the legs weigh differently)."""
    number = int(pid[1:])
    marker = '@pytest.mark.skip(reason="slow on CI")\n' if skipped else ""
    extra = (
        f"\n\ndef test_three_{pid}():\n    assert add({number}, 0) == {number}\n"
        if number % 3 == 0
        else ""
    )
    return (
        "import pytest\n\nfrom calc import add\n\n\n"
        f"def test_one_{pid}():\n    assert add({number}, 1) == {number + 1}\n\n\n"
        f"{marker}def test_two_{pid}():\n    assert add(2, {number}) == {number + 2}\n{extra}"
    )


def files() -> dict[str, str]:
    found = {
        "entropy.yaml": manifest(),
        "lostleg.yaml": manifest("q"),
        "single.yaml": SINGLE,
        "calc.py": "def add(a, b):\n    return a + b\n",
        "conftest.py": (
            "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parent))\n"
        ),
    }
    found.update({f"tests/test_{pid}.py": module(pid) for pid in IDS})
    return found


@dataclass(frozen=True)
class ManySample:
    path: Path
    base: str
    head: str
    event: Path
    environ: dict[str, str]  # nothing leaked from a shell here


def _git(path: Path, *args: str) -> str:
    argv = ["git", "-C", str(path), "-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid"]
    done = subprocess.run([*argv, *args], check=True, capture_output=True, text=True)
    return done.stdout.strip()


def sample(target: Path, workflows: Path) -> ManySample:
    """The repository at `target`: base on main, the skip on `fix` (checked out), the
    remote-tracking refs, the workflows in .github/workflows and the pull_request event."""
    for name, text in files().items():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_text(text, encoding="utf-8")
    shutil.copytree(workflows, target / ".github" / "workflows")
    _git(target, "init", "-q", "-b", "main")
    _git(target, "remote", "add", "origin", f"https://github.com/{e2e_kit.OWNER_REPO}.git")
    _git(target, "add", "-A")
    _git(target, "commit", "-qm", "base: 20 properties")
    base = _git(target, "rev-parse", "HEAD")
    _git(target, "checkout", "-q", "-b", "fix")
    skipped = target / "tests" / f"test_{SKIPPED}.py"
    skipped.write_text(module(SKIPPED, skipped=True), encoding="utf-8")
    _git(target, "commit", "-qam", f"skip a slow test of {SKIPPED}")
    head = _git(target, "rev-parse", "HEAD")
    _git(target, "update-ref", "refs/remotes/origin/main", base)
    _git(target, "update-ref", "refs/remotes/origin/fix", head)
    event = target.parent / "event.json"
    payload = {
        "number": 7,
        "pull_request": {
            "number": 7,
            "head": {"ref": "fix", "sha": head},
            "base": {"ref": "main", "sha": base},
        },
        "repository": {"full_name": e2e_kit.OWNER_REPO},
    }
    event.write_text(json.dumps(payload), encoding="utf-8")
    return ManySample(target, base, head, event, {})
