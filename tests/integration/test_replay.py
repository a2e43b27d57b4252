"""`entropy-gate replay TEST --report DIR` (#36): a host-B failure replayed from its report
folder fails as host B failed (the clock shift, the scrubbed environment and fresh HOME, and
the values host B started with: host.json `replay`), and passes once the test is fixed; bad
input is one line and exit 2. The gate runs once per module (two tests of a TOTP-shaped
library that follow host B: the test's own `date.today()`, and HOME)."""

from __future__ import annotations

import datetime
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.test_coupled_reads import BASE, CLOCK_TEST, HOME_TEST, MANIFEST, OTP
from tests.support.helpers import build_repo, commit_files

pytestmark = pytest.mark.integration

TESTS = "tests/test_otp.py"
CLOCK = f"{TESTS}::test_expiry_year"
HOME = f"{TESTS}::test_account_name"
FIXED_CLOCK = """

def test_expiry_year(entropy_clock):
    assert otp.expiry_year(entropy_clock.now().date()) == 2026
"""


def _cli(cwd: Path, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home)}
    env.pop("GITHUB_STEP_SUMMARY", None)
    argv = [sys.executable, "-m", "entropy_action", *args]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository with the patch in its working tree, and the gate's report folders."""
    top = tmp_path_factory.mktemp("replay")
    home = top / "alice"
    home.mkdir()
    repo = top / "repo"
    files = {"entropy.yaml": MANIFEST.format(temp_root=top / "pins-tmp"), "otp.py": OTP}
    base = build_repo(repo, {**files, TESTS: BASE})
    year = datetime.date.today().year
    commit_files(repo, {TESTS: BASE + CLOCK_TEST.format(year=year) + HOME_TEST}, "two tests")
    gated = _cli(repo, "gate", "--base-ref", base, "--out", str(top / "out"), home=home)
    assert gated.returncode == 1, gated.stderr
    return top


def _copy(world: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    shutil.copytree(world, tmp_path / "w", symlinks=True)
    top = tmp_path / "w"
    return top / "repo", top / "out" / "host-b", top / "alice"


def test_the_replay_fails_as_host_b_failed_and_passes_with_the_fix(
    world: Path, tmp_path: Path
) -> None:
    repo, host_b, home = _copy(world, tmp_path)
    year = datetime.date.today().year
    replayed = _cli(repo, "replay", CLOCK, "--report", str(host_b), home=home)
    assert replayed.returncode == 1, replayed.stderr
    lines = replayed.stdout.splitlines()
    assert lines[:3] == [
        f"entropy-gate replay: {CLOCK} as host B ran it",
        "  host B: failed",
        "  replay: failed",
    ]
    assert f"{year + 5}" in replayed.stdout or f"{year + 6}" in replayed.stdout, "B's clock"
    assert "  note: test_order: the test ran alone (--predecessors runs" in replayed.stdout
    reproduced = next(line for line in lines if line.startswith("  reproduced: "))
    for dimension in ("clock", "env", "path", "lang", "hash_seed", "file_order", "cpu_count"):
        assert dimension in reproduced.split(": ", 1)[1].split(", ")
    # pytest alone (no gate) passes it: host A's clock
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", CLOCK],
        cwd=repo, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert plain.returncode == 0, plain.stdout

    module = repo / TESTS
    text = module.read_text(encoding="utf-8")
    start = text.index("\n\ndef test_expiry_year")
    end = text.index("\n\ndef test_account_name")
    module.write_text(text[:start] + FIXED_CLOCK.rstrip("\n") + text[end:], encoding="utf-8")
    fixed = _cli(repo, "replay", CLOCK, "--report", str(host_b), home=home)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "  replay: passed" in fixed.stdout.splitlines()


def test_the_scrubbed_environment_and_fresh_home_are_replayed(world: Path, tmp_path: Path) -> None:
    repo, host_b, home = _copy(world, tmp_path)
    replayed = _cli(repo, "replay", HOME, "--report", str(host_b), home=home)
    assert replayed.returncode == 1, replayed.stderr
    assert "  replay: failed" in replayed.stdout.splitlines()
    assert "otpauth://totp/alice" in replayed.stdout  # the expected value, not this HOME's
    host_a = host_b.parent / "host-a"  # host A's run of it passes: the laptop's HOME
    same = _cli(repo, "replay", HOME, "--report", str(host_a), home=home)
    assert same.returncode == 0, same.stdout + same.stderr
    assert same.stdout.splitlines()[:3] == [
        f"entropy-gate replay: {HOME} as host A ran it",
        "  host A: passed",
        "  replay: passed",
    ]


def test_host_bs_own_values_come_from_its_report_not_this_machine(
    world: Path, tmp_path: Path
) -> None:
    repo, host_b, home = _copy(world, tmp_path)
    path = host_b / "host.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["replay"]["clock_shift_seconds"] > 5 * 365 * 86400
    data["replay"].update({"tz": "Asia/Kathmandu", "lang": "C", "umask": 0o027, "cpu_count": 7})
    path.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "replayed"
    _cli(repo, "replay", CLOCK, "--report", str(host_b), "--out", str(out), home=home)
    again = json.loads((out / "host.json").read_text(encoding="utf-8"))
    plan = again["replay"]
    assert (plan["lang"], plan["umask"], plan["cpu_count"]) == ("C", 0o027, 7)
    how = {v["dimension"]: v["how"] for v in again["variations"]}
    assert how["lang"] == "LANG=LC_ALL=C"
    assert how["umask"] == "umask 0027"
    assert how["cpu_count"].startswith("the tests see 7 CPUs")
    # a report never overrides a pin: the manifest pins tz
    assert plan["tz"] is None
    assert how["tz"] == "pins.tz on both hosts"


def test_predecessors_run_first_in_host_bs_order(world: Path, tmp_path: Path) -> None:
    repo, host_b, home = _copy(world, tmp_path)
    ran = json.loads((host_b / "host.json").read_text(encoding="utf-8"))["test_order"]["ran"]
    before = ran[: ran.index(CLOCK)]
    replayed = _cli(repo, "replay", CLOCK, "--report", str(host_b), "--predecessors", home=home)
    assert replayed.returncode == 1, replayed.stderr
    if before:
        assert f"  after: {', '.join(before)}" in replayed.stdout.splitlines()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            (f"{TESTS}::test_nothing_of_the_kind", "--report", "{host_b}"),
            f"{TESTS}::test_nothing_of_the_kind: not among the 4 tests host B ran in ",
        ),
        (
            (CLOCK, "--report", "{repo}"),
            "{repo}: not a host's report folder (no host.json): give the host-a or host-b "
            "folder `entropy-gate gate --out DIR` writes",
        ),
        (
            (CLOCK, "--report", "{host_b}", "--after", HOME, "--predecessors"),
            "replay: --after and --predecessors choose the order two ways; give one",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    world: Path, tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    repo, host_b, home = _copy(world, tmp_path)
    names = {"host_b": str(host_b), "repo": str(repo)}
    done = _cli(repo, "replay", *(a.format(**names) for a in args), home=home)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith(message.format(**names))
