"""How much reading reports safely costs, and the whole `entropy-gate compare` around it.

Two pytest-shaped JUnit files of 100,000 test cases each: read + pair them in-process
(DTD-free prolog checked by defusedxml, streamed parse, junitparser for results, id
normalization, pairing), against a plain `xml.etree.ElementTree.parse` of the same two
files; then the whole command (`python -m entropy_action compare`: start-up, host.json,
junit.xml, outcomes.json, pairing, the verdict, the text and the verdict JSON written) in a
process of its own, against a process that parses both files with `ET.parse`. Each side runs
in its own subprocess, alternating. Prints the ratio's min / median / max and each side's
peak RSS against the size of the XML.

    .venv/bin/python bench/bench_compare.py [--cases 100000] [--repeat 7] [--smoke] [--seeded]
    .venv/bin/python bench/bench_compare.py --make-hosts DIR [--cases 100000]
    .venv/bin/python bench/bench_compare.py --hosts DIR/a DIR/b --manifest DIR/repo/entropy.yaml
        [--repeat 5] [--profile]

--seeded writes the reports the gate's own runs write: every testcase carries the plugin's
properties (its seed, the run's base seed, the assertions it executed and their sites).
--make-hosts runs a module of --cases parametrized tests with `entropy-gate run --host a`
and `--host b --isolate` into DIR/a and DIR/b (real reports: outcomes.json, the plugin's
properties, host B's shuffled order; minutes at 100,000 tests); --hosts times the whole
command on such folders. --profile adds the command's steps (CPU time, share, peak RSS after
each) and cProfile's top functions, each from a fresh process.

Not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import benchlib

from entropy_action.core.hostinfo import Fingerprint, HostInfo
from entropy_action.core.layout import HOST_JSON, JUNIT_XML
from entropy_action.evidence import hostreport
from entropy_action.verdict import pairing

MODULE = "tests/properties/test_invoice_total.py"


def junit(cases: int, root: str, fail_every: int, seeded: bool = False) -> str:
    """A pytest xunit1 report: parametrized ids with paths, classes, failures and skips."""
    rows = []
    for i in range(cases):
        cls = f".TestGroup{i % 7}" if i % 3 == 0 else ""
        name = f"test_case_{i // 10}[{root}/data/{i}.json-{i % 10}]"
        body = _properties(i) if seeded else ""
        if fail_every and i % fail_every == 0:
            body += f'<failure message="AssertionError: {i}">assert {i} == {i + 1}</failure>'
        elif i % 50 == 1:
            body += '<skipped type="pytest.skip" message="not here">skip</skipped>'
        rows.append(
            f'<testcase classname="tests.properties.test_invoice_total{cls}" name="{name}" '
            f'file="{MODULE}" line="{10 + i % 400}" time="0.001">{body}</testcase>'
        )
    return (
        '<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests">'
        f'<testsuite name="pytest" tests="{cases}">{"".join(rows)}</testsuite></testsuites>'
    )


def _properties(i: int) -> str:
    """What the gate's plugin records for each test (plugin.py), as pytest writes it."""
    values = {
        "entropy_seed": 1_000_003 * i % 4_294_967_291,
        "entropy_rng_seed": 9173,
        "entropy_assertions": 1 + i % 5,
        "entropy_assertion_sites": 1 + i % 3,
    }
    items = "".join(f'<property name="{k}" value="{v}"/>' for k, v in values.items())
    return f"<properties>{items}</properties>"


def host_dir(base: Path, label: str, cases: int, fail_every: int, seeded: bool) -> Path:
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
    (folder / JUNIT_XML).write_text(junit(cases, root, fail_every, seeded), encoding="utf-8")
    return folder


def _read_and_pair(a: Path, b: Path, cases: int) -> None:
    paired = pairing.pair(hostreport.read_host(a), hostreport.read_host(b))
    assert len(paired) == cases, len(paired)


def _plain_parse(a: Path, b: Path) -> None:
    ET.parse(a / JUNIT_XML)  # noqa: S314 (the floor: a plain parse of trusted files)
    ET.parse(b / JUNIT_XML)  # noqa: S314


def _read_only(a: Path, b: Path) -> None:
    hostreport.read_host(a)
    hostreport.read_host(b)


def child(kind: str, a: Path, b: Path, cases: int) -> None:
    if kind == "ours":
        benchlib.child_report(lambda: _read_and_pair(a, b, cases))
    elif kind == "read":
        benchlib.child_report(lambda: _read_only(a, b))
    else:
        benchlib.child_report(lambda: _plain_parse(a, b))


def compare_argv(a: Path, b: Path, manifest: Path | None, out: Path) -> list[str]:
    """The whole command, as a user runs it (from the manifest's folder when there is one)."""
    argv = [sys.executable, "-m", "entropy_action", "compare", "--host-a", str(a)]
    argv += ["--host-b", str(b), "--json", str(out)]
    return argv + (["--manifest", str(manifest)] if manifest else [])


FLOOR = "import sys, xml.etree.ElementTree as ET\nfor path in sys.argv[1:]: ET.parse(path)"


def whole_command(a: Path, b: Path, manifest: Path | None, repeat: int, profile: bool) -> None:
    """`entropy-gate compare` on two host folders against ET.parse of their junit.xml."""
    size = (a / JUNIT_XML).stat().st_size + (b / JUNIT_XML).stat().st_size
    cwd = str(manifest.parent if manifest else a.parent)
    with tempfile.TemporaryDirectory(prefix="bench-compare-out-") as out:
        ours = compare_argv(a, b, manifest, Path(out) / "verdict.json")
        floor = [sys.executable, "-c", FLOOR, str(a / JUNIT_XML), str(b / JUNIT_XML)]
        verdict = Path(out) / "verdict.json"

        def judged() -> benchlib.Sample:
            verdict.unlink(missing_ok=True)
            sample = benchlib.process(ours, cwd, ok=(0, 1, 2))  # any verdict, invalid included
            assert verdict.stat().st_size > 0, "compare wrote no verdict: it stopped before"
            return sample

        judged()  # warm the file cache and .pyc files
        benchlib.process(floor)
        measured, base = benchlib.alternate(judged, lambda: benchlib.process(floor), repeat)
        steps = profile_steps(a, b, manifest, Path(out), cwd) if profile else ""
    print(f"-- the whole command: entropy-gate compare on {a} and {b} ({size / 2**20:.1f} MiB)")
    benchlib.print_ratio("entropy-gate compare", "ET.parse of both files", measured, base)
    cpu = [o.cpu / f.cpu for o, f in zip(measured, base, strict=True)]
    print(f"cpu time ratio over {len(cpu)} pairs: {benchlib.stats(cpu)}")
    for name, samples in (("entropy-gate compare", measured), ("ET.parse of both", base)):
        peak = statistics.median(s.peak_rss for s in samples)
        print(f"{name}: peak RSS {peak / 2**20:6.1f} MiB ({peak / size:.2f}x the XML)")
    print(steps, end="")


def profile_steps(a: Path, b: Path, manifest: Path | None, out: Path, cwd: str) -> str:
    """The steps table and cProfile's top functions, each from a fresh child process."""
    text = ""
    for kind in ("steps", "cprofile"):
        steps = Path(__file__).with_name("compare_steps.py")  # imports nothing of the gate
        argv = [sys.executable, str(steps), kind]
        argv += compare_argv(a, b, manifest, out / f"{kind}.json")[3:]
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"--profile {kind} failed:\n{done.stderr[-2000:]}")
        text += done.stdout
    return text


def make_hosts(folder: Path, cases: int) -> None:
    """Real host folders: `entropy-gate run` on host A and host B (--isolate) of a module of
    `cases` parametrized tests (bench_run.py's repository)."""
    import bench_run  # noqa: PLC0415 (its repository, only here)

    folder.mkdir(parents=True, exist_ok=True)
    root = bench_run.make_repo(folder, cases)
    for host, extra in (("a", []), ("b", ["--isolate"])):
        argv = [sys.executable, "-m", "entropy_action", "run", "--host", host]
        argv += ["--out", str(folder / host), "--manifest", str(root / "entropy.yaml"), *extra]
        subprocess.run(argv, cwd=root, check=True, stdout=subprocess.DEVNULL)
    print(f"--hosts {folder / 'a'} {folder / 'b'} --manifest {root / 'entropy.yaml'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--smoke", action="store_true", help="small sizes, one pair")
    parser.add_argument(
        "--seeded", action="store_true", help="every testcase with the plugin's properties"
    )
    parser.add_argument("--hosts", nargs=2, type=Path, metavar=("A", "B"))
    parser.add_argument("--manifest", type=Path, help="with --hosts: the entropy.yaml they ran")
    parser.add_argument("--make-hosts", type=Path, metavar="DIR")
    parser.add_argument("--profile", action="store_true", help="the whole command's steps")
    parser.add_argument("--child", nargs=3, metavar=("KIND", "A", "B"), help=argparse.SUPPRESS)
    parser.add_argument("--generate", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.smoke:
        args.cases, args.repeat = 500, 1
    if args.child:
        kind, a, b = args.child
        child(kind, Path(a), Path(b), args.cases)
        return 0
    if args.generate:
        host_dir(Path(args.generate), "a", args.cases, fail_every=0, seeded=args.seeded)
        host_dir(Path(args.generate), "b", args.cases, fail_every=97, seeded=args.seeded)
        return 0
    if args.make_hosts:
        make_hosts(args.make_hosts, args.cases)
        return 0
    print(benchlib.load_note())
    if args.hosts:
        host_a, host_b = args.hosts
        whole_command(host_a, host_b, args.manifest, args.repeat, args.profile)
        print(benchlib.load_note())
        return 0
    synthetic(args)
    return 0


def synthetic(args: argparse.Namespace) -> None:
    """Generated reports: read + pair in-process, reading alone, then the whole command."""
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as scratch:
        # Generated in a child: a child's peak RSS starts at its parent's (Linux keeps
        # ru_maxrss across exec), so the parent stays small.
        generate = [sys.executable, __file__, "--cases", str(args.cases), "--generate", scratch]
        generate += ["--seeded"] if args.seeded else []
        subprocess.run(generate, check=True)
        a, b = Path(scratch) / "a", Path(scratch) / "b"
        size = (a / JUNIT_XML).stat().st_size + (b / JUNIT_XML).stat().st_size

        def run(kind: str) -> benchlib.Sample:
            argv = [sys.executable, __file__, "--cases", str(args.cases), "--child", kind]
            return benchlib.run_child([*argv, str(a), str(b)])

        ours, base = benchlib.alternate(lambda: run("ours"), lambda: run("floor"), args.repeat)
        read, base2 = benchlib.alternate(lambda: run("read"), lambda: run("floor"), args.repeat)
        shape = "each with the plugin's four properties" if args.seeded else "without properties"
        print(f"{args.cases} test cases per host ({shape}), {size / 2**20:.1f} MiB of JUnit XML")
        benchlib.print_ratio(
            "read + pair (streamed, defused prolog, normalize, pair)",
            "xml.etree.ElementTree.parse of both files",
            ours,
            base,
        )
        print("-- reading alone (the two HostReports, no pairing into the verdict's TestResults)")
        benchlib.print_ratio("read both", "xml.etree.ElementTree.parse of both files", read, base2)
        for name, samples in (("read + pair", ours), ("read alone", read), ("ET.parse", base)):
            peak = statistics.median(s.peak_rss for s in samples)
            grew = statistics.median(s.peak_rss - s.start_rss for s in samples)
            print(
                f"{name}: peak RSS {peak / 2**20:6.1f} MiB ({peak / size:.2f}x the XML), "
                f"grown by the work {grew / 2**20:6.1f} MiB ({grew / size:.2f}x the XML)"
            )
        whole_command(a, b, None, args.repeat, args.profile)


if __name__ == "__main__":
    raise SystemExit(main())
