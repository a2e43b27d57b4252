"""bench/precision.py, the precision set's re-run, on a scratch library with history: it
runs `backtest` per listed commit and compares with what the list records."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.helpers import Repo

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "precision.py"
LIST = """\
# library\tmodule\tcommit\texpected\tsubject
library\tmodule\tcommit\texpected\tsubject
scratch\ttests/test_fees.py\t{honest}\tmerge_candidate\tfees: read the guard first
scratch\ttests/test_fees.py\t{skip}\tentropy_silenced\ttests: skip the flaky one
scratch\ttests/test_more.py\t{honest}\tmerge_candidate\tthe same commit, another module
other\ttests/test_x.py\t{honest}\tmerge_candidate\tnot this library
"""


def _library(repo: Repo) -> tuple[str, str]:
    repo.write("fees.py", "def late_fee(days):\n    return 10 * days if days > 0 else 0\n")
    repo.write(
        "tests/test_fees.py",
        "from fees import late_fee\n\n\ndef test_fee():\n    assert late_fee(3) == 30\n",
    )
    repo.write("tests/test_more.py", "from fees import late_fee\n\n\ndef test_none():\n"
               "    assert late_fee(0) == 0\n")  # fmt: skip
    repo.commit("fees")
    repo.write("fees.py", "def late_fee(days):\n    return 0 if days <= 0 else days * 10\n")
    honest = repo.commit("fees: read the guard first")
    skipped = "import pytest\n\nfrom fees import late_fee\n\n\n@pytest.mark.skip(reason='flaky')\n"
    repo.write("tests/test_fees.py", skipped + "def test_fee():\n    assert late_fee(3) == 30\n")
    return honest, repo.commit("tests: skip the flaky one")


def _run(repo: Repo, listed: Path, out: Path) -> subprocess.CompletedProcess[str]:
    venv = Path(sys.executable).parent.parent  # this interpreter's: the gate is installed there
    argv = [sys.executable, str(SCRIPT), "scratch", str(repo.path), str(venv)]
    argv += ["--list", str(listed), "--out", str(out)]
    return subprocess.run(argv, capture_output=True, text=True, check=False)


def test_it_replays_each_listed_commit_and_counts_false_rejections(
    repo: Repo, tmp_path: Path
) -> None:
    honest, skip = _library(repo)
    listed = tmp_path / "precision.tsv"
    listed.write_text(LIST.format(honest=honest, skip=skip), encoding="utf-8")
    done = _run(repo, listed, tmp_path / "out")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"{honest[:12]}  merge_candidate   merge_candidate ")
    assert lines[0].endswith("ok      —")
    assert lines[1].startswith(f"{skip[:12]}  entropy_silenced  entropy_silenced ")
    assert "skip_marker tests/test_fees.py:6 (test_fee)" in lines[1]
    assert lines[2].startswith(f"{honest[:12]}  merge_candidate   merge_candidate ")
    assert lines[3].startswith(
        "3 commits: 3 as recorded; false rejections 0/2; other differences 0;"
    )
    rows = sorted(((honest, "test_fees"), (skip, "test_fees"), (honest, "test_more")))
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == [f"scratch-{sha[:12]}-{stem}.json" for sha, stem in rows]  # one per row


def test_a_commit_that_gets_something_else_fails_the_run(repo: Repo, tmp_path: Path) -> None:
    honest, skip = _library(repo)
    listed = tmp_path / "precision.tsv"
    listed.write_text(LIST.format(honest=skip, skip=honest), encoding="utf-8")  # swapped
    done = _run(repo, listed, tmp_path / "out")
    assert done.returncode == 1
    assert "DIFFERS" in done.stdout
    assert "false rejections 1/2; other differences 1;" in done.stdout


def test_a_venv_whose_gate_is_another_checkout_is_refused(repo: Repo, tmp_path: Path) -> None:
    """A replay through a venv whose editable install points elsewhere would judge other
    code under this checkout's name: refused before any commit runs."""
    honest, skip = _library(repo)
    listed = tmp_path / "precision.tsv"
    listed.write_text(LIST.format(honest=honest, skip=skip), encoding="utf-8")
    other = tmp_path / "other-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(other)], check=True)
    elsewhere = tmp_path / "old-worktree" / "entropy_action"
    elsewhere.mkdir(parents=True)
    (elsewhere / "__init__.py").write_text("", encoding="utf-8")
    site = next((other / "lib").glob("python3.*")) / "site-packages"
    (site / "old.pth").write_text(f"{elsewhere.parent}\n", encoding="utf-8")
    argv = [sys.executable, str(SCRIPT), "scratch", str(repo.path), str(other)]
    done = subprocess.run(
        [*argv, "--list", str(listed), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    assert done.stderr == (
        f"{other}: its entropy_action is {elsewhere}, not this checkout's "
        f"{SCRIPT.parents[1] / 'entropy_action'}: the replay would judge other code "
        f"(pip install --no-deps -e {SCRIPT.parents[1]} in it)\n"
    )
    assert not (tmp_path / "out").exists()


CLOSURE_SCRIPT = SCRIPT.with_name("precision_closure.py")


def test_the_closure_count_names_the_test_side_a_commit_changed(repo: Repo, tmp_path: Path) -> None:
    """bench/precision_closure.py: a commit that changes a helper the property imports, the
    module left as it was, meets the test side; one that changes production only does not."""
    honest, _ = _library(repo)
    repo.write("tests/conftest.py", "")
    repo.write("tests/support/rates.py", "RATE = 10\n")
    repo.write(
        "tests/test_fees.py",
        "from support.rates import RATE\n\nfrom fees import late_fee\n\n\n"
        "def test_fee():\n    assert late_fee(3) == 3 * RATE\n",
    )
    repo.commit("tests: the rate from a helper")
    repo.write("tests/support/rates.py", "RATE = 11\n")
    repo.write("tests/data/rates.json", "[11]\n")
    helper = repo.commit("tests: the new rate")
    listed = tmp_path / "precision.tsv"
    rows = LIST.format(honest=honest, skip=helper).replace("tests: skip the flaky one", "rate")
    one = "".join(row for row in rows.splitlines(keepends=True) if "test_more" not in row)
    listed.write_text(one, encoding="utf-8")
    (tmp_path / "clones").mkdir()
    (tmp_path / "clones" / "scratch").symlink_to(repo.path)
    done = subprocess.run(
        [sys.executable, str(CLOSURE_SCRIPT), str(tmp_path / "clones"), "--list", str(listed)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines.pop(0) == f"other: no clone at {tmp_path / 'clones' / 'other'}, skipped"
    assert lines[0].endswith("module same    side [] data []"), lines
    assert lines[1].endswith(
        "module same    side ['tests/support/rates.py'] data ['tests/data/rates.json']"
    ), lines
    assert lines[2] == (
        "2 commits: 1 change the test side beyond the module (1 with the module unchanged; "
        "1 change test data)"
    )
