"""Host B's clock shift and network block reach the Python processes the tests start."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from entropy_action.core.hostinfo import HostInfo
from entropy_action.core.layout import JUNIT_XML
from entropy_action.hosts import isolate, launch, testfiles
from tests.test_run_host_a import MODULE, make_repo, manifest_yaml, settings

CHILD_PROPERTY = """\
import subprocess
import sys

NETWORK = '''
import socket
try:
    socket.create_connection(("192.0.2.1", 80), timeout=2)
except OSError as exc:
    print(exc)
'''


def test_child_clock(record_property):
    child = [sys.executable, "-c", "import time; print(time.time())"]
    out = subprocess.run(child, capture_output=True, text=True, check=True)
    record_property("child_time", out.stdout.strip())


def test_child_network(record_property):
    out = subprocess.run([sys.executable, "-c", NETWORK], capture_output=True, text=True)
    record_property("child_network", out.stdout.strip())
"""


def props(junit: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        found.update({p.get("name", ""): p.get("value", "") for p in case.iter("property")})
    return found


def _run(tmp: Path, *, isolated: bool, namespaces: bool = True) -> tuple[dict[str, str], HostInfo]:
    root = make_repo(
        tmp / "repo",
        {
            "entropy.yaml": manifest_yaml(tmp / "entropy-tmp"),
            "pytest.ini": "[pytest]\nfilterwarnings = error\n",
            MODULE: CHILD_PROPERTY,
        },
    )
    out = tmp / "out"
    options = {"isolate": isolated, "namespaces": namespaces}
    info = launch.run_host(settings(root, out, dict(os.environ), **options))
    return props(out / JUNIT_XML), info


def test_a_child_python_on_host_b_sees_the_shifted_clock(tmp_path: Path) -> None:
    started = time.time()
    seen_a, info_a = _run(tmp_path / "a", isolated=False)
    seen_b, info_b = _run(tmp_path / "b", isolated=True)
    assert abs(float(seen_a["child_time"]) - started) < 600
    assert float(seen_b["child_time"]) - started > isolate.SHIFT_SECONDS - 3600
    (line,) = [i for i in info_b.isolation if i.startswith("child Python processes")]
    assert line.startswith("child Python processes: the clock shift")
    assert "through sitecustomize; 2 started, clock shifted in 2" in line
    assert not any(i.startswith("child Python processes") for i in info_a.isolation)


def test_without_namespaces_a_child_python_is_refused_the_network_too(tmp_path: Path) -> None:
    seen, info = _run(tmp_path, isolated=True, namespaces=False)
    assert "entropy-gate host B has no network" in seen["child_network"]
    assert float(seen["child_time"]) - time.time() > isolate.SHIFT_SECONDS - 3600
    (line,) = [i for i in info.isolation if i.startswith("child Python processes")]
    assert line == (
        "child Python processes: the clock shift and the in-process network block through "
        "sitecustomize; 2 started, clock shifted in 2, network refused in 2"
    )


def test_a_sitecustomize_the_childsite_shadows_still_runs(tmp_path: Path) -> None:
    other = tmp_path / "other-site"
    other.mkdir()
    (other / "sitecustomize.py").write_text("import os\nos.environ['SHADOWED_RAN'] = '1'\n")
    ours = testfiles.install_childsite(tmp_path)
    env = {**os.environ, "PYTHONPATH": f"{ours}{os.pathsep}{other}"}
    env.pop("ENTROPY_GATE_CHILD", None)
    out = subprocess.run(
        [sys.executable, "-c", "import os; print(os.environ.get('SHADOWED_RAN'))"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "1"
