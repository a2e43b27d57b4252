"""Host B run by a user other than root: its namespaces come through a user namespace where the
caller is root, and nsinit gives the tests the caller's uid back (`--as`), so a test of file
permissions or of the uid runs as on host A. Found replaying environs and python-dotenv as a
plain user: `test_read_from_file_path_is_unreadable` read a mode-000 file on host B alone
(`env_coupled` on every commit), and a test that skips as root skipped there alone.

The tests run as root here; `unshare --user --map-user=1234` makes the gate's process a plain
user for the run, as on a GitHub runner or a laptop."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.helpers import build_repo, commit_files

UID = 1234
PLAIN = ["--user", f"--map-user={UID}", f"--map-group={UID}"]
MODULE = "tests/test_files.py"
BASE = """\
    def test_written(tmp_path):
        target = tmp_path / "secret"
        target.write_text("s")
        assert target.read_text() == "s"
    """
PATCHED = (
    "import os\n\nimport pytest\n\n\n"
    + textwrap.dedent(BASE)
    + """

def test_unreadable(tmp_path):
    target = tmp_path / "secret"
    target.write_text("s")
    target.chmod(0)
    with pytest.raises(PermissionError):
        target.read_text()


def test_the_callers_uid():
    assert (os.getuid(), os.getgid()) == (UID, UID)
""".replace("UID", str(UID))
)


def _plain_user() -> list[str]:
    unshare = shutil.which("unshare")
    if unshare is None or not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("needs root and util-linux's unshare to become a plain user")
    probe = subprocess.run([unshare, *PLAIN, "--", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"unshare {' '.join(PLAIN)}: {probe.stderr.decode().strip()}")
    return [unshare, *PLAIN, "--"]


def test_a_permission_test_merges_when_a_plain_user_runs_the_gate(tmp_path: Path) -> None:
    prefix = _plain_user()
    manifest = (
        f"version: 1\nproperty_id: files\nmodule: {MODULE}\n"
        "pins:\n  clock_unix: 1768003200\n  rng_seed: 9173\n  tz: UTC\n  lang: C.UTF-8\n"
    )
    root = tmp_path / "repo"
    base = build_repo(root, {"entropy.yaml": manifest, MODULE: BASE})
    commit_files(root, {MODULE: PATCHED}, "a permission test and a uid test")
    env = {**os.environ, "HOME": str(tmp_path / "home"), "XDG_CACHE_HOME": str(tmp_path / "c")}
    out = tmp_path / "verdict.json"
    gate = [sys.executable, "-m", "entropy_action", "gate", "--base-ref", base]
    done = subprocess.run(
        [*prefix, *gate, "--json", str(out), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    verdict = json.loads(out.read_text(encoding="utf-8"))
    outcomes = {t["id"].rpartition("::")[2]: (t["host_a"], t["host_b"]) for t in verdict["tests"]}
    assert outcomes == {
        "test_written": ("passed", "passed"),
        "test_unreadable": ("passed", "passed"),
        "test_the_callers_uid": ("passed", "passed"),
    }, verdict["reasons"]
    assert (done.returncode, verdict["classification"]) == (0, "merge_candidate"), done.stderr
    # the workflow's host B job runs the same launch: its report says the same
    run = [sys.executable, "-m", "entropy_action", "run", "--host", "b", "--isolate"]
    done = subprocess.run(
        [*prefix, *run, "--out", str(tmp_path / "b")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    junit = (tmp_path / "b" / "junit.xml").read_text(encoding="utf-8")
    assert 'tests="3"' in junit
    assert "<failure" not in junit
    assert "<skipped" not in junit
