"""host.json `variations` end to end: real `run --host a/b`, then `verdict` and `compare`
read them; a host.json edited by hand (a shrunk set, a switch the manifest does not set)
makes the verdict invalid; a switch turned on by the patch is a weakened constraint."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import build_repo, commit_files, git_out, run_cli

NAMES = (
    "clock", "env", "network", "hostname", "path", "tz", "umask", "temp_root", "lang",
    "rng_seed", "hash_seed", "python", "test_order", "file_order", "cpu_count",
)  # fmt: skip
MANIFEST = """\
version: 1
property_id: squares
module: tests/test_sq.py
pins:
  tz: UTC
constraints:
  mutation: "off"
{off}"""
SWITCH = '  host_b_off:\n    cpu_count: "the pool is sized by the runner"\n'
MODULE = """\
def test_square():
    assert 3 * 3 == 9


def test_cube():
    assert 2 ** 3 == 8
"""


def _hosts(repo: Path, label: str) -> None:
    for host, extra in (("a", ()), ("b", ("--isolate",))):
        done = run_cli(repo, "run", "--host", host, "--out", f"../{label}-{host}", *extra)
        assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose base already sets the switch, both hosts run at it."""
    root = tmp_path_factory.mktemp("variations")
    repo = root / "repo"
    build_repo(repo, {"entropy.yaml": MANIFEST.format(off=SWITCH), "tests/test_sq.py": MODULE})
    _hosts(repo, "switched")
    return root


def _judge(root: Path, label: str, command: str = "verdict") -> tuple[int, dict[str, Any], str]:
    repo = root / "repo"
    out = root / f"{label}-{command}.json"
    argv = [command, "--host-a", f"../{label}-a", "--host-b", f"../{label}-b"]
    done = run_cli(repo, *argv, "--base-ref", "main", "--json", str(out))
    return done.returncode, json.loads(out.read_text(encoding="utf-8")), done.stdout + done.stderr


def _host_json(root: Path, folder: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / folder / "host.json").read_text(encoding="utf-8"))
    return data


def test_host_b_lists_every_dimension_in_order_and_host_a_none(world: Path) -> None:
    listed = _host_json(world, "switched-b")["variations"]
    assert [v["dimension"] for v in listed] == list(NAMES)
    by_name = {v["dimension"]: v for v in listed}
    assert by_name["cpu_count"] == {
        "dimension": "cpu_count",
        "varied": False,
        "how": "host A's value",
        "why_not": "turned off by the manifest: the pool is sized by the runner",
    }
    assert by_name["tz"]["why_not"] == "pinned: pins.tz = UTC"
    assert by_name["env"]["varied"] is True
    assert by_name["path"]["how"] == "the tree copied to another absolute path (2 files)"
    assert by_name["hostname"]["how"] in (
        "another host name (UTS namespace)",
        "another host name (in-process)",
    )
    assert _host_json(world, "switched-a")["variations"] == []


@pytest.mark.parametrize("command", ["verdict", "compare"])
def test_the_verdict_carries_the_variations_and_a_switch_the_head_sets_is_held(
    world: Path, command: str
) -> None:
    code, verdict, _ = _judge(world, "switched", command)
    assert verdict["classification"] == "merge_candidate", verdict["reasons"]
    assert code == 0
    held = {v["dimension"]: v["why_not"] for v in verdict["host_b_variations"] if not v["varied"]}
    assert held["cpu_count"] == "turned off by the manifest: the pool is sized by the runner"


def _edited(world: Path, tmp_path: Path, edit: Any) -> Path:
    root = tmp_path / "w"
    shutil.copytree(world, root, symlinks=True)
    path = root / "switched-b" / "host.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["variations"] = edit(data["variations"])
    path.write_text(json.dumps(data), encoding="utf-8")
    return root


def test_a_shrunk_variation_set_is_invalid(world: Path, tmp_path: Path) -> None:
    root = _edited(world, tmp_path, lambda listed: listed[:-3])
    code, verdict, out = _judge(root, "switched")
    assert (code, verdict["classification"]) == (2, "invalid")
    line = (
        "host B: host.json lists no variation for test_order, file_order, cpu_count: every "
        "dimension of host B must be listed, varied or not (a variation set that silently "
        "shrinks is refused)"
    )
    assert f"invalid input: {line}" in verdict["reasons"]
    assert "Traceback" not in out


def test_a_switch_the_head_manifest_does_not_set_is_invalid(world: Path, tmp_path: Path) -> None:
    def claim(listed: list[dict[str, Any]]) -> list[dict[str, Any]]:
        order = next(v for v in listed if v["dimension"] == "file_order")
        order.update(varied=False, how="as the OS lists", why_not="turned off by the manifest: x")
        return listed

    code, verdict, _ = _judge(_edited(world, tmp_path, claim), "switched", "compare")
    assert (code, verdict["classification"]) == (2, "invalid")
    assert any("turned off file_order, the head manifest does not" in r for r in verdict["reasons"])


def test_a_host_json_without_the_field_is_invalid_not_a_pass(world: Path, tmp_path: Path) -> None:
    code, verdict, _ = _judge(_edited(world, tmp_path, lambda listed: []), "switched")
    assert verdict["classification"] == "invalid"
    assert code == 2


def test_turning_a_variation_off_in_the_patch_is_a_weakened_constraint(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    build_repo(repo, {"entropy.yaml": MANIFEST.format(off=""), "tests/test_sq.py": MODULE})
    git_out(repo, "checkout", "-q", "-b", "patch")
    commit_files(repo, {"entropy.yaml": MANIFEST.format(off=SWITCH)}, "turn cpu_count off")
    _hosts(repo, "patch")
    code, verdict, _ = _judge(tmp_path, "patch")
    assert verdict["classification"] == "pin_mutation"
    assert code == 1
    assert verdict["pin_changes"]["weakened"] == ["constraints.host_b_off.cpu_count"]
    change = next(c for c in verdict["pin_diff"] if c["kind"] == "weakened")
    assert change["line"] == 9


LISTED = """\
version: 1
pins:
  tz: UTC
constraints:
  mutation: "off"
properties:
  - property_id: a
    module: tests/test_a.py
    host_b_off:
      cpu_count: "the pool is sized by the runner"
  - property_id: b
    module: tests/test_b.py
"""


def test_a_propertys_own_switch_holds_for_it_alone(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    files = {"tests/test_a.py": MODULE, "tests/test_b.py": MODULE, "entropy.yaml": LISTED}
    build_repo(repo, files)
    _hosts(repo, "listed")
    why = {
        prop: next(
            v["why_not"]
            for v in _host_json(tmp_path, f"listed-b/properties/{prop}")["variations"]
            if v["dimension"] == "cpu_count"
        )
        for prop in ("a", "b")
    }
    assert why["a"] == "turned off by the manifest: the pool is sized by the runner"
    assert why["b"] is None  # property b's host B showed another CPU count
    code, verdict, _ = _judge(tmp_path, "listed")
    assert (code, verdict["classification"]) == (0, "merge_candidate")
    path = tmp_path / "listed-b" / "properties" / "b" / "host.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["variations"][-1]["why_not"] = (
        "turned off by the manifest: the pool is sized by the runner"
    )
    data["variations"][-1]["varied"] = False
    path.write_text(json.dumps(data), encoding="utf-8")
    code, verdict, _ = _judge(tmp_path, "listed")
    assert (code, verdict["classification"]) == (2, "invalid")
    (b,) = [p for p in verdict["properties"] if p["property_id"] == "b"]
    assert any("turned off cpu_count, the head" in r for r in b["verdict"]["reasons"])
