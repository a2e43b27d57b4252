"""A patch that moves or removes the property module: a clear verdict on every path, never an
internal error, never a run that pretends the module ran.

Found replaying tzlocal d3447f671e58 ("Move tests (#176)", tests/ → tzlocal/tests/): the
local gate ended in an internal error (the strength step wrote the base's module into a
folder the head no longer has), host A's run blamed pytest's addopts for a usage error, and
host B said git ignores a file that no longer exists.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.helpers import Repo

MANIFEST = """\
version: 1
property_id: moved
module: tests/test_prop.py
pins:
  clock_unix: 1700000000
  rng_seed: 1
  tz: UTC
run:
  pytest_args: ["-o", "addopts=", "-q"]
"""

TEST = """\
from pkg.mod import double


def test_double():
    assert double(2) == 4
"""

GONE = (
    "tests/test_prop.py: the property module is not in the tree this host runs: a patch that "
    "moves or removes it names the new path in the manifest (a reviewed change)"
)


def _verdict(repo: Repo, tmp_path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    out = tmp_path / f"verdict-{len(list(tmp_path.glob('verdict-*')))}.json"
    result = repo.cli(*args, "--json", str(out))
    assert "internal error" not in result.err, result.err
    return result.code, json.loads(out.read_text(encoding="utf-8"))


def _base(repo: Repo) -> str:
    repo.write("entropy.yaml", MANIFEST)
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/mod.py", "def double(x):\n    return 2 * x\n")
    repo.write("tests/test_prop.py", TEST)
    return repo.commit("base")


def test_a_moved_module_is_invalid_on_every_path_and_says_why(repo: Repo, tmp_path: Path) -> None:
    base = _base(repo)
    repo.git("mv", "tests", "checks")
    repo.commit("move the tests")

    code, local = _verdict(repo, tmp_path, "gate", "--base-ref", base)
    assert (code, local["classification"], local["merge"]) == (2, "invalid", False)
    assert f"invalid input: host A: {GONE}" in local["reasons"], local["reasons"]

    runs = tmp_path / "runs"
    host_a = repo.cli("run", "--host", "a", "--out", str(runs / "a"), "--base-ref", base)
    host_b = repo.cli(
        "run", "--host", "b", "--isolate", "--out", str(runs / "b"), "--base-ref", base
    )
    said = "entropy.yaml:3: module 'tests/test_prop.py' does not exist in the repository"
    assert (host_a.code, host_a.err.splitlines()[-1]) == (2, said)
    assert (host_b.code, host_b.err.splitlines()[-1]) == (2, said)
    hosts = ("--host-a", str(runs / "a"), "--host-b", str(runs / "b"))
    code, workflow = _verdict(repo, tmp_path, "verdict", *hosts, "--base-ref", base)
    assert (code, workflow["classification"]) == (2, "invalid")


def test_a_module_moved_with_the_manifest_is_a_pin_mutation_everywhere(
    repo: Repo, tmp_path: Path
) -> None:
    base = _base(repo)
    repo.git("mv", "tests", "checks")
    repo.write("entropy.yaml", MANIFEST.replace("tests/test_prop.py", "checks/test_prop.py"))
    repo.commit("move the tests and the manifest's module")

    code, local = _verdict(repo, tmp_path, "gate", "--base-ref", base)
    assert (code, local["classification"]) == (1, "pin_mutation")
    assert local["pin_changes"]["changed"] == ["module"], local["pin_changes"]

    runs = tmp_path / "runs"
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        out = str(runs / host)
        done = repo.cli("run", "--host", host, *extra, "--out", out, "--base-ref", base)
        assert done.code == 0, done.err
    hosts = ("--host-a", str(runs / "a"), "--host-b", str(runs / "b"))
    code, workflow = _verdict(repo, tmp_path, "verdict", *hosts, "--base-ref", base)
    assert (code, workflow["classification"]) == (1, "pin_mutation")
    assert workflow["pin_changes"] == local["pin_changes"]
