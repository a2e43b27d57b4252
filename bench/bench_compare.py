"""How much reading reports safely costs: read + pair two pytest-shaped JUnit files of 5,000
test cases each (defusedxml without DTDs, junitparser, id normalization, pairing), against a
plain `xml.etree.ElementTree.parse` of the same two files. Prints the medians and the ratio.

    .venv/bin/python bench/bench_compare.py [--cases 5000] [--repeat 15]

Not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

from entropy_action import compare, reports
from entropy_action.host import HOST_JSON, JUNIT_XML, Fingerprint, HostInfo

MODULE = "tests/properties/test_invoice_total.py"


def junit(cases: int, root: str, fail_every: int) -> str:
    """A pytest xunit1 report: parametrized ids with paths, classes, failures and skips."""
    rows = []
    for i in range(cases):
        cls = f".TestGroup{i % 7}" if i % 3 == 0 else ""
        name = f"test_case_{i // 10}[{root}/data/{i}.json-{i % 10}]"
        body = ""
        if fail_every and i % fail_every == 0:
            body = f'<failure message="AssertionError: {i}">assert {i} == {i + 1}</failure>'
        elif i % 50 == 1:
            body = '<skipped type="pytest.skip" message="not here">skip</skipped>'
        rows.append(
            f'<testcase classname="tests.properties.test_invoice_total{cls}" name="{name}" '
            f'file="{MODULE}" line="{10 + i % 400}" time="0.001">{body}</testcase>'
        )
    return (
        '<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests">'
        f'<testsuite name="pytest" tests="{cases}">{"".join(rows)}</testsuite></testsuites>'
    )


def host_dir(base: Path, label: str, cases: int, fail_every: int) -> Path:
    root = f"/home/ci/{label}/checkout"
    info = HostInfo(
        host="a" if label == "a" else "b",
        gate_version="bench",
        property_id="bench",
        module=MODULE,
        manifest_sha256=hashlib.sha256(b"bench").hexdigest(),
        returncode=1 if fail_every else 0,
        fingerprint=Fingerprint(
            python_version=sys.version.split()[0],
            python_implementation="CPython",
            platform=sys.platform,
            hostname_sha256=hashlib.sha256(label.encode()).hexdigest(),
            locale="C.UTF-8",
            tz="UTC",
            uid=0,
            isolated=label == "b",
        ),
        pins_applied={},
        started_at="2026-01-10T00:00:00Z",
        finished_at="2026-01-10T00:00:01Z",
        isolated=label == "b",
        root=root,
        python=sys.executable,
    )
    folder = base / label
    folder.mkdir()
    (folder / HOST_JSON).write_text(info.model_dump_json(), encoding="utf-8")
    (folder / JUNIT_XML).write_text(junit(cases, root, fail_every), encoding="utf-8")
    return folder


def median_seconds(action: Callable[[], object], repeat: int) -> float:
    action()  # warm up: imports, caches
    timings = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as scratch:
        a = host_dir(Path(scratch), "a", args.cases, fail_every=0)
        b = host_dir(Path(scratch), "b", args.cases, fail_every=97)

        def safe() -> object:
            paired = compare.pair(reports.read_host(a), reports.read_host(b))
            assert len(paired) == args.cases, len(paired)
            return paired

        def plain() -> object:
            return [ET.parse(a / JUNIT_XML), ET.parse(b / JUNIT_XML)]  # noqa: S314 (the baseline)

        size = (a / JUNIT_XML).stat().st_size + (b / JUNIT_XML).stat().st_size
        ours = median_seconds(safe, args.repeat)
        base = median_seconds(plain, args.repeat)
    print(f"{args.cases} test cases per host, {size / 1e6:.1f} MB of JUnit XML in all")
    print(f"read + pair (defusedxml, junitparser, normalize, pair): {ours * 1000:8.1f} ms median")
    print(f"xml.etree.ElementTree.parse of the same two files:      {base * 1000:8.1f} ms median")
    print(f"ratio: {ours / base:.1f}x")


if __name__ == "__main__":
    main()
