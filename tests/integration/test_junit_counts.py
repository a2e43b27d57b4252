"""pytest's own JUnit counts, read as pytest writes them: a property module that cannot
import, collected twice under `--doctest-modules`, is two collection errors of one node id in
one testcase, which pytest counts twice in `tests` (ratelimit's pytest.ini). The gate took
that report for one with testcases removed: a base run that failed so was "unusable"."""

from __future__ import annotations

import json
import time
from pathlib import Path

from entropy_action.gate import demo
from tests.support.helpers import Repo

MODULE = "tests/properties/test_invoice_total.py"
ADDED = '''

def total_for_all(invoices: list[list[int]], as_of: datetime) -> int:
    """The total of several invoices."""
    return sum(total_for(amounts, as_of) for amounts in invoices)
'''


def test_a_base_whose_module_cannot_import_under_doctest_modules_is_read_on_every_path(
    repo: Repo, tmp_path: Path
) -> None:
    pin = int(time.time()) // 86400 * 86400
    demo.build_base(repo.path, clock_unix=pin, temp_root=tmp_path / "pins-tmp")
    manifest = repo.path / "entropy.yaml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text.replace('"-q"]', '"-q", "--doctest-modules"]'), encoding="utf-8")
    module = repo.path / MODULE
    source = module.read_text(encoding="utf-8")
    future = "from __future__ import annotations\n"
    imported = f"{future}from invoice_lib import total_for_all  # noqa: F401\n"
    module.write_text(source.replace(future, imported, 1), encoding="utf-8")
    base = repo.commit("the property imports a function production lacks")
    with (repo.path / "invoice_lib.py").open("a", encoding="utf-8") as lib:
        lib.write(ADDED)
    repo.commit("production gains it")
    judged = repo.every_path(base)
    said = {command: v["classification"] for command, v in judged.items()}
    reasons = judged["gate"]["reasons"]
    assert said == dict.fromkeys(("gate", "verdict", "compare"), "merge_candidate"), reasons
    for verdict in judged.values():
        assert "not a report pytest wrote" not in json.dumps(verdict), verdict["reasons"]
        assert "unusable" not in json.dumps(verdict), verdict["reasons"]
