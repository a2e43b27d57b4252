"""Issue 22's sources on host B: the hash seed, the file-listing order and the CPU count.

Real git repositories built from the demo's base, real pytest runs through `entropy-gate gate`
and through `run --host a` / `run --host b` + `verdict`; and a real host B run whose tests
look at what the listing and CPU-count patches return, in the test process and in a child.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from entropy_action.gate import demo
from entropy_action.hosts import isolate, launch
from tests.integration.test_run_host_a import MODULE, make_repo, manifest_yaml, outcomes, settings
from tests.support.helpers import Repo

CODES = 32  # strings in the set: another hash seed reorders 32 strings all but surely


def _hash_order(seed: int) -> list[str]:
    """The iteration order of the fee codes under PYTHONHASHSEED=seed (host A: 0)."""
    code = f"print(list({{f'fee-{{i}}' for i in range({CODES})}}))"
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    argv = [sys.executable, "-c", code]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    return list(json.loads(out.stdout.replace("'", '"')))


LIB = {
    "hash_seed": f'''

def fee_codes() -> set[str]:
    """The fee codes an invoice may carry."""
    return {{f"fee-{{i}}" for i in range({CODES})}}
''',
    "cpu_count": '''

def batches(amounts: list[int]) -> list[list[int]]:
    """The lines split into one batch per CPU, to total them in parallel."""
    import os

    workers = os.cpu_count() or 1
    size = -(-len(amounts) // workers)
    return [amounts[i : i + size] for i in range(0, len(amounts), size)]
''',
    "file_order": '''

def templates(folder: str) -> list[str]:
    """The invoice templates in `folder`."""
    import os

    return [name for name in os.listdir(folder) if name.endswith(".txt")]
''',
}
TESTS = {
    "hash_seed": """

def test_fee_codes_are_listed() -> None:
    from invoice_lib import fee_codes

    assert list(fee_codes()) == {order}
""",
    "cpu_count": """

def test_lines_are_batched() -> None:
    from invoice_lib import batches

    assert len(batches(invoice_lines())) == {cpus}
""",
    "file_order": """

def test_templates_come_in_the_folders_order(tmp_path) -> None:
    import glob

    from invoice_lib import templates

    for name in ("plain", "late", "reminder", "credit", "summary", "final"):
        (tmp_path / f"{{name}}.txt").write_text(name)
    assert templates(str(tmp_path)) == glob.glob("*.txt", root_dir=tmp_path)
""",
}
FIXED_TESTS = {  # the honest versions: a test that no longer encodes the source
    "cpu_count": """

def test_lines_are_batched() -> None:
    from invoice_lib import batches

    lines = invoice_lines()
    assert [line for batch in batches(lines) for line in batch] == lines
""",
    "file_order": TESTS["file_order"].replace(
        'glob.glob("*.txt", root_dir=tmp_path)', 'sorted(glob.glob("*.txt", root_dir=tmp_path))'
    ),
}
FIXED_LIB = {"file_order": LIB["file_order"].replace("return [name", "return sorted([name")}
FIXED_LIB["file_order"] = FIXED_LIB["file_order"].replace('.txt")]', '.txt")])')


def _coupled_patch(repo: Path, source: str) -> None:
    lib = repo / "invoice_lib.py"
    lib.write_text(lib.read_text(encoding="utf-8") + LIB[source], encoding="utf-8")
    test = repo / "tests/properties/test_invoice_total.py"
    body = TESTS[source].format(order=_hash_order(0), cpus=isolate.real_cpu_count())
    test.write_text(test.read_text(encoding="utf-8") + body, encoding="utf-8")


def _base(repo: Repo, tmp_path: Path) -> str:
    midnight = int(time.time()) // 86400 * 86400
    return demo.build_base(repo.path, clock_unix=midnight, temp_root=tmp_path / "pins-tmp")


def _gate(repo: Repo, base: str) -> tuple[int, dict[str, Any]]:
    out = repo.path.parent / "verdict.json"
    result = repo.cli("gate", "--base-ref", base, "--json", str(out), "--no-cache")
    return result.code, json.loads(out.read_text(encoding="utf-8"))


def _check(repo: Repo, verdict: dict[str, Any], source: str) -> None:
    assert verdict["classification"] == "env_coupled", verdict["reasons"]
    assert verdict["coupled_to"] == [source]
    assert verdict["merge"] is False


def test_a_set_order_test_is_coupled_to_the_hash_seed_until_it_is_pinned(
    tmp_path: Path, repo: Repo
) -> None:
    base = _base(repo, tmp_path)
    assert _hash_order(0) != _hash_order(isolate.UNPINNED_HASH_SEED)
    _coupled_patch(repo.path, "hash_seed")
    repo.commit("fee codes listed in their set's order")
    code, verdict = _gate(repo, base)
    assert code == 1
    _check(repo, verdict, "hash_seed")
    assert verdict["reasons"][-1].startswith("the failure follows the hash seed (PYTHONHASHSEED)")
    manifest = repo.path / "entropy.yaml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text.replace("  rng_seed: 9173\n", "  rng_seed: 9173\n  hash_seed: 0\n"))
    repo.commit("pin the hash seed the order was written under")
    code, verdict = _gate(repo, base)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), verdict["reasons"]


def test_a_test_encoding_the_machines_cpu_count_is_coupled_to_it(
    tmp_path: Path, repo: Repo
) -> None:
    base = _base(repo, tmp_path)
    _coupled_patch(repo.path, "cpu_count")
    repo.commit("batches per CPU")
    code, verdict = _gate(repo, base)
    assert code == 1
    _check(repo, verdict, "cpu_count")
    test = repo.path / "tests/properties/test_invoice_total.py"
    text = test.read_text(encoding="utf-8")
    test.write_text(text.replace(TESTS["cpu_count"].format(cpus=isolate.real_cpu_count()), "")
                    + FIXED_TESTS["cpu_count"], encoding="utf-8")  # fmt: skip
    repo.commit("the test checks the batches, not the machine")
    code, verdict = _gate(repo, base)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), verdict["reasons"]


def test_code_returning_the_listing_order_is_coupled_to_it_until_it_sorts(
    tmp_path: Path, repo: Repo
) -> None:
    base = _base(repo, tmp_path)
    _coupled_patch(repo.path, "file_order")
    repo.commit("templates in the folder's order")
    code, verdict = _gate(repo, base)
    assert code == 1
    _check(repo, verdict, "file_order")
    for name, old, new in (
        ("invoice_lib.py", LIB, FIXED_LIB),
        ("tests/properties/test_invoice_total.py", TESTS, FIXED_TESTS),
    ):
        path = repo.path / name
        text = path.read_text(encoding="utf-8")
        fixed = text.replace(old["file_order"].format(), new["file_order"].format())
        assert fixed != text
        path.write_text(fixed, encoding="utf-8")
    repo.commit("templates sorted")
    code, verdict = _gate(repo, base)
    assert (code, verdict["classification"]) == (0, "merge_candidate"), verdict["reasons"]


def test_the_workflow_path_run_a_run_b_verdict_names_the_hash_seed(
    tmp_path: Path, repo: Repo
) -> None:
    base = _base(repo, tmp_path)
    _coupled_patch(repo.path, "hash_seed")
    repo.commit("fee codes listed in their set's order")
    a, b = tmp_path / "host-a", tmp_path / "host-b"
    assert repo.cli("run", "--host", "a", "--out", str(a), "--base-ref", base).code == 0
    assert (
        repo.cli("run", "--host", "b", "--isolate", "--out", str(b), "--base-ref", base).code == 1
    )
    info_b = json.loads((b / "host.json").read_text(encoding="utf-8"))
    assert "hash_seed" not in info_b["pins_applied"]  # unpinned: the gate's own value
    assert info_b["pins_mismatch"] == []
    assert any(line.startswith("hash_seed unpinned: PYTHONHASHSEED=2767") for line in
               info_b["isolation"])  # fmt: skip
    out = tmp_path / "verdict.json"
    result = repo.cli("verdict", "--host-a", str(a), "--host-b", str(b), "--base-ref", base,
                      "--json", str(out))  # fmt: skip
    verdict = json.loads(out.read_text(encoding="utf-8"))
    assert result.code == 1, result.out
    assert verdict["classification"] == "env_coupled"
    assert verdict["coupled_to"] == ["hash_seed"]  # host B's job re-ran with it reverted


# --- what the patches return inside a real host B run ----------------------------------------

LISTING_PROPERTY = """\
import glob
import json
import os
import pathlib
import posix
import subprocess
import sys

NAMES = [f"entry-{i:02d}.txt" for i in range(12)]


def _folder(tmp_path):
    for name in NAMES:
        (tmp_path / name).write_text(name)
    return tmp_path


def test_every_listing_is_shuffled_and_keeps_its_entries(tmp_path, record_property):
    folder = _folder(tmp_path)
    real = posix.listdir(folder)  # importlib's own listing: never patched
    with os.scandir(folder) as it:
        scanned = [entry.name for entry in it]
    seen = {
        "listdir": os.listdir(folder),
        "scandir": scanned,
        "glob": [os.path.basename(p) for p in glob.glob(str(folder / "*"))],
        "iglob": [os.path.basename(p) for p in glob.iglob(str(folder / "*"))],
        "iterdir": [p.name for p in folder.iterdir()],
        "path_glob": [p.name for p in folder.glob("*.txt")],
        "rglob": [p.name for p in folder.rglob("*.txt")],
        "walk": next(os.walk(folder))[2],
    }
    record_property("shuffled", sum(order != real for order in seen.values()))
    for order in seen.values():
        assert sorted(order) == sorted(real)
    assert os.listdir(folder) == seen["listdir"]  # the same listing, the same order


def test_scandir_still_closes_and_lists_two_entries_out_of_order(tmp_path):
    (tmp_path / "a").write_text("")
    (tmp_path / "b").write_text("")
    listing = os.scandir(tmp_path)
    first = next(listing)
    listing.close()
    assert list(listing) == []
    assert [first.name, *(n for n in posix.listdir(tmp_path) if n != first.name)] != posix.listdir(
        tmp_path
    )
    assert os.listdir(tmp_path) != posix.listdir(tmp_path)


def test_the_cpu_count_and_a_child_python(tmp_path, record_property):
    import multiprocessing

    record_property("cpu_count", os.cpu_count())
    record_property("mp_cpu_count", multiprocessing.cpu_count())
    record_property("affinity", len(os.sched_getaffinity(0)))
    folder = _folder(tmp_path)
    code = (
        "import os, posix, sys; "
        "print(os.cpu_count(), os.listdir(sys.argv[1]) != posix.listdir(sys.argv[1]))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True, text=True)
    record_property("child", out.stdout.strip())
    nproc = subprocess.run(["nproc"], capture_output=True, text=True)
    record_property("nproc", nproc.stdout.strip())
"""
MANY_FILES = 40  # test files pytest collects while the listings are shuffled


def _listing_run(tmp: Path, *, isolated: bool) -> tuple[dict[str, str], dict[str, str], Path]:
    files = {"entropy.yaml": manifest_yaml(tmp / "entropy-tmp"), MODULE: LISTING_PROPERTY}
    files.update(
        {f"tests/properties/test_many_{i:02d}.py": f"def test_{i}():\n    assert {i} == {i}\n"
         for i in range(MANY_FILES)}
    )  # fmt: skip
    root = make_repo(tmp / "repo", files)
    out = tmp / "out"
    many = tuple(name for name in files if "test_many_" in name)  # one session collects all
    launch.run_host(
        settings(root, out, dict(os.environ), isolate=isolated, modules=(MODULE, *many))
    )
    from tests.integration.test_run_children import props  # noqa: PLC0415

    return outcomes(out / "junit.xml"), props(out / "junit.xml"), out


def test_on_host_b_listings_cpu_count_and_children_follow_the_plan(tmp_path: Path) -> None:
    results, seen, out = _listing_run(tmp_path / "b", isolated=True)
    assert set(results.values()) == {"passed"}, results
    assert len(results) == 3 + MANY_FILES  # collection of 40 more files unharmed
    assert int(seen["shuffled"]) == 8  # every one of the eight listings
    expected = isolate.unpinned_cpu_count(isolate.real_cpu_count())
    assert seen["cpu_count"] == seen["mp_cpu_count"] == seen["affinity"] == str(expected)
    assert seen["child"] == f"{expected} True"
    assert seen["nproc"] == str(isolate.real_cpu_count())  # not a Python child: the real count
    info = json.loads((out / "host.json").read_text(encoding="utf-8"))
    assert any(line.startswith("file_order: os.listdir, os.scandir") for line in info["isolation"])
    shown = f"cpu_count: Python sees {expected} CPUs (os.sched_getaffinity lists {expected}"
    assert any(line.startswith(shown) for line in info["isolation"])
    assert info["pins_mismatch"] == []


def test_on_host_a_nothing_is_shuffled_or_shown(tmp_path: Path) -> None:
    results, seen, _ = _listing_run(tmp_path / "a", isolated=False)
    assert results["test_every_listing_is_shuffled_and_keeps_its_entries"] == "passed"
    assert seen["shuffled"] == "0"
    assert results["test_scandir_still_closes_and_lists_two_entries_out_of_order"] == "failed"
    assert seen["cpu_count"] == str(os.cpu_count())
    assert seen["child"] == f"{os.cpu_count()} False"


def test_a_hash_seed_failure_that_stood_at_the_base_is_attributed_in_any_verdict(
    tmp_path: Path, repo: Repo
) -> None:
    """Issue 35 part 5: the set-order test fails on host B at the base too, and the patch
    breaks the totals on both hosts (real_defect): "failed at the base ref too" explains the
    set-order failure, and the attribution still names what it follows."""
    _base(repo, tmp_path)
    _coupled_patch(repo.path, "hash_seed")
    base = repo.commit("fee codes listed in their set's order (host B red already)")
    lib = repo.path / "invoice_lib.py"  # and the patch's own defect: the totals fail on A and B
    lib.write_text(lib.read_text().replace("in amounts:", "in amounts[1:]:"), encoding="utf-8")
    repo.commit("skip the header line")
    code, verdict = _gate(repo, base)
    assert (code, verdict["classification"]) == (1, "real_defect"), verdict["reasons"]
    assert verdict["coupled_to"] == ["hash_seed"]
    (failing,) = [t for t in verdict["tests"] if t["id"].endswith("test_fee_codes_are_listed")]
    assert (failing["host_a"], failing["host_b"], failing["base_b"]) == (
        "passed",
        "failed",
        "failed",
    )
    assert failing["failed_at_base"] is True
    assert any(r.startswith("the failure follows the hash seed") for r in verdict["reasons"])
