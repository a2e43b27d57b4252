"""A pin that did not take because the patch's own test writes its variable is judged as the
silencing it is, on every path (the local gate, compare, the workflow's host runs and
verdict); a pin that did not take for any other reason keeps the run invalid.

Found replaying python-schedule 3eac646a8d26 ("Add timezone support for .at()"): the commit
adds `os.environ["TZ"] = …; time.tzset()` at the top of the test module, the scan named the
line (`env_write`), and the verdict still said `invalid` — "fix the run and try again" — for
a patch whose cause is one line of its own test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.helpers import Repo

MANIFEST = """\
version: 1
property_id: zone
module: tests/test_zone.py
pins:
  clock_unix: 1700000000
  rng_seed: 1
  tz: UTC
run:
  pytest_args: ["-o", "addopts=", "-q"]
"""

TEST = """\
import time


def test_zone():
    assert time.strftime("%Z") in {"UTC", "CET", "CEST"}
"""

SETS_TZ = """\
import os
import time

os.environ["TZ"] = "CET-1CEST,M3.5.0,M10.5.0"
time.tzset()


def test_zone():
    assert time.strftime("%Z") in {"UTC", "CET", "CEST"}
"""

EXPLAINED = (
    "host {host}: the pins of tz did not take because the patch's tests write TZ (env_write): "
    "judged with that finding, not as a run that cannot be judged"
)


def _verdict(repo: Repo, tmp_path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    out = tmp_path / f"verdict-{len(list(tmp_path.glob('verdict-*')))}.json"
    result = repo.cli(*args, "--json", str(out))
    return result.code, json.loads(out.read_text(encoding="utf-8"))


def _kinds(verdict: dict[str, Any]) -> list[tuple[str, str, int, bool]]:
    return [(f["kind"], f["path"], f["line"], f["introduced"]) for f in verdict["findings"]]


def test_a_patch_that_sets_a_pinned_variable_in_its_test_is_entropy_silenced_everywhere(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write("entropy.yaml", MANIFEST)
    repo.write("tests/test_zone.py", TEST)
    base = repo.commit("base")
    repo.write("tests/test_zone.py", SETS_TZ)
    repo.commit("the test sets its own zone")

    code, local = _verdict(repo, tmp_path, "gate", "--base-ref", base)
    assert (code, local["classification"], local["merge"]) == (1, "entropy_silenced", False)
    assert _kinds(local) == [("env_write", "tests/test_zone.py", 4, True)]
    assert not [r for r in local["reasons"] if r.startswith("invalid input")], local["reasons"]
    assert [r for r in local["reasons"] if "did not take" in r] == [
        EXPLAINED.format(host="A"),
        EXPLAINED.format(host="B"),
    ]

    # the workflow's path: each host job's run, then the verdict job's judge
    runs = tmp_path / "runs"
    host_a = repo.cli("run", "--host", "a", "--out", str(runs / "a"), "--base-ref", base)
    host_b = repo.cli(
        "run", "--host", "b", "--isolate", "--out", str(runs / "b"), "--base-ref", base
    )
    said = "pins did not take: tz: TZ pinned 'UTC', the test process saw 'CET-1CEST,M3.5.0,M10.5.0'"
    assert (host_a.code, f"host a: {said}" in host_a.err.splitlines()) == (2, True)
    assert (host_b.code, f"host b: {said}" in host_b.err.splitlines()) == (2, True)
    code, workflow = _verdict(
        repo, tmp_path, "verdict", "--host-a", str(runs / "a"), "--host-b", str(runs / "b"),
        "--base-ref", base,
    )  # fmt: skip
    assert (code, workflow["classification"]) == (1, "entropy_silenced")
    assert _kinds(workflow) == _kinds(local)
    assert [r for r in workflow["reasons"] if "did not take" in r] == [
        EXPLAINED.format(host="A"),
        EXPLAINED.format(host="B"),
    ]
    hosts = ("--host-a", str(runs / "a"), "--host-b", str(runs / "b"))
    code, compared = _verdict(repo, tmp_path, "compare", *hosts, "--base-ref", base)
    assert (code, compared["classification"]) == (1, "entropy_silenced")
    assert _kinds(compared) == _kinds(local)
    # without --base-ref no scan ran: nothing explains the pin, so nothing is judged
    code, unscanned = _verdict(repo, tmp_path, "compare", *hosts)
    assert (code, unscanned["classification"]) == (2, "invalid")


def test_a_pin_the_base_already_wrote_in_its_test_keeps_the_run_invalid(
    repo: Repo, tmp_path: Path
) -> None:
    """The write stood at the base: no counted finding explains the pin, so nothing was run
    under the manifest's conditions and the verdict is invalid, never judged."""
    repo.write("entropy.yaml", MANIFEST)
    repo.write("tests/test_zone.py", SETS_TZ)
    base = repo.commit("base")
    repo.write("README.md", "docs\n")
    repo.commit("docs")

    code, verdict = _verdict(repo, tmp_path, "gate", "--base-ref", base)
    assert (code, verdict["classification"]) == (2, "invalid")
    assert _kinds(verdict) == [("env_write", "tests/test_zone.py", 4, False)]
    invalid = [r for r in verdict["reasons"] if r.startswith("invalid input")]
    assert len(invalid) == 2, verdict["reasons"]
    for host, reason in zip("AB", invalid, strict=True):
        assert reason.startswith(f"invalid input: host {host}: "), reason
        assert reason.endswith(
            "/host.json: pins_mismatch: the test process did not see these pins as pinned: "
            "tz: TZ pinned 'UTC', the test process saw 'CET-1CEST,M3.5.0,M10.5.0'"
        ), reason
    assert not [r for r in verdict["reasons"] if "judged with that finding" in r]
