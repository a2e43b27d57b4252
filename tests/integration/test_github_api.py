"""The tests of tests/unit/test_github_api.py that start a process (pytest runs, git)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.support.github_api import (
    FORBIDDEN_MESSAGE,
)
from tests.unit.test_github_api import VALID


@pytest.mark.parametrize(
    ("options", "statuses"),
    [(["--fault", "502"], [502, 201]), (["--fail-status", "403"], [403, 403])],
    ids=["fault-sequence", "fail-status"],
)
def test_standalone_server_writes_its_port_and_logs_requests(tmp_path: Path, options, statuses):
    port_file, log = tmp_path / "port", tmp_path / "requests.jsonl"
    root = Path(__file__).parents[2]
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "tests.support.github_api", "--port-file", str(port_file)),
            *("--log", str(log), "--token", "tok-xyz", *options),
        ],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    try:
        for _ in range(200):
            if port_file.exists():
                break
            time.sleep(0.05)
        url = f"http://127.0.0.1:{int(port_file.read_text())}"
        codes, messages = [], []
        for _ in range(2):
            request = urllib.request.Request(
                url + "/repos/o/r/check-runs",
                data=json.dumps(VALID).encode(),
                method="POST",
                headers={"Authorization": "token tok-xyz"},
            )
            try:
                with urllib.request.urlopen(request, timeout=5) as response:
                    codes.append(response.status)
            except urllib.error.HTTPError as exc:
                codes.append(exc.code)
                messages.append(json.loads(exc.read())["message"])
        assert codes == statuses
        if 403 in statuses:
            assert messages == [FORBIDDEN_MESSAGE, FORBIDDEN_MESSAGE]
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(x["method"], x["status"]) for x in lines] == [("POST", s) for s in statuses]
    assert "tok-xyz" not in log.read_text()
