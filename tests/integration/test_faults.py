"""Injected faults: a host killed mid-run, a run past its timeout, processes that outlive pytest,
a temp root filled past its cap. Each through the real CLI in a subprocess (bounded by a
subprocess timeout): never a pass, the partial report never trusted, everything cleaned up
and reported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from entropy_action.core.layout import HOST_JSON, JUNIT_XML
from entropy_action.hosts import supervise
from tests.integration.test_run_host_a import MODULE, make_repo, manifest_yaml

LIMIT = 240  # seconds a whole CLI call may take here (gate runs three pytest processes)
ON_A = "FAULT_ON_HOST_A"  # set in the caller's environment: host A inherits it, host B never

# A property that behaves on host A and misbehaves on host B (whose environment is scrubbed).
KILLED_ON_B = f"""\
import os, signal, sys


def test_survives_host_a():
    if os.environ.get("{ON_A}"):
        return
    # A partial report that claims a pass, where the gate will look for one ...
    junit = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--junitxml="))
    with open(junit, "w") as handle:
        handle.write('<testsuites><testsuite name="pytest" tests="1"><testcase '
                     'classname="tests.properties.test_prop" name="test_survives_host_a" />'
                     '</testsuite></testsuites>')
    os.killpg(0, signal.SIGKILL)  # ... then host B dies mid-run
"""

HANGS_ON_B = f"""\
import os, time


def test_hangs_on_host_b():
    if not os.environ.get("{ON_A}"):
        time.sleep(600)
"""


def cli(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`entropy-gate ARGS` in a subprocess, bounded; never a traceback."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "ENTROPY_"))}
    proc = subprocess.run(
        [sys.executable, "-m", "entropy_action", *args],
        cwd=cwd,
        env={**environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=False,
    )
    assert "Traceback" not in proc.stdout + proc.stderr
    return proc


def repo_with(tmp_path: Path, module_text: str, *, run: str = "") -> Path:
    temp_root = tmp_path / f"pins-tmp-{uuid.uuid4().hex[:8]}"
    text = manifest_yaml(temp_root) + run
    return make_repo(tmp_path / "repo", {"entropy.yaml": text, MODULE: module_text})


def host_json(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / HOST_JSON).read_text(encoding="utf-8"))
    return data


def gate_verdict(repo: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    out, verdict = repo.parent / "out", repo.parent / "verdict.json"
    args = ("gate", "--base-ref", "main", "--json", str(verdict), "--out", str(out), *extra)
    proc = cli(repo, *args, env={ON_A: "1"})
    return proc.returncode, json.loads(verdict.read_text(encoding="utf-8")), proc.stdout


def test_host_b_killed_mid_run_makes_the_gate_invalid_and_its_partial_report_is_dropped(tmp_path):
    repo = repo_with(tmp_path, KILLED_ON_B)
    code, verdict, out = gate_verdict(repo, "--no-base-run")
    assert (code, verdict["classification"], verdict["merge"]) == (2, "invalid", False)
    assert verdict["host_b"] == "missing"
    assert (  # one reason: the report's own, naming the signal (SIGKILL: no frame to name)
        f"invalid input: host B: {tmp_path}/out/host-b/host.json: pytest was killed by SIGKILL "
        "(a timeout, the temp root's cap, or from outside); the run did not finish and its "
        "report is not trusted" in verdict["reasons"]
    )
    assert sum(reason.startswith("invalid input: host B") for reason in verdict["reasons"]) == 1
    host_b = tmp_path / "out" / "host-b"
    assert not (host_b / JUNIT_XML).exists()  # the planted passing report was discarded
    info = host_json(host_b)
    assert info["returncode"] == -9
    assert "pytest was killed by SIGKILL: its partial report was discarded" in info["notes"]
    assert "host B: pytest was killed by SIGKILL" in out


def test_a_host_run_past_the_timeout_is_killed_and_compare_refuses_its_report(tmp_path):
    repo = repo_with(tmp_path, HANGS_ON_B)
    a, b = tmp_path / "a", tmp_path / "b"
    assert cli(repo, "run", "--host", "a", "--out", str(a), env={ON_A: "1"}).returncode == 0
    killed = cli(repo, "run", "--host", "b", "--isolate", "--out", str(b), "--timeout", "3")
    assert killed.returncode == 2
    assert killed.stderr.splitlines()[-1] == (
        f"host b: pytest did not finish within 3 s and was killed (see {b}/pytest.log)"
    )
    assert not (b / JUNIT_XML).exists()
    assert host_json(b)["returncode"] == -9
    verdict_path = tmp_path / "verdict.json"
    compared = cli(
        repo, "compare", "--host-a", str(a), "--host-b", str(b), "--json", str(verdict_path)
    )
    verdict = json.loads(verdict_path.read_text(encoding="utf-8"))
    assert (compared.returncode, verdict["classification"], verdict["merge"]) == (
        2,
        "invalid",
        False,
    )
    assert verdict["reasons"][0] == (  # the run's own error report names the cause
        "invalid input: host B could not run: pytest did not finish within 3 s and was killed "
        f"(see {b}/pytest.log) (step: entropy-gate run)"
    )


def test_the_gate_timeout_comes_from_entropy_yaml_when_not_given(tmp_path):
    repo = repo_with(tmp_path, HANGS_ON_B, run="run:\n  timeout_seconds: 3\n")
    code, verdict, _ = gate_verdict(repo, "--no-base-run")
    assert (code, verdict["classification"], verdict["host_b"]) == (2, "invalid", "missing")
    assert verdict["reasons"][0] == (
        f"invalid input: host B: host b: pytest did not finish within 3 s and was killed "
        f"(see {tmp_path}/out/host-b/pytest.log)"
    )


def test_the_gate_timeout_option_overrides_entropy_yaml(tmp_path):
    repo = repo_with(tmp_path, HANGS_ON_B, run="run:\n  timeout_seconds: 900\n")
    code, verdict, _ = gate_verdict(repo, "--no-base-run", "--timeout", "2")
    assert (code, verdict["classification"]) == (2, "invalid")
    assert any("did not finish within 2 s" in reason for reason in verdict["reasons"])


ORPHANS = """\
import os, subprocess


def test_leaves_processes_behind():
    child = subprocess.Popen(["sleep", "300.4321"])
    daemon = subprocess.Popen(["sleep", "301.4321"], start_new_session=True)
    with open(os.environ["FAULT_PIDS"], "w") as handle:
        handle.write(f"{child.pid} {daemon.pid}")
"""


def alive(argument: str) -> bool:
    """Whether a live process (anywhere on this machine: the tests' pids are those of their
    PID namespace where they have one) has `argument` on its command line."""
    for entry in Path("/proc").iterdir():
        try:
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError):
            continue
        if argument.encode() in argv and state != "Z":  # a killed, unreaped child is gone too
            return True
    return False


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
def test_processes_that_outlive_pytest_are_killed_and_reported(tmp_path):
    repo = repo_with(tmp_path, ORPHANS)
    pids_file = tmp_path / "pids"
    proc = cli(
        repo, "run", "--host", "a", "--out", str(tmp_path / "a"), env={"FAULT_PIDS": str(pids_file)}
    )
    assert proc.returncode == 0, proc.stderr
    pids = [int(pid) for pid in pids_file.read_text().split()]
    assert [alive("300.4321"), alive("301.4321")] == [False, False]
    expected = (
        f"2 process(es) the tests started outlived pytest and were killed: pid {min(pids)} "
        f"(sleep), pid {max(pids)} (sleep)"
    )
    assert host_json(tmp_path / "a")["notes"] == [expected]
    assert f"note: {expected}" in proc.stderr


FILLS_TEMP = """\
import os, tempfile, time


def test_fills_the_temp_root():
    folder = tempfile.gettempdir()
    for index in range(64):  # 64 MB at most: bounded here even if the gate were not
        with open(os.path.join(folder, f"fill-{index}"), "wb") as handle:
            handle.write(os.urandom(1 << 20))
    time.sleep(120)
"""


@pytest.mark.parametrize("namespaces", ["namespaces", "no namespaces"])
def test_a_property_that_fills_the_temp_root_is_stopped_at_the_cap_and_cleaned_up(
    tmp_path, namespaces
):
    repo = repo_with(tmp_path, FILLS_TEMP, run="run:\n  temp_root_max_mb: 8\n")
    temp_root = Path(
        next(
            line for line in (repo / "entropy.yaml").read_text().splitlines() if "temp_root" in line
        ).split(": ", 1)[1]
    )
    env = {} if namespaces == "namespaces" else {"ENTROPY_GATE_NO_NAMESPACES": "1"}
    out = tmp_path / "a"
    proc = cli(repo, "run", "--host", "a", "--out", str(out), env=env)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == (
        f"host a: pytest filled temp_root past its cap of 8 MB and was killed "
        f"(see {out}/pytest.log)"
    )
    assert (
        "pytest filled temp_root past its cap of 8 MB: its partial report was discarded"
        in (host_json(out)["notes"])
    )
    assert not (out / JUNIT_XML).exists()
    assert list(temp_root.iterdir()) == []


def test_the_temp_root_cap_counts_disk_blocks_not_apparent_sizes(tmp_path):
    with open(tmp_path / "sparse", "wb") as handle:
        handle.truncate(1 << 30)
    assert not supervise.over(tmp_path, 1 << 20)
    (tmp_path / "dense").write_bytes(os.urandom(2 << 20))
    assert supervise.over(tmp_path, 1 << 20)


@pytest.mark.parametrize("value", ["0", "-1", "soon", "100000"])
def test_a_timeout_that_is_not_a_sane_number_of_seconds_is_a_usage_error(tmp_path, value):
    proc = cli(tmp_path, "run", "--host", "a", "--out", "x", "--timeout", value)
    assert proc.returncode == 2
    assert "--timeout" in proc.stderr.splitlines()[-1]


def test_changing_a_limit_is_listed_and_never_a_pin_mutation(tmp_path):
    repo = repo_with(tmp_path, HANGS_ON_B, run="run:\n  timeout_seconds: 600\n")
    manifest = repo / "entropy.yaml"
    manifest.write_text(
        manifest.read_text().replace("timeout_seconds: 600", "timeout_seconds: 30"),
        encoding="utf-8",
    )  # only the limit: a temp_root path may hold "600" too
    proc = cli(repo, "check-pins", "--base-ref", "main")
    assert proc.returncode == 0
    line = (
        "entropy.yaml:12: run.timeout_seconds changed: 600 → 30 (a run past it is invalid, "
        "never a pass)"
    )
    assert proc.stdout.splitlines()[0] == line


def test_a_cancelled_run_is_killed_with_its_reason():
    """The gate cancels the base run once a host run is invalid (gate._run_hosts)."""
    cancel = threading.Event()
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True
    )
    threading.Timer(0.2, cancel.set).start()
    code, why = supervise.wait(proc, supervise.Limits(timeout=60, cancel=cancel))
    assert code < 0  # killed by a signal, long before the minute
    assert why == "was cancelled (its result could no longer change the verdict)"


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "polling"])
def test_a_run_that_ends_by_itself_gives_its_exit_code(
    pidfd: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seen through a pidfd where Linux has one, else by polling: the same answer."""
    if pidfd and not hasattr(os, "pidfd_open"):
        pytest.skip("no pidfd_open here")
    if not pidfd:
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    script = "import sys, time; time.sleep(0.3); sys.exit(3)"
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    assert supervise.wait(proc, supervise.Limits(timeout=60)) == (3, None)
    short = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True
    )
    code, why = supervise.wait(short, supervise.Limits(timeout=0.5))
    assert code < 0
    assert why == "did not finish within 0.5 s"


def test_an_unset_cancel_lets_the_run_finish():
    proc = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    code, why = supervise.wait(proc, supervise.Limits(timeout=60, cancel=threading.Event()))
    assert (code, why) == (0, None)
