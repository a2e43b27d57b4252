"""The project's install on a host job: scripts/install-project.sh with uv against with pip.

    .venv/bin/python bench/bench_project_install.py CHECKOUT [--python PY] [--repeat 3]
    .venv/bin/python bench/bench_project_install.py --smoke

CHECKOUT is a project as a pull request's head holds it (a clone of a real library: its
pyproject.toml, setup.cfg or setup.py and its test extra). Each install starts as a hosted
runner's does: a fresh venv of PY (default: this interpreter) with pip only, no pip or uv
cache (PIP_NO_CACHE_DIR, UV_NO_CACHE), the index pip's configuration names (PyPI here);
`project-installer: uv` also installs uv itself from requirements/uv.lock, as the action does
on every host job. The two alternate, each in a copy of the checkout; prints min / median /
max of the per-pair ratio of wall time, uv over pip. `--smoke` installs a one-module project
with no dependency once each (no index needed beyond what pip and uv bring: setuptools, as a
wheel from PyPI). Not a test: timings depend on the machine and the network.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchlib

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "install-project.sh"
SMOKE = """\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "smokelib"
version = "0"

[tool.setuptools]
py-modules = ["smokelib"]
"""


def install(checkout: Path, python: str, installer: str, scratch: Path) -> benchlib.Sample:
    """One install into a fresh venv from a fresh copy of the checkout: its wall time."""
    folder = Path(tempfile.mkdtemp(dir=scratch))
    subprocess.run([python, "-m", "venv", folder / "env"], check=True)
    tree = folder / "tree"
    shutil.copytree(checkout, tree, symlinks=True)  # .git too: a version from VCS reads it
    env = {
        **os.environ,
        "PYTHON": str(folder / "env" / "bin" / "python"),
        "ENTROPY_GATE_PROJECT_INSTALLER": installer,
        "PIP_NO_CACHE_DIR": "1",
        "UV_NO_CACHE": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    started = time.perf_counter()
    done = subprocess.run(
        ["bash", SCRIPT], cwd=tree, env=env, capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{installer}: install-project.sh failed:\n{done.stdout}{done.stderr}")
    print(f"  {installer}: {seconds:6.1f} s  {done.stdout.splitlines()[0][:100]}")
    shutil.rmtree(folder, ignore_errors=True)
    return benchlib.Sample(seconds, 0, 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", nargs="?", type=Path)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="a project of one module, once")
    args = parser.parse_args(argv)
    if (args.checkout is None) != args.smoke:
        parser.error("give a CHECKOUT, or --smoke")
    with tempfile.TemporaryDirectory(prefix="bench-project-install-") as tmp:
        scratch = Path(tmp)
        checkout = args.checkout
        if checkout is None:
            checkout = scratch / "smokelib"
            checkout.mkdir()
            (checkout / "pyproject.toml").write_text(SMOKE)
            (checkout / "smokelib.py").write_text("VALUE = 1\n")
        repeat = 1 if args.smoke else args.repeat
        ours, floor = benchlib.alternate(
            lambda: install(checkout, args.python, "uv", scratch),
            lambda: install(checkout, args.python, "pip", scratch),
            repeat,
        )
    print(benchlib.load_note())
    print(f"the project: {args.checkout or 'a one-module project (--smoke)'}")
    benchlib.print_ratio("install-project.sh, project-installer: uv", "with pip", ours, floor)
    return 0


if __name__ == "__main__":
    sys.exit(main())
