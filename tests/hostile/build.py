"""Build one hostile case's workspace: a real git repository, two host reports, a secret.

Layout under the case's temp dir (TMP):

    repo/                 a git repository: the seed's entropy.yaml and property module,
                          committed as the base (branch main)
    reports/host-a, -b    a valid pair of host reports for that manifest (compare: exit 0)
    outside/secret.txt    a file outside everything, holding the secret string: inputs point
                          at it, and it must never be echoed
    home/                 $HOME
    verdict.json          where compare and gate write the verdict

Placeholders in case files and recipe strings: {TMP} {REPO} {REPORTS} {OUTSIDE} {SECRET_FILE}
{HOME} {SHA} (sha256 of the head entropy.yaml) {BASE_SHA} (the base commit) {VERDICT}.
"""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from entropy_action import __version__
from tests.hostile.generate import GENERATORS
from tests.support.helpers import SEED_MANIFEST, SEED_PROPERTY

MODULE = "tests/properties/test_invoice_total.py"
TEST_NAME = "test_invoice_total_idempotent"

VALID_JUNIT = f"""\
<?xml version="1.0" encoding="utf-8"?>
<testsuites name="pytest tests"><testsuite name="pytest" errors="0" failures="0" skipped="0" \
tests="1" time="0.01"><testcase classname="tests.properties.test_invoice_total" \
name="{TEST_NAME}" file="{MODULE}" line="4" time="0.005" /></testsuite></testsuites>
"""

FAILING_JUNIT = VALID_JUNIT.replace('failures="0"', 'failures="1"').replace(
    'time="0.005" />', 'time="0.005"><failure message="assert 1 == 2">E assert</failure></testcase>'
)


# core.variations.NAMES (this side imports the standard library only): host B's host.json
# lists every one, as `entropy-gate run --host b` writes it
DIMENSIONS = (
    "clock", "env", "network", "hostname", "path", "tz", "umask", "temp_root", "lang",
    "rng_seed", "hash_seed", "python", "test_order", "file_order", "cpu_count",
)  # fmt: skip


def variations() -> list[dict[str, Any]]:
    """Host B's variations: each varied, with a word for how."""
    return [{"dimension": name, "varied": True, "how": f"{name} varied"} for name in DIMENSIONS]


def host_json(host: str, root: str, sha: str) -> dict[str, Any]:
    """host.json as `entropy-gate run` writes it, for the seed's manifest."""
    isolated = host == "b"
    return {
        "format": 1,
        "host": host,
        "gate_version": __version__,  # this gate: its variation rules apply
        "property_id": "invoice_total_idempotent",
        "module": MODULE,
        "manifest_sha256": sha,
        "returncode": 0,
        "fingerprint": {
            "python_version": "3.11.7",
            "python_implementation": "CPython",
            "platform": "Linux-6.1-x86_64",
            "hostname_sha256": hashlib.sha256(f"host-{host}".encode()).hexdigest(),
            "runner": {},
            "locale": "C.UTF-8",
            "tz": "UTC",
            "uid": 0,
            "isolated": isolated,
        },
        "pins_applied": {"tz": "UTC", "rng_seed": 9173},
        "pins_mismatch": [],
        "started_at": "2026-01-10T00:00:00Z",
        "finished_at": "2026-01-10T00:00:01Z",
        "isolated": isolated,
        "isolation": [],
        "notes": [],
        "root": root,
        "temp_root": "/tmp/entropy-invoice",
        "pytest_args": [],
        "python": "/usr/bin/python3",
        "variations": variations() if isolated else [],
    }


@dataclass
class Workspace:
    tmp: Path
    argv: list[str]
    cwd: Path
    culprit: str
    places: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        return self.tmp / "home"

    @property
    def verdict(self) -> Path:
        return self.tmp / "verdict.json"

    def normalize(self, text: str) -> str:
        """Absolute paths of this workspace replaced by their placeholders."""
        for name, value in sorted(self.places.items(), key=lambda kv: -len(kv[1])):
            if name in ("TMP", "REPO", "REPORTS", "OUTSIDE", "HOME", "SECRET_FILE", "BASE_SHA"):
                text = text.replace(value, "{" + name + "}")
        return text


COMPARE_ARGV = [
    "compare",
    *("--host-a", "{REPORTS}/host-a", "--host-b", "{REPORTS}/host-b"),
    *("--manifest", "entropy.yaml", "--json", "{VERDICT}"),
]
RUN_ARGV = ["run", "--host", "a", "--out", "{TMP}/out", "--manifest", "entropy.yaml"]
FOLDER_ARGV: dict[str, tuple[list[str], str]] = {  # folder -> (argv, culprit)
    "validate": (["validate", "--manifest", "entropy.yaml"], "entropy.yaml"),
    "run": (RUN_ARGV, "entropy.yaml"),
    "junit": (COMPARE_ARGV, "junit.xml"),
    "hostjson": (COMPARE_ARGV, "host.json"),
}


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def build(path: Path, folder: str, recipe: dict[str, Any], tmp: Path, secret: str) -> Workspace:
    repo, reports = tmp / "repo", tmp / "reports"
    places = {
        "TMP": str(tmp),
        "REPO": str(repo),
        "REPORTS": str(reports),
        "OUTSIDE": str(tmp / "outside"),
        "SECRET_FILE": str(tmp / "outside" / "secret.txt"),
        "HOME": str(tmp / "home"),
        "VERDICT": str(tmp / "verdict.json"),
    }
    (tmp / "home").mkdir()
    (tmp / "outside").mkdir()
    (tmp / "outside" / "secret.txt").write_text(secret + "\n", encoding="utf-8")
    (tmp / "outside" / "secret.py").write_text(f"# {secret}\n", encoding="utf-8")
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    _write(repo / "entropy.yaml", recipe.get("manifest", SEED_MANIFEST.read_text("utf-8")), places)
    _write(repo / MODULE, SEED_PROPERTY, places)
    for relative, text in recipe.get("files", {}).items():
        _write(repo / relative, text, places)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    places["BASE_SHA"] = git(repo, "rev-parse", "HEAD")
    for relative, text in recipe.get("head_files", {}).items():
        _write(repo / relative, text, places)
    argv, culprit = FOLDER_ARGV.get(folder, ([], ""))
    if folder in ("validate", "run"):
        (repo / "entropy.yaml").write_bytes(_fill(path.read_bytes(), places))
    for step in recipe.get("git", []):
        git(tmp / step.get("in", "repo"), *[_text(arg, places) for arg in step["args"]])
    manifest = repo / "entropy.yaml"
    places["SHA"] = hashlib.sha256(manifest.read_bytes()).hexdigest() if manifest.exists() else ""
    _reports(reports, places, recipe)
    if folder == "junit":
        (reports / "host-a" / "junit.xml").write_bytes(_fill(path.read_bytes(), places))
    if folder == "hostjson":
        (reports / "host-b" / "host.json").write_bytes(_fill(path.read_bytes(), places))
    for link, target in recipe.get("symlinks", {}).items():
        where = tmp / _text(link, places)
        where.parent.mkdir(parents=True, exist_ok=True)
        where.unlink(missing_ok=True)
        where.symlink_to(_text(target, places))
    for name, relative in recipe.get("generate", {}).items():
        GENERATORS[name](tmp / _text(relative, places))
    if folder == "recipes":
        argv, culprit = recipe["argv"], recipe["culprit"]
    return Workspace(
        tmp=tmp,
        argv=[_text(arg, places) for arg in argv],
        cwd=tmp / recipe.get("cwd", "repo"),
        culprit=_text(culprit, places),
        places=places,
        env=recipe.get("env", {}),
    )


def _reports(reports: Path, places: dict[str, str], recipe: dict[str, Any]) -> None:
    roots = {"a": places["REPO"], "b": str(reports.parent / "copy-of-repo")}
    for host in ("a", "b"):
        folder = reports / f"host-{host}"
        folder.mkdir(parents=True)
        info = host_json(host, roots[host], places["SHA"])
        _patch(info, recipe.get(f"host_{host}", {}))
        text = json.dumps(info, indent=2)
        (folder / "host.json").write_bytes(_fill(text.encode(), places))
        junit = recipe.get(f"junit_{host}", VALID_JUNIT)
        junit = {"FAILING": FAILING_JUNIT}.get(junit, junit)
        (folder / "junit.xml").write_bytes(_fill(junit.encode(), places))


def _patch(target: dict[str, Any], patch: dict[str, Any]) -> None:
    """Merge `patch` into `target`; a null value deletes the key; "@a.fingerprint" copies."""
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            _patch(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


def _fill(data: bytes, places: dict[str, str]) -> bytes:
    for name, value in places.items():
        data = data.replace(b"{" + name.encode() + b"}", value.encode())
    return data


def _text(text: str, places: dict[str, str]) -> str:
    return _fill(text.encode(), places).decode()


def _write(path: Path, text: str, places: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_fill(text.encode(), places))
