"""The data files the tests open, recorded inside the test process on host A
(testproc/datafiles.py) into host.json's `test_data`: read, not written; in the tree, not
beside it; data, not code; bounded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.helpers import Repo

MANIFEST = """\
version: 1
property_id: data
module: tests/test_data.py
pins:
  rng_seed: 1
  temp_root: {temp_root}
run:
  pytest_args: ["-o", "addopts=", "-q"]
"""

PROPERTIES = """\
import json
import os
from pathlib import Path

import lib

HERE = Path(__file__).parent
COLLECTED = json.loads((HERE / "data" / "collected.json").read_text())  # at collection


def test_reads(tmp_path):
    with open("tests/data/opened.txt") as handle:  # relative to the working directory
        assert handle.read()
    assert (HERE / "data" / "pathlib.json").read_bytes()
    fd = os.open(HERE / "data" / "low.bin", os.O_RDONLY)
    os.close(fd)
    assert lib.table()
    (HERE / "data" / "written.txt").write_text("out")  # a write is no data the test reads
    (HERE / "data" / "appended.txt").open("a").close()
    assert Path(lib.__file__).read_text()  # code, not data
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    assert json.loads(outside.read_text()) == {}  # not in the tree
    try:
        open(HERE / "data" / "missing.json")
    except FileNotFoundError:
        pass


def test_many():
    for index in range(205):
        (HERE / "many" / f"{index:03}.txt").read_text()
"""

LIB = """\
from pathlib import Path


def table():
    return (Path(__file__).parent / "lib_data" / "table.csv").read_text()
"""


def _run(repo: Repo, tmp_path: Path, host: str) -> dict[str, Any]:
    repo.write("entropy.yaml", MANIFEST.format(temp_root=tmp_path / "pins-tmp"))
    repo.write("tests/test_data.py", PROPERTIES)
    repo.write("lib.py", LIB)
    repo.write("lib_data/table.csv", "a,b\n")
    for name in ("collected.json", "pathlib.json"):
        repo.write(f"tests/data/{name}", "[1]\n")
    repo.write("tests/data/opened.txt", "rows\n")
    repo.write("tests/data/low.bin", "x")
    for index in range(205):
        repo.write(f"tests/many/{index:03}.txt", "x")
    repo.commit("base")
    extra = ("--isolate",) if host == "b" else ()
    done = repo.cli("run", "--host", host, "--out", f"../host-{host}", *extra)
    assert done.code == 0, done.err
    host_json = repo.path.parent / f"host-{host}" / "host.json"
    recorded: dict[str, Any] = json.loads(host_json.read_text(encoding="utf-8"))
    return recorded


def test_host_a_records_what_the_tests_read_and_who_opened_it(repo: Repo, tmp_path: Path) -> None:
    data = _run(repo, tmp_path, "a")["test_data"]
    files = {f["path"]: f for f in data["files"]}
    reads = "tests/test_data.py::test_reads"
    assert files["tests/data/collected.json"] == {
        "path": "tests/data/collected.json",
        "opener": "tests/test_data.py",
        "test": None,
    }
    assert files["tests/data/opened.txt"]["test"] == reads
    assert files["tests/data/pathlib.json"]["opener"] == "tests/test_data.py"
    assert files["tests/data/low.bin"]["opener"] == "tests/test_data.py"
    assert files["lib_data/table.csv"] == {
        "path": "lib_data/table.csv",
        "opener": "lib.py",
        "test": reads,
    }
    not_data = {"tests/data/written.txt", "tests/data/appended.txt", "lib.py", "entropy.yaml"}
    assert not not_data & set(files)
    assert "tests/data/missing.json" not in files
    assert all(not path.endswith(".py") for path in files)
    many = [path for path in files if path.startswith("tests/many/")]
    assert len(files) == 200
    assert len(many) == 200 - 5
    assert data["dropped"] == 205 - len(many)


def test_host_b_records_none(repo: Repo, tmp_path: Path) -> None:
    assert _run(repo, tmp_path, "b")["test_data"] is None
