"""Helpers for the scan tests (no tests here): a manifest, a base commit, a scan through the CLI."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tests.support.helpers import Repo, Result

PROPERTY = "tests/properties/test_invoice.py"

MANIFEST = f"""\
version: 1
property_id: invoice_total
module: {PROPERTY}
pins:
  rng_seed: 9173
  tz: UTC
  lang: C.UTF-8
constraints:
  forbid_skip_markers: ["network", "flaky"]
"""

# A property module with nothing to find.
CLEAN = """\
import os
import random

from invoice_lib import total_for


def test_total():
    random.seed(int(os.environ["ENTROPY_RNG_SEED"]))
    amounts = [random.randint(1, 100) for _ in range(8)]
    assert total_for(amounts) == sum(amounts)
"""

INVOICE_LIB = """\
import datetime


def total_for(amounts, as_of=None):
    return sum(amounts)
"""


@dataclass(frozen=True)
class Scanned:
    code: int
    findings: list[dict[str, Any]]
    result: Result

    @property
    def located(self) -> list[tuple[str, str, int, bool]]:
        """(kind, path, line, introduced) of each finding, in output order."""
        return [(f["kind"], f["path"], f["line"], f["introduced"]) for f in self.findings]

    @property
    def introduced(self) -> list[tuple[str, str, int]]:
        return [(k, p, n) for k, p, n, new in self.located if new]


def base(repo: Repo, property_text: str = CLEAN, manifest: str = MANIFEST, **files: str) -> str:
    """Commit a base: the manifest, the property module, invoice_lib.py and `files`
    (keyword names use "__" for "/" and "_dot_" for ".", e.g. tests__conftest_dot_py)."""
    repo.write("entropy.yaml", manifest)
    repo.write(PROPERTY, property_text)
    repo.write("invoice_lib.py", INVOICE_LIB)
    write(repo, **files)
    return repo.commit("base")


def write(repo: Repo, **files: str) -> None:
    for key, text in files.items():
        repo.write(key.replace("__", "/").replace("_dot_", "."), text)


def scan(repo: Repo, base_ref: str = "main") -> Scanned:
    out = repo.path.parent / "findings.json"
    if out.exists():
        out.unlink()
    result = repo.cli("scan", "--base-ref", base_ref, "--json", str(out))
    findings = json.loads(out.read_text(encoding="utf-8")) if out.exists() else []
    return Scanned(result.code, findings, result)
